"""Helpers for testing your own agents, metrics and detectors with heartbeat.

Public API, used by heartbeat's own tests too::

    from heartbeat.testing import FakeClock, action, history, run_ticks

    def test_my_agent_recovers(tmp_path):
        results = run_ticks(my_agent.step, tmp_path, ticks=4, progress=my_agent.progress)
        assert results[-1].decision.action == "continue"
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from .config.file import HeartbeatConfig
from .core.models import ActionRecord, ProgressSample
from .detect.detectors import History, fingerprint, summarize
from .detect.progress import ProgressMetric
from .tick.context import Step
from .tick.runner import Heartbeat, TickResult

__all__ = ["FakeClock", "action", "history", "make_heartbeat", "run_ticks"]

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


class FakeClock:
    """A clock you move by hand: pass it as ``clock=`` wherever heartbeat takes one."""

    def __init__(self, start: datetime = EPOCH, *, step: timedelta = timedelta(0)) -> None:
        if start.tzinfo is None:
            raise ValueError("FakeClock needs a timezone-aware start (heartbeat keeps UTC)")
        self.now = start
        self.step = step

    def __call__(self) -> datetime:
        """The current time; then advance by ``step``."""
        now = self.now
        self.now += self.step
        return now

    def advance(self, delta: timedelta) -> None:
        """Move the clock forward by ``delta``."""
        self.now += delta


def action(
    tool: str,
    args: Mapping[str, Any] | None = None,
    *,
    index: int = 1,
    tick: int = 1,
    output: str | None = "some output text",
    error: str | None = None,
    at: datetime = EPOCH,
) -> ActionRecord:
    """An ActionRecord as the recorder would build it (default detector settings)."""
    return ActionRecord(
        index=index,
        tick=tick,
        at=at,
        tool=tool,
        fingerprint=fingerprint(tool, args),
        summary=summarize(tool, args),
        output_len=None if output is None else len(output.strip()),
        error=error,
    )


def history(
    *calls: tuple[str, Mapping[str, Any] | None] | ActionRecord,
    progress: Sequence[float | None] = (),
    tick: int | None = None,
) -> History:
    """A detector History from ``("tool", {args})`` pairs (one per tick) and progress values."""
    actions = [
        call if isinstance(call, ActionRecord) else action(call[0], call[1], index=i, tick=i)
        for i, call in enumerate(calls, start=1)
    ]
    samples = [
        ProgressSample(tick=i, at=EPOCH + timedelta(minutes=i), value=value)
        for i, value in enumerate(progress, start=1)
    ]
    last = tick if tick is not None else max(len(actions), len(samples))
    return History(actions=actions, progress=samples, tick=last)


def make_heartbeat(
    step: Step,
    folder: Path,
    *,
    progress: ProgressMetric | None = None,
    clock: Callable[[], datetime] | None = None,
    **config: Any,
) -> Heartbeat:
    """A Heartbeat over ``folder/state`` with any config keys given as keyword arguments."""
    folder = Path(folder).absolute()  # the config resolves its paths against it: a relative one twice
    raw: dict[str, Any] = {
        "agent": {"state_dir": str(folder / "state"), "kill_file": str(folder / "KILL")},
        **config,
    }
    settings = HeartbeatConfig.model_validate({**raw, "base_dir": folder})
    if clock is None:
        return Heartbeat(settings, step=step, progress=progress)
    return Heartbeat(settings, step=step, progress=progress, clock=clock)


def run_ticks(
    step: Step,
    folder: Path,
    *,
    ticks: int,
    progress: ProgressMetric | None = None,
    clock: Callable[[], datetime] | None = None,
    **config: Any,
) -> list[TickResult]:
    """Run ``ticks`` heartbeats of ``step`` over ``folder/state`` and return their results."""
    heartbeat = make_heartbeat(step, folder, progress=progress, clock=clock, **config)
    return [heartbeat.tick() for _ in range(ticks)]
