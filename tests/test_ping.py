"""The ping notifier against a real local HTTP server: start, success, failure with exit code."""

from __future__ import annotations

import io
import socket
import textwrap
from pathlib import Path
from typing import Any

import pytest

from heartbeat.cli import main
from heartbeat.errors import NotifyError
from heartbeat.ping import PingNotifier

AGENT = textwrap.dedent("""
    import os

    def step(ctx):
        if os.environ.get("HB_FAIL"):
            raise RuntimeError("the agent broke")
        ctx.record("search", {"q": ctx.tick}, output="a page of results")
""")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, webhook_server: Any) -> Path:
    """An agent with a ping notifier pointing at the local server."""
    (tmp_path / "pinged.py").write_text(AGENT)
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstep = "pinged:step"\n'
        f'[[notify]]\ntype = "ping"\nurl = "{webhook_server.url("/ping/abc-123")}"\n'
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_tick_pings_start_then_success(project: Path, webhook_server: Any) -> None:
    """A healthy tick: POST /start, then POST to the URL itself."""
    assert main(["tick"], io.StringIO()) == 0
    assert [(r.method, r.path) for r in webhook_server.requests] == [
        ("POST", "/ping/abc-123/start"),
        ("POST", "/ping/abc-123"),
    ]
    assert b"tick 1" in webhook_server.requests[1].body


def test_a_failing_tick_pings_its_exit_code(
    project: Path, webhook_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The step raised: the end ping goes to URL/1 with the tick line as its body."""
    monkeypatch.setenv("HB_FAIL", "1")
    assert main(["tick"], io.StringIO()) == 1
    assert webhook_server.requests[-1].path == "/ping/abc-123/1"
    assert b"the agent broke" in webhook_server.requests[-1].body


def test_a_killed_tick_is_an_expected_state(project: Path, webhook_server: Any) -> None:
    """KILL (exit 3) is not in fail_on: pinged as success, so a deliberate stop pages nobody."""
    (project / "KILL").write_text("maintenance")
    assert main(["tick"], io.StringIO()) == 3
    assert webhook_server.requests[-1].path == "/ping/abc-123"


def test_an_unreachable_ping_never_fails_the_tick(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No service at the URL: the tick still runs and exits 0; stderr says the ping failed."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/ping/secret-uuid"
    (project / "heartbeat.toml").write_text(
        f'[agent]\nstep = "pinged:step"\n[[notify]]\ntype = "ping"\nurl = "{dead}"\ntimeout = "2s"\n'
    )
    assert main(["tick"], io.StringIO()) == 0
    err = capsys.readouterr().err
    assert "ping failed" in err and "secret-uuid" not in err


def test_send_pings_fail_with_the_text(webhook_server: Any) -> None:
    """An escalation through the ping notifier: URL/fail with the message text."""
    from datetime import UTC, datetime

    from heartbeat.models import Notification

    note = Notification(
        key="k",
        kind="escalation",
        agent="a",
        reason="stuck",
        text="agent a needs a human",
        created_at=datetime.now(UTC),
    )
    PingNotifier("ping", webhook_server.url("/p/1")).send(note)
    assert (
        webhook_server.requests[0].path == "/p/1/fail"
        and webhook_server.requests[0].body == b"agent a needs a human"
    )
    webhook_server.status = 404
    with pytest.raises(NotifyError, match="HTTP 404"):
        PingNotifier("ping", webhook_server.url("/p/1")).start()
    assert "/p/1" not in repr(PingNotifier("ping", webhook_server.url("/p/1")))
