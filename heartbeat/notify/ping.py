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
as a failure whatever ``fail_on`` says (the round around a tick,
:mod:`heartbeat.tick.pinground`, waits for it only briefly: the process ends
right after); so does a tick ended by SIGTERM or SIGINT (``URL/143``,
``URL/130``). A ping never fails a tick: an unreachable service is a line on
stderr. Uses ``urllib`` (no httpx) and is imported only when configured.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from urllib.parse import urlsplit

from ..base.errors import NotifyError
from ..core.models import Notification

__all__ = ["PingNotifier"]

_BODY_LIMIT = 10_000  # healthchecks.io keeps the first 10 KB of a ping body


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
