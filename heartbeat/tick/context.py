"""What the agent's step sees: its data, its instructions and a recorder for actions."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from ..base.credential_text import mask_name
from ..config.file import BudgetConfig
from ..core.budget import overspent
from ..core.models import Anomaly, BudgetCounters, ModelSpend, add_spend, clip, printable, rose_at
from ..detect.bookkeeping import bookkeeping
from ..detect.detectors import ActionView
from ..detect.evidence import made_of, standing
from ..detect.idle import looked_once, quiet_before
from ..detect.monitor import Monitor
from ..detect.recorded import journal_keys
from ..state.killswitch import KillSwitch, fleet_stop_name, stopped_by

if TYPE_CHECKING:
    from ..core.prices import Pricer

__all__ = ["Step", "StepContext", "action_error", "priced_call", "spend_events"]


def action_error(error: str | BaseException | None, redact: Callable[[str], str]) -> str | None:
    """An action's error as ``ctx.record`` hands it to the detectors: an exception as ``Type: text``,
    known secrets redacted, cut; None for no error (or an empty one).

    The Monitor keeps it escaped and credential-masked
    (:func:`~heartbeat.detect.detectors.fingerprints.error_text`); its keys read it unescaped.
    """
    if isinstance(error, BaseException):
        error = f"{type(error).__name__}: {error}"
    return clip(redact(error)) if error else None


def _shown_model(model: str) -> str:
    """A model's name as it is kept and shown: masked (a key or a URL's password in it is not), one
    line of text (named by a framework or an API's answer: shown to people)."""
    model = mask_name(model)
    return model if model.isprintable() else printable(model)


def priced_call(
    model: str,
    input_tokens: int,
    output_tokens: int,
    cached_tokens: int,
    cost: float | None,
    pricer: Callable[[], Pricer] | None,
    clock: Callable[[], datetime],
    unpriced: dict[str, str],
) -> tuple[str, ModelSpend, datetime]:
    """One model call as ``ctx.record_usage`` counts it: (its model, as people read it; its spend;
    the clock's time, read once the arguments are checked).

    The arguments are checked (TypeError, ValueError). With no ``cost``, ``pricer``
    (``[budget.prices]``, then genai-prices) prices it; a model with no price is
    counted in tokens only (``unpriced`` 1) and named in ``unpriced`` with why, once.
    """
    if not isinstance(model, str) or not model:
        raise TypeError(f"ctx.record_usage: model must be a non-empty str, not {model!r}")
    model = _shown_model(model)
    for value in (input_tokens, output_tokens, cached_tokens):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"ctx.record_usage: token counts must be ints >= 0, not {value!r}")
    if cost is not None and (
        isinstance(cost, bool) or not isinstance(cost, int | float) or not math.isfinite(cost) or cost < 0
    ):
        raise ValueError(f"ctx.record_usage: cost must be a finite number >= 0, not {cost!r}")
    now = clock()
    if cost is None and pricer is not None:
        prices = pricer()
        cost = prices.price(model, input_tokens, output_tokens, cached_tokens, at=now)
        if cost is None and model not in unpriced:
            unpriced[model] = prices.unknown(model) or "no price known"
    elif cost is None and model not in unpriced:
        unpriced[model] = "no price known"
    spend = ModelSpend.model_construct(
        calls=1,
        input=input_tokens,
        output=output_tokens,
        cached=min(cached_tokens, input_tokens),
        cost=0.0 if cost is None else float(cost),
        unpriced=0 if cost is not None else 1,
    )
    return model, spend, now


