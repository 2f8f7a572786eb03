"""The outbox: undelivered notifications on disk, delivered and retried at least once.

A tick puts each notification in the :class:`Outbox` first (one JSON file
per notification and notifier), then :meth:`Outbox.deliver` sends it and
retries what failed on later ticks. Delivery is at-least-once: an outbox
file is removed only after a successful send, and every send carries the
same idempotency key so a receiver can drop repeats. An entry names its
notifier instead of holding its URL or token, and is sent through the
notifier of that name in the configuration current at retry time.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from ..base.errors import NotifyError, StateLocked
from ..base.fsutil import PRIVATE_FILE_MODE, atomic_write, ensure_private_dir, read_regular
from ..base.redact import mask, redact
from ..core.delivery import DeliveryReport
from ..core.models import Notification
from .base import Notifier, one_line

if TYPE_CHECKING:
    from filelock import BaseFileLock

__all__ = [
    "RETRY_BASE",
    "RETRY_CAP",
    "SETTLE_WAIT",
    "STATUS_KINDS",
    "DeliveryReport",
    "Outbox",
    "OutboxEntry",
    "OutboxItem",
    "retry_delay",
]

RETRY_BASE = timedelta(seconds=5)
RETRY_CAP = timedelta(minutes=10)
# Temp files older than this in outbox/ are left over from a crashed write.
_STALE_TEMP = timedelta(minutes=10)
# An outbox entry is a few KB; anything this big is not one of ours.
_MAX_ENTRY = 4 * 1024 * 1024
# How long `resume` waits for a delivery in progress before it settles the outbox anyway.
SETTLE_WAIT = 5.0
# Kinds of notification that ask a human to act; `resume` settles them (see Outbox.settle).
STATUS_KINDS = frozenset({"escalation", "reminder", "budget"})


def retry_delay(attempts: int) -> timedelta:
    """How long an outbox entry waits after its ``attempts``-th failed send: 5s, 10s, … 10min."""
    exponent = min(max(attempts - 1, 0), 16)  # 5s * 2**16 is far past the cap already
    return min(RETRY_BASE * (1 << exponent), RETRY_CAP)


class OutboxEntry(BaseModel):
    """One undelivered (notification, notifier) pair; holds the notifier's name, never its URL."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # see Notification

    schema_version: Literal[1] = 1
    notification: Notification
    notifier: str = Field(min_length=1)
    attempts: int = Field(default=1, ge=0, description="Failed sends so far.")
    last_error: str | None = Field(default=None, description="Redacted.")
    next_attempt_at: AwareDatetime
    _path: Path | None = PrivateAttr(default=None)

    @property
    def path(self) -> Path | None:
        """The file this entry was read from or written to."""
        return self._path


