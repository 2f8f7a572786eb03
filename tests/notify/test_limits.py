"""Notifications that cannot hurt the tick: deadlines, back-off across ticks, settling, no leftovers.

Real processes (`python -m heartbeat`), a real HTTP server on 127.0.0.1 and a
raw socket server that trickles its answer, real child processes.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli
from conftest import WebhookServer, spawn_heartbeat, wait_until

from heartbeat.base.errors import NotifyError
from heartbeat.core.models import Notification
from heartbeat.notify.command import CommandNotifier
from heartbeat.notify.file import FileNotifier
from heartbeat.notify.outbox import Outbox
from heartbeat.notify.webhook import WebhookNotifier
from heartbeat.state.store import StateStore
from heartbeat.testing import make_heartbeat

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def note(key: str = "agent-escalation-1", kind: str = "escalation") -> Notification:
    """A notification as the runner makes one."""
    return Notification(
        key=key, kind=kind, agent="agent", reason="stuck", text="agent needs a human", created_at=NOW
    )


# ------------------------------------------------------------------ 12: a real deadline


@contextmanager
def trickling_server(part: str) -> Iterator[str]:
    """A server that reads the request, then sends its answer one byte every 0.1 s.

    ``part`` is "headers" (even the status line trickles) or "body" (headers at
    once, then a body that never ends). It stops when the test ends.
    """
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(65536)
                head = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"
                if part == "body":
                    conn.sendall(head)
                    head = b""
                data = head + b"x" * 100000
                give_up = time.monotonic() + 15  # so that a client with no deadline still ends
                for byte in data:
                    if stop.wait(0.1) or time.monotonic() > give_up:
                        break
                    try:
                        conn.send(bytes([byte]))
                    except OSError:
                        break

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/hooks/T0123ABCD/XXXXXXXXXXXXXXXXXXXXXXXX"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


@pytest.mark.parametrize("part", ["headers", "body"])
def test_a_trickling_webhook_is_cut_off_at_the_deadline(part: str) -> None:
    """One byte every 0.1 s restarts any per-read timeout; the deadline (1 s per attempt) still holds."""
    with trickling_server(part) as url:
        notifier = WebhookNotifier("hook", url, timeout=1.0, retries=1, backoff=0.1)
        started = time.monotonic()
        with pytest.raises(NotifyError) as caught:
            notifier.send(note())
        elapsed = time.monotonic() - started
    assert elapsed < 2 * 1.0 + 0.1 + 1.0, f"took {elapsed:.1f}s"
    assert "within 1s" in str(caught.value) and "XXXX" not in str(caught.value)


def test_a_dead_webhook_is_tried_once_per_back_off_not_at_every_tick(
    tmp_path: Path, webhook_server: WebhookServer
) -> None:
    """Real `heartbeat tick` processes: the first escalates and tries; the next ones find it not due."""
    webhook_server.delay = 30.0  # accepts, never answers
    (tmp_path / "agent.py").write_text(STUCK_AGENT)
    (tmp_path / "heartbeat.toml").write_text(
        textwrap.dedent(f"""
        [agent]
        step = "agent:step"
        [policy]
        escalate_after = 1
        [[notify]]
        type = "webhook"
        url = "{webhook_server.url("/hook")}"
        timeout = "0.5s"
        retries = 1
        backoff = "0.1s"
        """)
    )
    started = time.monotonic()
    first = run_cli(tmp_path, "tick")
    assert first.returncode == 4, first.stderr
    assert time.monotonic() - started < 2 * 0.5 + 0.1 + 5  # the deadline, plus a process start
    assert len(webhook_server.requests) == 2
    for _ in range(3):  # each tick comes within the 5 s back-off: nothing is tried again
        again = run_cli(tmp_path, "tick")
        assert again.returncode == 4 and "1 notification(s) waiting" in again.stderr
    assert len(webhook_server.requests) == 2


def test_many_waiting_messages_cost_one_failure_per_notifier(
    tmp_path: Path, webhook_server: WebhookServer
) -> None:
    """Five messages due for a dead webhook: one is tried (its retries), four wait untouched."""
    webhook_server.status = 503
    outbox = Outbox(tmp_path / "outbox")
    for n in range(5):
        outbox.put(note(f"agent-escalation-{n}"), "hook", None)
    notifier = WebhookNotifier("hook", webhook_server.url("/hook"), timeout=1.0, retries=1, backoff=0.05)
    report = outbox.deliver([notifier], NOW, force=False)
    assert len(webhook_server.requests) == 2  # the first entry's two attempts, no more
    assert report.waiting == 5 and len(report.failed) == 1
    attempts = sorted(e.attempts for e in outbox.pending())
    assert attempts == [0, 0, 0, 0, 1]


STUCK_AGENT = textwrap.dedent("""
    def step(ctx):
        for _ in range(3):
            if ctx.record("search", {"q": "same"}, output="the same page"):
                return
