"""``journal.jsonl``: the append-only record of what each heartbeat did.

One JSON object per line (tick, action, anomaly, recovery, escalation, kill,
resume, ...). A tick's events are appended as one batch, one ``write``, so a
crash loses or tears at most the batch being written. A torn last line is
tolerated: readers skip it, and the next append starts on a fresh line so no
good record is ever glued to it.

**No fsync of its own, by design.** ``state.json`` is the durable record
(written with fsync of the file and the folder); the journal is the readable
history. A killed process loses nothing it already wrote (the kernel holds
it); only a power loss or a kernel crash can drop the last batches, and the
state saved before them still says what was decided. Skipping the fsync
saves about a tenth of a millisecond per tick (``bench/bench_tick.py``), and
a new file's folder is not fsynced either: that fsync waits behind every other
write the disk holds, and stalled a KILL past its half second. Pass
``sync=True`` for a journal that pays for both.

The file rotates when an append would take it past ``max_bytes``:
``journal.jsonl`` becomes ``journal.jsonl.1``, ``.1`` becomes ``.2`` and so on;
``keep`` rotated files are kept and older ones deleted, so the journal never
grows without bound.

Appends and rotation assume a single writer at a time: call :meth:`Journal.append`
while holding the state folder's lock. Reading needs no lock, though a
rotation during a read may show a line twice or not at all.

Everything in an event is written as given: keeping secrets out of events is
the caller's job.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta
from enum import Enum
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel

from ..base.errors import StateCorrupt
from ..base.fsutil import (
    PRIVATE_FILE_MODE,
    ensure_private_dir,
    fsync_dir,
    open_regular,
    open_regular_stat,
    write_all,
)

__all__ = ["EVENT_KINDS", "Journal", "encode_event", "stamp_events"]

EVENT_KINDS = frozenset(
    [
        "action",
        "anomaly",
        "budget",
        "decision",
        "delivery",
        "escalation",
        "interrupted",
        "kill",
        "metric_error",
        "model_in_flight",
        "notify",
        "pause",
        "report_error",
        "resume",
        "sanitised",
        "spend",
        "step_error",
        "tick",
        "unpriced",
    ]
)
"""Every kind of event a journal holds (its ``event`` field): what ``heartbeat log --event`` picks."""

# tail() reads the file backwards in blocks of this size, so `log -n 5` on a
# 100 MB journal reads a few KB.
_TAIL_BLOCK = 64 * 1024


def _default(value: object) -> Any:
    """Turn the non-JSON values events commonly hold into JSON ones."""
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


# One encoder for every event: json.dumps with these options builds a new one per call.
# allow_nan=False: NaN is not JSON, and jq or a log shipper would choke on it.
_ENCODER = json.JSONEncoder(default=_default, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_encode = _ENCODER.encode


def encode_event(event: Mapping[str, Any]) -> bytes:
    """One event as a compact JSON line, newline included; datetimes as ISO 8601."""
    if event.__class__ is not dict:
        event = _as_dict(event)
    # backslashreplace: a lone surrogate (a non-UTF-8 file name in an argument) becomes the
    # JSON escape \udcff, which every reader accepts, instead of failing the whole batch.
    return (_encode(event) + "\n").encode("utf-8", "backslashreplace")


def _encode_lines(events: Sequence[Mapping[str, Any]], line_limit: int | None = None) -> bytes:
    """Every event as a line (see :func:`encode_event`), all encoded before any is returned.

    ``line_limit``: a line longer than this (in characters) has its long texts clipped
    (:func:`_clipped`), so no one event can take the journal past its rotation bound.
    """
    if not events:
        return b""
    lines = [_encode(e if e.__class__ is dict else _as_dict(e)) for e in events]
    if line_limit is not None:
        for i, line in enumerate(lines):
            if len(line) > line_limit:
                lines[i] = _clipped(events[i], len(line), line_limit)
    return ("\n".join(lines) + "\n").encode("utf-8", "backslashreplace")


_CLIP_MARK = "… [clipped]"


def _clipped(event: Mapping[str, Any], length: int, limit: int) -> str:
    """``event`` as a line of at most about ``limit`` characters: its long texts cut, else a stub."""
    share = max(80, limit // 8)

    def cut(value: Any, depth: int) -> Any:
        if isinstance(value, str):
            return value if len(value) <= share else value[:share] + _CLIP_MARK
        if depth > 20:
            return "[nested too deeply: clipped]"
        if isinstance(value, Mapping):
            return {str(k)[:share]: cut(v, depth + 1) for k, v in list(value.items())[:50]}
        if isinstance(value, list | tuple):
            return [cut(v, depth + 1) for v in value[:50]]
        return value

    try:
        line = _encode(cut(dict(event), 0))
    except (TypeError, ValueError, RecursionError):
        line = ""
    if line and len(line) <= limit:
        return line
    stub = {k: event.get(k) for k in ("at", "agent", "tick", "event") if isinstance(event.get(k), str | int)}
    return _encode({**stub, "clipped": f"an event of {length:,} characters, too long for the journal"})


def _as_dict(event: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(event, Mapping):
        raise TypeError(f"an event is a mapping, not {type(event).__name__}")
    return dict(event)


def stamp_events(
    events: Sequence[Mapping[str, Any]], *, at: datetime, agent: str, tick: int
) -> list[dict[str, Any]]:
    """``events`` stamped with the agent, ``tick`` and each one's time, in time order (pure)."""
    # Each event at the time it happened: actions and anomalies carry theirs, the rest
    # happened by ``at`` (the tick's end); one format, ISO 8601 with +00:00. An action the
    # bounded history no longer holds happened before the oldest one kept: it takes that time.
    now = at.isoformat()
    stamp = {"at": now, "agent": agent, "tick": tick}
    earliest: Any = _UNSET
    stamped: list[dict[str, Any]] = []
    ordered, last = True, ""
    for event in events:
        own = event.get("at")
        if not own and event.get("event") == "action":
            if earliest is _UNSET:
                kept = [e["at"] for e in events if e.get("event") == "action" and e.get("at") is not None]
                earliest = min(kept) if kept else None
            own = earliest
        when = now if own is None else _iso(own, now)
        stamped.append({**stamp, **event, "at": when})
        if ordered:  # most batches come in time order: then there is nothing to sort
            ordered = when.__class__ is str and when >= last
            last = when
    return stamped if ordered else sorted(stamped, key=lambda e: str(e["at"]))


