"""What the agent's step sees: its data, its instructions and a recorder for actions."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from ..config.file import BudgetConfig
from ..core.budget import overspent
from ..core.models import ActionRecord, Anomaly, BudgetCounters, clip
from ..detect.monitor import Monitor
from ..state.killswitch import KillSwitch

__all__ = ["Step", "StepContext"]


class StepContext:
    """Handed to the step once per heartbeat; see the README's "The agent's side"."""

    def __init__(
        self,
        *,
        agent: str,
        tick: int,
        now: datetime,
        data: dict[str, Any],
        instructions: str | None,
        state_dir: Path,
        base_dir: Path,
        monitor: Monitor,
        budget: BudgetConfig,
        counters: BudgetCounters,
        kill: KillSwitch,
        clock: Callable[[], datetime],
        redact: Callable[[str], str] = str,
        mask: Callable[[Any], Any] = lambda value: value,
    ) -> None:
        self.agent = agent
        self.tick = tick
        self.now = now
        self._data = data
        self.instructions = instructions
        self.state_dir = state_dir
        self.base_dir = base_dir
        self.actions = 0
        self.budget_anomaly: Anomaly | None = None
        self.reported_progress: float | None = None
        self._monitor = monitor
        self._budget = budget
        self._counters = counters
        self._kill = kill
        self._clock = clock
        self._redact = redact
        # Known secrets masked out of args and output before anything is summarised or cut,
        # so a token the agent passes to a tool never reaches state.json or the journal.
        self._mask = mask
        # (index, tool, args, output_len, error, cost) of every action of this tick, for the
        # journal: the saved history keeps only the last few, a tick may record many more.
        self.recorded: list[tuple[int, str, dict[str, Any] | None, int | None, str | None, float]] = []

    @property
    def data(self) -> dict[str, Any]:
        """The agent's own data, saved in ``state.json`` after the step (mutate it or assign a dict)."""
        return self._data

    @data.setter
    def data(self, value: dict[str, Any]) -> None:
        if not isinstance(value, dict):
            raise TypeError(f"ctx.data must be a dict, not {type(value).__name__}")
        self._data = value

    @property
    def killed(self) -> bool:
        """True once a KILL file has appeared: a cooperative step stops early."""
        return self._kill.reason() is not None

    def record(
        self,
        tool: str,
        args: Mapping[str, Any] | None = None,
        *,
        output: str | None = None,
        error: str | BaseException | None = None,
        cost: float = 0.0,
    ) -> Anomaly | None:
        """Record one action; return the anomaly it tripped (stuck or over budget), else None."""
        if not isinstance(tool, str) or not tool:
            raise TypeError(f"ctx.record: tool must be a non-empty str, not {tool!r}")
        if args is not None and not isinstance(args, Mapping):
            raise TypeError(f"ctx.record: args must be a mapping or None, not {type(args).__name__}")
        if isinstance(cost, bool) or not isinstance(cost, int | float) or not math.isfinite(cost) or cost < 0:
            raise ValueError(f"ctx.record: cost must be a finite number >= 0, not {cost!r}")
        if isinstance(error, BaseException):
            error = f"{type(error).__name__}: {error}"
        if not math.isfinite(self._counters.cost + cost):
            raise ValueError("ctx.record: the day's total cost would overflow; report smaller units")
        now = self._clock()
        copied = self._mask(dict(args)) if args is not None else None
        error = clip(self._redact(error)) if error else None
        output = None if output is None else self._mask(str(output))
        hit = self._monitor.record(
            tool,
            copied,
            output=output,
            error=error,
            cost=float(cost),
            now=now,
        )
        length = None if output is None else len(output.strip())
        self.recorded.append((self._monitor.actions_total, tool, copied, length, error, float(cost)))
        self.actions += 1
        self._counters.actions += 1
        self._counters.cost += float(cost)
        reason = overspent(self._counters, self.actions, self._budget)
        if reason is not None:
            if self.budget_anomaly is None:
                self.budget_anomaly = Anomaly(
                    kind="budget",
                    message=reason,
                    tick=self.tick,
                    action=self._monitor.actions_total,
                    at=now,
                    tool=tool,
                    evidence={
                        "actions_this_tick": self.actions,
                        "actions_today": self._counters.actions,
                        "cost_today": self._counters.cost,
                    },
                )
            return self.budget_anomaly
        return hit

    def action_events(
        self, history: Sequence[ActionRecord], volatile: Collection[str]
    ) -> list[dict[str, Any]]:
        """One journal event per action of this tick, also those the bounded ``history`` no longer holds."""
        kept = {a.index: a for a in history[-len(self.recorded) :]} if self.recorded else {}
        events = []
        for index, tool, args, length, error, cost in self.recorded:
            record = kept.get(index)
            if record is not None:
                summary = record.summary
            else:
                from ..detect.detectors import summarize

                summary = summarize(tool, args, volatile)
            event = {"event": "action", "index": index, "tool": tool, "summary": summary}
            if record is not None:
                event["at"] = record.at  # when it happened (the journal's stamp is the tick's end)
            events.append({**event, "output_len": length, "error": error, "cost": cost})
        return events

    def report_progress(self, value: float | None) -> None:
        """Report progress from inside the step (used when no metric is configured)."""
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise TypeError(f"ctx.report_progress: a number or None, not {value!r}")
        self.reported_progress = None if value is None else float(value)


class Step(Protocol):
    """The agent's step: called once per heartbeat with a :class:`StepContext`."""

    def __call__(self, ctx: StepContext, /) -> object:
        """Do one heartbeat's work."""
