"""Telling a human: notifiers (webhook, command, file) and the outbox that retries them.

A :class:`Notifier` has a ``name`` and one method, ``send``, which delivers a
:class:`Notification` or raises :class:`~heartbeat.errors.NotifyError`.
:func:`dispatch` sends one notification to every notifier; whatever fails
waits in the :class:`Outbox` (one JSON file per notification and notifier)
and :meth:`Outbox.deliver` retries it on later ticks. Delivery is
at-least-once: an outbox file is removed only after a successful send, and
every send carries the same idempotency key so a receiver can drop repeats.

Secrets stay in memory. An outbox entry names its notifier instead of
holding its URL or token, and is sent through the notifier of that name in
the configuration current at retry time. Error messages show a URL as
``scheme://host:port/…`` (see :func:`redact_url`) and never quote an httpx
exception, whose text may hold the full URL.

httpx is imported inside :meth:`WebhookNotifier.send`: a tick that sends
nothing does not pay for it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol
from urllib.parse import urlsplit

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
)

from .errors import ConfigError, NotifyError
from .fsutil import atomic_write, ensure_private_dir, write_all
from .models import Notification, clip
from .redact import redact, redact_url, url_secrets, webhook_secrets

if TYPE_CHECKING:
    import httpx

    from .config import NotifierConfig

__all__ = [
    "CommandNotifier",
    "DeliveryReport",
    "FileNotifier",
    "Notification",
    "Notifier",
    "Outbox",
    "OutboxEntry",
    "WebhookNotifier",
    "build_notifiers",
    "dispatch",
    "redact",
    "redact_url",
    "retry_delay",
    "url_secrets",
]

RETRY_BASE = timedelta(seconds=5)
RETRY_CAP = timedelta(minutes=10)
# Temp files older than this in outbox/ are left over from a crashed write.
_STALE_TEMP = timedelta(minutes=10)
# A Retry-After longer than this is not waited for in a tick; the outbox retries later.
_MAX_RETRY_AFTER = 10.0
_USER_AGENT = "heartbeat-notify/1"


def _one_line(text: str, limit: int = 120) -> str:
    """Whitespace collapsed and cut to ``limit`` characters."""
    return clip(" ".join(text.split()), limit) or ""


def retry_delay(attempts: int) -> timedelta:
    """How long an outbox entry waits after its ``attempts``-th failed send: 5s, 10s, … 10min."""
    exponent = min(max(attempts - 1, 0), 16)  # 5s * 2**16 is far past the cap already
    return min(RETRY_BASE * (1 << exponent), RETRY_CAP)


class Notifier(Protocol):
    """Delivers notifications somewhere a human looks."""

    @property
    def name(self) -> str:
        """The notifier's name in the config; outbox entries refer to it."""
        ...

    def send(self, message: Notification) -> None:
        """Deliver ``message`` or raise NotifyError (whose text holds no URL path or token)."""
        ...


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

    def __repr__(self) -> str:
        return f"WebhookNotifier(name={self.name!r}, url={self.target!r})"

    def _fail(self, reason: str) -> NotifyError:
        return NotifyError(self.name, redact(reason, self._secrets))

    def send(self, message: Notification) -> None:
        """POST ``message.to_json()`` with an ``Idempotency-Key`` header."""
        import httpx  # here, not at the top: most ticks send nothing

        headers = {
            "User-Agent": _USER_AGENT,
            **self.headers,
            "Idempotency-Key": message.key,
        }
        body = message.to_json()
        if self._client is not None:
            self._post_with_retries(self._client, headers, body)
            return
        with httpx.Client(follow_redirects=False) as client:
            self._post_with_retries(client, headers, body)

    def _post_with_retries(self, client: httpx.Client, headers: dict[str, str], body: dict[str, Any]) -> None:
        import httpx

        attempts = self.retries + 1
        reason = ""
        for attempt in range(attempts):
            wait = self.backoff * 2**attempt
            try:
                response = client.post(
                    self._url,
                    json=body,
                    headers=headers,
                    timeout=self.timeout,
                    follow_redirects=False,
                )
            except httpx.TimeoutException as exc:
                reason = f"{self.target} did not answer within {self.timeout:g}s ({type(exc).__name__})"
            except httpx.TransportError as exc:
                # Never str(exc): httpx may put the whole URL, token included, in it.
                why = _os_reason(exc) or type(exc).__name__
                reason = f"cannot reach {self.target}: {why}"
            else:
                status = response.status_code
                if 200 <= status < 300:
                    return
                if 300 <= status < 400:
                    raise self._fail(
                        f"{self.target} answered {status} (a redirect); not followed, "
                        "since it could send the payload elsewhere: configure the final URL"
                    )
                said = _one_line(response.text, 80)
                reason = f"{self.target} answered {status} {response.reason_phrase}".rstrip()
                if said:
                    reason += f": {said}"
                if status != 429 and status < 500:
                    raise self._fail(reason)
                wait = max(wait, _retry_after(response.headers.get("Retry-After")))
            if attempt + 1 < attempts:
                self._sleep(wait)
        raise self._fail(f"{reason} (after {attempts} attempt{'s' * (attempts > 1)})")