""")


def test_pause_and_resume_work_while_run_retries_a_dead_webhook(
    tmp_path: Path, webhook_server: WebhookServer
) -> None:
    """`run`'s watcher sends under the outbox lock: pause and resume get the state lock meanwhile."""
    webhook_server.delay = 30.0
    (tmp_path / "agent.py").write_text(STUCK_AGENT)
    (tmp_path / "heartbeat.toml").write_text(
        textwrap.dedent(f"""
        [agent]
        step = "agent:step"
        [policy]
        escalate_after = 1
        [[notify]]
        type = "webhook"
        url = "{webhook_server.url("/hook")}"
        timeout = "4s"
        retries = 0
        """)
    )
    run = spawn_heartbeat(tmp_path, "run", "--every", "1h")
    try:
        assert webhook_server.wait_for(1, timeout=20), "the first tick never sent"
        # The watcher retries after the 5 s back-off; catch it in the middle of its 4 s deadline.
        assert webhook_server.wait_for(2, timeout=20), "run never retried"
        paused = run_cli(tmp_path, "pause", "--reason", "looking")
        assert paused.returncode == 0, paused.stderr
        resumed = run_cli(tmp_path, "resume", "--note", "try the archive")
        assert resumed.returncode == 0, resumed.stderr
        store = StateStore(tmp_path / "state")
        assert store.load().status.value == "active"
        assert list((tmp_path / "state" / "outbox").glob("*.json")) == []  # the page was settled
        events = [
            json.loads(line) for line in (tmp_path / "state" / "journal.jsonl").read_text().splitlines()
        ]
        (resume,) = [e for e in events if e["event"] == "resume"]
        assert resume["settled"] == ["agent-escalation-1"]
        requests = len(webhook_server.requests)
    finally:
        run.terminate()
        run.communicate(timeout=30)
    assert len(webhook_server.requests) == requests  # nothing sent after the resume


# ------------------------------------------------------------------ 13: settled, never silenced


def escalated(tmp_path: Path, clock: Any, notify: list[dict[str, Any]]) -> Any:
    """A heartbeat that has just escalated (escalate_after 1)."""

    def stuck(ctx: Any) -> None:
        for _ in range(3):
            if ctx.record("search", {"q": "same"}, output="the same page"):
                return

    hb = make_heartbeat(
        stuck,
        tmp_path,
        clock=clock,
        policy={"escalate_after": 1},
        escalation={"reminder_every": "1h"},
        notify=notify,
    )
    assert hb.tick().exit_code == 4
    return hb


def test_resume_settles_the_undelivered_escalation(tmp_path: Path, webhook_server: WebhookServer) -> None:
    """Webhook down at the escalation; a human resumes; the webhook comes back: no stale page arrives."""
    now = [NOW]
    webhook_server.status = 503
    hook = {"type": "webhook", "url": webhook_server.url("/hook"), "timeout": "1s", "retries": 0}
    hb = escalated(tmp_path, lambda: now[0], [hook])
    assert len(list((tmp_path / "state" / "outbox").glob("*.json"))) == 1
    hb.resume("look elsewhere")
    assert list((tmp_path / "state" / "outbox").iterdir()) == []
    webhook_server.status = 200
    now[0] += timedelta(hours=2)
    hb.tick()  # still stuck: a new escalation (key -2) goes out; the settled one (-1) never does
    sent = [r.headers["Idempotency-Key"] for r in webhook_server.requests if r.status == 200]
    assert sent == ["agent-escalation-2"]


