"""Settling the outbox when a human acts, while another process delivers from it.

A real second process holds the outbox's delivery lock (as a `run` sending to a
webhook that does not answer does); the wait is shortened, nothing sleeps.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from conftest import WebhookServer

from heartbeat.base.errors import HeartbeatError, StateLocked
from heartbeat.core.models import Notification
from heartbeat.notify import outbox as outboxes
from heartbeat.notify.outbox import Outbox
from heartbeat.testing import make_heartbeat

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def note(key: str, kind: str = "escalation") -> Notification:
    return Notification(
        key=key, kind=kind, agent="agent", reason="stuck", text="agent needs a human", created_at=NOW
    )


@contextmanager
def delivering(outbox: Outbox) -> Iterator[None]:
    """Another process holds ``outbox``'s delivery lock for the block."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
                import sys
                from heartbeat.notify.outbox import Outbox
                with Outbox(__import__("pathlib").Path({str(outbox.directory)!r})).lock() as held:
                    print("held" if held else "busy", flush=True)
                    sys.stdin.read()
            """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)


@pytest.fixture(autouse=True)
def short_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outboxes, "SETTLE_WAIT", 0.3)


def test_settle_refuses_while_a_delivery_holds_the_outbox(tmp_path: Path) -> None:
    """Past the wait, settle raises StateLocked and removes nothing (it went on and deleted under the
    delivery, which could then send or write back the page it was told was settled)."""
    outbox = Outbox(tmp_path / "outbox")
    outbox.put(note("agent-escalation-1"), "webhook", "503")
    outbox.put(note("agent-budget-2", "budget"), "webhook", "503")
    with delivering(outbox):
        assert outbox.settle("agent", dry_run=True) == ["agent-budget-2", "agent-escalation-1"]
        with pytest.raises(StateLocked):
            outbox.settle("agent")
        assert len(outbox.pending()) == 2
    assert outbox.settle("agent") == ["agent-budget-2", "agent-escalation-1"]
    assert outbox.pending() == []


def test_resume_while_a_delivery_holds_the_outbox_says_what_may_still_be_sent(
    tmp_path: Path, webhook_server: WebhookServer
) -> None:
    """The resume stands; the page stays, journaled as unsettled, and the human is told its key (the
    journal said it was settled and the file was deleted under the running delivery)."""
    webhook_server.status = 503

    def stuck(ctx: Any) -> None:
        for _ in range(3):
            if ctx.record("search", {"q": "same"}, output="the same page"):
                return

    hook = {"type": "webhook", "url": webhook_server.url("/hook"), "timeout": "1s", "retries": 0}
    hb = make_heartbeat(stuck, tmp_path, clock=lambda: NOW, policy={"escalate_after": 1}, notify=[hook])
    assert hb.tick().exit_code == 4
    outbox = Outbox(tmp_path / "state" / "outbox")
    assert [e.notification.key for e in outbox.pending()] == ["agent-escalation-1"]
    with delivering(outbox), pytest.raises(HeartbeatError) as raised:
        hb.resume("look elsewhere")
    assert "resumed, but" in str(raised.value) and "agent-escalation-1" in str(raised.value)
    assert hb.read_state().status.value == "active"
    assert [e.notification.key for e in outbox.pending()] == ["agent-escalation-1"]
    journal = (tmp_path / "state" / "journal.jsonl").read_text().splitlines()
    (resume,) = [e for e in map(json.loads, journal) if e["event"] == "resume"]
    assert resume["settled"] == [] and resume["unsettled"] == ["agent-escalation-1"]


def test_resume_with_the_outbox_free_settles_under_its_lock(tmp_path: Path) -> None:
    """No delivery running: the page is settled and journaled as such, nothing unsettled."""

    def stuck(ctx: Any) -> None:
        for _ in range(3):
            if ctx.record("search", {"q": "same"}, output="the same page"):
                return

    hb = make_heartbeat(stuck, tmp_path, clock=lambda: NOW, policy={"escalate_after": 1})
    assert hb.tick().exit_code == 4
    outbox = Outbox(tmp_path / "state" / "outbox")
    outbox.put(note("agent-escalation-1"), "gone", "503")
    hb.resume()
    assert outbox.pending() == []
    journal = (tmp_path / "state" / "journal.jsonl").read_text().splitlines()
    (resume,) = [e for e in map(json.loads, journal) if e["event"] == "resume"]
    assert resume["settled"] == ["agent-escalation-1"] and "unsettled" not in resume
