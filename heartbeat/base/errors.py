"""The one error family of heartbeat.

Every error heartbeat raises on purpose is a :class:`HeartbeatError`. Each child
also subclasses the matching built-in, so ``except TimeoutError`` still works,
carries its data as attributes, and builds its one-line message itself::

    HeartbeatError                              exit code
    ├── UsageError(ValueError)                  2  bad flag, bad argument
    ├── ConfigError(ValueError)                 2  bad heartbeat.toml or plug-in path
    ├── StateCorrupt(ValueError)                2  state.json unreadable (copied aside)
    │   └── StateVersionError                   2  state.json written by a newer release
    ├── TraceError(ValueError)                  2  a bad line in a replay trace
    ├── StateWriteError(OSError)                2  a save failed; the previous state is intact
    │   ├── StateUnsavable                      2  the state holds what cannot be written and read back
    │   └── JournalUnwritable                   2  journal.jsonl cannot be appended to (found before the step)
    ├── StateLocked(TimeoutError)               5  another heartbeat holds the lock
    ├── Killed(RuntimeError)                    3  the KILL file is present
    ├── MetricError(RuntimeError)                  a progress metric failed (recorded, not fatal)
    └── NotifyError(RuntimeError)                  a notification was not delivered (kept in outbox/)

The exit codes are the CLI's; the library only raises. :data:`EXIT_CODES` is
the one table from a tick's outcome to its exit code, and :func:`worst_exit_code`
the one rule for several: the first of 3, 5, 2, 4, 6, 1 wins.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = [
    "EXIT_CODES",
    "EXIT_PRIORITY",
    "ConfigError",
    "HeartbeatError",
    "JournalUnwritable",
    "Killed",
    "MetricError",
    "NotifyError",
    "StateCorrupt",
    "StateLocked",
    "StateUnsavable",
    "StateVersionError",
    "StateWriteError",
    "TraceError",
    "UsageError",
    "worst_exit_code",
]

EXIT_CODES: Mapping[str, int] = {
    "ran": 0,  # acted (or the step raised: then 1, see TickResult)
    "paused": 0,
    "step_error": 1,
    "error": 2,  # bad usage, config or state; a state folder that cannot be written
    "killed": 3,
    "needs_human": 4,
    "locked": 5,
    "overdue": 6,  # `status` only: no heartbeat for too long (the dead man's switch)
}
"""Every outcome of a tick (and a CLI command) and the exit code it means."""

EXIT_PRIORITY: tuple[int, ...] = (3, 5, 2, 4, 6, 1, 0)
"""When several apply, the first of these wins."""


def worst_exit_code(codes: Iterable[int]) -> int:
    """The exit code that wins among ``codes`` (0 when there are none)."""
    rank = {code: i for i, code in enumerate(EXIT_PRIORITY)}
    return min(codes, key=lambda code: rank.get(code, len(rank)), default=0)


class HeartbeatError(Exception):
    """Base class of every error heartbeat raises on purpose."""

    exit_code: int = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UsageError(HeartbeatError, ValueError):
    """A flag or argument that cannot be used as given."""

    exit_code = 2


class ConfigError(HeartbeatError, ValueError):
    """A configuration file, key or plug-in path that is wrong."""

    exit_code = 2

    def __init__(self, reason: str, *, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.reason = reason
        super().__init__(f"{self.path}: {reason}" if self.path else reason)


class StateCorrupt(HeartbeatError, ValueError):
    """``state.json`` cannot be read; the original is untouched and copied aside."""

    exit_code = 2

    def __init__(self, path: Path, reason: str, *, copy: Path | None = None) -> None:
        self.path = path
        self.reason = reason
        self.copy = copy
        where = f" (left as is, copied to {copy.name})" if copy else " (left as is)"
        super().__init__(f"{path}: {reason}{where}")


class StateVersionError(StateCorrupt):
    """``state.json`` has a ``schema_version`` newer than this release understands."""

    def __init__(self, path: Path, version: int, supported: int) -> None:
        self.version = version
        self.supported = supported
        super().__init__(
            path,
            f"schema_version {version} is newer than this heartbeat understands ({supported}); "
            "upgrade heartbeat to read it",
        )


class TraceError(HeartbeatError, ValueError):
    """A replay trace line that is not a valid heartbeat record."""

    exit_code = 2

    def __init__(self, path: Path | str, line: int, reason: str) -> None:
        self.path = Path(path)
        self.line = line
        self.reason = reason
        super().__init__(f"{path}: line {line}: {reason}")


class StateWriteError(HeartbeatError, OSError):
    """Saving the state failed; the previous ``state.json`` is intact."""

    exit_code = 2

    def __init__(self, path: Path, reason: str, *, kept: bool = True) -> None:
        self.path = path
        self.reason = reason
        # kept=False: the state folder itself could not be made, so there was no state to keep.
        super().__init__(f"{path}: could not save state: {reason}{' (previous state kept)' if kept else ''}")


class StateUnsavable(StateWriteError):
    """The state holds a value that cannot be written as JSON and read back; nothing was written."""


class JournalUnwritable(StateWriteError):
    """``journal.jsonl`` cannot be appended to (a folder or a FIFO in its place, no permission).

    Found before the step, so the agent never acts with calls no journal can keep.
    """

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(path, f"the journal {path.name} cannot be written ({why})")
        self.message = f"{path}: the journal cannot be written ({why}); the step was not called"
        self.args = (self.message,)


class StateLocked(HeartbeatError, TimeoutError):
    """Another heartbeat holds the state folder's lock (or, for ``outbox drop``, the outbox's)."""

    exit_code = 5

    def __init__(self, lock_path: Path, holder: str = "another heartbeat holds the lock") -> None:
        self.lock_path = lock_path
        super().__init__(f"{lock_path}: {holder}; nothing was changed")


class ChangedMeanwhile(HeartbeatError, RuntimeError):
    """A human's command waited for a running tick, which left the agent waiting for a human in a way
    the command was not given for (an escalation, a pause): nothing was changed."""

    exit_code = 4


class Killed(HeartbeatError, RuntimeError):
    """The KILL file is present; its text is the reason."""

    exit_code = 3

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"stopped by {path}: {reason}")


class MetricError(HeartbeatError, RuntimeError):
    """A progress metric raised, timed out or returned something that is not a number."""

    exit_code = 1

    def __init__(self, metric: str, reason: str) -> None:
        self.metric = metric
        self.reason = reason
        super().__init__(f"progress metric {metric}: {reason}")


class NotifyError(HeartbeatError, RuntimeError):
    """A notifier could not deliver; the notification waits in ``outbox/``."""

    exit_code = 1

    def __init__(self, notifier: str, reason: str) -> None:
        self.notifier = notifier
        self.reason = reason
        super().__init__(f"notifier {notifier}: {reason}")