def test_corrupt_and_orphaned_entries_do_not_silence_reminders(tmp_path: Path) -> None:
    """An unreadable entry and one for a notifier no longer configured: the reminder still goes out."""
    now = [NOW]
    notes = tmp_path / "notes.jsonl"
    hb = escalated(tmp_path, lambda: now[0], [{"type": "file", "name": "file", "path": str(notes)}])
    outbox = tmp_path / "state" / "outbox"
    outbox.mkdir(exist_ok=True)
    (outbox / "junk.json").write_bytes(b"{not json")
    Outbox(outbox).put(note("agent-old-1"), "gone", "no such notifier")
    for hours in (2, 4):
        now[0] = NOW + timedelta(hours=hours)
        assert hb.tick().exit_code == 4
    kinds = [json.loads(line)["kind"] for line in notes.read_text().splitlines()]
    assert kinds == ["escalation", "reminder", "reminder"]


def test_outbox_command_lists_retries_and_drops(tmp_path: Path, webhook_server: WebhookServer) -> None:
    """`heartbeat outbox`: list (corrupt and orphaned marked), retry sends now, drop removes."""
    (tmp_path / "heartbeat.toml").write_text(
        '[[notify]]\ntype = "webhook"\nurl = "${HOOK}"\ntimeout = "2s"\nretries = 0\n'
    )
    outbox = Outbox(tmp_path / "state" / "outbox")
    outbox.put(note("agent-escalation-1"), "webhook", "503")
    outbox.put(note("agent-escalation-2"), "webhook", "503")
    outbox.put(note("agent-old-1"), "gone", "503")
    (outbox.directory / "junk.json").write_bytes(b"\xff")
    listed = run_cli(tmp_path, "outbox", "--json")  # no HOOK in this shell: list needs no secret
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert sorted(r["key"] or r["file"] for r in rows) == [
        "agent-escalation-1",
        "agent-escalation-2",
        "agent-old-1",
        "junk.json",
    ]
    assert next(r["problem"] for r in rows if r["key"] == "agent-old-1").startswith("orphaned")
    retried = run_cli(tmp_path, "outbox", "retry", "agent-escalation-2", HOOK=webhook_server.url("/h"))
    assert retried.returncode == 0 and "1 delivered" in retried.stdout, retried.stdout + retried.stderr
    assert [r.headers["Idempotency-Key"] for r in webhook_server.requests] == ["agent-escalation-2"]
    dropped = run_cli(tmp_path, "outbox", "drop", "agent-old")
    assert dropped.returncode == 0 and "dropped gone--agent-old-1" in dropped.stdout
    missing = run_cli(tmp_path, "outbox", "drop", "nothing-like-this")
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
    left = sorted(p.name.split("--")[1] for p in outbox.directory.glob("*--*.json"))
    assert left == ["agent-escalation-1"]


def test_outbox_drop_takes_a_key_prefix_as_a_plain_string_prefix(tmp_path: Path) -> None:
    """`outbox drop agent-esc` drops every key starting so (it matched only whole dash-separated parts);
    a whole key still drops that key alone (`agent-escalation-1`, not `agent-escalation-10`)."""
    (tmp_path / "heartbeat.toml").write_text('[[notify]]\ntype = "webhook"\nurl = "${HOOK}"\n')
    outbox = Outbox(tmp_path / "state" / "outbox")
    for key in ("agent-escalation-1", "agent-escalation-10", "agent-escalation-6", "agent-budget-2"):
        outbox.put(note(key), "webhook", "503")

    def left() -> list[str]:
        return sorted(p.name.split("--")[1] for p in outbox.directory.glob("*--*.json"))

    whole = run_cli(tmp_path, "outbox", "drop", "agent-escalation-1")
    assert whole.returncode == 0, whole.stderr
    assert left() == ["agent-budget-2", "agent-escalation-10", "agent-escalation-6"]
    part = run_cli(tmp_path, "outbox", "drop", "agent-escalation-")
    assert part.returncode == 0, part.stderr
    assert left() == ["agent-budget-2"]
    outbox.put(note("agent-escalation-6"), "webhook", "503")
    assert run_cli(tmp_path, "outbox", "drop", "agent-esc").returncode == 0
    assert left() == ["agent-budget-2"]
    assert run_cli(tmp_path, "outbox", "drop", "").returncode == 2  # an empty selector drops nothing
    assert left() == ["agent-budget-2"]


