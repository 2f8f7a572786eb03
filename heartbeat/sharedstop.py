"""The fleet-wide emergency stop: one switch that many hosts read, besides each KILL file.

``[stop]`` in ``heartbeat.toml`` names a URL or a file on shared storage
(NFS, SMB, a mounted bucket). It works like a KILL file that lives elsewhere:

- URL: an answer 2xx means *stop* (its body is the reason); 404 or 410 means
  *go on*. Put a file named STOP on a static web server or bucket to stop the
  fleet; delete it to let it go on.
- path: the file present means *stop* (its text is the reason); absent means
  *go on*. Its folder missing (the share is not mounted) is *unreachable*.

When the switch cannot be read (a timeout, a refused connection, a 5xx, an
unmounted share) ``on_unreachable`` decides: ``"stop"`` (the default: fail
closed, an agent that cannot tell whether it may act does not act) or ``"go"``
(fail open: an outage of the stop service never stops the fleet). The tick
checks it once before the step; ``run``'s watcher once a second.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from .killswitch import KillSwitch

__all__ = ["SharedStop"]

_REASON_LIMIT = 500


class SharedStop:
    """A stop switch at a URL or a shared path; ``reason()`` says why to stop, or None."""

    def __init__(
        self,
        *,
        url: str | None = None,
        path: Path | None = None,
        on_unreachable: Literal["stop", "go"] = "stop",
        timeout: float = 5.0,
    ) -> None:
        if (url is None) == (path is None):
            raise ValueError("a shared stop needs exactly one of url or path")
        self.url, self.path = url, path
        self.on_unreachable = on_unreachable
        self.timeout = timeout

    @property
    def where(self) -> str:
        """The switch as shown to people: a path, or a URL cut to its host (its path may be secret)."""
        if self.path is not None:
            return str(self.path)
        parts = urlsplit(self.url or "")
        return f"{parts.scheme}://{parts.netloc}/..."

    def __repr__(self) -> str:
        return f"SharedStop({self.where!r}, on_unreachable={self.on_unreachable!r})"

    def reason(self) -> str | None:
        """Why to stop (never cached), or None to go on."""
        try:
            return self._read_url() if self.url is not None else self._read_path()
        except _Unreachable as exc:
            if self.on_unreachable == "go":
                return None
            return f"the fleet stop cannot be read ({exc}); failing closed"

    def _read_path(self) -> str | None:
        assert self.path is not None
        if not os.path.isdir(self.path.parent):
            raise _Unreachable(f"{self.path.parent} is not there")
        return KillSwitch(self.path).reason()

    def _read_url(self) -> str | None:
        import urllib.error
        import urllib.request

        assert self.url is not None
        request = urllib.request.Request(self.url, headers={"User-Agent": "heartbeat-stop"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                raw: bytes = answer.read(_REASON_LIMIT * 4)
        except urllib.error.HTTPError as exc:
            if exc.code in (404, 410):
                return None
            raise _Unreachable(f"HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise _Unreachable(str(getattr(reason, "strerror", None) or reason)) from None
        text = " ".join(raw.decode("utf-8", "replace").split())[:_REASON_LIMIT]
        return text or "fleet stop engaged (no reason given)"


class _Unreachable(Exception):
    """The switch could not be read."""
