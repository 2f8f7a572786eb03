"""The heartbeat command: exit codes, output, and real processes for run, KILL and the lock."""

from __future__ import annotations

import io
import json
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import spawn_heartbeat
from freezegun import freeze_time

from heartbeat.cli import build_parser, main
from heartbeat.store import StateStore

AGENT = textwrap.dedent("""
    import os, pathlib, time

    def step(ctx):
        gate = os.environ.get("HB_GATE")
        if gate:  # hold the step (and the lock) until the test opens the gate
            pathlib.Path(gate + ".started").write_text("x")
            while not pathlib.Path(gate).exists():
                time.sleep(0.01)
        for _ in range(3):
            if ctx.record("search", {"q": "same"}, output="the same page"):
                return

    def progress(ctx):
        return 1.0
""")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with heartbeat.toml and a stuck agent, as the current directory."""
    (tmp_path / "stuck_agent.py").write_text(AGENT)
    (tmp_path / "heartbeat.toml").write_text(
        textwrap.dedent("""
        [agent]
        name = "agent"
        step = "stuck_agent:step"
        progress = "stuck_agent:progress"
        [schedule]
        every = "30m"
        [policy]
        # These tests count three stuck ticks; the agent repeating what it was told to
        # avoid would escalate at the second (tested in test_policy).
        escalate_on_ignored = false
    """)
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out)
    return code, out.getvalue()


def test_help_lists_exit_codes() -> None:
    """--help documents every exit code."""
    text = build_parser().format_help()
    for code in (
        "0  ok",
        "1  the agent step raised",
        "2  bad usage",
        "3  stopped by the KILL",
        "4  waiting for a human",
        "5  another heartbeat holds the lock",
    ):
        assert code in text


def test_tick_escalates_and_status_reports(project: Path) -> None:
    """Three stuck ticks: exit 0, 0, 4; status --json shows needs_human and the streak."""
    with freeze_time("2026-05-01 03:00:00", tick=True):
        codes = [cli("tick")[0] for _ in range(3)]
        code, out = cli("status", "--json")
    assert codes == [0, 0, 4]
    report = json.loads(out)
    assert code == 4 and report["status"] == "needs_human" and report["stuck_streak"] == 3
    assert report["last_tick_at"].startswith("2026-05-01T03:00")
    assert {"ticks", "recovery", "instructions"} <= report.keys()


def test_resume_note_reaches_the_step(project: Path) -> None:
    """`resume --note` -> status shows the note as the instructions."""
    for _ in range(3):
        cli("tick")
    assert cli("resume", "--note", "try the archive")[0] == 0
    code, out = cli("status", "--json")
    assert code == 0 and json.loads(out)["instructions"] == "try the archive"


def test_kill_command_writes_and_removes(project: Path) -> None:
    """`kill --reason` writes KILL beside the config; tick then exits 3; `kill --off` removes it."""
    assert cli("kill", "--reason", "maintenance")[0] == 0
    assert (project / "KILL").read_text().strip() == "maintenance"
    assert cli("tick")[0] == 3
    assert cli("kill", "--off")[0] == 0 and not (project / "KILL").exists()
    assert cli("tick")[0] == 0


def test_bad_config_is_one_line_exit_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown key: exit 2 and one line naming it, no traceback."""
    (project / "heartbeat.toml").write_text("[agent]\nstepp = 'x:y'\n")
    assert cli("tick")[0] == 2
    err = capsys.readouterr().err
    assert "agent.stepp" in err and "Traceback" not in err and err.count("\n") == 1


def test_bad_step_path_is_exit_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A step that cannot be imported is a config error naming it."""
    assert cli("tick", "--step", "nowhere:step")[0] == 2
    assert "nowhere" in capsys.readouterr().err


def test_corrupt_state_exit_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A truncated state file: exit 2, the file untouched and a copy aside."""
    state = project / "state"
    state.mkdir()
    (state / "state.json").write_text('{"schema_version": 1, "tic')
    assert cli("tick")[0] == 2
    assert (state / "state.json").read_text() == '{"schema_version": 1, "tic'
    assert list(state.glob("state.json.corrupt-*"))


def test_unknown_command_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """A wrong subcommand is exit 2 with one line."""
    assert cli("frobnicate")[0] == 2
    assert "invalid choice" in capsys.readouterr().err


def test_schema_prints_state_json_schema() -> None:
    """`heartbeat schema` prints the JSON Schema of state.json."""
    code, out = cli("schema")
    schema = json.loads(out)
    assert code == 0 and "schema_version" in schema["properties"]