def test_outbox_drop_refuses_while_a_delivery_holds_the_outbox(tmp_path: Path) -> None:
    """`outbox drop` while a delivery holds the outbox past the 5 s wait: exit 5, one line, nothing
    dropped (it went ahead and deleted the entries under the delivery, exit 0)."""
    (tmp_path / "heartbeat.toml").write_text('[[notify]]\ntype = "webhook"\nurl = "${HOOK}"\n')
    outbox = Outbox(tmp_path / "state" / "outbox")
    outbox.put(note("agent-escalation-1"), "webhook", "503")
    with outbox.lock() as held:  # this process is the delivery; the CLI is another process
        assert held
        dropped = run_cli(tmp_path, "outbox", "drop", "--all")
    assert dropped.returncode == 5, dropped.stdout + dropped.stderr
    assert dropped.stdout == "" and dropped.stderr.count("\n") == 1, dropped.stderr
    assert "delivering" in dropped.stderr and "nothing was changed" in dropped.stderr
    assert [p.name.split("--")[1] for p in outbox.directory.glob("*.json")] == ["agent-escalation-1"]
    assert run_cli(tmp_path, "outbox", "drop", "--all").returncode == 0  # free again: it drops
    assert list(outbox.directory.glob("*.json")) == []


def test_a_delivery_lock_that_cannot_be_taken_is_said_not_called_busy(tmp_path: Path) -> None:
    """A delivery lock file that cannot be opened (a symlink planted there: refused, not followed) is no
    delivery of another heartbeat: the tick and `outbox retry` say why nothing was sent (both said
    nothing, or "another heartbeat is delivering right now", and the escalation waited unseen)."""
    (tmp_path / "agent.py").write_text(
        "def step(ctx):\n    for _ in range(3):\n        ctx.record('a', {})\n"
    )
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstep = "agent:step"\n[policy]\nescalate_after = 1\n'
        '[[notify]]\ntype = "file"\npath = "notes.jsonl"\n'
    )
    (tmp_path / "state").mkdir(mode=0o700)
    (tmp_path / "state" / ".outbox.lock").symlink_to(tmp_path / "elsewhere")
    ticked = run_cli(tmp_path, "tick")
    assert ticked.returncode == 4, ticked.stdout + ticked.stderr
    assert ".outbox.lock: cannot take the delivery lock" in ticked.stdout + ticked.stderr, ticked.stdout
    retried = run_cli(tmp_path, "outbox", "retry")
    said = retried.stdout + retried.stderr
    assert "another heartbeat is delivering" not in said and ".outbox.lock: cannot take" in said, said
    assert not (tmp_path / "notes.jsonl").exists() and not (tmp_path / "elsewhere").exists()
    assert len(list((tmp_path / "state" / "outbox").glob("*.json"))) == 1  # it waits, nothing lost


ECHOED = b"first\n\x1b]0;owned\x07\x1b[2J bad request\tforged: api_key=sk-live-abcdefghijklmnop1234"


def test_an_echoed_answer_is_kept_and_listed_escaped_and_masked(
    tmp_path: Path, webhook_server: WebhookServer
) -> None:
    """A webhook's answer and a command's stderr are the answering side's bytes: `heartbeat outbox`
    shows them escaped, on one line, a token in them masked (no escape code reaches the terminal)."""
    webhook_server.status = 400
    webhook_server.body = ECHOED
    failing = tmp_path / "fail.py"
    failing.write_text(f"import sys\nsys.stderr.buffer.write({ECHOED!r})\nsys.exit(1)\n")
    (tmp_path / "heartbeat.toml").write_text(
        '[[notify]]\ntype = "webhook"\nurl = "${HOOK}"\ntimeout = "2s"\nretries = 0\n'
        f'[[notify]]\ntype = "command"\ncommand = "{sys.executable} {failing}"\n'
    )
    outbox = Outbox(tmp_path / "state" / "outbox")
    outbox.put(note("agent-escalation-1"), "webhook", None)
    outbox.put(note("agent-escalation-1"), "command", None)
    retried = run_cli(tmp_path, "outbox", "retry", HOOK=webhook_server.url("/h"))
    listed = run_cli(tmp_path, "outbox")
    assert listed.returncode == 0, listed.stderr
    errors = [line for line in listed.stdout.splitlines() if "last error" in line]
    said = "\\x1b]0;owned\\x07\\x1b[2J bad request forged: api_key=***"
    assert len(errors) == 2 and all(e.endswith(said) for e in errors), errors
    for shown in (
        retried.stdout + retried.stderr,
        listed.stdout,
        *(p.read_text() for p in outbox.directory.glob("*.json")),
    ):
        assert "\x1b" not in shown and "\x07" not in shown and "sk-live-abcdefghijklmnop1234" not in shown
        assert "\nforged" not in shown


