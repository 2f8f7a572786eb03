"""Notifiers and the outbox, against a real HTTP server, real commands and real files."""

from __future__ import annotations

import json
import os
import shlex
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from heartbeat.base.errors import ConfigError, NotifyError
from heartbeat.base.redact import redact, redact_url
from heartbeat.config.file import (
    CommandNotifierConfig,
    FileNotifierConfig,
    HeartbeatConfig,
    WebhookNotifierConfig,
)
from heartbeat.core.delivery import DeliveryReport
from heartbeat.core.models import Notification
from heartbeat.notify.command import CommandNotifier
from heartbeat.notify.file import FileNotifier
from heartbeat.notify.notifiers import Notifier, build_notifiers
from heartbeat.notify.outbox import Outbox, retry_delay
from heartbeat.notify.webhook import WebhookNotifier

if TYPE_CHECKING:
    from conftest import WebhookServer

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
SECRETS = ("SECRET123", "token=abc", "/hooks", "TOPSECRET")


def note(key: str = "agent-escalation-3", **changes: object) -> Notification:
    """A typical escalation notification."""
    fields: dict[str, object] = {
        "key": key,
        "kind": "escalation",
        "agent": "agent",
        "reason": "stuck: search repeated 3 times",
        "text": "agent needs a human: search repeated 3 times",
        "created_at": NOW,
        "payload": {
            "anomalies": [{"kind": "repeat", "message": "search x3"}],
            "stuck_streak": 3,
            "last_actions": ["search(q='x')"],
        },
    }
    fields.update(changes)
    return Notification.model_validate(fields)


def dispatch(
    notification: Notification,
    notifiers: Mapping[str, Notifier] | Sequence[Notifier],
    outbox: Outbox,
    *,
    now: datetime | None = None,
) -> DeliveryReport:
    """Send one notification the way a tick does: put it in the outbox, then deliver it."""
    targets = list(notifiers.values()) if isinstance(notifiers, Mapping) else list(notifiers)
    at = now or notification.created_at
    for notifier in targets:
        outbox.put(notification, notifier.name, None, now=at)
    return outbox.deliver(targets, at, only=[notification.key])


def secret_url(server: WebhookServer) -> str:
    """A webhook URL whose path and query hold secrets."""
    return server.url("/hooks/SECRET123?token=abc")


def webhook(url: str, **options: object) -> tuple[WebhookNotifier, list[float]]:
    """A webhook notifier whose back-off sleeps are recorded instead of slept."""
    slept: list[float] = []
    defaults: dict[str, object] = {"timeout": 2.0, "retries": 2, "backoff": 0.5}
    defaults.update(options)
    notifier = WebhookNotifier(
        "hook",
        url,
        headers={"Authorization": "Bearer TOPSECRET"},
        sleep=slept.append,
        **defaults,  # type: ignore[arg-type]
    )
    return notifier, slept


