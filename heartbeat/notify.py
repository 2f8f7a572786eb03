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
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
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
from .fsutil import PRIVATE_FILE_MODE, atomic_write, ensure_private_dir, read_regular, write_all
from .models import Notification, clip
from .redact import mask, redact, redact_url, url_secrets, webhook_secrets

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
    "OutboxItem",
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
# Of a webhook's answer only this much is read: its first words are quoted, the rest is noise.
_MAX_ANSWER = 4096
# An outbox entry is a few KB; anything this big is not one of ours.
_MAX_ENTRY = 4 * 1024 * 1024
# How long `resume` waits for a delivery in progress before it settles the outbox anyway.
SETTLE_WAIT = 5.0
# Kinds of notification that ask a human to act; `resume` settles them (see Outbox.settle).
STATUS_KINDS = frozenset({"escalation", "reminder", "budget"})


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
            from .redact import mask_tree

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
                said = _one_line(redact(answer, [*self._secrets, *self.mask_with]), 80)
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
                    if len(answer) >= _MAX_ANSWER:
                        break
                after = _retry_after(response.headers.get("Retry-After"))
                text = answer[:_MAX_ANSWER].decode(response.encoding or "utf-8", errors="replace")
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
        self.mask_with: list[str] = []
        """Secrets (``${ENV}`` values, webhook URLs) masked out of the text and JSON it is given."""

    def __repr__(self) -> str:
        return f"CommandNotifier(name={self.name!r}, program={self.argv[0]!r})"

    def send(self, message: Notification) -> None:
        """Run the command; a non-zero exit or a timeout raises NotifyError.

        The command runs in a process group of its own. Its exit is what
        counts: a background child it left (``cmd &``) neither holds up the
        delivery nor outlives it, since the group is ended once the command
        exits or times out. Its output goes to a temp file, not a pipe, which
        such a child would keep open.
        """
        import signal
        import subprocess  # here, not at the top: a tick that runs no command need not load it
        import tempfile

        text, data = message.text, json.dumps(message.to_json())
        if self.mask_with:
            text, data = mask(text, self.mask_with), mask(data, self.mask_with)
        env = {**os.environ, "HEARTBEAT_NOTIFICATION": data}
        program = Path(self.argv[0]).name
        with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as stderr:
            stdin.write(text.encode("utf-8", errors="replace"))
            stdin.seek(0)
            try:
                process = subprocess.Popen(
                    self.argv,
                    stdin=stdin,
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                    env=env,
                    cwd=self.cwd,
                    start_new_session=True,
                )
            except OSError as exc:
                raise NotifyError(self.name, f"cannot run {program}: {exc.strerror}") from None
            try:
                code: int | None = process.wait(self.timeout)
            except subprocess.TimeoutExpired:
                code = None
            finally:
                # The whole group: whatever the command started in the background goes too.
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            if code is None:
                raise NotifyError(self.name, f"{program} did not finish within {self.timeout:g}s (killed)")
            if code != 0:
                stderr.seek(0)
                said = stderr.read(_MAX_ANSWER).decode("utf-8", errors="replace").strip()
                tail = said.splitlines()[-1] if said else ""
                reason = f"{program} exited with code {code}"
                if tail:
                    reason += f": {_one_line(tail, 100)}"
                raise NotifyError(self.name, redact(reason, [*self._secrets, *self.mask_with]))


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