# ------------------------------------------------------------------ 14: a command that leaves a child


def test_a_command_that_leaves_a_background_child_is_delivered_and_the_child_ended(tmp_path: Path) -> None:
    """`notify-thing & exit 0`: delivered at once (not a 5 s timeout), and no child is left running."""
    pid_file = tmp_path / "child.pid"
    script = f"sleep 300 & echo $! > {shlex.quote(str(pid_file))}; echo sent"
    notifier = CommandNotifier("cmd", f"sh -c {shlex.quote(script)}", timeout=5.0)
    outbox = Outbox(tmp_path / "outbox")
    outbox.put(note(), "cmd", None)
    started = time.monotonic()
    report = outbox.deliver([notifier], NOW)
    assert report.delivered == ["agent-escalation-1 to cmd"] and report.failed == []
    assert time.monotonic() - started < 4.0
    child = int(pid_file.read_text())

    def gone() -> bool:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return True
        status = Path(f"/proc/{child}/stat").read_text().split(")")[-1].split()[0]
        return status == "Z"  # ended, not yet reaped by its (also ended) parent

    wait_until(gone, timeout=10, what=f"the notifier's background child {child} to end")
    assert outbox.pending() == []


# ------------------------------------------------------------------ 15: a hanging metric under run


def test_a_hanging_metric_keeps_one_thread_under_run(tmp_path: Path) -> None:
    """`run` with a metric that never returns: the thread count stays flat over the ticks."""
    (tmp_path / "agent.py").write_text(
        textwrap.dedent("""
        import threading

        def step(ctx):
            ctx.data.setdefault("threads", []).append(threading.active_count())
            ctx.record("read", {"page": ctx.tick}, output="page %d" % ctx.tick)

        def hang(ctx):
            threading.Event().wait()
        """)
    )
    (tmp_path / "heartbeat.toml").write_text(
        textwrap.dedent("""
        [agent]
        step = "agent:step"
        progress = "agent:hang"
        [progress]
        type = "list_length"
        key = "unused"
        timeout = "0.2s"
        """)
    )
    done = run_cli(tmp_path, "run", "--every", "0.3s", "--ticks", "6", timeout=60)
    assert done.returncode == 0, done.stderr
    threads = StateStore(tmp_path / "state").load().data["threads"]
    assert len(threads) >= 5, threads
    assert max(threads) - threads[1] <= 1, f"threads per tick: {threads}"


def test_file_notifier_masks_other_secrets(tmp_path: Path) -> None:
    """A notifier writes no secret of another (here a token in the text) into its file."""
    notifier = FileNotifier("file", tmp_path / "n.jsonl")
    notifier.mask_with = ["XXXXXXXXXXXXXXXXXXXXXXXX"]
    notifier.send(
        Notification(
            key="k-1",
            kind="escalation",
            agent="agent",
            reason="r",
            text="hook https://hooks.slack.com/services/T0/B0/XXXXXXXXXXXXXXXXXXXXXXXX failed",
            created_at=NOW,
        )
    )
    assert "XXXXXXXX" not in (tmp_path / "n.jsonl").read_text()


def test_pause_and_resume_wait_for_a_tick_that_holds_the_lock(tmp_path: Path) -> None:
    """A tick finishing its deliveries holds the lock a moment: pause waits for it instead of exit 5."""
    store = StateStore(tmp_path / "state")
    held, release = threading.Event(), threading.Event()

    def tick_in_progress() -> None:
        with store.lock():
            held.set()
            release.wait(10)

    holder = threading.Thread(target=tick_in_progress)
    holder.start()
    assert held.wait(5)
    pause = spawn_heartbeat(tmp_path, "pause", "--state-dir", "state", "--reason", "looking")
    try:
        time.sleep(1.0)  # the tick goes on for a second while pause waits (not a race: pause must wait)
        assert pause.poll() is None, "pause gave up while the lock was busy"
    finally:
        release.set()
        holder.join(5)
    _, err = pause.communicate(timeout=30)
    assert pause.returncode == 0, err
    assert store.load().status.value == "paused"