def closed_port() -> int:
    """A port that was just bound and closed, so connecting to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def assert_no_secret(text: str) -> None:
    """Fail if any part of the secret URL or header leaked into ``text``."""
    for secret in SECRETS:
        assert secret not in text, f"{secret!r} leaked into {text!r}"


# -- redaction


def test_redact_url_keeps_only_scheme_host_and_port() -> None:
    """User info, path, query and fragment are all cut off."""
    assert redact_url("https://u:pw@hooks.example.com:8443/a/b?t=1#f") == ("https://hooks.example.com:8443/…")
    assert redact_url("not a url") == "<invalid URL>"


def test_redact_replaces_secrets_and_cuts_urls_in_text() -> None:
    """Secrets become *** and any URL in the text loses its path, punctuation kept."""
    text = "failed (see https://hooks.slack.com/services/T0/B0/XYZ): key sk-12345 rejected"
    assert redact(text, ["sk-12345"]) == "failed (see https://hooks.slack.com/…): key *** rejected"


def test_retry_delay_doubles_from_five_seconds_up_to_ten_minutes() -> None:
    """The outbox back-off is 5s, 10s, 20s, ... capped at 10 minutes."""
    assert [retry_delay(n).total_seconds() for n in (1, 2, 3)] == [5, 10, 20]
    assert retry_delay(50) == timedelta(minutes=10)


# -- the notification


def test_to_json_flattens_the_payload_beside_the_named_fields() -> None:
    """The webhook body has text, agent, reason, evidence and the idempotency key at the top."""
    body = note().to_json()
    assert body["text"] == "agent needs a human: search repeated 3 times"
    assert body["idempotency_key"] == "agent-escalation-3"
    assert (body["agent"], body["kind"], body["stuck_streak"]) == ("agent", "escalation", 3)
    assert body["anomalies"][0]["kind"] == "repeat"
    assert body["last_actions"] == ["search(q='x')"]
    json.dumps(body)  # must be JSON as it stands


def test_payload_cannot_override_the_named_fields() -> None:
    """A payload key named like a field does not replace the field."""
    assert note(payload={"text": "spoof"}).to_json()["text"].startswith("agent needs")


def test_notification_needs_an_aware_time_and_stores_it_in_utc() -> None:
    """A naive time is refused; another zone is converted to UTC."""
    with pytest.raises(ValueError, match="timezone"):
        note(created_at=datetime(2025, 3, 1, 12, 0))
    plus_one = datetime(2025, 3, 1, 13, 0, tzinfo=timezone(timedelta(hours=1)))
    assert note(created_at=plus_one).created_at == NOW
    assert note(created_at=plus_one).created_at.utcoffset() == timedelta(0)


# -- webhook


def test_webhook_200_delivers_once_with_idempotency_key(webhook_server: WebhookServer) -> None:
    """One POST, with the Idempotency-Key header and the text in the JSON body."""
    notifier, slept = webhook(webhook_server.url())
    notifier.send(note())
    assert len(webhook_server.requests) == 1
    request = webhook_server.requests[0]
    assert request.method == "POST"
    assert request.headers["Idempotency-Key"] == "agent-escalation-3"
    assert request.headers["Authorization"] == "Bearer TOPSECRET"
    assert request.json()["text"] == "agent needs a human: search repeated 3 times"
    assert slept == []


def test_webhook_retries_a_500_then_delivers(webhook_server: WebhookServer) -> None:
    """A 5xx is retried after the back-off; the second answer 200 delivers."""
    webhook_server.respond(500)
    notifier, slept = webhook(webhook_server.url())
    notifier.send(note())
    assert [r.status for r in webhook_server.requests] == [500, 200]
    assert slept == [0.5]
    keys = {r.headers["Idempotency-Key"] for r in webhook_server.requests}
    assert keys == {"agent-escalation-3"}


def test_webhook_retries_429_with_exponential_backoff_then_gives_up(
    webhook_server: WebhookServer,
) -> None:
    """429 is retried `retries` times, waiting backoff, 2*backoff; then NotifyError."""
    webhook_server.status = 429
    notifier, slept = webhook(secret_url(webhook_server))
    with pytest.raises(NotifyError, match=r"answered 429 .*after 3 attempts") as caught:
        notifier.send(note())
    assert len(webhook_server.requests) == 3
    assert slept == [0.5, 1.0]
    assert_no_secret(str(caught.value))


def test_webhook_honours_a_short_retry_after(webhook_server: WebhookServer) -> None:
    """A Retry-After longer than the back-off is waited for instead."""
    webhook_server.respond(503)
    webhook_server.headers = {"Retry-After": "3"}
    notifier, slept = webhook(webhook_server.url())
    notifier.send(note())
    assert slept == [3.0]


def test_webhook_4xx_fails_at_once(webhook_server: WebhookServer) -> None:
    """A 404 is not retried, and the error names the status, not the secret URL."""
    webhook_server.status = 404
    notifier, slept = webhook(secret_url(webhook_server))
    with pytest.raises(NotifyError, match="answered 404 Not Found") as caught:
        notifier.send(note())
    assert len(webhook_server.requests) == 1
    assert slept == []
    assert f"127.0.0.1:{webhook_server.base_url.rsplit(':', 1)[1]}/…" in str(caught.value)
    assert_no_secret(str(caught.value))


def test_webhook_error_quotes_the_answer_without_secrets(webhook_server: WebhookServer) -> None:
    """The server's words are kept (Slack says why), with any echoed token cut out."""
    webhook_server.status = 403
    webhook_server.body = b"invalid_token SECRET123 for http://127.0.0.1/hooks/SECRET123?token=abc"
    notifier, _ = webhook(secret_url(webhook_server))
    with pytest.raises(NotifyError) as caught:
        notifier.send(note())
    assert "answered 403 Forbidden: invalid_token *** for http://127.0.0.1/…" in str(caught.value)
    assert_no_secret(str(caught.value))


