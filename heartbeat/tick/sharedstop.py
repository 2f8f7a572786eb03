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

The tick reads it once before the step (:meth:`SharedStop.reason`, fresh),
while it watches the KILL file: a KILL written during a slow read ends the
tick at once (:class:`KilledWhileReading`). Every read has a real deadline,
``timeout`` from connecting to the last byte (the socket is shut down then),
so a server that trickles its answer a byte at a time cannot hold a tick.

Everything else shares one reading of each switch per process:
:meth:`SharedStop.current` (``status``, ``metrics``, each ``--metrics-port``
scrape) reads it at most once every :data:`POLL_SECONDS`, however many agents
ask (concurrent callers wait for the one read under way), and
:meth:`SharedStop.latest` never blocks: ``run``'s watcher between ticks, and
the step watchdog while a step runs (:mod:`heartbeat.tick.watchdog`), which
abandons a step that does not return once the stop is engaged, as it does on
KILL. A fleet of N hosts thus sends a stop URL at most N requests a second,
plus one per tick.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from ..state.killswitch import REASON_LIMIT, KillSwitch, reason_text

if TYPE_CHECKING:
    from ..config.file import HeartbeatConfig

__all__ = ["POLL_SECONDS", "KilledWhileReading", "PolledStop", "SharedStop"]

POLL_SECONDS = 1.0
"""How often a watcher reads the fleet stop (at most, per process): a URL is not hammered."""

_WATCH_SECONDS = 0.1  # how often a read in progress looks at the KILL file
_SHARED: dict[tuple[str | None, str | None, str, float], SharedStop] = {}
_SWITCHES: dict[tuple[str | None, str | None], _Switch] = {}
_SHARED_LOCK = threading.RLock()  # from_config builds a SharedStop, which takes it too


