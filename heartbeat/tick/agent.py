"""What the tick's helpers see of the :class:`~heartbeat.tick.runner.Heartbeat` that calls them.

The runner hands itself to :mod:`.control`, :mod:`.stepcall` and
:mod:`.effects`; they name this Protocol, not the runner, so no helper
imports the module that imports it (a port, in import-linter's words). A
``Heartbeat`` is one; so is anything a test builds with the same members.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..config.file import AgentConfig, HeartbeatConfig
    from ..core.models import AgentState
    from ..core.result import TickResult
    from ..detect.detectors import Detector
    from ..detect.progress import ProgressMetric
    from ..notify.outbox import Outbox
    from ..state.killswitch import KillSwitch
    from ..state.store import StateStore
    from .context import Step
    from .plugins import AgentPlugins
    from .sharedstop import SharedStop
    from .stepguard import Closing, StepGuard

__all__ = ["Agent"]


class Agent(Protocol):
    """One agent's heartbeat as its tick's helpers use it: its config, files, plug-ins and hooks."""

    config: HeartbeatConfig
    agent: AgentConfig
    name: str
    clock: Callable[[], datetime]
    state_dir: Path
    store: StateStore
    kill: KillSwitch
    detectors: list[Detector]
    shared_stop: SharedStop | None
    on_abandon: Callable[[TickResult], None] | None
    plugins: AgentPlugins
    stepping: StepGuard | None
    delivering: Closing | None
    signalled: Callable[[], str | None] | None
    """Set by what runs the tick (``run``, a Session): why SIGTERM or SIGINT is ending the process
    (``stopped by SIGTERM``), else None. A tick then begins no step and no measurement, and waits
    for none still running (``heartbeat tick`` has the signal's exception unwind it instead)."""

    def step(self) -> Step: ...

    def metric(self) -> ProgressMetric | None: ...

    def journal(self, events: Sequence[Mapping[str, Any]], now: datetime, tick: int) -> None: ...

    def outbox(self) -> Outbox: ...

    def outbox_waiting(self) -> bool: ...

    def read_state(self) -> AgentState: ...

    def redact(self, text: str) -> str: ...

    def mask(self, value: Any) -> Any: ...
