"""The KILL file: ``touch KILL`` stops the agent before it acts, ``rm KILL`` lets it go on.

It is read from disk every time it is asked about, never cached, and it fails
closed: a KILL that is a symlink, a directory or unreadable still counts.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base.credential_text import mask_credential_text
from ..base.fsutil import atomic_write

__all__ = ["REASON_LIMIT", "KillSwitch", "fleet_stop_name", "kill_text", "reason_text", "stopped_by"]

REASON_LIMIT = 500
"""The most characters of a stop's reason kept (a KILL file's text, a fleet stop's answer, a pause's)."""
_DEFAULT_REASON = "KILL file present (no reason given)"


def stopped_by(switch: str, reason: str, when: str = "") -> str:
    """How every part of heartbeat tells a person or a model that KILL or the fleet stop stopped an
    agent: ``stopped by <switch><when>: <reason>``; ``switch`` is :attr:`KillSwitch.name` or
    :func:`fleet_stop_name`, ``when`` says when it came if that matters (``" during the step"``)."""
    return f"stopped by {switch}{when}: {reason}"


def kill_text(event: Mapping[str, Any]) -> str:
    """A journal's ``kill`` event as :func:`stopped_by` says it, its switch named (``by``); one
    journaled before kill events named their switch is said to be the KILL file's."""
    reason = str(event.get("reason") or "")
    when = (
        " during the step"
        if event.get("during_step")
        else " during delivery"
        if event.get("during_delivery")
        else " between ticks"
        if event.get("between_ticks")
        else ""
    )
    by = event.get("by")
    return stopped_by(by if isinstance(by, str) and by else "KILL", reason, when)


def fleet_stop_name(where: str) -> str:
    """The fleet stop (``[stop]``) at ``where`` (a path or a URL), as :func:`stopped_by` names it."""
    return f"the fleet stop {where}"


def reason_text(raw: bytes, default: str) -> str:
    """A stop's or a pause's reason read as ``raw`` bytes: one line, credentials masked, escaped,
    at most :data:`REASON_LIMIT` characters; ``default`` when it says nothing."""
    # Masked before it is cut: a token cut in half would no longer be recognised.
    text = mask_credential_text(" ".join(raw.decode("utf-8", "replace").split()))
    if not text.isprintable():  # no escape code: whoever can write it (an agent too) reaches people
        from ..core.models import printable  # pydantic: only for such a text, `kill` stays quick

        text = printable(text)
    return text[:REASON_LIMIT] or default


@dataclass(frozen=True)
class KillSwitch:
    """The emergency stop at ``path``."""

    path: Path

    @property
    def name(self) -> str:
        """The switch as :func:`stopped_by` names it: ``the KILL file <path>``."""
        return f"the KILL file {self.path}"

    def reason(self) -> str | None:
        """The KILL file's reason when it exists, else None (never cached)."""
        try:
            info = os.lstat(self.path)
        except FileNotFoundError:
            return None
        except OSError as exc:  # cannot even tell whether it is there: fail closed
            return f"KILL file cannot be checked ({exc.strerror})"
        if stat.S_ISLNK(info.st_mode):
            return "KILL file present (a symlink; not followed)"
        if stat.S_ISDIR(info.st_mode):
            return "KILL file present (a directory)"
        if not stat.S_ISREG(info.st_mode):  # a FIFO or device would block or lie when read
            return "KILL file present (not a regular file)"
        try:
            with open(self.path, "rb") as handle:
                raw = handle.read(REASON_LIMIT * 4)
        except OSError as exc:
            return f"KILL file present (unreadable: {exc.strerror})"
        return reason_text(raw, _DEFAULT_REASON)

    def engage(self, reason: str, *, make_folder: bool = False) -> str:
        """Write the KILL file with ``reason`` as its text (atomically); return the reason as
        :meth:`reason` will show it (one line, escaped, credentials masked).

        The file keeps the person's text as given (it is theirs, as a ``echo ... > KILL``
        is); only what is shown of it goes through :func:`reason_text`. Any bytes go: a
        reason typed in a Latin-1 terminal reaches Python as lone surrogates, which are
        written back as the bytes they stood for. With ``make_folder``, a missing folder is
        made first (the KILL file a config names, which its agent reads there).
        """
        raw = (reason.strip() or "stopped by hand").encode("utf-8", "surrogateescape")
        try:
            atomic_write(self.path, raw + b"\n", mode=0o644)
        except FileNotFoundError:
            # Its folder is not made yet (a kill_file of its own in a folder no tick wrote to):
            # an operator's stop lands there, where the agent reads it; a path typed by hand
            # into nowhere is refused instead (no agent would read it).
            if not make_folder:
                raise
            os.makedirs(self.path.parent, exist_ok=True)
            atomic_write(self.path, raw + b"\n", mode=0o644)
        return reason_text(raw, _DEFAULT_REASON)

    def release(self) -> bool:
        """Remove the KILL file; True when there was one."""
        try:
            info = os.lstat(self.path)
        except FileNotFoundError:
            return False
        if stat.S_ISDIR(info.st_mode) and not stat.S_ISLNK(info.st_mode):
            os.rmdir(self.path)  # only an empty one: never delete what a person put inside
        else:
            os.unlink(self.path)
        return True