class KilledWhileReading(Exception):
    """The KILL file appeared while the fleet stop was being read: the read was given up."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class _Switch:
    """One switch's last reading in this process, shared by every SharedStop that reads it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.outcome: tuple[bool, str | None] = (True, None)  # (reachable, reason); none read yet
        self.read_at = -float("inf")  # monotonic time of the last reading
        self.reading: threading.Event | None = None  # set when the read under way ends


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
        with _SHARED_LOCK:  # one reading per switch, whatever on_unreachable says of it
            self._switch = _SWITCHES.setdefault((url, str(path) if path else None), _Switch())

    @property
    def where(self) -> str:
        """The switch as shown to people: a path, or a URL cut to its host (its path may be secret)."""
        if self.path is not None:
            return str(self.path)
        parts = urlsplit(self.url or "")
        return f"{parts.scheme}://{parts.netloc}/..."

    def __repr__(self) -> str:
        return f"SharedStop({self.where!r}, on_unreachable={self.on_unreachable!r})"

    def reason(self, *, killed: Callable[[], str | None] | None = None) -> str | None:
        """Why to stop (read now, never cached), or None to go on.

        ``killed`` (the KILL file's ``reason``) is looked at every 0.1 s while the
        switch is read: once it says something, the read is given up and
        :class:`KilledWhileReading` raised, so a slow stop never holds up a KILL.
        """
        return self._meaning(self._read_shared(0.0, killed))

    def current(self, *, killed: Callable[[], str | None] | None = None) -> str | None:
        """Why to stop, from a reading at most :data:`POLL_SECONDS` old, shared by every caller.

        ``status``, ``metrics`` and each metrics scrape ask for every agent: one read
        of the switch serves them all (a caller that comes while it is under way waits
        for it), so twelve agents cost a stop URL one request, not twelve. ``killed``
        as for :meth:`reason`: a KILL meanwhile gives the wait up (:class:`KilledWhileReading`).
        """
        return self._meaning(self._read_shared(POLL_SECONDS, killed))

    def latest(self) -> str | None:
        """The last answer, at most about POLL_SECONDS old; never blocks (for watchers).

        When the last answer is older than that, a fresh read starts on a thread of its
        own (a URL may take its whole timeout) and this returns the last answer (None
        before the first): a slow stop service never holds up the KILL file's watch.
        """
        switch = self._switch
        with switch.lock:
            if switch.reading is None and time.monotonic() - switch.read_at >= POLL_SECONDS:
                switch.reading = threading.Event()
                threading.Thread(target=self._refresh, name="heartbeat-fleet-stop", daemon=True).start()
            outcome = switch.outcome
        return self._meaning(outcome)

    @property
    def read_yet(self) -> bool:
        """Whether this process has a reading of the switch (else :meth:`latest` knows nothing yet)."""
        return self._switch.read_at > -float("inf")

    def polled(self) -> PolledStop:
        """This stop as a watcher reads it: ``reason()`` is :meth:`latest` (for the step watchdog)."""
        return PolledStop(self)

    def _meaning(self, outcome: tuple[bool, str | None]) -> str | None:
        """A reading as this stop's answer: an unreachable switch follows ``on_unreachable``."""
        reachable, said = outcome
        if reachable or self.on_unreachable == "go":
            return said if reachable else None
        return f"the fleet stop cannot be read ({said}); failing closed"

    def _read_shared(
        self, max_age: float, killed: Callable[[], str | None] | None
    ) -> tuple[bool, str | None]:
        """A reading no older than ``max_age`` (0: one ending after this call began); one read at a time."""
        switch = self._switch
        asked = time.monotonic()
        while True:
            with switch.lock:
                fresh = switch.read_at >= asked or (max_age and time.monotonic() - switch.read_at < max_age)
                if fresh:
                    return switch.outcome
                waiting = switch.reading
                if waiting is None:  # nobody reads it now: this caller does
                    done = switch.reading = threading.Event()
                    break
            # Another caller's read (its deadline bounds it): wait for it, then look again.
            while not waiting.wait(_WATCH_SECONDS):
                if killed is not None and (why := killed()) is not None:
                    raise KilledWhileReading(why)
        try:
            outcome = self._read(killed)
        except BaseException:  # given up for a KILL: no reading to share
            with switch.lock:
                switch.reading = None
            done.set()
            raise
        with switch.lock:
            switch.outcome, switch.read_at, switch.reading = outcome, time.monotonic(), None
        done.set()
        return outcome

    def _refresh(self) -> None:
        switch = self._switch
        outcome: tuple[bool, str | None] = (False, "not read")
        try:
            outcome = self._read(None)
        except Exception as exc:  # a bug of ours must not leave the stop unread forever
            outcome = (False, str(exc))
        finally:
            with switch.lock:
                done = switch.reading
                switch.outcome, switch.read_at, switch.reading = outcome, time.monotonic(), None
            if done is not None:
                done.set()

    def _read(self, killed: Callable[[], str | None] | None) -> tuple[bool, str | None]:
        """(reachable, reason): read on a thread of its own, within ``timeout`` from start to end."""
        box: list[tuple[bool, str | None]] = []
        connections: list[Any] = []
        done = threading.Event()

        def read() -> None:
            try:
                box.append((True, self._read_url(connections) if self.url is not None else self._read_path()))
            except _Unreachable as exc:
                box.append((False, str(exc)))
            except Exception as exc:  # cut off at the deadline, or a bug of ours: unreachable
                box.append((False, f"{type(exc).__name__}"))
            finally:
                done.set()

        threading.Thread(target=read, name="heartbeat-fleet-stop-read", daemon=True).start()
        deadline = time.monotonic() + self.timeout
        while not done.wait(max(0.0, min(_WATCH_SECONDS, deadline - time.monotonic()))):
            if killed is not None and (why := killed()) is not None:
                _cut(connections)
                raise KilledWhileReading(why)
            if time.monotonic() >= deadline:
                _cut(connections)  # a URL that trickles its answer: its socket is shut down now
                return (False, f"no answer within {self.timeout:g}s")
        return box[0] if box else (False, "not read")

    def _read_path(self) -> str | None:
        assert self.path is not None
        if not os.path.isdir(self.path.parent):
            raise _Unreachable(f"{self.path.parent} is not there")
        return KillSwitch(self.path).reason()

    def _read_url(self, connections: list[Any]) -> str | None:
        import http.client
        import urllib.error
        import urllib.request

        assert self.url is not None
        opener = urllib.request.build_opener(*_recording_handlers(connections))
        request = urllib.request.Request(self.url, headers={"User-Agent": "heartbeat-stop"})
        try:
            with opener.open(request, timeout=self.timeout) as answer:
                raw: bytes = answer.read(REASON_LIMIT * 4)
        except urllib.error.HTTPError as exc:
            if exc.code in (404, 410):
                return None
            raise _Unreachable(f"HTTP {exc.code}") from None
        except http.client.HTTPException as exc:  # not HTTP at all: a TLS port, a wrong service
            raise _Unreachable(f"not an HTTP answer ({type(exc).__name__})") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise _Unreachable(str(getattr(reason, "strerror", None) or reason)) from None
        return reason_text(raw, "fleet stop engaged (no reason given)")


def _recording_handlers(connections: list[Any]) -> list[Any]:
    """urllib's HTTP and HTTPS handlers, each connection they open kept in ``connections``."""
    import http.client
    import urllib.request

    def recorded(cls: Any) -> Any:
        def make(host: str, **kwargs: Any) -> Any:
            connection = cls(host, **kwargs)
            connections.append(connection)
            return connection

        return make

    class Plain(urllib.request.HTTPHandler):
        def http_open(self, req: Any) -> Any:
            return self.do_open(recorded(http.client.HTTPConnection), req)

    class Secure(urllib.request.HTTPSHandler):
        def https_open(self, req: Any) -> Any:
            return self.do_open(recorded(http.client.HTTPSConnection), req, context=self._context)  # type: ignore[attr-defined]

    return [Plain(), Secure()]


def _cut(connections: list[Any]) -> None:
    """Shut down the sockets of a read past its deadline: a blocked recv returns at once."""
    import socket

    for connection in list(connections):
        sock = getattr(connection, "sock", None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class PolledStop:
    """A :class:`SharedStop` whose ``reason()`` never blocks: its :meth:`~SharedStop.latest` answer."""

    __slots__ = ("stop",)

    def __init__(self, stop: SharedStop) -> None:
        self.stop = stop

    @property
    def where(self) -> str:
        """The switch as shown to people (:attr:`SharedStop.where`)."""
        return self.stop.where

    def reason(self) -> str | None:
        """The stop's latest answer (read at most once every POLL_SECONDS)."""
        return self.stop.latest()


class _Unreachable(Exception):
    """The switch could not be read."""
