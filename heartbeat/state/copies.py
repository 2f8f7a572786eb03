"""Reading ``state.json``'s bytes, and copying a file that cannot be read aside (never deleted)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..base.fsutil import PRIVATE_FILE_MODE, atomic_write

__all__ = [
    "LEAN",
    "MAX_NAME_TRIES",
    "Unreadable",
    "copy_aside",
    "existing_copy",
    "json_kind",
    "long_digit_run",
    "one_line",
    "parse_object",
]

# Past this size a state file is handled leanly: parsed once from its bytes (no decoded
# copy), and a corrupt copy already made is recognised by size and mtime, not re-read.
LEAN = 1 << 20

# Enough for a handful of copies made within the same microsecond (a test's
# frozen clock); past that something is badly wrong and we stop trying.
_MAX_NAME_TRIES = 100
# Enough for a handful of copies made within the same microsecond (a test's
# frozen clock); past that something is badly wrong and we stop trying.
MAX_NAME_TRIES = 100


class Unreadable(ValueError):
    """The bytes are not a JSON object; ``reason`` says why, in words for the error message."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def one_line(text: str) -> str:
    """``text`` on one line."""
    # Error messages end up in cron mail and one-line CLI output.
    return " ".join(text.splitlines())


def json_kind(value: object) -> str:
    """What a JSON value is, for a message ("an array")."""
    kinds = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return kinds.get(type(value), "a number")


def parse_object(raw_bytes: bytes) -> dict[str, Any]:
    """The bytes of ``state.json`` parsed into a dict; :class:`Unreadable` says why they cannot be."""
    if not raw_bytes.strip():
        raise Unreadable("is empty")
    if len(raw_bytes) > LEAN and not raw_bytes.startswith(b"\xef\xbb\xbf"):
        return _parse_lean(raw_bytes)
    try:
        # utf-8-sig: a BOM some Windows editors add is not a reason to stop an agent.
        text = raw_bytes.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise Unreadable(f"is not UTF-8 text (bad byte at offset {exc.start})") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        # Some of json's messages end in "at" already ("Invalid control character at").
        raise Unreadable(f"is not valid JSON: {exc.msg.removesuffix(' at')} at {where}") from None
    except RecursionError:
        raise Unreadable("is not valid JSON: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer past Python's digit limit
        raise Unreadable(f"cannot be read: {one_line(str(exc))}") from None
    if not isinstance(raw, dict):
        raise Unreadable(f"is not a JSON object but {json_kind(raw)}")
    return raw


def _parse_lean(raw_bytes: bytes) -> dict[str, Any]:
    """:func:`parse_object` for a big file: parsed straight from the bytes, no decoded copy."""
    from pydantic_core import from_json

    try:
        raw = from_json(raw_bytes)
    except ValueError as exc:
        raise Unreadable(f"is not valid JSON: {one_line(str(exc))}") from None
    if not isinstance(raw, dict):
        raise Unreadable(f"is not a JSON object but {json_kind(raw)}")
    return raw


def existing_copy(state_path: Path, raw_bytes: bytes, loaded_mtime: int | None) -> Path | None:
    """A corrupt copy already holding these bytes, so a cron job does not pile them up.

    A big file is matched by size and mtime (its copy is given the
    original's mtime), so every tick does not read a copy of hundreds of MB.
    """
    big = len(raw_bytes) > LEAN
    for candidate in sorted(state_path.parent.glob(f"{state_path.name}.corrupt-*")):
        try:
            info = candidate.stat()
            if info.st_size != len(raw_bytes):
                continue
            if big:
                if info.st_mtime_ns == loaded_mtime:
                    return candidate
            elif candidate.read_bytes() == raw_bytes:
                return candidate
        except OSError:
            continue
    return None


def copy_aside(state_path: Path, label: str, raw_bytes: bytes, now: datetime, mtime: int | None) -> Path:
    """Write ``raw_bytes`` to a new ``state.json.<label>-<stamp>`` (0600), never replacing a file.

    ``mtime`` (ns), when given, is set on the copy: how a later tick recognises a big one.
    """
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    base = f"{state_path.name}.{label}-{stamp}"
    for n in range(MAX_NAME_TRIES):
        target = state_path.parent / (base if n == 0 else f"{base}-{n}")
        try:
            atomic_write(target, raw_bytes, mode=PRIVATE_FILE_MODE, overwrite=False)
        except FileExistsError:
            continue
        if mtime is not None:
            # The copy carries the original's mtime: how a later tick knows it (see existing_copy).
            with contextlib.suppress(OSError):
                os.utime(target, ns=(mtime, mtime))
        return target
    raise FileExistsError(errno.EEXIST, f"{MAX_NAME_TRIES} copies named {base} exist")


_MAX_DIGITS = 4300  # the longest run of digits Python reads back as an int (by default)
_DIGITS = b"0123456789"
_DIGIT_RUN = re.compile(rb"[0-9]*")


def long_digit_run(data: bytes) -> bool:
    """Whether ``data`` holds more than 4,300 digits in a row (a number that may not read back).

    Such a run covers 4,300 consecutive offsets, so it covers a multiple of
    4,300: only the bytes there are looked at, and a digit found is measured
    both ways (three looks over a 12 KB state, not a scan of every byte).
    """
    for at in range(0, len(data), _MAX_DIGITS):
        if 48 <= data[at] <= 57:
            before = data[max(0, at - _MAX_DIGITS) : at]
            left = len(before) - len(before.rstrip(_DIGITS))
            match = _DIGIT_RUN.match(data, at)
            if match is not None and left + match.end() - at > _MAX_DIGITS:
                return True
    return False