def test_webhook_does_not_follow_a_redirect(webhook_server: WebhookServer) -> None:
    """A 302 fails at once; the Location is never requested."""
    webhook_server.respond(302)
    webhook_server.headers = {"Location": "/elsewhere"}
    notifier, _ = webhook(secret_url(webhook_server))
    with pytest.raises(NotifyError, match=r"302 \(a redirect\); not followed") as caught:
        notifier.send(note())
    assert [r.path for r in webhook_server.requests] == ["/hooks/SECRET123?token=abc"]
    assert_no_secret(str(caught.value))


def test_webhook_injected_client_never_follows_redirects(webhook_server: WebhookServer) -> None:
    """A client built to follow redirects is used as given, yet the redirect is not followed."""
    import httpx

    webhook_server.respond(307)
    webhook_server.headers = {"Location": "/elsewhere"}
    with httpx.Client(follow_redirects=True) as client:
        notifier, _ = webhook(webhook_server.url(), client=client)
        with pytest.raises(NotifyError, match="307"):
            notifier.send(note())
        assert not client.is_closed
    assert [r.path for r in webhook_server.requests] == ["/hook"]


def test_webhook_timeout_ends_within_the_timeout_and_waits_in_outbox(
    webhook_server: WebhookServer, tmp_path: Path
) -> None:
    """A server slower than the timeout costs one timeout per attempt, then the outbox."""
    webhook_server.delay = 30.0
    notifier, slept = webhook(secret_url(webhook_server), timeout=0.3, retries=1)
    outbox = Outbox(tmp_path / "outbox")
    started = time.monotonic()
    report = dispatch(note(), [notifier], outbox)
    elapsed = time.monotonic() - started
    assert elapsed < 2 * 0.3 + 1.0
    assert len(webhook_server.requests) == 2
    assert slept == [0.5]
    assert report.delivered == [] and report.waiting == 1
    ((name, error),) = report.failed
    assert name == "hook" and "did not answer within 0.3s" in error
    assert_no_secret(error)
    (entry,) = outbox.pending()
    assert entry.notifier == "hook" and entry.attempts == 1
    assert entry.last_error == error


def test_webhook_connection_refused_waits_in_outbox(tmp_path: Path) -> None:
    """Nobody listening: retried, then kept in the outbox with the OS's words."""
    url = f"http://127.0.0.1:{closed_port()}/hooks/SECRET123?token=abc"
    notifier, slept = webhook(url)
    outbox = Outbox(tmp_path / "outbox")
    report = dispatch(note(), [notifier], outbox)
    assert slept == [0.5, 1.0]
    ((_, error),) = report.failed
    assert "Connection refused" in error and "after 3 attempts" in error
    assert_no_secret(error)
    assert len(outbox.pending()) == 1


def test_webhook_refuses_a_non_http_url() -> None:
    """A URL that is not http(s) is a config error that does not show the URL's path."""
    with pytest.raises(ConfigError, match="http:// or https://") as caught:
        WebhookNotifier("hook", "ftp://example.com/SECRET123")
    assert "SECRET123" not in str(caught.value)


