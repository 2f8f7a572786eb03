"""Reading ``state.json``: its bytes (never blocking), decoded, migrated and validated.

The read half of :class:`heartbeat.state.store.StateStore`, which owns the file's
name and hands its path here. A file that cannot be read is never
overwritten or deleted: it stays in place and a byte-for-byte copy is put
beside it as ``state.json.corrupt-<UTC stamp>`` (once per content), and
:class:`~heartbeat.base.errors.StateCorrupt` says why in one line. A newer
``schema_version`` is refused and left alone; an older one is migrated in
memory (the store copies the old file aside before its first save).
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn

from pydantic import ValidationError

from ..base.errors import StateCorrupt, StateVersionError
from ..base.fsutil import open_regular_stat, read_to_end
from ..config.file import format_validation_error
from ..core.models import AgentState, clip
from .copies import LEAN, Unreadable, copy_aside, existing_copy, one_line, parse_object
from .migrations import Migration, MigrationError, migrate

__all__ = ["StateReader"]


class StateReader:
    """Reads one ``state.json`` into an :class:`AgentState`; remembers what a save must know of the read.

    :meth:`read` then :meth:`decode`, one file at a time (not thread-safe).
    """

    def __init__(
        self,
        path: Path,
        *,
        migrations: tuple[Migration, ...],
        current_version: int,
        clock: Callable[[], datetime],
    ) -> None:
        self.path = path
        self._migrations = migrations
        self._current = current_version
        self._clock = clock  # stamps the name of a corrupt copy
        self.size = 0
        """Bytes of the file at the last read: what a save must have room for."""
        self.mtime: int | None = None
        """The mtime (ns) of the file being read, given to its corrupt copy."""
        self.migrated_from: tuple[int, bytes] | None = None
        """The version and bytes of the last file decoded, if it had to be migrated (else None)."""

    def read(self) -> bytes | None:
        """The bytes of ``state.json`` (None if missing), read once and never blocking.

        A FIFO, socket or device in its place is refused at once (reading a
        FIFO would wait forever for a writer); a symlink is followed.
        """
        self.migrated_from = None
        self.mtime = None
        path = self.path
        try:
            fd, info = open_regular_stat(path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.EINVAL:  # not a regular file
                what = "is a folder, not a file" if os.path.isdir(path) else exc.strerror
                raise StateCorrupt(path, f"{what}; not copied aside") from None
            if exc.errno == errno.EISDIR:
                raise StateCorrupt(path, "is a folder, not a file; not copied aside") from None
            raise StateCorrupt(path, f"cannot be read ({exc.strerror}); not copied aside") from None
        try:
            self.mtime = info.st_mtime_ns
            return read_to_end(fd, info.st_size)
        except OSError as exc:
            raise StateCorrupt(path, f"cannot be read ({exc.strerror}); not copied aside") from None
        finally:
            os.close(fd)

    def decode(self, raw_bytes: bytes | None) -> AgentState:
        """The state in ``raw_bytes`` (None: no file), migrated and validated."""
        path = self.path
        if raw_bytes is None:
            return AgentState(schema_version=self._current)
        self.size = len(raw_bytes)
        # The fast path: one pass of pydantic over the bytes, in strict mode so
        # that it accepts only what the dict path below would load unchanged
        # (no "1" or true as a schema_version, no BOM). Anything else, a
        # migration or a bad file, takes the dict path, with its messages.
        try:
            state = AgentState.model_validate_json(raw_bytes, strict=True)
        except ValidationError as exc:
            if len(raw_bytes) > LEAN:
                self._lean_check(raw_bytes, exc)
        else:
            if state.schema_version == self._current and "schema_version" in state.model_fields_set:
                return state
        raw = self.parse(raw_bytes)
        if "schema_version" not in raw:
            self._corrupt(raw_bytes, "schema_version is missing")
        version = raw["schema_version"]
        if not isinstance(version, int) or isinstance(version, bool):
            found = clip(json.dumps(version), 40)
            self._corrupt(raw_bytes, f"schema_version must be an integer, not {found}")
        if version > self._current:
            raise StateVersionError(path, version, self._current)
        if version < self._current:
            try:
                raw = migrate(raw, self._migrations, self._current)
            except MigrationError as exc:
                if exc.missing_step:
                    # No step for this version: the file may be fine for another
                    # release, so it is only left alone, not called corrupt.
                    raise StateCorrupt(path, one_line(str(exc))) from None
                self._corrupt(raw_bytes, one_line(str(exc)))
        try:
            state = AgentState.model_validate(raw)
        except ValidationError as exc:
            self._corrupt(raw_bytes, one_line(format_validation_error(exc)))
        except (ValueError, TypeError, RecursionError) as exc:  # what else a bad file can raise
            self._corrupt(raw_bytes, f"cannot be read: {one_line(str(exc))}")
        if version < self._current:
            self.migrated_from = (version, raw_bytes)
        return state

    def parse(self, raw_bytes: bytes) -> dict[str, Any]:
        """Decode and parse the bytes of ``state.json`` into a dict, or report it corrupt."""
        try:
            return parse_object(raw_bytes)
        except Unreadable as exc:
            self._corrupt(raw_bytes, exc.reason)

    def _lean_check(self, raw_bytes: bytes, error: ValidationError) -> None:
        """For a big file: report broken JSON from the parse just done, without a second one."""
        first = error.errors(include_url=False)[0]
        if first["type"] == "json_invalid":
            message = str(first["msg"]).removeprefix("Invalid JSON: ")
            if not raw_bytes.startswith(b"\xef\xbb\xbf"):  # a BOM takes the slow path, which allows it
                self._corrupt(raw_bytes, f"is not valid JSON: {one_line(message)}")

    def _corrupt(self, raw_bytes: bytes, reason: str) -> NoReturn:
        """Copy the unreadable file aside (once per content) and raise :class:`StateCorrupt`."""
        path = self.path
        try:
            copy_path = existing_copy(path, raw_bytes, self.mtime) or copy_aside(
                path, "corrupt", raw_bytes, self._clock(), self.mtime
            )
        except OSError as exc:
            raise StateCorrupt(path, f"{reason}; could not copy it aside: {exc.strerror}") from None
        raise StateCorrupt(path, reason, copy=copy_path)