def _slug(text: str, limit: int) -> str:
    """A file-name-safe piece of ``text``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.")[:limit] or "x"


@dataclass
class OutboxItem:
    """One file in ``outbox/`` as ``heartbeat outbox`` lists it: an entry, or a file that is not one."""

    name: str
    """The file name."""
    entry: OutboxEntry | None
    """The entry, or None when the file cannot be read as one."""
    problem: str | None = None
    """Why it is not sent: unreadable, set aside as corrupt, or no notifier of that name."""


class Outbox:
    """Undelivered notifications, one JSON file each (0600) in a folder (0700).

    Sending holds the outbox's own lock (``.outbox.lock`` beside the folder),
    not the state folder's: a webhook that takes its whole deadline delays
    no ``pause``, ``resume`` or tick. Entries are written atomically, so a
    reader sees a whole entry or none; an entry removed while a delivery runs
    (``resume`` settled it, ``heartbeat outbox drop``) is neither sent nor
    written back.
    """

    def __init__(self, directory: Path, *, secrets: Sequence[str] = ()) -> None:
        self.directory = directory
        self.secrets = list(secrets)
        """Masked out of every entry written (see :func:`heartbeat.base.redact.mask`)."""
        self.corrupt: list[str] = []
        """Names of the corrupt files this Outbox moved aside so far."""

    def __repr__(self) -> str:
        return f"Outbox({str(self.directory)!r})"

    @property
    def lock_path(self) -> Path:
        """The file the delivery lock is taken on, beside the folder (never inside it)."""
        return self.directory.parent / f".{self.directory.name}.lock"

    @contextlib.contextmanager
    def lock(self, timeout: float = 0) -> Iterator[bool]:
        """Hold the delivery lock for the block; yields False (nothing held) when it stays busy."""
        try:
            held = self._take(timeout)
        except OSError:  # StateLocked too: busy, or a lock file that cannot be opened
            yield False
            return
        try:
            yield True
        finally:
            if held is not None:
                held.release()

    def _take(self, timeout: float) -> BaseFileLock | None:
        """The delivery lock, taken (None: no folder, no outbox, nobody to race with).

        Raises :class:`StateLocked` when it stays busy for ``timeout`` seconds,
        OSError when its file cannot be opened.
        """
        from filelock import FileLock, Timeout

        if not self.directory.parent.is_dir():
            return None
        held = FileLock(self.lock_path, timeout=timeout, mode=PRIVATE_FILE_MODE)
        try:
            held.acquire()
        except Timeout:
            raise StateLocked(self.lock_path, "another heartbeat is delivering notifications") from None
        return held

    def path_for(self, key: str, notifier: str) -> Path:
        """The file of the entry for ``key`` and ``notifier``: one per pair, so a re-put replaces."""
        digest = hashlib.sha256(f"{notifier}\0{key}".encode()).hexdigest()[:12]
        return self.directory / f"{_slug(notifier, 40)}--{_slug(key, 60)}--{digest}.json"

    def _save(self, entry: OutboxEntry, path: Path) -> None:
        ensure_private_dir(self.directory)
        text = entry.model_dump_json(indent=2)
        atomic_write(path, mask(text, self.secrets).encode("utf-8"))
        entry._path = path

    def put(
        self,
        notification: Notification,
        notifier_name: str,
        error: str | None,
        *,
        now: datetime | None = None,
    ) -> OutboxEntry:
        """Keep a notification for ``notifier_name``, replacing an entry for the same pair.

        ``error`` is why the first send failed (it is then retried from
        ``now`` + 5s), or None to queue a notification not sent yet (due at
        once), so that it is on disk before anything is tried. ``now``
        defaults to the notification's ``created_at``: this module never reads
        the clock. URLs in ``error`` are cut to their host here.
        """
        at = now or notification.created_at
        entry = OutboxEntry(
            notification=notification,
            notifier=notifier_name,
            attempts=0 if error is None else 1,
            last_error=None if error is None else redact(error, self.secrets),
            next_attempt_at=at if error is None else at + retry_delay(1),
        )
        self._save(entry, self.path_for(notification.key, notifier_name))
        return entry

    def remove(self, key: str, notifier: str) -> bool:
        """Drop the entry for ``key`` and ``notifier`` (it was delivered); True if there was one."""
        try:
            self.path_for(key, notifier).unlink()
        except FileNotFoundError:
            return False
        return True

    def _files(self) -> list[Path]:
        """The entry files (``*.json``), by name; set-aside and temp files are not entries."""
        try:
            with os.scandir(self.directory) as found:
                names = [e.name for e in found if e.name.endswith(".json") and not e.name.startswith(".")]
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [self.directory / name for name in sorted(names)]

    @staticmethod
    def _read(path: Path) -> OutboxEntry:
        """One entry; a FIFO or device raises OSError instead of blocking, junk ValidationError."""
        entry = OutboxEntry.model_validate_json(read_regular(path, limit=_MAX_ENTRY))
        entry._path = path
        return entry

    def _scan(self) -> tuple[list[OutboxEntry], list[str]]:
        """Every readable entry, oldest first, and the names of corrupt files moved aside."""
        entries: list[OutboxEntry] = []
        corrupt: list[str] = []
        for path in self._files():
            try:
                entry = self._read(path)
            except FileNotFoundError:
                continue  # delivered by someone else since the listing
            except (OSError, ValidationError):
                try:
                    corrupt.append(self._move_aside(path))
                except OSError as exc:
                    corrupt.append(f"{path.name} (could not be moved aside: {exc.strerror})")
                continue
            entries.append(entry)
        entries.sort(key=lambda e: (e.notification.created_at, e.notifier))
        return entries, corrupt

    def _move_aside(self, path: Path) -> str:
        """Rename a bad entry to ``<name>.corrupt`` (never delete it) and return the new name."""
        target = path.with_name(path.name + ".corrupt")
        n = 1
        while os.path.lexists(target):
            n += 1
            target = path.with_name(f"{path.name}.corrupt-{n}")
        os.replace(path, target)
        return target.name

    def pending(self) -> list[OutboxEntry]:
        """Every undelivered entry, oldest first; corrupt files are moved aside (see ``corrupt``)."""
        entries, corrupt = self._scan()
        self.corrupt.extend(corrupt)
        return entries

    def waiting_for(self, names: Sequence[str]) -> bool:
        """Whether an entry waits for one of these notifiers (corrupt and orphaned files do not count)."""
        wanted = set(names)
        for path in self._files():
            try:
                if self._read(path).notifier in wanted:
                    return True
            except (OSError, ValidationError):
                continue
        return False

    def items(self, known: Sequence[str] | None = None) -> list[OutboxItem]:
        """Every file in the folder, read only (nothing moved): entries, then files that are not.

        With ``known`` notifier names, an entry for any other name is marked
        orphaned: it is never sent until a notifier of that name is configured.
        """
        items: list[OutboxItem] = []
        for path in self._files():
            try:
                entry = self._read(path)
            except FileNotFoundError:
                continue
            except OSError as exc:
                items.append(OutboxItem(path.name, None, f"unreadable: {exc.strerror}"))
                continue
            except ValidationError:
                items.append(
                    OutboxItem(path.name, None, "not an outbox entry (set aside at the next delivery)")
                )
                continue
            problem = None
            if known is not None and entry.notifier not in known:
                problem = f"orphaned: no notifier named {entry.notifier!r} in the config"
            items.append(OutboxItem(path.name, entry, problem))
        items.sort(
            key=lambda i: (i.entry is None, i.entry.notification.created_at if i.entry else NEVER, i.name)
        )
        try:
            with os.scandir(self.directory) as found:
                aside = sorted(e.name for e in found if ".json.corrupt" in e.name)
        except OSError:
            aside = []
        items += [OutboxItem(name, None, "set aside as corrupt (never sent)") for name in aside]
        return items

    def picked(self, selectors: Sequence[str]) -> list[str]:
        """The files ``selectors`` pick (see :meth:`drop`), read only: a mistyped key is told first."""
        items = self.items()
        picks = _picker(selectors, {i.entry.notification.key for i in items if i.entry})
        return [i.name for i in items if picks(i.name, i.entry.notification.key if i.entry else None)]

    def drop(self, selectors: Sequence[str]) -> list[str]:
        """Delete the files whose name, key or key prefix matches a selector ("*": all); return them.
        Waits up to :data:`SETTLE_WAIT` seconds for a delivery in progress, then raises
        :class:`StateLocked` with nothing deleted."""
        dropped: list[str] = []
        # Fail closed: a delivery still running after the wait could send or write back what is
        # deleted under it, so a busy lock raises StateLocked (exit 5) and drops nothing.
        held = self._take(SETTLE_WAIT)
        try:
            for name in self.picked(selectors):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.directory / name)
                    dropped.append(name)
        finally:
            if held is not None:
                held.release()
        return dropped

    def settle(
        self, agent: str, kinds: frozenset[str] = STATUS_KINDS, *, dry_run: bool = False, held: bool = False
    ) -> list[str]:
        """Remove ``agent``'s undelivered notifications of ``kinds``: a human has acted on them.

        Returns the keys removed; with ``dry_run``, the keys it would remove,
        read without the lock and nothing removed. ``held``: the caller holds
        the delivery lock (:meth:`lock`). Otherwise it waits up to
        :data:`SETTLE_WAIT` seconds for a delivery in progress, then raises
        :class:`StateLocked` with nothing removed: removed under a running
        delivery, a page could still be sent or written back after it.
        """
        if dry_run:
            return self._settle(agent, kinds, dry_run=True)
        if held:
            return self._settle(agent, kinds, dry_run=False)
        lock = self._take(SETTLE_WAIT)
        try:
            return self._settle(agent, kinds, dry_run=False)
        finally:
            if lock is not None:
                lock.release()

    def _settle(self, agent: str, kinds: frozenset[str], *, dry_run: bool) -> list[str]:
        settled: list[str] = []
        for path in self._files():
            try:
                entry = self._read(path)
            except (OSError, ValidationError):
                continue
            note = entry.notification
            if note.agent == agent and note.kind in kinds:
                if dry_run:
                    settled.append(note.key)
                    continue
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                    settled.append(note.key)
        return sorted(set(settled))

    def _clean_temps(self, now: datetime) -> None:
        """Remove temp files left by a writer that crashed between create and rename."""
        cutoff = (now - _STALE_TEMP).timestamp()
        for temp in self.directory.glob(".*.tmp"):
            with contextlib.suppress(FileNotFoundError):
                if temp.stat().st_mtime < cutoff:
                    temp.unlink()

    def deliver(
        self,
        notifiers: Mapping[str, Notifier] | Sequence[Notifier],
        now: datetime,
        *,
        force: bool = True,
        budget: float | None = None,
        only: Sequence[str] | None = None,
    ) -> DeliveryReport:
        """Retry every entry (only due ones unless ``force``) through the notifier of its name.

        Costs at most one failure per notifier per call: once a notifier
        fails, its other entries wait for their next turn (their back-off
        is not advanced), so a dead webhook with many messages waiting costs
        one deadline, not one per message. ``budget`` (seconds) stops sending
        once spent; what was not tried waits. ``only`` limits the call to
        entries whose file name or key matches. Another process delivering
        right now (the delivery lock is busy) means nothing is sent here; so
        does a lock file that cannot be opened, reported as a failure (``outbox``).
        """
        by_name = dict(notifiers) if isinstance(notifiers, Mapping) else {n.name: n for n in notifiers}
        try:
            held = self._take(0)
        except StateLocked:
            return DeliveryReport(waiting=len(self._files()), busy=True)
        except OSError as exc:
            # No other delivery: a lock file that cannot be opened (a symlink planted there is
            # refused, not followed; no permission). Nothing is sent, and it is said as a failure, so
            # the person told "not delivered" learns why the outbox never empties.
            reason = f"{self.lock_path}: cannot take the delivery lock: {exc.strerror or exc}"
            return DeliveryReport(failed=[("outbox", reason)], waiting=len(self._files()))
        try:
            return self._deliver(by_name, now, force=force, budget=budget, only=only)
        finally:
            if held is not None:
                held.release()

    def _deliver(
        self,
        by_name: Mapping[str, Notifier],
        now: datetime,
        *,
        force: bool,
        budget: float | None,
        only: Sequence[str] | None,
    ) -> DeliveryReport:
        entries, corrupt = self._scan()
        self.corrupt.extend(corrupt)
        report = DeliveryReport(corrupt=corrupt)
        if self.directory.is_dir():
            self._clean_temps(now)
        started = time.monotonic()
        failed: set[str] = set()
        picks = None if only is None else _picker(only, {e.notification.key for e in entries})
        for entry in entries:
            name = entry.notifier
            path = entry.path or self.path_for(entry.notification.key, name)
            if picks is not None and not picks(path.name, entry.notification.key):
                continue
            notifier = by_name.get(name)
            if notifier is None:
                report.failed.append((name, f"no notifier named {name!r} in the current config"))
                report.waiting += 1
                continue
            spent = budget is not None and time.monotonic() - started >= budget
            if name in failed or spent or (not force and entry.next_attempt_at > now):
                report.waiting += 1
                continue
            if not path.exists():
                continue  # settled or dropped since the scan: not ours to send any more
            error = _send(notifier, entry.notification)
            if error is None:
                # Only now: a crash before this line means a repeat, never a loss.
                path.unlink(missing_ok=True)
                report.delivered.append(f"{entry.notification.key} to {name}")
                continue
            error = redact(error, self.secrets)
            failed.add(name)
            report.failed.append((name, error))
            if not path.exists():
                continue  # settled while it was being tried: it stays gone
            report.waiting += 1
            entry.attempts += 1
            entry.last_error = error
            entry.next_attempt_at = now + retry_delay(entry.attempts)
            try:
                self._save(entry, path)
            except OSError as exc:
                # The old file is intact, so the entry is still retried; only its count is stale.
                report.failed.append((name, f"could not update {path.name}: {exc.strerror}"))
        return report


NEVER = datetime.min.replace(tzinfo=UTC)


def _picker(selectors: Sequence[str], keys: Collection[str]) -> Callable[[str, str | None], bool]:
    """Whether ``selectors`` pick an outbox file (by its name and its entry's key; ``keys``: every key
    in the outbox): "*", a file name, a key, or a key prefix, a plain string prefix (``agent-esc``).

    A selector that is a whole key picks that key alone: ``agent-escalation-1`` is not a prefix of
    ``agent-escalation-10`` then. An empty selector picks nothing.
    """
    whole = {s for s in selectors if s in keys}
    prefixes = tuple(s for s in selectors if s and s not in whole)
    every = "*" in selectors

    def picks(name: str, key: str | None) -> bool:
        if every or name in selectors:
            return True
        return key is not None and (key in whole or key.startswith(prefixes))

    return picks


def _send(notifier: Notifier, notification: Notification) -> str | None:
    """Send once; None on success, else the redacted reason (the notifier's name is beside it)."""
    try:
        notifier.send(notification)
    except NotifyError as exc:
        return redact(exc.reason)
    # A plug-in's bug is a failed send, recorded; so are its sys.exit() and KeyboardInterrupt, which
    # would end the delivery pass (and `run`'s thread). The tick's own TickInterrupted goes through.
    except (Exception, SystemExit, KeyboardInterrupt) as exc:
        return redact(f"{type(exc).__name__}: {one_line(str(exc))}")
    return None
