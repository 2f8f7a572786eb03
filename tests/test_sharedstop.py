"""The fleet-wide stop: a URL or a shared file, read at every tick and by run's watcher; fail closed."""

from __future__ import annotations

import io
import socket
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import spawn_heartbeat

from heartbeat.cli import main
from heartbeat.sharedstop import SharedStop

AGENT = textwrap.dedent("""
    import pathlib

    def step(ctx):
        pathlib.Path("ran").write_text(str(ctx.tick))
        ctx.record("search", {"q": ctx.tick}, output="a page of results")
""")


def project(tmp_path: Path, stop: str) -> Path:
    (tmp_path / "fleet_agent.py").write_text(AGENT)
    (tmp_path / "heartbeat.toml").write_text(f'[agent]\nstep = "fleet_agent:step"\n[stop]\n{stop}\n')
    return tmp_path


def tick(cwd: Path, monkeypatch: pytest.MonkeyPatch, out: io.StringIO | None = None) -> int:
    monkeypatch.chdir(cwd)
    return main(["tick"], out or io.StringIO())


def test_a_shared_stop_file_stops_every_agent_that_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file present: exit 3 and the step never runs; removed: the agent goes on."""
    share = tmp_path / "share"
    share.mkdir()
    hosts = []
    for name in ("h1", "h2"):
        (tmp_path / name).mkdir()
        hosts.append(project(tmp_path / name, f'path = "{share / "STOP"}"'))
    (share / "STOP").write_text("incident 42: stop all agents")
    for host in hosts:
        out = io.StringIO()
        assert tick(host, monkeypatch, out) == 3
        assert not (host / "ran").exists() and "incident 42" in out.getvalue()
    (share / "STOP").unlink()
    assert all(tick(host, monkeypatch) == 0 for host in hosts)


def test_an_unmounted_share_fails_closed_unless_told_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The share's folder is missing: stop (the default); on_unreachable = "go" runs."""
    missing = tmp_path / "not-mounted" / "STOP"
    project(tmp_path, f'path = "{missing}"')
    assert tick(tmp_path, monkeypatch) == 3 and not (tmp_path / "ran").exists()
    project(tmp_path, f'path = "{missing}"\non_unreachable = "go"')
    assert tick(tmp_path, monkeypatch) == 0 and (tmp_path / "ran").exists()


def test_a_stop_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, webhook_server: Any) -> None:
    """404: go on; 200 with a body: stop with it as the reason; a dead server: fail closed."""
    project(tmp_path, f'url = "{webhook_server.url("/fleet/STOP")}"')
    webhook_server.status = 404
    assert tick(tmp_path, monkeypatch) == 0
    webhook_server.status, webhook_server.body = 200, b"budget frozen by finance"
    assert SharedStop(url=webhook_server.url("/fleet/STOP")).reason() == "budget frozen by finance"
    assert tick(tmp_path, monkeypatch) == 3
    webhook_server.status, webhook_server.body = 503, None
    assert tick(tmp_path, monkeypatch) == 3
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/STOP"
    assert "failing closed" in (SharedStop(url=dead, timeout=2).reason() or "")
    assert SharedStop(url=dead, timeout=2, on_unreachable="go").reason() is None


def test_run_watcher_stops_on_the_shared_stop(tmp_path: Path) -> None:
    """`run`: the shared stop appearing ends the run with exit 3 within two seconds."""
    share = tmp_path / "share"
    share.mkdir()
    project(tmp_path, f'path = "{share / "STOP"}"')
    proc = spawn_heartbeat(tmp_path, "run", "--every", "30m")
    try:
        assert proc.stdout is not None
        assert "tick 1" in proc.stdout.readline()
        (share / "STOP").write_text("stop the fleet")
        started = time.monotonic()
        _, err = proc.communicate(timeout=30)
        elapsed = time.monotonic() - started
    finally:
        proc.kill()
    assert proc.returncode == 3 and elapsed < 2.0 and "stop the fleet" in err