def test_importing_notify_does_not_import_httpx() -> None:
    """A tick that sends nothing must not pay for httpx (checked in a fresh interpreter)."""
    code = (
        "import heartbeat.notify.notifiers, heartbeat.notify.outbox, heartbeat.notify.webhook, sys; "
        "assert 'httpx' not in sys.modules, 'httpx imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


# -- the outbox


def test_outbox_failures_are_delivered_later_once_per_key(
    webhook_server: WebhookServer, tmp_path: Path
) -> None:
    """Failed now, retried later: exactly one 2xx per key reaches the server, then the outbox is empty."""
    webhook_server.status = 503
    notifier, _ = webhook(webhook_server.url(), retries=0)
    outbox = Outbox(tmp_path / "outbox")
    for key in ("k1", "k2"):
        dispatch(note(key), [notifier], outbox, now=NOW)
    assert len(outbox.pending()) == 2
    webhook_server.status = 200
    report = outbox.deliver({"hook": notifier}, NOW + timedelta(minutes=1))
    assert sorted(report.delivered) == ["k1 to hook", "k2 to hook"]
    assert report.waiting == 0 and outbox.pending() == []
    again = outbox.deliver([notifier], NOW + timedelta(minutes=2))
    assert again.delivered == []
    ok_keys = [r.headers["Idempotency-Key"] for r in webhook_server.requests if r.status == 200]
    assert sorted(ok_keys) == ["k1", "k2"]


def test_secret_url_never_reaches_error_outbox_file_or_report(
    webhook_server: WebhookServer, tmp_path: Path
) -> None:
    """Through 500s, a 404 and a redirect, the URL's token shows up nowhere."""
    notifier, _ = webhook(secret_url(webhook_server), retries=1)
    outbox = Outbox(tmp_path / "outbox")
    reports: list[DeliveryReport] = []
    for key, status in (("k500", 500), ("k404", 404), ("k302", 302)):
        webhook_server.status = status
        reports.append(dispatch(note(key), [notifier], outbox, now=NOW))
    reports.append(outbox.deliver([notifier], NOW + timedelta(hours=1)))
    texts = [json.dumps(r.failed) + r.summary() + repr(r) for r in reports]
    texts += [p.read_text() for p in (tmp_path / "outbox").iterdir()]
    assert len(list((tmp_path / "outbox").iterdir())) == 3
    assert all("hook" in t for t in texts[:3])
    for text in texts:
        assert_no_secret(text)
    assert_no_secret(repr(notifier))


def test_outbox_files_are_0600_in_a_0700_folder(tmp_path: Path) -> None:
    """Every entry is private to its owner, and so is the folder created for them."""
    outbox = Outbox(tmp_path / "state" / "outbox")
    outbox.put(note(), "hook", "boom")
    assert stat.S_IMODE(os.stat(outbox.directory).st_mode) == 0o700
    (entry,) = outbox.directory.iterdir()
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    assert [p.name for p in outbox.directory.iterdir() if p.suffix == ".tmp"] == []


def test_outbox_entry_holds_the_notifier_name_not_its_url(tmp_path: Path) -> None:
    """The file names the notifier and carries the notification; no URL or token."""
    outbox = Outbox(tmp_path / "outbox")
    outbox.put(note(), "hook", "http://127.0.0.1:9/hooks/SECRET123 answered 500")
    (path,) = outbox.directory.iterdir()
    data = json.loads(path.read_text())
    assert data["notifier"] == "hook"
    assert data["notification"]["key"] == "agent-escalation-3"
    assert data["last_error"] == "http://127.0.0.1:9/… answered 500"
    assert_no_secret(path.read_text())


def test_deliver_backs_off_failures_and_skips_entries_not_yet_due(tmp_path: Path) -> None:
    """A failed retry bumps attempts and pushes next_attempt_at; force=False waits for it."""
    calls: list[str] = []

    class Flaky:
        name = "flaky"

        def send(self, message: Notification) -> None:
            calls.append(message.key)
            raise NotifyError("flaky", "down")

    outbox = Outbox(tmp_path / "outbox")
    outbox.put(note(), "flaky", "down", now=NOW)  # attempts 1, due at NOW + 5s
    early = outbox.deliver([Flaky()], NOW + timedelta(seconds=1), force=False)
    assert calls == [] and early.waiting == 1 and early.failed == []
    later = NOW + timedelta(seconds=6)
    report = outbox.deliver([Flaky()], later, force=False)
    assert calls == ["agent-escalation-3"] and report.failed == [("flaky", "down")]
    (entry,) = outbox.pending()
    assert entry.attempts == 2
    assert entry.next_attempt_at == later + timedelta(seconds=10)
    outbox.deliver([Flaky()], later, force=True)
    assert len(calls) == 2


def test_queued_entry_is_due_at_once(tmp_path: Path) -> None:
    """put() with no error queues a notification not tried yet: attempts 0, due now."""
    outbox = Outbox(tmp_path / "outbox")
    entry = outbox.put(note(), "hook", None, now=NOW)
    assert (entry.attempts, entry.next_attempt_at, entry.last_error) == (0, NOW, None)
    sent: list[str] = []

    class Ok:
        name = "hook"

        def send(self, message: Notification) -> None:
            sent.append(message.key)

    report = outbox.deliver([Ok()], NOW, force=False)
    assert sent == ["agent-escalation-3"] and report.delivered == ["agent-escalation-3 to hook"]
    assert outbox.pending() == []


def test_deliver_removes_only_stale_temp_files(tmp_path: Path) -> None:
    """A temp file left by a crashed write goes once it is old; a fresh one may be live."""
    outbox = Outbox(tmp_path / "outbox")
    outbox.put(note(), "gone", "down")
    stale = outbox.directory / ".x.json.abc.tmp"
    fresh = outbox.directory / ".y.json.def.tmp"
    for temp in (stale, fresh):
        temp.write_text("{")
    old = (NOW - timedelta(hours=1)).timestamp()
    os.utime(stale, (old, old))
    os.utime(fresh, (NOW.timestamp(), NOW.timestamp()))
    outbox.deliver([], NOW)
    assert not stale.exists() and fresh.exists()


def test_entry_whose_notifier_is_gone_stays_and_is_reported(tmp_path: Path) -> None:
    """An entry for a notifier no longer configured is kept and named in the report."""
    outbox = Outbox(tmp_path / "outbox")
    outbox.put(note(), "old-hook", "down")
    report = outbox.deliver([], NOW)
    assert report.failed == [("old-hook", "no notifier named 'old-hook' in the current config")]
    assert report.waiting == 1
    assert len(outbox.pending()) == 1


def test_corrupt_entry_is_moved_aside_and_reported(tmp_path: Path) -> None:
    """A broken entry file is renamed <name>.corrupt, never deleted, and reported."""
    outbox = Outbox(tmp_path / "outbox")
    outbox.put(note("good"), "file", "down")
    bad = outbox.directory / "broken.json"
    bad.write_text('{"notification": ')
    report = outbox.deliver([FileNotifier("file", tmp_path / "n.jsonl")], NOW)
    assert report.corrupt == ["broken.json.corrupt"]
    assert (outbox.directory / "broken.json.corrupt").read_text() == '{"notification": '
    assert not bad.exists()
    assert report.delivered == ["good to file"]
    assert "corrupt" in report.summary()


def test_dispatch_delivers_to_working_notifiers_and_keeps_the_rest(
    webhook_server: WebhookServer, tmp_path: Path
) -> None:
    """One notifier failing does not stop the others; only the failure waits."""
    webhook_server.status = 400
    hook, _ = webhook(webhook_server.url())
    file_notifier = FileNotifier("file", tmp_path / "notes.jsonl")
    outbox = Outbox(tmp_path / "outbox")
    report = dispatch(note(), {"hook": hook, "file": file_notifier}, outbox)
    assert report.delivered == ["agent-escalation-3 to file"]
    assert [name for name, _ in report.failed] == ["hook"]
    assert [e.notifier for e in outbox.pending()] == ["hook"]
    assert report.summary().startswith("notifications: 1 delivered, 1 failed (hook: ")


def test_dispatch_success_drops_an_older_entry_for_the_same_key(tmp_path: Path) -> None:
    """Once a key is delivered to a notifier, its waiting entry would only repeat it."""
    outbox = Outbox(tmp_path / "outbox")
    outbox.put(note(), "file", "disk was full")
    dispatch(note(), [FileNotifier("file", tmp_path / "n.jsonl")], outbox)
    assert outbox.pending() == []


# -- command and file notifiers


def stdin_to_file_command(out: Path, *, exit_code: int = 0) -> str:
    """A command line that writes its stdin and $HEARTBEAT_NOTIFICATION to ``out``."""
    code = (
        "import os, sys, json; "
        f"open(sys.argv[1], 'w').write(json.dumps([sys.stdin.read(), "
        "os.environ['HEARTBEAT_NOTIFICATION']])); "
        "print('oh no', file=sys.stderr); "
        f"sys.exit({exit_code})"
    )
    return shlex.join([sys.executable, "-c", code, str(out)])


def test_command_notifier_gets_text_on_stdin_and_json_in_env(tmp_path: Path) -> None:
    """The text arrives on stdin and the whole notification in HEARTBEAT_NOTIFICATION."""
    out = tmp_path / "got.json"
    CommandNotifier("cmd", stdin_to_file_command(out)).send(note())
    stdin, env = json.loads(out.read_text())
    assert stdin == "agent needs a human: search repeated 3 times"
    assert json.loads(env)["idempotency_key"] == "agent-escalation-3"


def test_command_notifier_non_zero_exit_is_an_error_with_the_code(tmp_path: Path) -> None:
    """Exit 3 raises NotifyError naming the code and stderr's last line."""
    notifier = CommandNotifier("cmd", stdin_to_file_command(tmp_path / "o", exit_code=3))
    with pytest.raises(NotifyError, match="exited with code 3: oh no"):
        notifier.send(note())


def test_command_notifier_timeout_is_an_error(tmp_path: Path) -> None:
    """A command that hangs is killed at the timeout."""
    command = shlex.join([sys.executable, "-c", "import time; time.sleep(60)"])
    notifier = CommandNotifier("cmd", command, timeout=0.5)
    started = time.monotonic()
    with pytest.raises(NotifyError, match=r"did not finish within 0.5s"):
        notifier.send(note())
    assert time.monotonic() - started < 5


def test_command_notifier_missing_program_is_an_error() -> None:
    """A program that does not exist is a failed send, not a crash."""
    with pytest.raises(NotifyError, match="cannot run no-such-program-hb"):
        CommandNotifier("cmd", "no-such-program-hb --token SECRET123").send(note())


def test_command_notifier_never_echoes_its_credentials(tmp_path: Path) -> None:
    """A token the command line names as one (``--token X``) is redacted from the error, stderr or not."""
    code = "import sys; print('bad token', sys.argv[2], file=sys.stderr); sys.exit(1)"
    notifier = CommandNotifier("cmd", shlex.join([sys.executable, "-c", code, "--token", "SECRET123"]))
    with pytest.raises(NotifyError) as caught:
        notifier.send(note())
    assert "bad token ***" in str(caught.value)
    assert_no_secret(str(caught.value))


def test_file_notifier_appends_json_lines_in_a_0600_file(tmp_path: Path) -> None:
    """Each send appends one JSON line; the file is created private."""
    path = tmp_path / "sub" / "notes.jsonl"
    notifier = FileNotifier("file", path)
    notifier.send(note("k1"))
    notifier.send(note("k2"))
    lines = path.read_text().splitlines()
    assert [json.loads(line)["idempotency_key"] for line in lines] == ["k1", "k2"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_file_notifier_unwritable_path_is_a_notify_error(tmp_path: Path) -> None:
    """A path that cannot be written (its parent is a file) raises NotifyError."""
    (tmp_path / "afile").write_text("x")
    with pytest.raises(NotifyError, match="cannot append"):
        FileNotifier("file", tmp_path / "afile" / "notes.jsonl").send(note())


# -- building from the config


def test_build_notifiers_from_config(tmp_path: Path) -> None:
    """Each [[notify]] table becomes its notifier; relative file paths start at base_dir."""
    config = HeartbeatConfig.model_validate(
        {
            "notify": [
                {"type": "webhook", "url": "https://hooks.example.com/x", "retries": 4},
                {"type": "command", "name": "page", "command": "true", "timeout": "5s"},
                {"type": "file", "path": "out/notes.jsonl"},
            ]
        }
    )
    assert all(
        isinstance(c, WebhookNotifierConfig | CommandNotifierConfig | FileNotifierConfig)
        for c in config.notify
    )
    hook, command, file_notifier = build_notifiers(config.notify, base_dir=tmp_path)
    assert isinstance(hook, WebhookNotifier) and hook.retries == 4
    assert isinstance(command, CommandNotifier) and command.timeout == 5.0
    assert command.name == "page" and command.cwd == tmp_path
    assert isinstance(file_notifier, FileNotifier)
    assert file_notifier.path == tmp_path / "out" / "notes.jsonl"


def test_build_notifiers_bad_command_is_a_config_error(tmp_path: Path) -> None:
    """An unbalanced quote in a command is caught when the config is built."""
    config = CommandNotifierConfig(type="command", command="notify 'oops")
    with pytest.raises(ConfigError, match="cannot split command"):
        build_notifiers([config], base_dir=tmp_path)
