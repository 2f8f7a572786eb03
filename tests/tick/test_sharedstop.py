"""The fleet-wide stop: a URL or a shared file, read at every tick and by run's watcher; fail closed."""

from __future__ import annotations

import contextlib
import io
import json
import socket
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli
from conftest import spawn_heartbeat, wait_until

from heartbeat.cli.main import main
from heartbeat.tick.sharedstop import SharedStop

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


def test_a_stop_urls_reason_holding_escape_codes_is_shown_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, webhook_server: Any
) -> None:
    """The body of a stop URL reaches terminals and notifications: no escape code goes through raw."""
    project(tmp_path, f'url = "{webhook_server.url("/fleet/STOP")}"')
    webhook_server.status, webhook_server.body = 200, "frozen \x1b[2J\x1b]0;owned\x07 \u009b31m".encode()
    reason = SharedStop(url=webhook_server.url("/fleet/STOP")).reason() or ""
    assert reason.isprintable() and reason.startswith("frozen \\x1b[2J")
    out = io.StringIO()
    assert tick(tmp_path, monkeypatch, out) == 3
    assert "frozen \\x1b[2J" in out.getvalue() and "\x1b" not in out.getvalue()


@pytest.mark.parametrize("on_unreachable", ["stop", "go"])
def test_a_stop_url_that_does_not_speak_http_follows_on_unreachable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_unreachable: str
) -> None:
    """A server that answers garbage (a TLS port, another service): unreachable, not an internal error."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()

        def answer_garbage() -> None:
            with contextlib.suppress(OSError):
                while True:
                    client, _ = server.accept()
                    with client:
                        client.recv(4096)
                        client.sendall(b"\x15\x03\x01\x00\x02\x02\x50 not http\r\n\r\n")

        threading.Thread(target=answer_garbage, daemon=True).start()
        url = f"http://127.0.0.1:{server.getsockname()[1]}/STOP"
        project(tmp_path, f'url = "{url}"\non_unreachable = "{on_unreachable}"')
        out = io.StringIO()
        code = tick(tmp_path, monkeypatch, out)
    if on_unreachable == "stop":
        assert code == 3 and "failing closed" in out.getvalue() and not (tmp_path / "ran").exists()
    else:
        assert code == 0 and (tmp_path / "ran").exists()


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


HANGING = textwrap.dedent("""
    import pathlib, time

    def step(ctx):
        pathlib.Path("started").write_text("x")
        while True:          # never returns, never looks at ctx.killed
            time.sleep(0.05)
""")


def hanging_project(tmp_path: Path, stop: str) -> Path:
    (tmp_path / "hangs.py").write_text(HANGING)
    (tmp_path / "heartbeat.toml").write_text(f'[agent]\nstep = "hangs:step"\n[stop]\n{stop}\n')
    return tmp_path


@pytest.mark.parametrize("command", [["tick"], ["run", "--every", "1h"]])
def test_the_step_watchdog_abandons_a_hung_step_on_the_shared_stop_file(
    tmp_path: Path, command: list[str]
) -> None:
    """A step that never returns: the shared STOP file appearing ends `tick` or `run` with exit 3."""
    share = tmp_path / "share"
    share.mkdir()
    hanging_project(tmp_path, f'path = "{share / "STOP"}"')
    proc = spawn_heartbeat(tmp_path, *command)
    try:
        wait_until((tmp_path / "started").exists, proc=proc, what="the step started")
        (share / "STOP").write_text("incident 7: stop the fleet")
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 3, err
    assert "the fleet stop" in out + err and "incident 7" in out + err
    if command == ["tick"]:  # only the step watchdog can end it: the step was abandoned
        assert "during the step" in out + err and "abandoned" in out + err
    # `run` also ends on its own watcher, leaving the tick behind: either way the journal says so
    lines = (tmp_path / "state" / "journal.jsonl").read_text().splitlines()
    kills = [e for e in map(json.loads, lines) if e["event"] == "kill"]
    assert kills and kills[0]["abandoned"] and "incident 7" in kills[0]["reason"]


COOPERATIVE = textwrap.dedent("""
    import pathlib, time

    def step(ctx):
        ctx.record("search", {"q": ctx.tick}, output="a page of results")
        share = pathlib.Path(ctx.base_dir) / "share"
        (share / "STOP").write_text("incident 9: stop the fleet")
        give_up = time.monotonic() + 10
        while not ctx.killed and time.monotonic() < give_up:  # the watcher reads it within a second
            time.sleep(0.05)
        ctx.data["said"] = ctx.stopped_by()