def _retry_after(value: str | None) -> float:
    """Seconds from a Retry-After header (delta form only), capped; 0 if absent or odd."""
    try:
        seconds = float(value) if value is not None else 0.0
    except ValueError:
        return 0.0
    return min(max(seconds, 0.0), _MAX_RETRY_AFTER)


class CommandNotifier:
    """Run a command (no shell) with the text on stdin and the JSON in ``HEARTBEAT_NOTIFICATION``."""

    def __init__(self, name: str, command: str, *, timeout: float = 30.0, cwd: Path | None = None) -> None:
        import shlex  # here, not at the top: a tick that runs no command need not load it

        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise ConfigError(f"notifier {name}: cannot split command: {exc}") from None
        if not argv:
            raise ConfigError(f"notifier {name}: the command is empty")
        self.name = name
        self.argv = argv
        self.timeout = timeout
        self.cwd = cwd
        # The command line may hold a token (curl ... https://hooks/...): never echo it.
        self._secrets = [arg for arg in argv[1:] if len(arg) >= 6]

    def __repr__(self) -> str:
        return f"CommandNotifier(name={self.name!r}, program={self.argv[0]!r})"

    def send(self, message: Notification) -> None:
        """Run the command; a non-zero exit or a timeout raises NotifyError."""
        import subprocess  # here, not at the top: a tick that runs no command need not load it

        env = {**os.environ, "HEARTBEAT_NOTIFICATION": json.dumps(message.to_json())}
        program = Path(self.argv[0]).name
        try:
            done = subprocess.run(
                self.argv,
                input=message.text,
                env=env,
                cwd=self.cwd,
                capture_output=True,
                encoding="utf-8",
                errors="replace",
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise NotifyError(
                self.name, f"{program} did not finish within {self.timeout:g}s (killed)"
            ) from None
        except OSError as exc:
            raise NotifyError(self.name, f"cannot run {program}: {exc.strerror}") from None
        if done.returncode != 0:
            tail = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
            reason = f"{program} exited with code {done.returncode}"
            if tail:
                reason += f": {_one_line(tail, 100)}"
            raise NotifyError(self.name, redact(reason, self._secrets))


class FileNotifier:
    """Append each notification as one JSON line to a file (created 0600), fsynced."""

    def __init__(self, name: str, path: Path) -> None:
        self.name = name
        self.path = path

    def __repr__(self) -> str:
        return f"FileNotifier(name={self.name!r}, path={str(self.path)!r})"

    def send(self, message: Notification) -> None:
        """Append the line; an OS error raises NotifyError."""
        line = (json.dumps(message.to_json(), ensure_ascii=False) + "\n").encode("utf-8")
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


def build_notifiers(
    configs: Sequence[NotifierConfig],
    *,
    base_dir: Path,
    client: httpx.Client | None = None,
) -> list[Notifier]:
    """The notifiers the ``[[notify]]`` tables describe; relative paths start at ``base_dir``."""
    notifiers: list[Notifier] = []
    for config in configs:
        if config.type == "webhook":
            notifiers.append(
                WebhookNotifier(
                    config.name,
                    config.url,
                    headers=config.headers,
                    timeout=config.timeout.total_seconds(),
                    retries=config.retries,
                    backoff=config.backoff.total_seconds(),
                    client=client,
                )
            )
        elif config.type == "command":
            notifiers.append(
                CommandNotifier(
                    config.name,
                    config.command,
                    timeout=config.timeout.total_seconds(),
                    cwd=base_dir,
                )
            )
        elif config.type == "ping":
            from .ping import PingNotifier

            notifiers.append(
                PingNotifier(
                    config.name,
                    config.url,
                    timeout=config.timeout.total_seconds(),
                    fail_on=frozenset(config.fail_on),
                )
            )
        else:
            path = config.path if config.path.is_absolute() else base_dir / config.path
            notifiers.append(FileNotifier(config.name, path))
    return notifiers


@dataclass
class DeliveryReport:
    """What a dispatch or an outbox retry did; the CLI prints it, the journal records it."""

    delivered: list[str] = field(default_factory=list)
    """``"<key> to <notifier>"`` for each successful send."""
    failed: list[tuple[str, str]] = field(default_factory=list)
    """``(notifier name, redacted reason)`` for each failed send."""
    waiting: int = 0
    """Entries this call left in the outbox (failed now, not yet due, or notifier gone)."""
    corrupt: list[str] = field(default_factory=list)
    """Outbox files that could not be read and were moved aside as ``<name>.corrupt``."""

    @property
    def ok(self) -> bool:
        """True when nothing failed and nothing was corrupt."""
        return not self.failed and not self.corrupt

    def merge(self, other: DeliveryReport) -> DeliveryReport:
        """Both reports in one (say, the outbox retry and this tick's dispatch)."""
        return DeliveryReport(
            delivered=[*self.delivered, *other.delivered],
            failed=[*self.failed, *other.failed],
            waiting=self.waiting + other.waiting,
            corrupt=[*self.corrupt, *other.corrupt],
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form for ``--json`` output and the journal."""
        return {
            "delivered": list(self.delivered),
            "failed": [{"notifier": n, "error": e} for n, e in self.failed],
            "waiting": self.waiting,
            "corrupt": list(self.corrupt),
        }

    def summary(self) -> str:
        """One line for a human, or "" when there was nothing to report."""
        parts = []
        if self.delivered:
            parts.append(f"{len(self.delivered)} delivered")
        if self.failed:
            failures = "; ".join(f"{name}: {error}" for name, error in self.failed)
            parts.append(f"{len(self.failed)} failed ({failures})")
        if self.waiting:
            parts.append(f"{self.waiting} waiting in the outbox")
        if self.corrupt:
            parts.append(f"{len(self.corrupt)} corrupt outbox file(s) moved aside")
        return ("notifications: " + ", ".join(parts)) if parts else ""


class OutboxEntry(BaseModel):
    """One undelivered (notification, notifier) pair; holds the notifier's name, never its URL."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # see Notification

    schema_version: Literal[1] = 1
    notification: Notification
    notifier: str = Field(min_length=1)
    attempts: int = Field(default=1, ge=0, description="Failed sends so far.")
    last_error: str | None = Field(default=None, description="Redacted.")
    next_attempt_at: AwareDatetime
    _path: Path | None = PrivateAttr(default=None)

    @property
    def path(self) -> Path | None:
        """The file this entry was read from or written to."""
        return self._path


def _slug(text: str, limit: int) -> str:
    """A file-name-safe piece of ``text``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.")[:limit] or "x"


class Outbox:
    """Undelivered notifications, one JSON file each (0600) in a folder (0700).

    Not thread- or process-safe by itself: the runner holds the state
    folder's lock while it uses the outbox.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.corrupt: list[str] = []
        """Names of the corrupt files this Outbox moved aside so far."""

    def __repr__(self) -> str:
        return f"Outbox({str(self.directory)!r})"

    def path_for(self, key: str, notifier: str) -> Path:
        """The file of the entry for ``key`` and ``notifier``: one per pair, so a re-put replaces."""
        digest = hashlib.sha256(f"{notifier}\0{key}".encode()).hexdigest()[:12]
        return self.directory / f"{_slug(notifier, 40)}--{_slug(key, 60)}--{digest}.json"

    def _save(self, entry: OutboxEntry, path: Path) -> None:
        ensure_private_dir(self.directory)
        atomic_write(path, entry.model_dump_json(indent=2).encode("utf-8"))
        entry._path = path

    def put(
        self,
        notification: Notification,
        notifier_name: str,
        error: str | None,
        *,
        now: datetime | None = None,
    ) -> OutboxEntry:
        """Keep a notification for ``notifier_name``, replacing an entry for the same pair.

        ``error`` is why the first send failed (it is then retried from
        ``now`` + 5s), or None to queue a notification not sent yet (due at
        once), so that it is on disk before anything is tried. ``now``
        defaults to the notification's ``created_at``: this module never reads
        the clock. URLs in ``error`` are cut to their host here.
        """
        at = now or notification.created_at
        entry = OutboxEntry(
            notification=notification,
            notifier=notifier_name,
            attempts=0 if error is None else 1,
            last_error=None if error is None else redact(error),
            next_attempt_at=at if error is None else at + retry_delay(1),
        )
        self._save(entry, self.path_for(notification.key, notifier_name))
        return entry

    def remove(self, key: str, notifier: str) -> bool:
        """Drop the entry for ``key`` and ``notifier`` (it was delivered); True if there was one."""
        try:
            self.path_for(key, notifier).unlink()
        except FileNotFoundError:
            return False
        return True

    def _scan(self) -> tuple[list[OutboxEntry], list[str]]:
        """Every readable entry, oldest first, and the names of corrupt files moved aside."""
        if not self.directory.is_dir():
            return [], []
        entries: list[OutboxEntry] = []
        corrupt: list[str] = []
        for path in sorted(self.directory.glob("*.json")):
            try:
                entry = OutboxEntry.model_validate_json(path.read_bytes())
            except FileNotFoundError:
                continue  # delivered by someone else since the listing
            except (OSError, ValidationError):
                try:
                    corrupt.append(self._move_aside(path))
                except OSError as exc:
                    corrupt.append(f"{path.name} (could not be moved aside: {exc.strerror})")
                continue
            entry._path = path
            entries.append(entry)
        entries.sort(key=lambda e: (e.notification.created_at, e.notifier))
        return entries, corrupt

    def _move_aside(self, path: Path) -> str:
        """Rename a bad entry to ``<name>.corrupt`` (never delete it) and return the new name."""
        target = path.with_name(path.name + ".corrupt")
        n = 1
        while target.exists():
            n += 1
            target = path.with_name(f"{path.name}.corrupt-{n}")
        os.replace(path, target)
        return target.name

    def pending(self) -> list[OutboxEntry]:
        """Every undelivered entry, oldest first; corrupt files are moved aside (see ``corrupt``)."""
        entries, corrupt = self._scan()
        self.corrupt.extend(corrupt)
        return entries

    def _clean_temps(self, now: datetime) -> None:
        """Remove temp files left by a writer that crashed between create and rename."""
        cutoff = (now - _STALE_TEMP).timestamp()
        for temp in self.directory.glob(".*.tmp"):
            with contextlib.suppress(FileNotFoundError):
                if temp.stat().st_mtime < cutoff:
                    temp.unlink()

    def deliver(
        self,
        notifiers: Mapping[str, Notifier] | Sequence[Notifier],
        now: datetime,
        *,
        force: bool = True,
    ) -> DeliveryReport:
        """Retry every entry (only due ones unless ``force``) through the notifier of its name."""
        by_name = dict(notifiers) if isinstance(notifiers, Mapping) else {n.name: n for n in notifiers}
        entries, corrupt = self._scan()
        self.corrupt.extend(corrupt)
        report = DeliveryReport(corrupt=corrupt)
        if self.directory.is_dir():
            self._clean_temps(now)
        for entry in entries:
            name = entry.notifier
            notifier = by_name.get(name)
            if notifier is None:
                report.failed.append((name, f"no notifier named {name!r} in the current config"))
                report.waiting += 1
                continue
            if not force and entry.next_attempt_at > now:
                report.waiting += 1
                continue
            error = _send(notifier, entry.notification)
            path = entry.path or self.path_for(entry.notification.key, name)
            if error is None:
                # Only now: a crash before this line means a repeat, never a loss.
                path.unlink(missing_ok=True)
                report.delivered.append(f"{entry.notification.key} to {name}")
                continue
            report.failed.append((name, error))
            report.waiting += 1
            entry.attempts += 1
            entry.last_error = error
            entry.next_attempt_at = now + retry_delay(entry.attempts)
            try:
                self._save(entry, path)
            except OSError as exc:
                # The old file is intact, so the entry is still retried; only its count is stale.
                report.failed.append((name, f"could not update {path.name}: {exc.strerror}"))
        return report


def _send(notifier: Notifier, notification: Notification) -> str | None:
    """Send once; None on success, else the redacted reason (the notifier's name is beside it)."""
    try:
        notifier.send(notification)
    except NotifyError as exc:
        return redact(exc.reason)
    except Exception as exc:  # a custom notifier's bug is a failed send, recorded
        return redact(f"{type(exc).__name__}: {_one_line(str(exc))}")
    return None


def dispatch(
    notification: Notification,
    notifiers: Mapping[str, Notifier] | Sequence[Notifier],
    outbox: Outbox,
    *,
    now: datetime | None = None,
) -> DeliveryReport:
    """Send to every notifier; each failure waits in the outbox, so nothing is lost."""
    targets = list(notifiers.values()) if isinstance(notifiers, Mapping) else list(notifiers)
    report = DeliveryReport()
    for notifier in targets:
        error = _send(notifier, notification)
        if error is None:
            # An older entry for this key and notifier is now redundant.
            outbox.remove(notification.key, notifier.name)
            report.delivered.append(f"{notification.key} to {notifier.name}")
            continue
        try:
            outbox.put(notification, notifier.name, error, now=now)
        except OSError as exc:
            report.failed.append((notifier.name, f"{error}; and NOT saved to the outbox: {exc.strerror}"))
            continue
        report.failed.append((notifier.name, error))
        report.waiting += 1
    return report