def test_log_shows_the_journal(project: Path) -> None:
    """`log --json` prints the journal's events, including the anomaly."""
    cli("tick")
    code, out = cli("log", "--json", "-n", "0")
    kinds = [json.loads(line)["event"] for line in out.splitlines()]
    assert code == 0 and "anomaly" in kinds and kinds[-1] == "tick"


def test_init_creates_and_never_overwrites(tmp_path: Path) -> None:
    """`init` creates config, state folder and starter step; a second init keeps them."""
    code, _ = cli("init", str(tmp_path / "new"))
    assert code == 0 and (tmp_path / "new" / "heartbeat.toml").exists()
    (tmp_path / "new" / "agent.py").write_text("# mine")
    cli("init", str(tmp_path / "new"))
    assert (tmp_path / "new" / "agent.py").read_text() == "# mine"
    assert (tmp_path / "new" / "state").stat().st_mode & 0o777 == 0o700


def test_validate(project: Path) -> None:
    """`validate` loads the config and plug-ins without ticking."""
    code, out = cli("validate")
    assert code == 0 and "config ok" in out
    assert not (project / "state" / "state.json").exists()


def test_run_stops_on_kill_within_two_seconds(project: Path) -> None:
    """`run --every 30m`: after the first tick, `touch KILL` ends the run with exit 3 within 2 s."""
    proc = spawn_heartbeat(project, "run", "--every", "30m")
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # the first tick runs at start
        assert "tick 1" in first
        (project / "KILL").write_text("stop now")
        started = time.monotonic()
        code = proc.wait(timeout=10)
        elapsed = time.monotonic() - started
    finally:
        proc.kill()
    assert code == 3 and elapsed < 2.0
    assert StateStore(project / "state").load().ticks == 1


def test_run_ticks_n_then_stops(project: Path) -> None:
    """`run --every 1s --ticks 2` ticks twice and exits."""
    proc = spawn_heartbeat(project, "run", "--every", "1s", "--ticks", "2", "--json")
    out, _ = proc.communicate(timeout=30)
    ticks = [json.loads(line) for line in out.splitlines()]
    assert proc.returncode == 0 and [t["tick"] for t in ticks] == [1, 2]


def test_run_never_calls_step_while_kill_exists(project: Path) -> None:
    """With KILL present from the start, run exits 3 and the step never runs."""
    (project / "KILL").touch()
    proc = spawn_heartbeat(project, "run", "--every", "30m")
    proc.communicate(timeout=30)
    assert proc.returncode == 3 and not (project / "state" / "state.json").exists()


def test_two_ticks_at_once_one_exits_5(project: Path) -> None:
    """While one tick holds the lock, a second exits 5 and changes nothing."""
    gate = project / "gate"
    first = spawn_heartbeat(project, "tick", HB_GATE=str(gate))
    try:
        started = project / "gate.started"
        deadline = time.monotonic() + 30
        while not started.exists():  # wait for the first tick to be inside its step
            assert time.monotonic() < deadline and first.poll() is None
            time.sleep(0.01)
        second = spawn_heartbeat(project, "tick")
        _, err = second.communicate(timeout=30)
        assert second.returncode == 5 and "lock" in err
        assert not (project / "state" / "state.json").exists()
    finally:
        gate.touch()
        first.communicate(timeout=30)
    assert first.returncode == 0
    assert StateStore(project / "state").load().ticks == 1


def test_exec_step_json_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--exec runs a program that reports actions and progress as JSON lines."""
    script = tmp_path / "agent.sh"
    script.write_text(
        textwrap.dedent("""\
        #!/bin/sh
        echo "instructions: $HEARTBEAT_INSTRUCTIONS" >&2
        echo '{"tool": "grep", "args": {"pattern": "TODO"}, "output": "3 matches"}' >> "$HEARTBEAT_ACTIONS"
        echo '{"progress": 0.5}' >> "$HEARTBEAT_ACTIONS"
        echo '{"data": {"last": "grep"}}' >> "$HEARTBEAT_ACTIONS"
    """)
    )
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    code, out = cli("tick", "--exec", str(script), "--json")
    result: dict[str, Any] = json.loads(out)
    state = StateStore(tmp_path / "state").load()
    assert code == 0 and result["actions"] == 1 and result["progress"] == 0.5
    assert state.history[0].tool == "grep" and state.data == {"last": "grep"}


def test_exec_step_failure_is_exit_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A program that exits non-zero is a step error (exit 1), recorded as an errored action."""
    monkeypatch.chdir(tmp_path)
    code, out = cli("tick", "--exec", f"{sys.executable} -c 'raise SystemExit(7)'", "--json")
    assert code == 1 and "code 7" in json.loads(out)["step_error"]