""")


def test_a_step_that_sees_the_fleet_stop_and_returns_is_said_stopped_by_it(tmp_path: Path) -> None:
    """A cooperative step sees ctx.killed (the fleet stop) and returns: the tick says "stopped by the
    fleet stop <where> during the step: why", exit 3, and journals the kill, as it does for the KILL
    file (it said a plain return: exit 0, the step's actions, no kill in the journal)."""
    share = tmp_path / "share"
    share.mkdir()
    (tmp_path / "coop.py").write_text(COOPERATIVE)
    (tmp_path / "heartbeat.toml").write_text(
        f'[agent]\nstep = "coop:step"\n[stop]\npath = "{share / "STOP"}"\n'
    )
    done = run_cli(tmp_path, "tick")
    said = json.loads((tmp_path / "state" / "state.json").read_text())["data"]["said"]
    assert said == f"stopped by the fleet stop {share / 'STOP'}: incident 9: stop the fleet"
    assert done.returncode == 3, done.stdout + done.stderr
    expected = f"stopped by the fleet stop {share / 'STOP'} during the step: incident 9: stop the fleet"
    assert expected in done.stdout, done.stdout
    lines = (tmp_path / "state" / "journal.jsonl").read_text().splitlines()
    kills = [e for e in map(json.loads, lines) if e["event"] == "kill"]
    assert [(k["reason"], k["during_step"]) for k in kills] == [("incident 9: stop the fleet", True)]


def test_the_journal_report_and_log_name_the_fleet_stop_not_the_kill_file(tmp_path: Path) -> None:
    """A tick stopped by the fleet stop (before its step, and a cooperative step during it): each kill
    event names its switch, and the report and `log` say "stopped by the fleet stop" (the report
    marked both "KILL: why", and the journal could not tell them from a KILL file's)."""
    share = tmp_path / "share"
    share.mkdir()
    (tmp_path / "coop.py").write_text(COOPERATIVE)
    (tmp_path / "heartbeat.toml").write_text(
        f'[agent]\nstep = "coop:step"\n[stop]\npath = "{share / "STOP"}"\n'
    )
    assert run_cli(tmp_path, "tick").returncode == 3  # the step engages the stop and returns on it
    assert run_cli(tmp_path, "tick").returncode == 3  # engaged before the step: never called
    lines = (tmp_path / "state" / "journal.jsonl").read_text().splitlines()
    kills = [e for e in map(json.loads, lines) if e["event"] == "kill"]
    assert [k.get("by") for k in kills] == [f"the fleet stop {share / 'STOP'}"] * 2
    page = run_cli(tmp_path, "report", "--out", "-")
    assert page.returncode == 0, page.stderr
    assert "KILL: incident 9" not in page.stdout and "KILL (during the step)" not in page.stdout
    assert f"stopped by the fleet stop {share / 'STOP'} during the step: incident 9" in page.stdout
    assert f"stopped by the fleet stop {share / 'STOP'}: incident 9" in page.stdout
    log = run_cli(tmp_path, "log", "--event", "kill")
    assert log.stdout.count(f"stopped by the fleet stop {share / 'STOP'}") == 2, log.stdout


EXEC_AGENT = """#!/bin/sh
echo '{"tool": "grep", "args": {"q": "x"}, "output": "3 matches"}' >> "$HEARTBEAT_ACTIONS"
echo "incident 11: stop the fleet" > share/STOP
while true; do sleep 0.05; done
"""


def test_an_exec_step_ended_on_the_fleet_stop_is_said_ended_by_it(tmp_path: Path) -> None:
    """An --exec program ended because the fleet stop was engaged: its step error names the fleet stop
    (it said "the KILL file appeared", with no KILL file anywhere)."""
    (tmp_path / "share").mkdir()
    agent = tmp_path / "agent.sh"
    agent.write_text(EXEC_AGENT)
    agent.chmod(0o755)
    (tmp_path / "heartbeat.toml").write_text('[agent]\nexec = "./agent.sh"\n[stop]\npath = "share/STOP"\n')
    done = run_cli(tmp_path, "tick")
    assert done.returncode == 3, done.stdout + done.stderr
    events = [json.loads(line) for line in (tmp_path / "state" / "journal.jsonl").read_text().splitlines()]
    # The program polls the stop every 0.1 s and ends at once; the watchdog abandons a step 0.15 s
    # after it: the program's own end is what the journal says.
    errors = [e["error"] for e in events if e["event"] == "step_error"]
    stop = tmp_path / "share" / "STOP"
    assert errors == [f"ExecStepError: ./agent.sh was ended: stopped by the fleet stop {stop}: incident 11: "
                      "stop the fleet"], errors  # fmt: skip
    assert "KILL" not in done.stdout + done.stderr


def test_the_step_watchdog_reads_a_stop_url_at_most_once_a_second(
    tmp_path: Path, webhook_server: Any
) -> None:
    """A stop URL is read about once a second while the step runs (not at the KILL file's pace)."""
    from heartbeat.tick.sharedstop import POLL_SECONDS

    hanging_project(tmp_path, f'url = "{webhook_server.url("/fleet/STOP")}"')
    webhook_server.status = 404  # go on
    started = time.monotonic()
    proc = spawn_heartbeat(tmp_path, "tick")
    try:
        wait_until((tmp_path / "started").exists, proc=proc, what="the step started")
        # the tick's own read before the step, then the watchdog's: wait for three of those
        wait_until(lambda: len(webhook_server.requests) >= 4, proc=proc, what="the watchdog's reads")
        webhook_server.status, webhook_server.body = 200, b"budget frozen by finance"
        out, err = proc.communicate(timeout=30)
        elapsed = time.monotonic() - started
    finally:
        proc.kill()
    assert proc.returncode == 3, err
    assert "budget frozen by finance" in out + err and "during the step" in out + err
    reads = len(webhook_server.requests)
    assert reads <= elapsed / POLL_SECONDS + 2, f"{reads} reads in {elapsed:.1f} s"


@pytest.mark.parametrize("choice", ["stop", "go"])
def test_an_unreachable_stop_url_mid_step_follows_on_unreachable(
    tmp_path: Path, webhook_server: Any, choice: str
) -> None:
    """The stop URL starts failing while the step runs: "stop" abandons it, "go" lets it run."""
    hanging_project(tmp_path, f'url = "{webhook_server.url("/STOP")}"\non_unreachable = "{choice}"')
    webhook_server.status = 404
    proc = spawn_heartbeat(tmp_path, "tick")
    try:
        wait_until((tmp_path / "started").exists, proc=proc, what="the step started")
        webhook_server.status = 503
        seen = len(webhook_server.requests)
        if choice == "stop":
            out, err = proc.communicate(timeout=30)
            assert proc.returncode == 3 and "failing closed" in out + err
            return
        # two 503 answers read by the watchdog, and the step still runs: then KILL ends it
        wait_until(lambda: len(webhook_server.requests) >= seen + 2, proc=proc, what="two failed reads")
        assert proc.poll() is None
        (tmp_path / "KILL").write_text("enough")
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 3 and "enough" in out + err and "fleet stop" not in out + err


def test_a_slow_stop_url_never_delays_kill_in_run(tmp_path: Path, webhook_server: Any) -> None:
    """`run` between ticks: a stop URL that stops answering does not hold up the KILL file's watch."""
    project(tmp_path, f'url = "{webhook_server.url("/STOP")}"\ntimeout = "60s"\non_unreachable = "go"')
    webhook_server.status = 404
    proc = spawn_heartbeat(tmp_path, "run", "--every", "1h")
    try:
        assert proc.stdout is not None
        assert "tick 1" in proc.stdout.readline()
        webhook_server.delay = 60.0  # from now on no answer while the test runs
        seen = len(webhook_server.requests)
        wait_until(lambda: len(webhook_server.requests) > seen, proc=proc, what="a read that hangs")
        started = time.monotonic()
        (tmp_path / "KILL").write_text("stop now")
        _, err = proc.communicate(timeout=30)
        took = time.monotonic() - started
    finally:
        proc.kill()
    assert proc.returncode == 3 and "stop now" in err
    assert took < 5.0, f"KILL took {took:.1f} s behind a hanging stop URL"
