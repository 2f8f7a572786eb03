"""The ``ping`` notifier: a dead man's switch in the healthchecks.io convention.

Every tick pings ``URL/start`` before it begins and ``URL`` (success) or
``URL/<exit code>`` (failure) when it ends, so a monitoring service that
expects a ping every period pages someone when cron silently stops calling
``tick``, the host is down, or ticks keep failing. Healthchecks.io,
Cronitor-style and Uptime Kuma push monitors accept this. An escalation is
sent as ``URL/fail`` with its text as the body.

Exit codes 3 (KILL), 4 (waiting for a human, who has been told) and 5 (the
lock was busy) are expected states, pinged as success unless ``fail_on``
lists them. A tick whose step did not return and was abandoned on KILL (or
the fleet stop) is different: its work is lost, so it pings ``URL/<exit code>``
as a failure whatever ``fail_on`` says, waiting at most
:data:`ABANDONED_PING_SECONDS` (the process ends right after); so does a
tick ended by SIGTERM or SIGINT (``URL/143``, ``URL/130``). A ping never
fails a tick: an unreachable service is a line on stderr. Uses ``urllib`` (no
httpx) and is imported only when configured.
"""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..base.errors import NotifyError
from ..core.models import Notification
from ..tick.watchdog import TickInterrupted

if TYPE_CHECKING:
    from ..core.result import TickResult
    from ..tick.runner import Heartbeat

__all__ = ["ABANDONED_PING_SECONDS", "PingNotifier", "PingRound"]

_BODY_LIMIT = 10_000  # healthchecks.io keeps the first 10 KB of a ping body

ABANDONED_PING_SECONDS = 1.0
"""How long an abandoned tick waits for its fail pings: KILL must still end the process promptly."""


class PingNotifier:
    """Pings ``url`` at the start and end of each tick; ``send`` pings ``url/fail``."""

    def __init__(
        self, name: str, url: str, *, timeout: float = 5.0, fail_on: frozenset[int] = frozenset({1, 2})
    ) -> None:
        self.name = name
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.fail_on = fail_on

    def __repr__(self) -> str:
        parts = urlsplit(self.url)  # the path holds the check's secret id: never shown
        return f"PingNotifier({self.name!r}, '{parts.scheme}://{parts.netloc}/...')"

    def _ping(self, suffix: str, body: str = "") -> None:
        data = body.encode("utf-8", "replace")[:_BODY_LIMIT]
        request = urllib.request.Request(self.url + suffix, data=data, method="POST")
        request.add_header("User-Agent", "heartbeat-ping")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                answer.read(1024)
        except urllib.error.HTTPError as exc:
            raise NotifyError(self.name, f"ping answered HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise NotifyError(
                self.name, f"ping failed: {getattr(reason, 'strerror', None) or reason}"
            ) from None

    def start(self) -> None:
        """A tick begins (``URL/start``); raises NotifyError when the service cannot be reached."""
        self._ping("/start")

    def finish(self, exit_code: int, message: str = "") -> None:
        """A tick ended: success, or ``URL/<exit code>`` when ``exit_code`` is in ``fail_on``."""
        self._ping(f"/{exit_code}" if exit_code in self.fail_on else "", message)

    def fail(self, exit_code: int, message: str = "") -> None:
        """A tick failed whatever ``fail_on`` says (its step was abandoned): ``URL/<exit code>``."""
        self._ping(f"/{exit_code}", message)

    def send(self, message: Notification) -> None:
        """An escalation or reminder: ``URL/fail`` with the text, so the check goes down."""
        self._ping("/fail", message.text)


class PingRound:
    """The dead man's switches pinged around one tick: the ``ping`` tables whose URL is set."""

    def __init__(self, configs: Sequence[Any]) -> None:
        from ..config.notify import PingNotifierConfig

        # A ping whose ${ENV} URL is not set is skipped here; the tick itself says why.
        self.pings = [
            PingNotifier(c.name, c.url, timeout=c.timeout.total_seconds(), fail_on=frozenset(c.fail_on))
            for c in configs
            if isinstance(c, PingNotifierConfig) and not c.unset_env()
        ]

    def around(self, hb: Heartbeat, tick: Callable[[], TickResult]) -> TickResult:
        """Run ``tick``, one heartbeat of ``hb``, between the pings; failed pings join its ``undelivered``."""
        missed = self.start()
        caller = hb.on_abandon
        abandoned: list[TickResult] = []

        def on_abandon(result: TickResult) -> None:
            # KILL abandoned a step that does not return, and the caller may end the process
            # at once: the dead man's switch hears of the lost tick now, as a failure.
            abandoned.append(result)
            missed.extend(self.abandoned(result.exit_code, result.message))
            result.undelivered += [hb.redact(error) for error in dict.fromkeys(missed)]
            if caller is not None:
                caller(result)

        hb.on_abandon = on_abandon
        try:
            result = tick()
        except TickInterrupted as exc:
            # SIGTERM/SIGINT ended the tick, its work unsaved: a failure (128 + the signal),
            # pinged before the caller exits, or the check would wait for an end that never comes.
            self.abandoned(128 + exc.signum, f"{exc}; the tick's work was not saved")
            raise
        finally:
            hb.on_abandon = caller
        if any(result is done for done in abandoned):
            return result  # pinged already, from the watchdog thread
        missed += self.finish(result.exit_code, result.message)
        result.undelivered += [hb.redact(error) for error in dict.fromkeys(missed)]
        return result

    def start(self) -> list[str]:
        """Ping every start; the failures as lines."""
        return [error for error in (_quietly(p.start) for p in self.pings) if error]

    def finish(self, exit_code: int, message: str) -> list[str]:
        """Ping every end with the tick's exit code; the failures as lines."""
        found = (_quietly(partial(p.finish, exit_code, message)) for p in self.pings)
        return [error for error in found if error]

    def abandoned(self, exit_code: int, message: str, *, within: float = ABANDONED_PING_SECONDS) -> list[str]:
        """The step was abandoned: ping every ``URL/<exit code>`` at once, waiting ``within`` s at most.

        Called from the watchdog thread just before the process may end, so the pings run
        side by side and a slow service costs the stop no more than ``within`` seconds.
        """
        errors: dict[int, str | None] = {}

        def one(i: int, ping: PingNotifier) -> None:
            errors[i] = _quietly(partial(ping.fail, exit_code, message))

        threads = [
            threading.Thread(target=one, args=(i, p), name=f"ping:{p.name}", daemon=True)
            for i, p in enumerate(self.pings)
        ]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + within
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        lines = []
        for i, ping in enumerate(self.pings):
            if i not in errors:  # still waiting for the service: the process will not
                lines.append(f"notifier {ping.name}: fail ping not answered within {within:g} s")
            elif errors[i]:
                lines.append(str(errors[i]))
        return lines


def _quietly(call: Callable[[], None]) -> str | None:
    """Run one ping; its failure as a line, never an exception (a ping must not fail a tick)."""
    try:
        call()
    except NotifyError as exc:
        return str(exc)
    return None
