"""What a guard records into: the :class:`Recorder` contract, a Monitor as one, a target made one.

:func:`as_recorder` turns what an adapter is bound to (the step's
:class:`~heartbeat.StepContext`, a Session or a path to its state folder, a
:class:`~heartbeat.Monitor`) into a :class:`Recorder`; :class:`MonitorRecorder`
is a Monitor with an optional KILL file, for a process that keeps one for its life.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from ..state.killswitch import KillSwitch, stopped_by

if TYPE_CHECKING:
    from ..core.models import Anomaly, ModelSpend
    from ..detect.monitor import Monitor

__all__ = ["MonitorRecorder", "Recorder", "as_recorder"]


def _utc_now() -> datetime:
    return datetime.now(UTC)


@runtime_checkable
class Recorder(Protocol):
    """What a guard records into: a :class:`~heartbeat.StepContext` or anything shaped like one."""

    @property
    def killed(self) -> bool:
        """True once the KILL file exists (read from disk each time)."""

    def record(
        self,
        tool: str,
        args: Mapping[str, Any] | None = None,
        *,
        output: str | None = None,
        error: str | BaseException | None = None,
        cost: float = 0.0,
    ) -> Anomaly | None:
        """Record one tool call; the anomaly it tripped, else None."""


class MonitorRecorder:
    """A :class:`~heartbeat.Monitor` as a recorder, for a process that keeps one for its life.

    ``kill_file`` is looked at before every tool call (never cached); without
    one only the detectors act. ``clock`` gives each action its time.
    """

    def __init__(
        self,
        monitor: Monitor,
        *,
        kill_file: str | Path | None = None,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        self.monitor = monitor
        self.kill = KillSwitch(Path(kill_file)) if kill_file is not None else None
        self._clock = clock
        self.usage: dict[str, ModelSpend] = {}
        """The model calls recorded, by model: tokens only (no budget, no prices here)."""

    def __repr__(self) -> str:
        return f"MonitorRecorder({self.monitor!r}, kill_file={self.kill.path if self.kill else None})"

    @property
    def killed(self) -> bool:
        """True once the KILL file exists."""
        return self.kill is not None and self.kill.reason() is not None

    def kill_reason(self) -> str | None:
        """The KILL file's text, or None."""
        return self.kill.reason() if self.kill is not None else None

    def stopped_by(self) -> str | None:
        """What stops the run now, as every part says it (``stopped by the KILL file <path>: why``)."""
        reason = self.kill_reason()
        return None if self.kill is None or reason is None else stopped_by(self.kill.name, reason)

    def record_usage(
        self,
        model: str,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cached_tokens: int = 0,
        *,
        cost: float | None = None,
    ) -> Anomaly | None:
        """Count one model call's tokens in :attr:`usage` (a Monitor has no budget: never an anomaly)."""
        from ..core.models import ModelSpend, add_spend

        spend = ModelSpend.model_construct(
            calls=1, input=input_tokens, output=output_tokens, cached=cached_tokens, cost=cost or 0.0,
            unpriced=0 if cost is not None else 1,
        )  # fmt: skip
        add_spend(self.usage, model, spend)
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
        """Record one tool call in the monitor, at the clock's time (the tool's name masked as
        ``ctx.record`` masks it: the anomalies name it, and a stop's message reaches a log)."""
        from ..base.credential_text import mask_name

        if isinstance(error, BaseException):
            error = f"{type(error).__name__}: {error}"
        return self.monitor.record(
            mask_name(tool),
            dict(args) if args is not None else None,
            output=output,
            error=error or None,
            cost=cost,
            now=self._clock(),
        )


def as_recorder(target: object, *, kill_file: str | Path | None = None) -> Recorder:
    """``target`` as a recorder: a StepContext or Session as is, a Monitor wrapped, a path as a Session.

    A path is a state folder, or a ``heartbeat.toml`` naming one (opened as
    :meth:`heartbeat.integrations.session.Session.from_files` does). ``kill_file`` applies
    to a Monitor or a path: a StepContext or Session already knows its KILL file.
    """
    # Duck-typed on the class: isinstance() on the runtime Protocol would evaluate ``killed``
    # (a read of the KILL file) and cost tens of microseconds per adapter built.
    kind = type(target)
    if callable(getattr(kind, "record", None)) and hasattr(kind, "killed"):
        if kill_file is not None:
            raise TypeError(
                "kill_file applies to a Monitor or a path; this target already knows its KILL file"
            )
        return cast(Recorder, target)
    from ..detect.monitor import Monitor

    if isinstance(target, Monitor):
        return MonitorRecorder(target, kill_file=kill_file)
    if isinstance(target, str | Path):
        from .session import Session

        path = Path(target)
        if path.suffix == ".toml":
            return Session.from_files(path, kill_file=kill_file)
        return Session.from_files(state_dir=path, kill_file=kill_file)
    raise TypeError(
        "bind a guard to a StepContext (ctx), a heartbeat Session or state folder, a heartbeat.Monitor, "
        f"or an object with record() and killed, not {type(target).__name__}"
    )