_UNSET: Any = object()


def _iso(at: Any, default: Any) -> Any:
    """An event's own time in the journal's one format (pydantic writes Z, isoformat +00:00)."""
    if isinstance(at, datetime):
        return at.astimezone(UTC).isoformat()
    if isinstance(at, str) and at.endswith("Z"):
        return at[:-1] + "+00:00"
    return at or default


class Journal:
    """An append-only JSON-lines event log with size-based rotation."""

    def __init__(
        self, path: Path | str, *, max_bytes: int = 1_000_000, keep: int = 3, sync: bool = False
    ) -> None:
        if max_bytes < 1:
            raise ValueError("max_bytes must be at least 1")
        if keep < 0:
            raise ValueError("keep must be 0 or more")
        self._path = Path(path)
        self._max_bytes = max_bytes
        self._keep = keep
        self._sync = sync
        # (device, inode, size) of the live file after this object's last append.
        self._ended: tuple[int, int, int] | None = None
        self.skipped = 0
        """Lines the last :meth:`read` (once exhausted) or :meth:`tail` could not parse."""

    def __repr__(self) -> str:
        return f"Journal({str(self._path)!r}, max_bytes={self._max_bytes}, keep={self._keep})"

    @property
    def path(self) -> Path:
        """The live journal file."""
        return self._path

    @property
    def max_bytes(self) -> int:
        """The size past which the live file is rotated."""
        return self._max_bytes

    @property
    def keep(self) -> int:
        """How many rotated files are kept."""
        return self._keep

    def append_stamped(
        self,
        events: Sequence[Mapping[str, Any]],
        *,
        at: datetime,
        agent: str,
        tick: int,
        secrets: Sequence[str] = (),
    ) -> None:
        """:meth:`append` the events stamped (:func:`stamp_events`), each ``secrets`` cut out of them."""
        self.write(self.encode_stamped(events, at=at, agent=agent, tick=tick, secrets=secrets))

    def encode_stamped(
        self,
        events: Sequence[Mapping[str, Any]],
        *,
        at: datetime,
        agent: str,
        tick: int,
        secrets: Sequence[str] = (),
    ) -> bytes:
        """The lines :meth:`append_stamped` would write, for :meth:`write` to append later."""
        stamped = stamp_events(events, at=at, agent=agent, tick=tick)
        if secrets:
            from ..base.redact import redact_event  # only a config with secrets needs it

            stamped = [redact_event(e, secrets) for e in stamped]
        return _encode_lines(stamped, self.line_limit)

    def append(self, events: Sequence[Mapping[str, Any]]) -> None:
        """Append a batch of events with one write (file 0600), and one fsync if ``sync``.

        Every event is encoded before anything is written, so an event that
        cannot be serialised (TypeError/ValueError) writes nothing.
        """
        self.write(_encode_lines(events, self.line_limit))

    @property
    def line_limit(self) -> int:
        """The longest line written, in characters: a quarter of ``max_bytes``, so one event
        cannot take the files past their rotation bound (longer events are clipped)."""
        return max(250, self._max_bytes // 4)

    def write(self, payload: bytes) -> None:
        """Append encoded lines (:meth:`encode_stamped`) with one write, rotating first if due.

        A failed write raises :class:`OSError`; at worst it leaves a torn last
        line, which readers skip and the next append steps over.
        """
        if not payload:
            return
        fd, at, created = self._open()
        ended, self._ended = self._ended, None
        try:
            size = at[2]
            # A crash mid-append may have left half a line: end it, so this batch starts on
            # a line of its own. When the file is as this object's last append left it (same
            # file, same size), its last byte is that append's newline: no read needed.
            torn = size > 0 and at != ended and os.pread(fd, 1, size - 1) != b"\n"
            if size and size + torn + len(payload) > self._max_bytes:
                os.close(fd)
                fd = -1
                self._rotate()
                fd, at, created = self._open()
                size, torn = at[2], False
            write_all(fd, b"\n" + payload if torn else payload)
            if self._sync:
                os.fsync(fd)
            self._ended = (at[0], at[1], size + torn + len(payload))
        finally:
            if fd >= 0:
                os.close(fd)
        if created and self._sync:
            # Only a journal that pays for durability: for the default one, a new file's
            # folder fsync stalled a KILL past half a second while the disk was busy.
            fsync_dir(self._path.parent)

    def read(self, *, rotated: bool = True, end: int | None = None) -> Iterator[dict[str, Any]]:
        """Every event, oldest first, rotated files included; bad lines are counted in ``skipped``.

        ``end``: the live file's events in its first ``end`` bytes only (where a follower of it starts).
        """
        self.skipped = 0
        older = [path for _, path in self._rotated_files()] if rotated else []
        for file in older:
            yield from self._read_file(file)
        yield from self._read_file(self._path, end)

    def tail(self, n: int, *, end: int | None = None) -> list[dict[str, Any]]:
        """The last ``n`` events, oldest first, reading each file backwards only as far as needed.

        ``end``: as for :meth:`read`, the live file is read as if it ended there.
        """
        self.skipped = 0
        if n <= 0:
            return []
        found: deque[dict[str, Any]] = deque(maxlen=n)
        files = [(self._path, end), *((path, None) for _, path in reversed(self._rotated_files()))]
        for file, upto in files:
            found.extendleft(self._tail_file(file, n - len(found), upto))
            if len(found) >= n:
                break
        return list(found)

    def _tail_file(self, file: Path, n: int, end: int | None = None) -> list[dict[str, Any]]:
        """Up to the last ``n`` events of one file (of its first ``end`` bytes), newest first, read
        from the end in blocks."""
        handle = self._open_read(file)
        if handle is None:
            return []
        newest: list[dict[str, Any]] = []
        with handle:
            pos = handle.seek(0, os.SEEK_END)
            if end is not None:
                pos = min(pos, end)
            rest = b""
            while pos > 0 and len(newest) < n:
                size = min(_TAIL_BLOCK, pos)
                pos -= size
                handle.seek(pos)
                lines = (handle.read(size) + rest).split(b"\n")
                # The first piece may be the end of a line that starts in an earlier block.
                rest = lines[0] if pos > 0 else b""
                for line in reversed(lines if pos == 0 else lines[1:]):
                    event = self._parse_line(line)
                    if event is not None:
                        newest.append(event)
                        if len(newest) >= n:
                            break
        return newest

    def _open_read(self, file: Path) -> BinaryIO | None:
        """A binary handle on a journal file, None if missing; a FIFO is refused, never waited on."""
        try:
            fd = open_regular(file)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StateCorrupt(file, f"{exc.strerror}; not read") from None
        return os.fdopen(fd, "rb")

    def _parse_line(self, line: bytes) -> dict[str, Any] | None:
        """One line as an event; None for a blank line, and for a bad one (counted in ``skipped``)."""
        if not line.strip():
            return None
        try:
            # Decode explicitly: json.loads would guess UTF-16/32 from the bytes of a garbled line.
            event = json.loads(line.decode("utf-8"))
        except (ValueError, RecursionError):  # bad bytes, bad JSON, an integer of 5,000 digits
            self.skipped += 1
            return None
        if isinstance(event, dict):
            return event
        self.skipped += 1
        return None

    def _open(self) -> tuple[int, tuple[int, int, int], bool]:
        """Open the live file to append: the fd, its (device, inode, size), whether this call created it.

        The folder is created (0700) only when the file is missing, so a
        routine append costs one ``open`` and one ``fstat``.
        """
        flags = os.O_RDWR | os.O_APPEND  # read: to look at the last byte
        try:
            # Never a FIFO or a device: writing to one could block the tick for good.
            fd, info = open_regular_stat(self._path, flags)
            return fd, (info.st_dev, info.st_ino, info.st_size), False
        except FileNotFoundError:
            pass
        ensure_private_dir(self._path.parent)
        try:
            fd = os.open(self._path, flags | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE_FILE_MODE)
            created = True
        except FileExistsError:
            fd, created = open_regular_stat(self._path, flags)[0], False
        info = os.fstat(fd)
        return fd, (info.st_dev, info.st_ino, info.st_size), created

    def _rotated_files(self) -> list[tuple[int, Path]]:
        """The rotated files present with their numbers, oldest (highest number) first."""
        numbered: list[tuple[int, Path]] = []
        prefix = self._path.name + "."
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            for entry in os.scandir(self._path.parent):
                name = entry.name
                if name.startswith(prefix):
                    number = name[len(prefix) :]
                    # ASCII digits only: rotation never writes any other kind.
                    if number and number.isascii() and number.isdigit():
                        numbered.append((int(number), Path(entry.path)))
        return sorted(numbered, reverse=True)

    def _rotate(self) -> None:
        """Shift ``journal.jsonl`` -> ``.1`` -> ``.2`` ...; drop what is beyond ``keep``."""
        # Highest number first, so no rename lands on a file still to move. A
        # crash half-way leaves a gap in the numbers, which is harmless.
        for number, old in self._rotated_files():
            if number >= self._keep:
                old.unlink()
            else:
                os.replace(old, self._numbered(number + 1))
        if self._keep:
            os.replace(self._path, self._numbered(1))
        else:
            self._path.unlink()
        fsync_dir(self._path.parent)

    def _numbered(self, number: int) -> Path:
        """The path of rotated file ``number``."""
        return self._path.with_name(f"{self._path.name}.{number}")

    def _read_file(self, file: Path, end: int | None = None) -> Iterator[dict[str, Any]]:
        """The events of one file (of its first ``end`` bytes); lines that are not a JSON object are
        skipped and counted."""
        handle = self._open_read(file)
        if handle is None:
            return
        with handle:
            for line in handle:
                if end is not None:
                    end -= len(line)
                    if end < 0:  # written after the reader's starting point: the follower's
                        break
                event = self._parse_line(line)
                if event is not None:
                    yield event
