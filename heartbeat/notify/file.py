"""The ``file`` notifier: append each notification as one JSON line, fsynced."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..base.errors import NotifyError
from ..base.fsutil import write_all
from ..base.redact import mask
from ..core.models import Notification

__all__ = ["FileNotifier"]


class FileNotifier:
    """Append each notification as one JSON line to a file (created 0600), fsynced."""

    def __init__(self, name: str, path: Path) -> None:
        self.name = name
        self.path = path
        self.mask_with: list[str] = []
        """Secrets masked out of every line written."""

    def __repr__(self) -> str:
        return f"FileNotifier(name={self.name!r}, path={str(self.path)!r})"

    def send(self, message: Notification) -> None:
        """Append the line; an OS error raises NotifyError."""
        text = json.dumps(message.to_json(), ensure_ascii=False)
        line = (mask(text, self.mask_with) + "\n").encode("utf-8")
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                # A writer killed mid-append leaves a torn last line: start on a fresh one,
                # or this notification would be glued to the fragment and lost to readers.
                end = os.lseek(fd, 0, os.SEEK_END)
                if end and os.pread(fd, 1, end - 1) != b"\n":
                    line = b"\n" + line
                # One write of the whole line: O_APPEND keeps concurrent lines whole.
                write_all(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise NotifyError(self.name, f"cannot append to {self.path}: {exc.strerror}") from None
