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
(fail open: an outage of the stop service never stops the fleet).

The tick reads it once before the step (:meth:`SharedStop.reason`, fresh).
Watchers read :meth:`SharedStop.latest`, which never blocks and reads the
switch at most once every :data:`POLL_SECONDS` per process, however many
watchers ask: ``run``'s watcher between ticks, and the step watchdog while a
step runs (:mod:`heartbeat.tick.watchdog`), which abandons a step that does not
return once the stop is engaged, as it does on KILL. A fleet of N hosts thus
sends a stop URL at most N requests a second, plus one per tick.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from ..state.killswitch import KillSwitch

if TYPE_CHECKING:
    from ..config.file import HeartbeatConfig

__all__ = ["POLL_SECONDS", "PolledStop", "SharedStop"]

POLL_SECONDS = 1.0
"""How often a watcher reads the fleet stop (at most, per process): a URL is not hammered."""

_REASON_LIMIT = 500
_SHARED: dict[tuple[str | None, str | None, str, float], SharedStop] = {}
_SHARED_LOCK = threading.Lock()


class SharedStop:
    """A stop switch at a URL or a shared path; ``reason()`` says why to stop, or None."""

    @classmethod
    def from_config(cls, config: HeartbeatConfig) -> SharedStop:
        """The stop ``[stop]`` describes (the caller checked there is one), one per switch and process.

        Every agent of a process that reads one switch gets the same object, so its
        watchers share one reading of it (:meth:`latest`).
        """
        stop = config.stop
        assert stop is not None
        path = config.resolve(stop.path) if stop.path else None
        timeout = stop.timeout.total_seconds()
        key = (stop.url, str(path) if path else None, stop.on_unreachable, timeout)
        with _SHARED_LOCK:
            found = _SHARED.get(key)
            if found is None:
                found = _SHARED[key] = cls(
                    url=stop.url, path=path, on_unreachable=stop.on_unreachable, timeout=timeout
                )
            return found

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
        self._lock = threading.Lock()
        self._answer: str | None = None
        self._read_at = -float("inf")  # monotonic time of the last answer
        self._reading = False

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
        """Why to stop (read now, never cached), or None to go on."""
        answer = self._read()
        with self._lock:
            self._answer, self._read_at = answer, time.monotonic()
        return answer

    def latest(self) -> str | None:
        """The last answer, at most about POLL_SECONDS old; never blocks (for watchers).

        When the last answer is older than that, a fresh read starts on a thread of its
        own (a URL may take its whole timeout) and this returns the last answer (None
        before the first): a slow stop service never holds up the KILL file's watch.
        """
        with self._lock:
            if not self._reading and time.monotonic() - self._read_at >= POLL_SECONDS:
                self._reading = True
                threading.Thread(target=self._refresh, name="heartbeat-fleet-stop", daemon=True).start()
            return self._answer

    def polled(self) -> PolledStop:
        """This stop as a watcher reads it: ``reason()`` is :meth:`latest` (for the step watchdog)."""
        return PolledStop(self)

    def _refresh(self) -> None:
        answer: str | None = None
        try:
            answer = self._read()
        except Exception as exc:  # a bug of ours must not leave the stop unread forever
            answer = None if self.on_unreachable == "go" else f"the fleet stop cannot be read ({exc})"
        finally:
            with self._lock:
                self._answer, self._read_at, self._reading = answer, time.monotonic(), False

    def _read(self) -> str | None:
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
        import http.client
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
        except http.client.HTTPException as exc:  # not HTTP at all: a TLS port, a wrong service
            raise _Unreachable(f"not an HTTP answer ({type(exc).__name__})") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise _Unreachable(str(getattr(reason, "strerror", None) or reason)) from None
        text = " ".join(raw.decode("utf-8", "replace").split())[:_REASON_LIMIT]
        return text or "fleet stop engaged (no reason given)"


class PolledStop:
    """A :class:`SharedStop` whose ``reason()`` never blocks: its :meth:`~SharedStop.latest` answer."""

    __slots__ = ("stop",)

    def __init__(self, stop: SharedStop) -> None:
        self.stop = stop

    def reason(self) -> str | None:
        """The stop's latest answer (read at most once every POLL_SECONDS)."""
        return self.stop.latest()


class _Unreachable(Exception):
    """The switch could not be read."""
