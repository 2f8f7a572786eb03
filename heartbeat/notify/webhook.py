"""The ``webhook`` notifier: POST the notification as JSON, with a real per-attempt deadline.

httpx is imported inside :meth:`WebhookNotifier.send`: a tick that sends
nothing does not pay for it. Error messages show a URL as
``scheme://host:port/…`` (see :func:`~heartbeat.base.redact.redact_url`) and never
quote an httpx exception, whose text may hold the full URL.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..base.errors import ConfigError, NotifyError
from ..base.redact import redact, redact_url, webhook_secrets
from ..core.models import Notification
from .base import MAX_ANSWER, one_line

if TYPE_CHECKING:
    import httpx

__all__ = ["WebhookNotifier"]

# A Retry-After longer than this is not waited for in a tick; the outbox retries later.
_MAX_RETRY_AFTER = 10.0
_USER_AGENT = "heartbeat-notify/1"


def _os_reason(exc: BaseException) -> str | None:
    """The OS's words ("Connection refused") from an exception's chain, if any."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.strerror:
            return current.strerror
        current = current.__cause__ or current.__context__
    return None


class WebhookNotifier:
    """POST the notification as JSON to a URL, retrying 5xx, 429, timeouts and refusals.

    2xx is delivered. A redirect is not followed (it could carry the payload
    somewhere else) and fails at once, as does any other 4xx. ``retries``
    more attempts follow the first, ``backoff * 2**n`` seconds apart.

    ``timeout`` is a real deadline for each attempt, from connecting to the
    last byte of the answer: a server that accepts and never answers, or
    trickles its answer a byte at a time, is cut off then (its socket is shut
    down), not after a per-read timeout that each trickled byte restarts.
    """

    def __init__(
        self,
        name: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 10.0,
        retries: int = 2,
        backoff: float = 0.5,
        client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"notifier {name}: url must start with http:// or https://, got {redact_url(url)}"
            )
        if timeout <= 0 or retries < 0 or backoff < 0:
            raise ConfigError(f"notifier {name}: timeout must be > 0, retries and backoff >= 0")
        self.name = name
        self._url = url
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._client = client
        self._sleep = sleep
        self._secrets = webhook_secrets(url, self.headers)
        self.target = redact_url(url)
        self.mask_with: list[str] = []
        """Other secrets (other notifiers', ``${ENV}`` values) masked out of what is sent."""

    def __repr__(self) -> str:
        return f"WebhookNotifier(name={self.name!r}, url={self.target!r})"

    def _fail(self, reason: str) -> NotifyError:
        return NotifyError(self.name, redact(reason, [*self._secrets, *self.mask_with]))

    def send(self, message: Notification) -> None:
        """POST ``message.to_json()`` with an ``Idempotency-Key`` header."""
        import httpx  # here, not at the top: most ticks send nothing

        headers = {
            "User-Agent": _USER_AGENT,
            **self.headers,
            "Idempotency-Key": message.key,
        }
        body = message.to_json()
        if self.mask_with:
            from ..base.redact import mask_tree

            body = mask_tree(body, self.mask_with)
        if self._client is not None:
            self._post_with_retries(self._client, headers, body)
            return
        with httpx.Client(follow_redirects=False) as client:
            self._post_with_retries(client, headers, body)

    def _post_with_retries(self, client: httpx.Client, headers: dict[str, str], body: dict[str, Any]) -> None:
        attempts = self.retries + 1
        reason = ""
        for attempt in range(attempts):
            wait = self.backoff * 2**attempt
            outcome = self._post_once(client, headers, body)
            if isinstance(outcome, str):
                reason = outcome
            else:
                status, phrase, answer, retry_after = outcome
                if 200 <= status < 300:
                    return
                if 300 <= status < 400:
                    raise self._fail(
                        f"{self.target} answered {status} (a redirect); not followed, "
                        "since it could send the payload elsewhere: configure the final URL"
                    )
                # Masked before it is cut: a token cut in half would no longer match.
                said = one_line(redact(answer, [*self._secrets, *self.mask_with]), 80)
                reason = f"{self.target} answered {status} {phrase}".rstrip()
                if said:
                    reason += f": {said}"
                if status != 429 and status < 500:
                    raise self._fail(reason)
                wait = max(wait, retry_after)
            if attempt + 1 < attempts:
                self._sleep(wait)
        raise self._fail(f"{reason} (after {attempts} attempt{'s' * (attempts > 1)})")

    def _post_once(
        self, client: httpx.Client, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, str, str, float] | str:
        """One POST within the deadline: (status, phrase, start of the answer, Retry-After) or why not."""
        import httpx

        sockets: list[socket.socket] = []
        expired = threading.Event()
        guard = threading.Lock()

        def cut_off(sock: socket.socket) -> None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked recv at once, unlike close()

        def trace(event: str, info: Mapping[str, Any]) -> None:
            # httpcore reports each new connection; its socket is what the deadline shuts down.
            if not event.startswith("connection.") or not event.endswith(".complete"):
                return
            get = getattr(info.get("return_value"), "get_extra_info", None)
            sock = get("socket") if get is not None else None
            if isinstance(sock, socket.socket):
                with guard:
                    sockets.append(sock)
                    late = expired.is_set()
                if late:
                    cut_off(sock)

        def expire() -> None:
            with guard:
                expired.set()
                found = list(sockets)
            for sock in found:
                cut_off(sock)

        timer = threading.Timer(self.timeout, expire)
        timer.daemon = True
        timer.start()
        try:
            with client.stream(
                "POST",
                self._url,
                json=body,
                headers=headers,
                timeout=self.timeout,
                follow_redirects=False,
                extensions={"trace": trace},
            ) as response:
                answer = b""
                for chunk in response.iter_raw():
                    answer += chunk
                    if len(answer) >= MAX_ANSWER:
                        break
                after = _retry_after(response.headers.get("Retry-After"))
                text = answer[:MAX_ANSWER].decode(response.encoding or "utf-8", errors="replace")
                return response.status_code, response.reason_phrase, text, after
        except httpx.TimeoutException as exc:
            return f"{self.target} did not answer within {self.timeout:g}s ({type(exc).__name__})"
        except httpx.TransportError as exc:
            if expired.is_set():
                return f"{self.target} did not answer within {self.timeout:g}s (cut off at the deadline)"
            # Never str(exc): httpx may put the whole URL, token included, in it.
            why = _os_reason(exc) or type(exc).__name__
            return f"cannot reach {self.target}: {why}"
        finally:
            timer.cancel()


def _retry_after(value: str | None) -> float:
    """Seconds from a Retry-After header (delta form only), capped; 0 if absent or odd."""
    try:
        seconds = float(value) if value is not None else 0.0
    except ValueError:
        return 0.0
    return min(max(seconds, 0.0), _MAX_RETRY_AFTER)