def spend_events(
    usage: Mapping[str, ModelSpend],
    tokens: int,
    cost: float,
    unpriced: Mapping[str, str],
    known: Mapping[str, ModelSpend],
) -> list[dict[str, Any]]:
    """The journal events of a heartbeat's spend: an ``unpriced`` event for each model with no price
    that ``known`` (the state's totals) has not seen unpriced before, then one ``spend`` event
    (``tokens`` and ``cost`` in all, and ``usage`` by model)."""
    events: list[dict[str, Any]] = []
    for model, why in unpriced.items():
        seen = known.get(model)
        if seen is None or not seen.unpriced:
            events.append({"event": "unpriced", "model": model, "reason": why})
    models = {model: spend.model_dump() for model, spend in usage.items()}
    events.append({"event": "spend", "tokens": tokens, "cost": cost, "models": models})
    return events


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
        fleet: _Switch | None = None,
        observing: bool = False,
        pricer: Callable[[], Pricer] | None = None,
        pausing: Callable[[], str | None] | None = None,
        by_person: bool = False,
    ) -> None:
        self.agent = agent
        self.tick = tick
        self.now = now
        self._data = data
        self.instructions = instructions
        # Whether ``instructions`` are a person's resume note, not the policy's recovery text.
        self.instructions_by_person = by_person and instructions is not None
        self.state_dir = state_dir
        self.base_dir = base_dir
        self.actions = 0
        self.observing = observing
        """``[policy] mode = "observe"``: adapters record and report, and never redirect or stop a run."""
        self.budget_anomaly: Anomaly | None = None
        self.usage: dict[str, ModelSpend] = {}
        """This heartbeat's model calls, by model (see :meth:`record_usage`)."""
        self.tick_tokens = 0
        self.tick_cost = 0.0
        """Dollars this heartbeat: its model calls and the ``cost`` of its actions."""
        self.unpriced: dict[str, str] = {}
        """Models of this heartbeat with no known price, and why (their tokens still count)."""
        self.reported_progress: float | None = None
        self._monitor = monitor
        self._budget = budget
        self._counters = counters
        self._kill = kill
        self._fleet = fleet  # the fleet stop as a watcher reads it (never blocks), or None
        self._clock = clock
        self._redact = redact
        # Known secrets masked out of args and output before anything is summarised or cut,
        # so a token the agent passes to a tool never reaches state.json or the journal.
        self._mask = mask
        # Every action of this tick as the detectors saw it, for the journal: the saved
        # history keeps only the last few, a tick may record many more.
        self.recorded: list[ActionView] = []
        self._pricer = pricer
        self._pausing = pausing  # a `heartbeat pause` waiting for this tick's lock (one stat)
        # The calls this heartbeat has looked at, each once and nothing else done; None once it
        # did more (see record: a wake-up's round is judged whole).
        self._looks: set[str] | None = set()
        # A model's run goes through this context (a framework adapter's Guard bound to it): a
        # pattern its own calls make in the heartbeat is answered at once, not held (see record).
        self.model_run = False
        self.heard = True
        """Whether the agent can hear instructions mid-run; False for one only observed (the
        OpenTelemetry processor): the policy then never says it ignored a recovery it was not told."""
        self._kept: Callable[[ActionView], bool] | None = None  # bookkeeping after the last heartbeat
        self._quiet: int | None = None  # the last action of a quiet wake-up just before, else 0 (see record)
        self._quiet_at = 0  # the newest action when it was computed
        # Calls an adapter's Guard let run and has not recorded yet, by call: a step abandoned on
        # KILL journals them as calls that may have run (see heartbeat.tick.late.account_step).
        self._flying: dict[object, list[Any]] = {}
        self._models_flying: dict[object, str] = {}  # model calls an adapter let go, not answered yet

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
    def turn(self) -> bool:
        """Whether this heartbeat is a live agent's next model turn, not a scheduled wake-up.

        A Session sets it for a stretch begun soon after its last one; a turn
        that only looks again is then judged as the agent asking again, never
        as an idle wake-up (the journal's ``tick`` event keeps it for replay).
        """
        return self._monitor.turn is True

    @turn.setter
    def turn(self, value: bool) -> None:
        self._monitor.turn = bool(value)

    @property
    def findings(self) -> list[Anomaly]:
        """This heartbeat's findings so far, oldest first, each kind once."""
        return list(self._monitor.tick_anomalies)

    @property
    def killed(self) -> bool:
        """True once a KILL file has appeared or the fleet stop is engaged: a cooperative step stops early."""
        return self.kill_reason() is not None

    def kill_reason(self) -> str | None:
        """Why the step must stop now: the KILL file's text, else the fleet stop's (``[stop]``), else None."""
        found = self._stop()
        return None if found is None else found[1]

    def stopped_by(self) -> str | None:
        """What stops the step now, as every part says it (``stopped by the KILL file <path>: why``),
        else None."""
        found = self._stop()
        return None if found is None else stopped_by(*found)

    def pause_requested(self) -> str | None:
        """The reason of a person's ``heartbeat pause`` that waits for this tick to end, else None.

        A step that stops early lets the person in (an adapter bound to ``ctx`` stops
        its run on it); one that goes on keeps them waiting, up to 15 s.
        """
        return self._pausing() if self._pausing is not None else None

    def _stop(self) -> tuple[str, str] | None:
        """(the switch, its reason) of the KILL file, else of the fleet stop, else None."""
        reason = self._kill.reason()
        if reason is not None:
            return self._kill.name, reason
        if self._fleet is not None and (reason := self._fleet.reason()) is not None:
            return fleet_stop_name(self._fleet.where), reason
        return None

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
        if not math.isfinite(self._counters.cost + cost):
            raise ValueError("ctx.record: the day's total cost would overflow; report smaller units")
        now = self._clock()
        # The name is kept and shown as it is (state.json's tool, the journal, anomaly messages):
        # a credential in it is masked, as it is in the call's summary.
        tool = mask_name(tool)
        copied = self._mask(dict(args)) if args is not None else None
        error = action_error(error, self._redact)
        output = None if output is None else self._mask(str(output))
        hit = self._monitor.record(
            tool,
            copied,
            output=output,
            error=error,
            cost=float(cost),
            now=now,
        )
        newest = cast(ActionView, self._monitor.newest)  # the action just recorded
        self.recorded.append(newest)
        self.actions += 1
        self._counters.actions += 1
        self._counters.cost += float(cost)
        self.tick_cost += float(cost)
        looks = self._looks
        if looks is not None and not looked_once(looks, newest) and not self._bookkeeping(newest):
            looks = self._looks = None
        if hit is not None and not self.turn:
            held = looks is not None and (not self.model_run or made_of(hit) > len(self.recorded))
            if held or self._rising(hit.kind) or self._after_quiet(hit):
                # A wake-up of the schedule that has only looked, each call once (its bookkeeping
                # aside), is going round the sources it looks at: it is not stopped mid-round. The
                # finding stays this heartbeat's, and the heartbeat judges the round whole when the
                # step returns (an idle wake-up's looks finding no work, a watcher's round seeing
                # something move, are no finding), so the step is never told what its end drops: a
                # step told mid-round stops before it acts, and its looks alone then read as an idle
                # wake-up. A model's run (model_run) is told at once of a pattern its own calls make
                # (going on with other calls), and held only for one made of the wake-ups before.
                # Nor is a step whose metric rose at its last sample told of a finding its next
                # sample may overrule (a lead enricher's third reworded search finding nothing, its
                # fallback's last before it files the lead for research), nor of one made of a
                # quiet wake-up just before, which the heartbeat's end drops as well (a link
                # checker's quiet rounds, when it files an issue at last). Once the step acts,
                # writes, fails or asks a call again, after a heartbeat that moved nothing, a finding
                # is answered at once.
                hit = None
        return self._over_budget(now, tool) or hit

    def _rising(self, kind: str) -> bool:
        """Whether a ``kind`` finding is one the metric overrules and its last sample rose: the
        heartbeat's own sample, taken when the step returns, may overrule it as well."""
        if kind not in self._monitor.stretch:
            return False
        measured = [sample for sample in self._monitor.progress if sample.value is not None]
        return bool(measured) and rose_at(measured) == measured[-1].tick

    def _after_quiet(self, hit: Anomaly) -> bool:
        """Whether ``hit`` holds the looks of a quiet wake-up just before, which speaks for them as a
        rise does (see :meth:`Monitor.add_progress`); for answers of nothing, only its re-polls."""
        if hit.kind not in self._monitor.stretch:
            return False
        newest = self._monitor.newest
        if self._quiet is None or (newest is not None and self._quiet == self._quiet_at < newest.index):
            # Computed again while its re-polls may go on (the newest action was one of them).
            self._quiet = quiet_before(self._monitor.history, self._monitor.tick)
            self._quiet_at = newest.index if newest is not None else 0
        return bool(self._quiet) and not standing([hit], self._monitor.stretch, 0, quiet=self._quiet)

    def _bookkeeping(self, action: ActionView) -> bool:
        """Whether ``action`` keeps the agent's own record as the heartbeat before did (a line
        appended to its log, the time it last ran saved): no more than a look (see record)."""
        if self._kept is None:
            kept = [a for a in self._monitor.history if a.tick < self._monitor.tick]
            self._kept = bookkeeping([a for a in kept if a.tick == kept[-1].tick] if kept else [])
        return self._kept(action)

    def record_usage(
        self,
        model: str,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cached_tokens: int = 0,
        *,
        cost: float | None = None,
    ) -> Anomaly | None:
        """Record one model call's tokens (spend, not an action: the detectors never see it).

        ``input_tokens`` include the ``cached_tokens``. ``cost`` in dollars
        when the caller knows it; else ``[budget.prices]`` or genai-prices
        price it, and a model neither knows is counted in tokens only (see
        :attr:`unpriced`). Returns the budget anomaly once a token or cost
        limit is passed (the heartbeat then pauses), else None.
        """
        model, spend, now = priced_call(
            model, input_tokens, output_tokens, cached_tokens, cost, self._pricer, self._clock, self.unpriced
        )
        if not math.isfinite(self._counters.cost + spend.cost):
            raise ValueError("ctx.record_usage: the day's total cost would overflow")
        add_spend(self.usage, model, spend)
        add_spend(self._counters.models, model, spend)
        tokens = spend.input + spend.output
        self.tick_tokens += tokens
        self.tick_cost += spend.cost
        self._counters.tokens += tokens
        self._counters.cost += spend.cost
        return self._over_budget(now, None, model)

    def _over_budget(self, now: datetime, tool: str | None, model: str | None = None) -> Anomaly | None:
        """The budget anomaly once a limit is passed (the first one stays), else None."""
        reason = overspent(
            self._counters, self.actions, self._budget, tick_tokens=self.tick_tokens, tick_cost=self.tick_cost
        )
        if reason is None:
            return None
        if self.budget_anomaly is None:
            evidence: dict[str, Any] = {
                "actions_this_tick": self.actions,
                "actions_today": self._counters.actions,
                "cost_today": self._counters.cost,
            }
            if self.tick_tokens or self._counters.tokens:
                evidence.update(tokens_this_tick=self.tick_tokens, tokens_today=self._counters.tokens)
            if model is not None:
                evidence["model"] = model
            self.budget_anomaly = Anomaly(
                kind="budget",
                message=reason,
                tick=self.tick,
                action=self._monitor.actions_total,
                at=now,
                tool=tool,
                evidence=evidence,
            )
        return self.budget_anomaly

    def spend_events(self, known: Mapping[str, ModelSpend]) -> list[dict[str, Any]]:
        """This heartbeat's journal events of spend (see :func:`spend_events`); none when it spent nothing."""
        if not self.usage and not self.tick_cost:
            return []
        return spend_events(self.usage, self.tick_tokens, self.tick_cost, self.unpriced, known)

    def action_events(self) -> list[dict[str, Any]]:
        """One journal event per action of this tick, also those the bounded history no longer holds.

        Each holds what the detectors computed from the call (see
        :func:`~heartbeat.detect.recorded.journal_keys`): digests of the arguments and
        of the output or error, never the output, so ``heartbeat replay`` of
        the journal feeds the detectors what the live run did.
        """
        events = []
        for action in self.recorded:
            events.append(
                {
                    "event": "action",
                    "index": action.index,
                    "tool": action.tool,
                    "summary": action.summary,
                    "at": action.at,  # when it happened (the journal's stamp is the tick's end)
                    "output_len": action.output_len,
                    "error": action.error,
                    "cost": action.cost,
                    **journal_keys(action),
                }
            )
        return events

    def began(self, key: object, tool: str, args: Mapping[str, Any] | None) -> None:
        """An adapter let the call ``key`` (``tool`` with ``args``) run; :meth:`ended` once recorded."""
        flying = self._flying.get(key)
        if flying is None:
            self._flying[key] = [tool, args, 1]
        else:
            flying[2] += 1  # the same call twice at once (parallel tool calls)

    def ended(self, key: object) -> None:
        """The call ``key`` that :meth:`began` is being recorded (finished, failed or cancelled)."""
        flying = self._flying.get(key)
        if flying is not None:
            flying[2] -= 1
            if not flying[2]:
                del self._flying[key]

    def take_in_flight(self) -> list[tuple[str, Mapping[str, Any] | None]]:
        """The calls still running (began, not ended), each once per run of it; forgotten here."""
        flying, self._flying = self._flying, {}
        return [(tool, args) for tool, args, count in list(flying.values()) for _ in range(count)]

    def model_began(self, key: object, model: str) -> None:
        """An adapter let the model call ``key`` (to ``model``) go; :meth:`model_ended` once it answered."""
        self._models_flying[key] = _shown_model(model)

    def model_ended(self, key: object) -> None:
        """The model call ``key`` that :meth:`model_began` answered or failed."""
        self._models_flying.pop(key, None)

    def take_models_in_flight(self) -> list[str]:
        """The models of the calls sent and not answered (began, not ended); forgotten here."""
        flying, self._models_flying = self._models_flying, {}
        return list(flying.values())

    def report_progress(self, value: float | None) -> None:
        """Report progress from inside the step (used when no metric is configured)."""
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise TypeError(f"ctx.report_progress: a number or None, not {value!r}")
        self.reported_progress = None if value is None else float(value)


class _Switch(Protocol):
    @property
    def where(self) -> str: ...

    def reason(self) -> str | None: ...


class Step(Protocol):
    """The agent's step: called once per heartbeat with a :class:`StepContext`."""

    def __call__(self, ctx: StepContext, /) -> object:
        """Do one heartbeat's work."""
