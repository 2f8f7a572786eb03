"""The ping notifier against a real local HTTP server: start, success, failure with exit code."""

from __future__ import annotations

import io
import signal
import socket
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import spawn_heartbeat, wait_until

from heartbeat.base.errors import NotifyError
from heartbeat.cli.main import main
from heartbeat.notify.ping import PingNotifier
from heartbeat.tick.pinground import ABANDONED_PING_SECONDS, PingRound

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

    from heartbeat.core.models import Notification

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


HANGING = textwrap.dedent("""
    import pathlib, time

    def step(ctx):
        (pathlib.Path(ctx.base_dir) / "started").write_text("x")
        while True:          # never returns, never looks at ctx.killed
            time.sleep(0.05)
""")


def _hanging_project(root: Path, url: str, extra: str = "") -> None:
    (root / "hangs.py").write_text(HANGING)
    (root / "heartbeat.toml").write_text(
        f'[agent]\nstep = "hangs:step"\n[[notify]]\ntype = "ping"\nurl = "{url}"\n{extra}'
    )


@pytest.mark.parametrize("command", [["tick"], ["run", "--every", "1h"]])
def test_an_abandoned_tick_pings_its_fail(tmp_path: Path, webhook_server: Any, command: list[str]) -> None:
    """KILL abandons a step that never returns: the start ping is followed by URL/3 (a failure)."""
    _hanging_project(tmp_path, webhook_server.url("/ping/abc-123"))
    proc = spawn_heartbeat(tmp_path, *command)
    try:
        wait_until((tmp_path / "started").exists, proc=proc, what="the step started")
        (tmp_path / "KILL").write_text("runaway bill")
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 3, err
    assert [(r.method, r.path) for r in webhook_server.requests] == [
        ("POST", "/ping/abc-123/start"),
        ("POST", "/ping/abc-123/3"),  # 3 is not in fail_on, but a lost tick is a failure
    ]
    assert b"abandoned" in webhook_server.requests[-1].body
    assert "not delivered" not in err


def test_a_slow_service_does_not_hold_up_the_stop(tmp_path: Path, webhook_server: Any) -> None:
    """The fail ping of an abandoned tick waits ABANDONED_PING_SECONDS at most, then says so."""
    _hanging_project(tmp_path, webhook_server.url("/ping/slow-uuid"), 'timeout = "60s"\n')
    proc = spawn_heartbeat(tmp_path, "tick")
    try:
        wait_until((tmp_path / "started").exists, proc=proc, what="the step started")
        webhook_server.delay = 60.0  # the end ping gets no answer while the test runs
        started = time.monotonic()
        (tmp_path / "KILL").write_text("stop")
        _, err = proc.communicate(timeout=30)
        took = time.monotonic() - started
    finally:
        proc.kill()
    assert proc.returncode == 3, err
    assert webhook_server.requests[-1].path == "/ping/slow-uuid/3"
    assert took < 30 and f"not answered within {ABANDONED_PING_SECONDS:g} s" in err
    assert "slow-uuid" not in err


def test_abandoned_pings_every_url_side_by_side(webhook_server: Any) -> None:
    """PingRound.abandoned pings each notifier's URL/<code>, whatever fail_on says."""
    from heartbeat.config.file import PingNotifierConfig

    configs = [
        PingNotifierConfig(type="ping", name=f"p{i}", url=webhook_server.url(f"/p/{i}"), fail_on=[1])
        for i in range(2)
    ]
    assert PingRound(configs).abandoned(3, "tick 4 abandoned") == []
    assert sorted(r.path for r in webhook_server.requests) == ["/p/0/3", "/p/1/3"]
    assert all(r.body == b"tick 4 abandoned" for r in webhook_server.requests)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_an_interrupted_tick_pings_its_fail(tmp_path: Path, webhook_server: Any, sig: int, code: int) -> None:
    """SIGTERM/SIGINT ends a tick whose step hangs: the start ping is followed by URL/<128 + signal>."""
    _hanging_project(tmp_path, webhook_server.url("/ping/abc-123"))
    proc = spawn_heartbeat(tmp_path, "tick")
    try:
        wait_until((tmp_path / "started").exists, proc=proc, what="the step started")
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == code, err
    assert [r.path for r in webhook_server.requests] == ["/ping/abc-123/start", f"/ping/abc-123/{code}"]
    assert b"not saved" in webhook_server.requests[-1].body
