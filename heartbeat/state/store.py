"""The state folder: its lock, and ``state.json`` loaded (migrated, validated) and saved.

``state.json`` is the only memory a scheduled agent has between runs, so it is
handled with care:

* **Lock.** One heartbeat at a time per state folder, through a sidecar
  ``.lock`` file (flock). ``state.json`` itself is never locked: ``os.replace``
  swaps its inode, and a lock on the old inode would let a second process in.
  The kernel drops the lock when its holder dies, even by SIGKILL.
* **Save.** :func:`heartbeat.base.fsutil.atomic_write`: a reader (or the next tick
  after a crash) sees the old state or the new one, never a mix.
* **Load** (:class:`heartbeat.state.reader.StateReader`). A file heartbeat
  cannot read is never overwritten or deleted: it stays in place and a
  byte-for-byte copy is put beside it as ``state.json.corrupt-<UTC stamp>``,
  so a human can look at it and fix it. A newer ``schema_version`` is refused
  and left alone. An older one is migrated in memory through
  :data:`MIGRATIONS`; the old file is copied aside as
  ``state.json.v<N>-<stamp>`` just before the first save overwrites it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from filelock import FileLock, Timeout
from pydantic_core import PydanticSerializationError, from_json

from ..base.errors import JournalUnwritable, StateLocked, StateUnsavable, StateWriteError
from ..base.fsutil import (
    PRIVATE_FILE_MODE,
    QuietFolder,
    append_problem,
    atomic_write,
    ensure_private_dir,
    read_regular,
    remove_temps,
    room_for,
    room_problem,
    sweep_temps,
)
from ..base.kept_data import mask_data
from ..core.models import SCHEMA_VERSION, AgentState
from .copies import copy_aside, long_digit_run, one_line
from .migrations import MIGRATIONS, Migration, MigrationError, check_migrations, migrate
from .reader import StateReader

if TYPE_CHECKING:
    from .text import StateText

__all__ = [
    "MIGRATIONS",
    "Migration",
    "MigrationError",
    "Saved",
    "StateStore",
    "migrate",
    "state_schema",
]

STATE_FILE = "state.json"
LOCK_FILE = ".lock"
RUN_LOCK_FILE = ".run.lock"
JOURNAL_FILE = "journal.jsonl"
OUTBOX_DIR = "outbox"
ESCALATION_FILE = "ESCALATION.md"
REPORT_FILE = "report.html"
NO_ROOM_FILE = ".no-room"
"""Written when a save found no room: its size, so no step runs until that much fits."""
EXEC_SCRATCH_PREFIX = ".exec-"
"""Prefix of the scratch folder an ``--exec`` step gets inside the state folder."""
# Temps of these files are never removed by clean_stale: the KILL file is written without
# the lock, on purpose (`heartbeat kill` must work while a tick runs).
_UNLOCKED_WRITES = frozenset({"KILL"})

_UNWRITABLE = "the state folder cannot be written; the step is not called"


class Saved(NamedTuple):
    """What :meth:`StateStore.save` wrote last: the bytes, and whether they are the state as it is."""

    data: bytes
    exact: bool
    """True when no secret was masked out: loading ``data`` gives back the values that were saved."""


def state_schema() -> dict[str, Any]:
    """The JSON Schema of ``state.json`` (printed by ``heartbeat schema``)."""
    return AgentState.model_json_schema()


def _missing_folders(path: Path) -> list[Path]:
    """``path`` and those of its parents that do not exist, deepest first."""
    missing = []
    while not os.path.lexists(path) and path != path.parent:
        missing.append(path)
        path = path.parent
    return missing


def _utc_now() -> datetime:
    return datetime.now(UTC)


class StateStore:
    """One agent's state folder: lock it, load ``state.json``, save it atomically.

    Not thread-safe, and :meth:`lock` is not re-entrant: taking it twice in one
    process, even through the same store, raises :class:`StateLocked`.
    """

    def __init__(
        self,
        state_dir: Path | str,
        *,
        migrations: Sequence[Migration] = MIGRATIONS,
        current_version: int = SCHEMA_VERSION,
        clock: Callable[[], datetime] = _utc_now,
        secrets: Sequence[str] = (),
        on_scratch: Callable[[str], object] | None = None,
    ) -> None:
        check_migrations(migrations, current_version)
        self._on_scratch = on_scratch
        """Called with a scratch folder a dead ``--exec`` tick left, before it is removed (the runner
        ends what still runs in it: :func:`heartbeat.tick.orphans.end_processes_of`)."""
        self.secrets = list(secrets)
        """Masked out of ``state.json`` on every save (see :func:`heartbeat.base.redact.mask`)."""
        self._state_dir = Path(state_dir)
        # The paths, built once: pathlib joins cost microseconds, and a tick asks often.
        self._state_path = self._state_dir / STATE_FILE
        self._lock_path = self._state_dir / LOCK_FILE
        self._journal_path = self._state_dir / JOURNAL_FILE
        self._outbox_dir = self._state_dir / OUTBOX_DIR
        self._escalation_path = self._state_dir / ESCALATION_FILE
        self._report_path = self._state_dir / REPORT_FILE
        self._reader = StateReader(
            self._state_path, migrations=tuple(migrations), current_version=current_version, clock=clock
        )
        self._clock = clock
        self._locked = False
        self._file_locks: dict[float, FileLock] = {}
        # The records' texts of the last save, for the next one; made at the second save, so a
        # store that saves once (a cron tick) never loads heartbeat.state.text.
        self._text: StateText | None = None
        self._saved_before = False
        self.last_save: Saved | None = None
        """What the last successful :meth:`save` wrote (None before one and after a failed one)."""
        # Whether the lock may skip clean_stale's scan: the folder is as this store left it.
        self._quiet = QuietFolder()
        self._outbox_seen = False  # outbox/ was there at the last scan: its temps are looked for
        self._no_room_noted = False  # NO_ROOM_FILE is there: the next good save removes it

    def __repr__(self) -> str:
        return f"StateStore({str(self._state_dir)!r})"

    @property
    def state_dir(self) -> Path:
        """The state folder."""
        return self._state_dir

    @property
    def state_path(self) -> Path:
        """``state.json``: the agent state."""
        return self._state_path

    @property
    def lock_path(self) -> Path:
        """``.lock``: the sidecar file the lock is taken on."""
        return self._lock_path

    @property
    def journal_path(self) -> Path:
        """``journal.jsonl``: the event journal."""
        return self._journal_path

    @property
    def outbox_dir(self) -> Path:
        """``outbox/``: notifications not yet delivered."""
        return self._outbox_dir

    @property
    def escalation_path(self) -> Path:
        """``ESCALATION.md``: present while a human is needed."""
        return self._escalation_path

    @property
    def report_path(self) -> Path:
        """``report.html``: the agent's page beside ``ESCALATION.md`` (see :mod:`heartbeat.report.write`)."""
        return self._report_path

    @property
    def locked(self) -> bool:
        """Whether this store holds the lock right now."""
        return self._locked

    @contextmanager
    def lock(self, timeout: float = 0) -> Iterator[StateStore]:
        """Hold the state folder's lock for the ``with`` block; busy -> :class:`StateLocked`.

        ``timeout`` is how long to wait for a busy lock, in seconds: the
        default 0 means one try, a negative value waits for as long as it
        takes. The state folder is created (0700) if missing. Once the lock
        is held, what killed writers left behind is removed
        (:meth:`clean_stale`; its scan is skipped while the folder is as this
        store last left it clean, and done at least every 16th time).
        """
        try:
            folder: os.stat_result | None = os.stat(self._state_dir)  # isdir's stat, mtime for _sweep
        except OSError:
            folder = None
        created: list[Path] = []  # the folders this call made: a failed command leaves none behind
        if folder is None or not stat.S_ISDIR(folder.st_mode):
            folder = None
            created = _missing_folders(self._state_dir)
            self._make_folder()
        if self._locked:  # held by this store already (another thread, or a nested with)
            raise StateLocked(self.lock_path)
        # One FileLock object per timeout, reused: building one costs about as much as taking
        # it. filelock keeps its state per thread, so a second thread still finds it busy.
        file_lock = self._file_locks.get(timeout)
        if file_lock is None:
            file_lock = FileLock(self.lock_path, timeout=timeout, mode=PRIVATE_FILE_MODE)
            self._file_locks[timeout] = file_lock
        try:
            file_lock.acquire()
        except Timeout:
            raise StateLocked(self.lock_path) from None
        except OSError as exc:
            raise StateWriteError(self.lock_path, f"cannot take the lock: {exc.strerror}") from exc
        self._locked = True
        try:
            self._sweep(folder)
            yield self
        except BaseException:
            # A command that failed having written nothing (a tick whose step cannot be loaded, in
            # a folder this call made or `init`'s empty one) leaves the folder as it found it.
            self._unmake(created)
            raise
        finally:
            self._locked = False
            file_lock.release()

    def _unmake(self, created: list[Path]) -> None:
        """Remove the lock file and the folders this lock made, when nothing but the lock file is in
        the state folder (lock held).

        Why after the fact, not by loading the step before the lock: loading runs the agent's
        module code, which must not run while another tick holds the lock (exit 5 changes
        nothing) nor at every tick of a paused or waiting agent (it never loads its step), and a
        step broken meanwhile must not turn their exit 0 or 4 into 2. Why it is safe: a folder
        holding nothing but the lock file has no state, journal or pause request, so no tick,
        pause or Session ever used it but one racing this very tick; a concurrent tick never
        waits (exit 5), a waiting `pause` writes its request first (then the file stays), and
        filelock polls without blocking, so a waiter can only lock the unlinked file in the
        microseconds between the unlink and the release that follows (filelock 3.21 and later check
        for that too).
        A tick ended outright (SIGKILL, KILL while loading: journaled) leaves it, as before.
        """
        try:
            if {entry.name for entry in os.scandir(self._state_dir)} - {LOCK_FILE}:
                return  # something was written: it stays
            self._lock_path.unlink(missing_ok=True)
            for path in created:  # deepest first
                path.rmdir()
        except OSError:
            pass  # a folder someone else filled meanwhile: it stays

    def cannot_make(self) -> str | None:
        """Why the state folder could not be made (the nearest existing folder above it is a file,
        or cannot be written), or None: said before any folder of a fleet is made or locked."""
        missing = _missing_folders(self._state_dir)
        if not missing:
            return None
        above = missing[-1].parent
        if not above.is_dir():
            return f"cannot create the state folder: {above} is not a folder"
        if not os.access(above, os.W_OK | os.X_OK):
            return f"cannot create the state folder: {above} cannot be written"
        return None

    def _make_folder(self) -> None:
        """Create the state folder (0700); :class:`StateWriteError` when it cannot be (no state to keep)."""
        try:
            ensure_private_dir(self._state_dir)
        except OSError as exc:
            reason = f"cannot create the state folder: {exc.strerror}"
            raise StateWriteError(self._state_dir, reason, kept=False) from exc

    @contextmanager
    def run_lock(self) -> Iterator[StateStore]:
        """Held by ``heartbeat run`` for its whole life: a second run on the folder gets StateLocked.

        A separate file from the tick lock, so a cron ``heartbeat tick`` and
        the commands still work beside a run (they take the tick lock).
        """
        if not os.path.isdir(self._state_dir):
            self._make_folder()
        path = self._state_dir / RUN_LOCK_FILE
        run_lock = FileLock(path, timeout=0, mode=PRIVATE_FILE_MODE)
        try:
            run_lock.acquire()
        except Timeout:
            raise StateLocked(path, "another `heartbeat run` drives this state folder") from None
        except OSError as exc:
            raise StateWriteError(path, f"cannot take the lock: {exc.strerror}") from exc
        try:
            yield self
        finally:
            run_lock.release()

    def _sweep(self, folder: os.stat_result | None) -> None:
        """:meth:`clean_stale`, skipped while the folder is as this store last left it clean.

        ``folder``: its stat, read just before the lock was taken (see
        :class:`~heartbeat.base.fsutil.QuietFolder` for why that is enough).
        outbox/ is a folder of its own: its temps are looked for whenever it
        was there at the last scan.
        """
        if self._quiet.unchanged(folder):
            if self._outbox_seen:
                remove_temps(str(self._outbox_dir))
            return
        removed, clean = self._scan()
        self._quiet.scanned(folder, clean and removed == 0)

    def clean_stale(self) -> int:
        """Remove what a SIGKILLed writer or ``--exec`` step left in the state folder; return how many.

        One pass over the folder: temp files of :func:`~heartbeat.base.fsutil.atomic_write`
        (``.state.json.*.tmp``, ``.ESCALATION.md.*.tmp``, any ``.<name>.*.tmp``)
        and ``.exec-*`` scratch folders (ending any process still running from
        one: :mod:`heartbeat.tick.orphans`). Every writer of those holds the lock,
        so this runs only while this store holds it (a no-op otherwise). The
        KILL file's temps are spared: ``heartbeat kill`` writes without the lock.
        Failures to remove are ignored; the next tick tries again.
        """
        return self._scan()[0] if self._locked else 0

    def _scan(self) -> tuple[int, bool]:
        """:meth:`clean_stale`'s pass: how many were removed, and whether all that was stale went."""
        removed, clean, self._outbox_seen = sweep_temps(
            self._state_dir,
            subfolder=OUTBOX_DIR,
            spare=(LOCK_FILE, RUN_LOCK_FILE),
            spare_temps_of=_UNLOCKED_WRITES,
            scratch_prefix=EXEC_SCRATCH_PREFIX,
            on_scratch=self._on_scratch,
        )
        return removed, clean

    def load(self) -> AgentState:
        """Read ``state.json``: missing -> a fresh state; old -> migrated; bad -> :class:`StateCorrupt`."""
        return self._reader.decode(self._reader.read())

    def reload(self, last: Saved, state: AgentState | None) -> tuple[AgentState, bool]:
        """:meth:`load`, and whether ``state.json`` still holds, byte for byte, what was saved as ``last``.

        Then ``state`` (if given) comes back as is, unparsed: the caller vouches
        it is what parsing ``last.data`` gives (see :mod:`heartbeat.state.warm`).
        """
        raw_bytes = self._reader.read()
        unchanged = raw_bytes is not None and last.exact and raw_bytes == last.data
        if unchanged and state is not None and raw_bytes is not None:
            self._reader.size = len(raw_bytes)
            return state, True
        return self._reader.decode(raw_bytes), unchanged

    def save(self, state: AgentState) -> Saved:
        """Write ``state.json`` atomically (0600, indented); failure -> :class:`StateWriteError`.

        The state folder is created (0700) if missing. Temp files a killed
        writer left behind are removed when the lock is taken, not here.
        Returns what was written (also kept as :attr:`last_save`).
        """
        path = self.state_path
        self.last_save = None
        kept = mask_data(state.data)  # a plain file a person reads: no credential the agent kept
        exact = kept is state.data
        if not exact:
            state = state.model_copy(update={"data": kept})
        try:
            if self._text is None and self._saved_before:
                from .text import StateText

                self._text = StateText()
            text = state.model_dump_json(indent=2) if self._text is None else self._text.dump(state)
        except (PydanticSerializationError, ValueError, RecursionError) as exc:
            reason = f"the state is not JSON-serialisable: {one_line(str(exc))}"
            raise StateUnsavable(path, reason) from exc
        if self.secrets:
            from ..base.redact import mask

            masked = mask(text, self.secrets)  # what the agent recorded, a secret included
            exact, text = exact and masked == text, masked
        data = text.encode("utf-8") + b"\n"
        if long_digit_run(data):
            # Written fine, but a number past Python's digit limit cannot be read back: a tick
            # would save it once, then every later load would fail. Parsed to tell it from a
            # long string of digits.
            try:
                from_json(data)
            except ValueError as exc:
                raise StateUnsavable(path, f"it would not read back: {one_line(str(exc))}") from exc
        path = self._written_path()
        try:
            if self._reader.migrated_from is not None:
                # The file as read by the last load had to be migrated: kept before it is replaced.
                version, original = self._reader.migrated_from
                copy_aside(self.state_path, f"v{version}", original, self._clock(), None)
                self._reader.migrated_from = None
            try:
                atomic_write(path, data, mode=PRIVATE_FILE_MODE)
            except FileNotFoundError:
                if os.path.isdir(self._state_dir):
                    raise
                # Saved without lock() first: create the folder (0700) now.
                ensure_private_dir(self._state_dir)
                atomic_write(path, data, mode=PRIVATE_FILE_MODE)
        except OSError as exc:
            # EFBIG: a file size limit (ulimit -f, RLIMIT_FSIZE) is no room either, for this size.
            if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
                self._note_no_room(len(data))
            raise StateWriteError(path, exc.strerror or str(exc)) from exc
        if self._no_room_noted:
            with contextlib.suppress(OSError):
                os.unlink(self._state_dir / NO_ROOM_FILE)
            self._no_room_noted = False
        if self._locked:
            self._quiet.saved(self._state_dir)  # this save's mtime is the one the next lock compares
        self.last_save, self._saved_before = Saved(data, exact), True
        return self.last_save

    def _note_no_room(self, size: int) -> None:
        """A save of ``size`` bytes found no room: noted for the next tick's :meth:`check_writable`.

        The failed save's temp file is gone, so these few bytes fit where it did not. Without
        the note, the next process would budget for the last state it read (smaller) and call
        the step again, to fail the same save again: an agent running with nothing saved.
        """
        with contextlib.suppress(OSError):
            atomic_write(self._state_dir / NO_ROOM_FILE, f"{size}\n".encode())
            self._no_room_noted = True

    def _written_path(self) -> Path:
        """The file a save replaces: ``state.json``, or the target of a symlinked one (replaced
        atomically by a temp file beside the target; the link stays a link)."""
        path = self._state_path
        return Path(os.path.realpath(path)) if os.path.islink(path) else path

    def check_writable(self) -> None:
        """Raise :class:`StateWriteError` unless the folder can take a ``state.json`` as big as the last,
        and :class:`JournalUnwritable` unless the journal can take the tick's events: called before
        the step, so a full disk, a read-only remount, a lost permission or a FIFO in place of
        ``journal.jsonl`` stops the agent instead of letting it run with nothing saved or journaled."""
        problem = self._state_problem(probe=True)
        if problem is not None:
            raise StateWriteError(self.state_path, problem)
        problem = append_problem(self._journal_path)
        if problem is not None:
            raise JournalUnwritable(self._journal_path, problem)

    def blocked(self) -> str | None:
        """Why :meth:`check_writable` would stop the next tick, read only (``status``): a save
        that found no room is taken at its word, not tried again; else None."""
        problem = self._state_problem(probe=False)
        journal = None if problem else append_problem(self._journal_path)
        return problem or (f"{self._journal_path.name} {journal}" if journal else None)

    def _state_problem(self, probe: bool) -> str | None:
        """Why the folder (and a symlinked state's) cannot take twice the last state's size: a
        ``statvfs``, a ``stat`` and an ``access`` or two; ``probe``: a failed save's size tried."""
        needed = max(8192, 2 * self._reader.size)
        problem = room_problem(self._state_dir, needed) or self._room_for_the_failed_save(probe)
        written = self._written_path()
        if problem is None and written != self._state_path:  # that folder counts too
            problem = room_problem(written.parent, needed)
        return problem

    def _room_for_the_failed_save(self, probe: bool) -> str | None:
        """When a save found no room (:meth:`_note_no_room`): whether one that size fits now, tried
        for real (``probe``: reserved, then freed; a quota is not in ``statvfs``). One ``open`` that
        fails when no save failed, which is every tick of a healthy agent."""
        try:
            size = int(read_regular(self._state_dir / NO_ROOM_FILE, limit=64))
        except (OSError, ValueError):
            return None
        if not probe:
            return "the last save found no room for the state"
        self._no_room_noted = True
        problem = room_for(self._state_dir, size)
        return f"no room for the state: {problem}" if problem else None