def build_notifiers(
    configs: Sequence[NotifierConfig],
    *,
    base_dir: Path,
    client: httpx.Client | None = None,
) -> list[Notifier]:
    """The notifiers the ``[[notify]]`` tables describe; relative paths start at ``base_dir``.

    A notifier whose ``${ENV}`` secret is not set raises ConfigError here:
    building notifiers is what needs the value. Each notifier masks every
    secret of the whole list (URLs, headers, ``${ENV}`` values) out of what it sends.
    """
    secrets: list[str] = []
    for config in configs:
        config.require_env()
        secrets += config.env_secrets()
        if config.type == "webhook":
            secrets += webhook_secrets(config.url, config.headers)
    notifiers: list[Notifier] = []
    for config in configs:
        built: WebhookNotifier | CommandNotifier | FileNotifier
        if config.type == "webhook":
            built = WebhookNotifier(
                config.name,
                config.url,
                headers=config.headers,
                timeout=config.timeout.total_seconds(),
                retries=config.retries,
                backoff=config.backoff.total_seconds(),
                client=client,
            )
        elif config.type == "command":
            built = CommandNotifier(
                config.name,
                config.command,
                timeout=config.timeout.total_seconds(),
                cwd=base_dir,
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
            built = FileNotifier(config.name, path)
        built.mask_with = secrets
        notifiers.append(built)
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
    busy: bool = False
    """Nothing was tried: another process was delivering from this outbox right then."""

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


@dataclass
class OutboxItem:
    """One file in ``outbox/`` as ``heartbeat outbox`` lists it: an entry, or a file that is not one."""

    name: str
    """The file name."""
    entry: OutboxEntry | None
    """The entry, or None when the file cannot be read as one."""
    problem: str | None = None
    """Why it is not sent: unreadable, set aside as corrupt, or no notifier of that name."""


class Outbox:
    """Undelivered notifications, one JSON file each (0600) in a folder (0700).

    Sending holds the outbox's own lock (``.outbox.lock`` beside the folder),
    not the state folder's: a webhook that takes its whole deadline delays
    no ``pause``, ``resume`` or tick. Entries are written atomically, so a
    reader sees a whole entry or none; an entry removed while a delivery runs
    (``resume`` settled it, ``heartbeat outbox drop``) is neither sent nor
    written back.
    """

    def __init__(self, directory: Path, *, secrets: Sequence[str] = ()) -> None:
        self.directory = directory
        self.secrets = list(secrets)
        """Masked out of every entry written (see :func:`heartbeat.redact.mask`)."""
        self.corrupt: list[str] = []
        """Names of the corrupt files this Outbox moved aside so far."""

    def __repr__(self) -> str:
        return f"Outbox({str(self.directory)!r})"

    @property
    def lock_path(self) -> Path:
        """The file the delivery lock is taken on, beside the folder (never inside it)."""
        return self.directory.parent / f".{self.directory.name}.lock"

    @contextlib.contextmanager
    def lock(self, timeout: float = 0) -> Iterator[bool]:
        """Hold the delivery lock for the block; yields False (nothing held) when it stays busy."""
        from filelock import FileLock, Timeout

        if not self.directory.parent.is_dir():
            yield True  # no folder, no outbox, nobody to race with
            return
        held = FileLock(self.lock_path, timeout=timeout, mode=PRIVATE_FILE_MODE)
        try:
            held.acquire()
        except Timeout:
            yield False
            return
        except OSError:
            yield False
            return
        try:
            yield True
        finally:
            held.release()

    def path_for(self, key: str, notifier: str) -> Path:
        """The file of the entry for ``key`` and ``notifier``: one per pair, so a re-put replaces."""
        digest = hashlib.sha256(f"{notifier}\0{key}".encode()).hexdigest()[:12]
        return self.directory / f"{_slug(notifier, 40)}--{_slug(key, 60)}--{digest}.json"

    def _save(self, entry: OutboxEntry, path: Path) -> None:
        ensure_private_dir(self.directory)
        text = entry.model_dump_json(indent=2)
        atomic_write(path, mask(text, self.secrets).encode("utf-8"))
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
            last_error=None if error is None else redact(error, self.secrets),
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

    def _files(self) -> list[Path]:
        """The entry files (``*.json``), by name; set-aside and temp files are not entries."""
        try:
            with os.scandir(self.directory) as found:
                names = [e.name for e in found if e.name.endswith(".json") and not e.name.startswith(".")]
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [self.directory / name for name in sorted(names)]

    @staticmethod
    def _read(path: Path) -> OutboxEntry:
        """One entry; a FIFO or device raises OSError instead of blocking, junk ValidationError."""
        entry = OutboxEntry.model_validate_json(read_regular(path, limit=_MAX_ENTRY))
        entry._path = path
        return entry

    def _scan(self) -> tuple[list[OutboxEntry], list[str]]:
        """Every readable entry, oldest first, and the names of corrupt files moved aside."""
        entries: list[OutboxEntry] = []
        corrupt: list[str] = []
        for path in self._files():
            try:
                entry = self._read(path)
            except FileNotFoundError:
                continue  # delivered by someone else since the listing
            except (OSError, ValidationError):
                try:
                    corrupt.append(self._move_aside(path))
                except OSError as exc:
                    corrupt.append(f"{path.name} (could not be moved aside: {exc.strerror})")
                continue
            entries.append(entry)
        entries.sort(key=lambda e: (e.notification.created_at, e.notifier))
        return entries, corrupt

    def _move_aside(self, path: Path) -> str:
        """Rename a bad entry to ``<name>.corrupt`` (never delete it) and return the new name."""
        target = path.with_name(path.name + ".corrupt")
        n = 1
        while os.path.lexists(target):
            n += 1
            target = path.with_name(f"{path.name}.corrupt-{n}")
        os.replace(path, target)
        return target.name

    def pending(self) -> list[OutboxEntry]:
        """Every undelivered entry, oldest first; corrupt files are moved aside (see ``corrupt``)."""
        entries, corrupt = self._scan()
        self.corrupt.extend(corrupt)
        return entries

    def waiting_for(self, names: Sequence[str]) -> bool:
        """Whether an entry waits for one of these notifiers (corrupt and orphaned files do not count)."""
        wanted = set(names)
        for path in self._files():
            try:
                if self._read(path).notifier in wanted:
                    return True
            except (OSError, ValidationError):
                continue
        return False

    def items(self, known: Sequence[str] | None = None) -> list[OutboxItem]:
        """Every file in the folder, read only (nothing moved): entries, then files that are not.

        With ``known`` notifier names, an entry for any other name is marked
        orphaned: it is never sent until a notifier of that name is configured.
        """
        items: list[OutboxItem] = []
        for path in self._files():
            try:
                entry = self._read(path)
            except FileNotFoundError:
                continue
            except OSError as exc:
                items.append(OutboxItem(path.name, None, f"unreadable: {exc.strerror}"))
                continue
            except ValidationError:
                items.append(
                    OutboxItem(path.name, None, "not an outbox entry (set aside at the next delivery)")
                )
                continue
            problem = None
            if known is not None and entry.notifier not in known:
                problem = f"orphaned: no notifier named {entry.notifier!r} in the config"
            items.append(OutboxItem(path.name, entry, problem))
        items.sort(
            key=lambda i: (i.entry is None, i.entry.notification.created_at if i.entry else NEVER, i.name)
        )
        try:
            with os.scandir(self.directory) as found:
                aside = sorted(e.name for e in found if ".json.corrupt" in e.name)
        except OSError:
            aside = []
        items += [OutboxItem(name, None, "set aside as corrupt (never sent)") for name in aside]
        return items

    def drop(self, selectors: Sequence[str]) -> list[str]:
        """Delete the files whose name, key or key prefix matches a selector ("*": all); return them."""
        dropped: list[str] = []
        with self.lock(timeout=SETTLE_WAIT):
            for item in self.items():
                key = item.entry.notification.key if item.entry else None
                if any(_matches(selector, item.name, key) for selector in selectors):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(self.directory / item.name)
                        dropped.append(item.name)
        return dropped

    def settle(self, agent: str, kinds: frozenset[str] = STATUS_KINDS, *, dry_run: bool = False) -> list[str]:
        """Remove ``agent``'s undelivered notifications of ``kinds``: a human has acted on them.

        Waits up to :data:`SETTLE_WAIT` seconds for a delivery in progress,
        so that a page being sent is not written back after it; returns the
        keys removed (with ``dry_run``, the keys it would remove, nothing removed).
        """
        settled: list[str] = []
        with self.lock(timeout=0 if dry_run else SETTLE_WAIT):
            for path in self._files():
                try:
                    entry = self._read(path)
                except (OSError, ValidationError):
                    continue
                note = entry.notification
                if note.agent == agent and note.kind in kinds:
                    if dry_run:
                        settled.append(note.key)
                        continue
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()
                        settled.append(note.key)
        return sorted(set(settled))

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
        budget: float | None = None,
        only: Sequence[str] | None = None,
    ) -> DeliveryReport:
        """Retry every entry (only due ones unless ``force``) through the notifier of its name.

        Costs at most one failure per notifier per call: once a notifier
        fails, its other entries wait for their next turn (their back-off
        is not advanced), so a dead webhook with many messages waiting costs
        one deadline, not one per message. ``budget`` (seconds) stops sending
        once spent; what was not tried waits. ``only`` limits the call to
        entries whose file name or key matches. Another process delivering
        right now (the delivery lock is busy) means nothing is sent here.
        """
        by_name = dict(notifiers) if isinstance(notifiers, Mapping) else {n.name: n for n in notifiers}
        with self.lock() as held:
            if not held:
                return DeliveryReport(waiting=len(self._files()), busy=True)
            return self._deliver(by_name, now, force=force, budget=budget, only=only)

    def _deliver(
        self,
        by_name: Mapping[str, Notifier],
        now: datetime,
        *,
        force: bool,
        budget: float | None,
        only: Sequence[str] | None,
    ) -> DeliveryReport:
        entries, corrupt = self._scan()
        self.corrupt.extend(corrupt)
        report = DeliveryReport(corrupt=corrupt)
        if self.directory.is_dir():
            self._clean_temps(now)
        started = time.monotonic()
        failed: set[str] = set()
        for entry in entries:
            name = entry.notifier
            path = entry.path or self.path_for(entry.notification.key, name)
            if only is not None and not any(_matches(s, path.name, entry.notification.key) for s in only):
                continue
            notifier = by_name.get(name)
            if notifier is None:
                report.failed.append((name, f"no notifier named {name!r} in the current config"))
                report.waiting += 1
                continue
            spent = budget is not None and time.monotonic() - started >= budget
            if name in failed or spent or (not force and entry.next_attempt_at > now):
                report.waiting += 1
                continue
            if not path.exists():
                continue  # settled or dropped since the scan: not ours to send any more
            error = _send(notifier, entry.notification)
            if error is None:
                # Only now: a crash before this line means a repeat, never a loss.
                path.unlink(missing_ok=True)
                report.delivered.append(f"{entry.notification.key} to {name}")
                continue
            error = redact(error, self.secrets)
            failed.add(name)
            report.failed.append((name, error))
            if not path.exists():
                continue  # settled while it was being tried: it stays gone
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


NEVER = datetime.min.replace(tzinfo=UTC)


def _matches(selector: str, name: str, key: str | None) -> bool:
    """Whether an outbox selector (a file name, a key, a key prefix, or "*") picks this file."""
    if selector in ("*", name):
        return True
    return key is not None and (key == selector or key.startswith(selector + "-"))


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
