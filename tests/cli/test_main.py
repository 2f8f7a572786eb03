"""The heartbeat command: exit codes, output, and real processes for run, KILL and the lock."""

from __future__ import annotations

import _thread
import argparse
import contextlib
import gc
import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import spawn_heartbeat
from freezegun import freeze_time

from heartbeat.cli.main import build_parser, main
from heartbeat.state.store import StateStore

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
    """Three stuck ticks: exit 0, 0, 4; status --json shows needs_human, the streak, the clock's time."""
    # The CLI reads the real clock (it has no injected one): freezegun is how a test sets it.
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


def test_report_while_a_tick_holds_the_lock_exits_5_as_its_help_says(project: Path) -> None:
    """`report` writes its page inside the state folder under the lock: while a tick holds it,
    report exits 5, and its --help lists 5 (it listed 0 and 2 only)."""
    assert cli("tick")[0] == 0
    gate = project / "gate"
    first = spawn_heartbeat(project, "tick", HB_GATE=str(gate))
    try:
        started = project / "gate.started"
        deadline = time.monotonic() + 30
        while not started.exists():  # wait for the tick to be inside its step, holding the lock
            assert time.monotonic() < deadline and first.poll() is None
            time.sleep(0.01)
        report = spawn_heartbeat(project, "report")
        _, err = report.communicate(timeout=60)
        assert report.returncode == 5 and "holds the lock" in err, err
    finally:
        gate.touch()
        first.communicate(timeout=30)
    assert "\n  5  another heartbeat holds the lock" in help_of("report")


def subcommands() -> dict[str, argparse.ArgumentParser]:
    """Every ``heartbeat COMMAND``'s parser, by name."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def help_of(command: str) -> str:
    """``heartbeat COMMAND --help``'s text."""
    return subcommands()[command].format_help()


# What each command can return (README: each --help lists them): `report` waits for the state lock
# (5); `outbox` never does (a busy delivery lock is said, exit 0); only `status` is overdue (6).
CAN_RETURN = {
    "init": "02",
    "run": "0235",
    "tick": "012345",
    "status": "02346",
    "kill": "02",
    "pause": "025",
    "resume": "025",
    "log": "02",
    "outbox": "025",  # drop refuses while a delivery holds the outbox
    "replay": "02",
    "validate": "02",
    "notify": "012",
    "metrics": "02",
    "schema": "0",
    "mcp-proxy": "012",
    "report": "025",
}


def test_each_help_lists_the_exit_codes_its_command_can_return() -> None:
    """Each command's --help lists exactly the codes it can return, and every command is here."""
    import re

    listed = {
        name: "".join(re.findall(r"^  (\d)  ", parser.format_help().split("exit codes:")[1], re.M))
        for name, parser in subcommands().items()
    }
    assert listed == CAN_RETURN


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


# -- issue 13: what an operator expects


PRINTING = textwrap.dedent("""
    import os, pathlib

    def step(ctx):
        print("the agent talks on stdout")
        marker = os.environ.get("HB_MARKER")
        if marker:
            pathlib.Path(marker).write_text("the step ran")
        ctx.record("search", {"q": ctx.tick}, output="a page of results")

    def progress(ctx):
        return ctx.tick
""")


@pytest.fixture
def talker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose healthy step prints on stdout."""
    (tmp_path / "talker.py").write_text(PRINTING)
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstep = "talker:step"\nprogress = "talker:progress"\n[schedule]\nevery = "30m"\n'
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_misspelt_progress_fails_before_the_step_runs(talker: Path) -> None:
    """A metric that cannot be loaded: exit 2 naming it, and the step was never called."""
    toml = talker / "heartbeat.toml"
    toml.write_text(toml.read_text().replace("talker:progress", "talker:progres"))
    marker = talker / "ran"
    proc = spawn_heartbeat(talker, "tick", HB_MARKER=str(marker))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "progres" in err
    assert not marker.exists()


@pytest.mark.parametrize("argv", [("resume",), ("pause",), ("kill",), ("status",), ("log",)])
def test_commands_in_an_empty_folder_refuse_and_create_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    """No config and no state folder here: exit 2 with one line, and not a file is created."""
    monkeypatch.chdir(tmp_path)
    assert cli(*argv)[0] == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ("wrong folder" in err or "no state folder" in err)
    assert list(tmp_path.iterdir()) == []


def test_status_on_a_missing_state_dir_is_exit_2(talker: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`status --state-dir /nonexistent` says so instead of "active"."""
    assert cli("status", "--state-dir", str(talker / "nowhere"))[0] == 2
    assert "no state folder" in capsys.readouterr().err


def test_kill_with_state_dir_reaches_the_kill_file_the_agent_reads(
    talker: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From another folder, `kill --state-dir X` refuses; with --config it writes the agent's own KILL."""
    assert cli("tick")[0] == 0
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    monkeypatch.chdir(elsewhere)
    assert cli("kill", "--state-dir", str(talker / "state"))[0] == 2
    assert list(elsewhere.iterdir()) == []
    code, _ = cli("kill", "--config", str(talker / "heartbeat.toml"), "--state-dir", str(talker / "state"))
    assert code == 0 and (talker / "KILL").exists()
    monkeypatch.chdir(talker)
    assert cli("tick")[0] == 3


@pytest.mark.parametrize("flag", ["--json", "--quiet"])
def test_tick_stdout_is_clean_when_asked(talker: Path, flag: str) -> None:
    """--json: stdout is one JSON object (the step's print goes to stderr); --quiet: only the step's own."""
    proc = spawn_heartbeat(talker, "tick", flag)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0
    if flag == "--json":
        assert json.loads(out)["outcome"] == "ran" and "the agent talks on stdout" in err
    else:
        assert out == "the agent talks on stdout\n" and err == ""


def test_exec_step_output_stays_off_json_stdout(tmp_path: Path) -> None:
    """A child process's stdout is moved too: `tick --exec ... --json | jq` works."""
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\necho 'the program talks'\n")
    script.chmod(0o755)
    proc = spawn_heartbeat(tmp_path, "tick", "--exec", str(script), "--json")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and json.loads(out)["agent"] == "agent" and "the program talks" in err


def test_run_json_lines_are_all_json(talker: Path) -> None:
    """`run --json`: every stdout line parses, while the step prints each tick."""
    proc = spawn_heartbeat(talker, "run", "--every", "1s", "--ticks", "2", "--json")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and [json.loads(line)["tick"] for line in out.splitlines()] == [1, 2]
    assert err.count("the agent talks on stdout") == 2


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (("run", "--every", "0s"), "--every"),
        (("log", "-n", "-1"), "-1"),
        (("status", "--max-age", "soon"), "--max-age"),
        (("log", "--since", "yesterday-ish"), "--since"),
    ],
)
def test_bad_flags_are_one_line_exit_2(
    talker: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], says: str
) -> None:
    """Values that used to be an internal error or silently accepted are usage errors."""
    (talker / "state").mkdir()
    assert cli(*argv)[0] == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1 and "internal error" not in err


def test_escalate_after_as_a_string_is_refused(talker: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Strict types: `escalate_after = "3"` is a config error naming the key."""
    with open(talker / "heartbeat.toml", "a") as toml:
        toml.write('[policy]\nescalate_after = "3"\n')
    assert cli("tick")[0] == 2
    assert "policy.escalate_after" in capsys.readouterr().err


def test_kill_off_on_a_kill_folder_with_files_is_a_clear_error(
    talker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A KILL folder with something inside: exit 2, one line, the folder left as it is."""
    (talker / "KILL").mkdir()
    (talker / "KILL" / "why.txt").write_text("ops note")
    assert cli("kill", "--off")[0] == 2
    err = capsys.readouterr().err
    assert "by hand" in err and "internal error" not in err
    assert (talker / "KILL" / "why.txt").read_text() == "ops note"


def test_three_ctrl_c_end_run_cleanly(project: Path) -> None:
    """First Ctrl-C: "stopping after this tick"; the second aborts; no traceback at all."""
    gate = project / "gate"
    proc = spawn_heartbeat(project, "run", "--every", "30m", HB_GATE=str(gate))
    try:
        started = project / "gate.started"
        deadline = time.monotonic() + 30
        while not started.exists():  # the step is running (and never finishes by itself)
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        assert proc.stderr is not None
        assert "stopping after this tick (Ctrl-C again to abort)" in proc.stderr.readline()
        proc.send_signal(signal.SIGINT)
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        gate.touch()
        proc.kill()
    # The second Ctrl-C abandons the step and aborts the run: 130, as a process ended by SIGINT.
    assert proc.returncode == 130 and "Traceback" not in err and "abort" in err


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_second_signal_aborts_run_with_128_plus_its_number(project: Path, sig: int, code: int) -> None:
    """One signal stops `run` after its tick (exit 0); a second aborts it: 128 + the signal."""
    gate = project / "gate"
    proc = spawn_heartbeat(project, "run", "--every", "30m", HB_GATE=str(gate))
    try:
        started = project / "gate.started"
        deadline = time.monotonic() + 30
        while not started.exists():  # the step is running (and never finishes by itself)
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.01)
        proc.send_signal(sig)
        assert proc.stderr is not None
        assert "stopping after this tick" in proc.stderr.readline()  # the first one was handled
        assert proc.poll() is None  # and the run waits for its step
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        gate.touch()
        proc.kill()
    assert proc.returncode == code, err
    assert f"run ended: aborted by a second {signal.Signals(sig).name}" in err and "Traceback" not in err
    assert not (project / "state" / "state.json").exists()  # the abandoned tick saved nothing


def test_one_signal_lets_the_tick_finish_and_run_exit_0(project: Path) -> None:
    """Ctrl-C once: the running tick finishes and is saved; `run` exits 0."""
    gate = project / "gate"
    proc = spawn_heartbeat(project, "run", "--every", "30m", HB_GATE=str(gate))
    try:
        started = project / "gate.started"
        deadline = time.monotonic() + 30
        while not started.exists():
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        assert proc.stderr is not None
        assert "stopping after this tick" in proc.stderr.readline()
        gate.touch()
        _, err = proc.communicate(timeout=30)
    finally:
        gate.touch()
        proc.kill()
    assert proc.returncode == 0, err
    assert json.loads((project / "state" / "state.json").read_text())["ticks"] == 1


def test_journal_times_are_in_order_and_one_format(talker: Path) -> None:
    """Every event is stamped when it happened, in ISO 8601 with +00:00 only."""
    for _ in range(3):
        cli("tick")
    _, out = cli("log", "--json", "-n", "0")
    stamps = [json.loads(line)["at"] for line in out.splitlines()]
    assert stamps and all(s.endswith("+00:00") for s in stamps)
    assert stamps == sorted(stamps, key=lambda s: s.replace("+00:00", ""))


def test_failed_exec_step_is_not_an_action_to_avoid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A program that keeps failing is exit 1 each time, never the action `step()` to "not repeat"."""
    monkeypatch.chdir(tmp_path)
    failing = f"{sys.executable} -c 'raise SystemExit(7)'"
    codes = [cli("tick", "--exec", failing)[0] for _ in range(4)]
    state = StateStore(tmp_path / "state").load()
    assert codes == [1, 1, 1, 1]
    assert not any(a.tool == "step" for a in state.history)
    assert "step()" not in (state.instructions or "")


def test_resume_restarts_the_progress_window(project: Path) -> None:
    """After resume, the human's note is not followed at once by "reassess your goal"."""
    # Only no_progress left on: the agent's progress is flat, so it alone escalates.
    toml = project / "heartbeat.toml"
    toml.write_text(
        toml.read_text()
        + "[detectors.repeat]\nenabled = false\n[detectors.empty]\nenabled = false\n"
        + "[detectors.recurring]\nenabled = false\n"
    )
    codes = [cli("tick")[0] for _ in range(7)]
    assert 4 in codes  # flat progress escalated
    assert cli("resume", "--note", "measure something else")[0] == 0
    code, out = cli("tick", "--json")
    result = json.loads(out)
    assert code == 0 and result["anomalies"] == [] and result["decision"]["action"] == "continue"


def test_init_starter_agent_runs_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The starter agent of `init` ticks without tripping a detector on its own."""
    cli("init", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    codes = [cli("tick")[0] for _ in range(8)]
    state = StateStore(tmp_path / "state").load()
    assert codes == [0] * 8 and state.anomalies == [] and state.stuck_streak == 0


def test_tick_line_counts_failed_actions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tick line says how many actions failed and the first error."""
    (tmp_path / "flaky.py").write_text(
        "def step(ctx):\n"
        "    ctx.record('fetch', {'u': 1}, output='a long enough page')\n"
        "    ctx.record('fetch', {'u': 2}, error='ConnectError: connection refused')\n"
        "    ctx.record('fetch', {'u': 3}, output='another long page')\n"
    )
    monkeypatch.chdir(tmp_path)
    code, out = cli("tick", "--step", "flaky:step")
    assert code == 0 and "3 action(s), 1 failed: ConnectError: connection refused" in out


def test_undelivered_escalation_goes_to_stderr(project: Path) -> None:
    """Exit 4 with nobody told: a warning on stderr (cron mails it); the healthy ticks say nothing."""
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/hook"
    with open(project / "heartbeat.toml", "a") as toml:
        toml.write(f'[[notify]]\ntype = "webhook"\nurl = "{dead}"\nretries = 0\n')
    results = []
    for _ in range(3):
        proc = spawn_heartbeat(project, "tick", "--quiet")
        out, err = proc.communicate(timeout=60)
        results.append((proc.returncode, out, err))
    assert [code for code, _, _ in results] == [0, 0, 4]
    assert results[0][1:] == ("", "") and results[1][1:] == ("", "")
    assert results[2][1] == "" and "notification not delivered (kept in outbox/)" in results[2][2]


def test_a_notification_delivered_after_its_tick_is_journaled(project: Path, webhook_server: Any) -> None:
    """An escalation the tick could not deliver, sent later by `outbox retry` (or `run`'s outbox
    watch), is a `delivery` event in the journal as a tick's own is (live round 43: `log` never
    showed that the human was told)."""
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/hook"
    config = (project / "heartbeat.toml").read_text()
    hook = '[[notify]]\ntype = "webhook"\nname = "pager"\nurl = "{}"\nretries = 0\n'
    (project / "heartbeat.toml").write_text(config + hook.format(dead))
    codes = [spawn_heartbeat(project, "tick", "--quiet").wait(timeout=60) for _ in range(3)]
    assert codes == [0, 0, 4]
    (project / "heartbeat.toml").write_text(config + hook.format(webhook_server.url("/hook")))
    retried = spawn_heartbeat(project, "outbox", "retry")
    out, err = retried.communicate(timeout=60)
    assert retried.returncode == 0 and "1 delivered" in out, out + err
    journal = [json.loads(line) for line in (project / "state" / "journal.jsonl").read_text().splitlines()]
    late = [e for e in journal if e["event"] == "delivery" and e.get("between_ticks")]
    assert len(late) == 1 and late[0]["waiting"] == 0 and late[0]["undelivered"] == []
    assert len(late[0]["delivered"]) == 1 and late[0]["delivered"][0].endswith(" to pager")


def test_log_filters_and_agent_column(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--event picks kinds, --since cuts old ones, several agents get a name column."""
    (tmp_path / "talker.py").write_text(PRINTING)
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstep = "talker:step"\n'
        '[[agents]]\nname = "alpha"\nstate_dir = "a"\n'
        '[[agents]]\nname = "beta"\nstate_dir = "b"\n'
    )
    monkeypatch.chdir(tmp_path)
    assert cli("tick")[0] == 0
    code, out = cli("log", "--event", "tick")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2 and "alpha" in lines[0] + lines[1] and "beta" in lines[0] + lines[1]
    assert all(" tick " in line for line in lines)
    _, later = cli("log", "--since", "2099-01-01")
    assert later == "no events match\n"  # said, not a blank screen


def test_resume_says_when_the_budget_is_still_spent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression (live round 41): a daily budget spent, `resume` said "resumed" and status "active",
    and the next tick paused again. Resume still resumes (the limit may be raised before the next
    tick) but says the budget is spent, when its day ends, and what a tick before then does."""
    (tmp_path / "spender.py").write_text(
        "def step(ctx):\n    ctx.record_usage('gpt-4o-mini', 5000, 1000)\n"
        "    ctx.record('fetch', {'n': ctx.tick}, output='page')\n"
    )
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstep = "spender:step"\n[budget]\ntokens_per_day = 10000\n'
    )
    monkeypatch.chdir(tmp_path)
    assert [cli("tick")[0] for _ in range(2)] == [0, 0]
    assert StateStore(tmp_path / "state").load().status.value == "paused"
    code, out = cli("resume")
    assert code == 0 and out.startswith("agent: resumed\n"), out
    assert "but the budget is still spent (12000 of 10000 tokens today used): today's budget resets at" in out
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstep = "spender:step"\n[budget]\ntokens_per_day = 50000\n'
    )
    assert cli("resume")[1] == "agent: was not paused or waiting for a human\n"  # raised: nothing to say


def test_log_refuses_an_event_kind_no_journal_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression (live round 41): `log --event anomalies`, a typo for `anomaly`, printed nothing and
    exited 0, as if no anomaly had happened. Now it is exit 2, naming the kind it may have meant."""
    (tmp_path / "talker.py").write_text(PRINTING)
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "talker:step"\n')
    monkeypatch.chdir(tmp_path)
    assert cli("tick")[0] == 0
    proc = subprocess.run(
        [sys.executable, "-m", "heartbeat", "log", "--event", "tick", "--event", "ticks"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert "--event 'ticks' is no kind of event; did you mean 'tick'?" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_log_follow_prints_new_events(talker: Path) -> None:
    """`log --follow --json` prints events appended after it started; Ctrl-C ends it with 0."""
    cli("tick")
    proc = spawn_heartbeat(talker, "log", "--follow", "--json", "-n", "1", "--event", "tick")
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
        assert first["tick"] == 1
        assert cli("tick")[0] == 0
        second = json.loads(proc.stdout.readline())
        assert second["event"] == "tick" and second["tick"] == 2
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0


class Reader(io.StringIO):
    """``log --follow``'s stdout with a reader who acts on what it reads, as the test above does: once
    the backlog's line shows it runs a tick; once the next line shows it presses Ctrl-C."""

    def __init__(self) -> None:
        super().__init__()
        self.ticked = False

    def flush(self) -> None:
        lines = self.getvalue().splitlines()
        if len(lines) == 1 and not self.ticked:
            self.ticked = True
            assert cli("tick")[0] == 0
        elif len(lines) >= 2:
            raise KeyboardInterrupt


def test_log_follow_shows_an_event_written_as_soon_as_the_backlog_was_read(talker: Path) -> None:
    """Regression: --follow took its starting point after printing the backlog, so a tick the reader
    ran on seeing it could land before that point and never show (the test above then hung)."""
    cli("tick")
    out = Reader()
    # Only a deadline for the failure: the new line never comes, and nothing else ends --follow.
    deadline = threading.Timer(20, _thread.interrupt_main)
    deadline.start()
    try:
        code = main(["log", "--follow", "--json", "-n", "1", "--event", "tick"], out)
    finally:
        deadline.cancel()
    assert code == 0 and out.ticked
    assert [json.loads(line)["tick"] for line in out.getvalue().splitlines()] == [1, 2]


def test_log_follow_ends_on_sigint_even_when_started_with_sigint_ignored(talker: Path) -> None:
    """Regression: a shell without job control (a CI script's `&`) starts a command with SIGINT ignored,
    and Python keeps it so: `log --follow` outlived the SIGINT that asked it to end."""
    cli("tick")
    argv = [sys.executable, "-m", "heartbeat", "log", "--follow", "--json", "-n", "1", "--event", "tick"]
    proc = subprocess.Popen(
        ["sh", "-c", 'trap "" INT; exec "$0" "$@"', *argv],
        cwd=talker,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert json.loads(proc.stdout.readline())["tick"] == 1  # the backlog: --follow is under way
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0


def test_notify_test_reports_each_notifier(
    talker: Path, webhook_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """`notify --test` sends through each notifier; a failing one is named and exits 1."""
    assert cli("notify", "--test")[0] == 2  # nothing configured
    capsys.readouterr()
    with open(talker / "heartbeat.toml", "a") as toml:
        toml.write(f'[[notify]]\ntype = "webhook"\nurl = "{webhook_server.url("/hook")}"\nretries = 0\n')
        toml.write('[[notify]]\ntype = "file"\npath = "sent.jsonl"\n')
    code, out = cli("notify", "--test")
    body = webhook_server.requests[0].json()
    assert code == 0 and "webhook: delivered" in out and "file: delivered" in out
    assert body["kind"] == "test" and body["host"] == socket.gethostname()
    webhook_server.status = 500
    code, out = cli("notify", "--test")
    assert code == 1 and "webhook: FAILED" in out and "file: delivered" in out


def test_run_says_when_it_ticks_next(talker: Path) -> None:
    """`run` prints the next heartbeat time after each tick."""
    proc = spawn_heartbeat(talker, "run", "--every", "30m")
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(3)][1:]  # after the step's own print
        (talker / "KILL").write_text("seen enough")
        proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert "tick 1" in lines[0] and lines[1].startswith("  next heartbeat at ")


def test_run_no_initial_tick_waits_for_the_schedule(talker: Path) -> None:
    """--no-initial-tick: nothing ticks at start; KILL then ends the run before any tick."""
    proc = spawn_heartbeat(talker, "run", "--every", "30m", "--no-initial-tick")
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("first heartbeat at ")
        (talker / "KILL").write_text("done")
        proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 3 and not (talker / "state" / "state.json").exists()


def test_fleet_status_is_one_line_per_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A config with several agents: a header and one line each, the worst exit code."""
    (tmp_path / "talker.py").write_text(PRINTING)
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstep = "talker:step"\nprogress = "talker:progress"\n[schedule]\nevery = "30m"\n'
        '[[agents]]\nname = "alpha"\nstate_dir = "a"\n'
        '[[agents]]\nname = "beta"\nstate_dir = "b"\n'
    )
    monkeypatch.chdir(tmp_path)
    cli("tick")
    cli("kill", "--agent", "beta", "--kill-file", "KILL.beta")
    code, out = cli("status")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 3 and lines[0].split()[:2] == ["AGENT", "STATUS"]
    assert lines[1].startswith("alpha") and "ok active" in lines[1] and "1/" not in lines[1]
    code, out = cli("status", "--json")
    assert code == 0 and [json.loads(line)["agent"] for line in out.splitlines()] == ["alpha", "beta"]


def test_status_overdue_is_exit_6(talker: Path) -> None:
    """No heartbeat for two periods: status says OVERDUE and exits 6; --max-age widens it."""
    cli("tick")
    store = StateStore(talker / "state")
    old = datetime.now(UTC) - timedelta(hours=2)
    with store.lock():
        state = store.load()
        state.last_tick_at = old
        store.save(state)
    # The journal's events, each stamped two hours ago: the last one a heartbeat wrote is when it was seen.
    events = [json.loads(line) for line in store.journal_path.read_text().splitlines()]
    store.journal_path.write_text("".join(json.dumps({**e, "at": old.isoformat()}) + "\n" for e in events))
    code, out = cli("status")
    assert code == 6 and "OVERDUE" in out
    code, out = cli("status", "--json")
    assert code == 6 and json.loads(out)["overdue"] is True
    assert cli("status", "--max-age", "3h")[0] == 0
    assert cli("pause")[0] == 0
    assert cli("status")[0] == 0  # paused on purpose: quiet is expected


def _pty_run(argv: list[str], cwd: Path, **env: str) -> str:
    """Run ``heartbeat ARGV`` on a real pseudo-terminal and return what it showed."""
    import pty

    main_fd, child_fd = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "heartbeat", *argv],
        cwd=cwd,
        stdin=child_fd,
        stdout=child_fd,
        stderr=child_fd,
        env={**{k: v for k, v in os.environ.items() if k != "NO_COLOR"}, "TERM": "xterm", **env},
    )
    os.close(child_fd)
    chunks = []
    while True:
        try:
            data = os.read(main_fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(main_fd)
    return b"".join(chunks).decode("utf-8", "replace")


def test_status_on_a_terminal_has_colour_and_symbols(talker: Path) -> None:
    """A TTY gets colour and Unicode; NO_COLOR drops the colour; a pipe gets plain ASCII."""
    for _ in range(3):
        cli("tick")
    fancy = _pty_run(["status"], talker, PYTHONIOENCODING="utf-8")
    assert "\033[" in fancy and "✓" in fancy and "▁" in fancy
    plain = _pty_run(["status"], talker, PYTHONIOENCODING="utf-8", NO_COLOR="1")
    assert "\033[" not in plain and "✓" in plain
    piped = spawn_heartbeat(talker, "status")
    out, _ = piped.communicate(timeout=60)
    assert "\033[" not in out and out.isascii() and "ok active" in out


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_status_on_an_ascii_terminal_does_not_crash(talker: Path, encoding: str) -> None:
    """An ASCII or Latin-1 terminal: ASCII symbols and sparkline, exit 0, no traceback."""
    for _ in range(3):
        cli("tick")
    shown = _pty_run(["status"], talker, PYTHONIOENCODING=encoding)
    assert "progress" in shown and "Traceback" not in shown and "internal error" not in shown
    assert "ok active" in shown


def test_help_has_an_example_and_the_common_flags_apart() -> None:
    """Each command's --help shows an example; the common flags (issue 27) stand in a group of their own."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, command in sub.choices.items():
        assert "examples:\n  heartbeat " + name in command.format_help(), name
    for name in ("status", "kill", "pause", "resume", "log", "metrics"):
        own, common = sub.choices[name].format_help().split("\noptions:", 1)[1].split("common flags", 1)
        assert "--kill-file" in common and "--step" in common, name
        assert "--kill-file" not in own and "--step" not in own, name


def test_notifications_name_the_host(project: Path) -> None:
    """An escalation's payload carries the host name: a fleet's messages say which machine."""
    with open(project / "heartbeat.toml", "a") as toml:
        toml.write('[[notify]]\ntype = "file"\npath = "sent.jsonl"\n')
    assert [cli("tick")[0] for _ in range(3)] == [0, 0, 4]
    sent = [json.loads(line) for line in (project / "sent.jsonl").read_text().splitlines()]
    assert sent and sent[0]["kind"] == "escalation" and sent[0]["host"] == socket.gethostname()


def test_tick_json_times_are_one_format(project: Path) -> None:
    """`tick --json` anomaly times use +00:00 like every other time heartbeat prints."""
    code, out = cli("tick", "--json")
    anomalies = json.loads(out)["anomalies"]
    assert code == 0 and anomalies and all(a["at"].endswith("+00:00") for a in anomalies)


def test_fleet_with_an_agent_that_never_ran(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new agent without a state folder has no heartbeat yet (its first tick makes the folder),
    not an error; log shows the others."""
    (tmp_path / "talker.py").write_text(PRINTING)
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstep = "talker:step"\n[[agents]]\nname = "old"\nstate_dir = "a"\n'
        '[[agents]]\nname = "new"\nstate_dir = "b"\n'
    )
    monkeypatch.chdir(tmp_path)
    assert cli("tick", "--agent", "old")[0] == 0
    code, out = cli("status")
    assert code == 0 and re.match(r"new +\S+ active +never +0 ", out.splitlines()[2]), out
    code, out = cli("status", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [(r["agent"], r["ticks"], r["last_seen_at"]) for r in rows][1] == ("new", 0, None)
    assert not (tmp_path / "b").exists()  # status made no folder
    code, out = cli("log", "--event", "tick")
    assert code == 0 and "old" in out


def test_steps_run_with_garbage_collection_on(tmp_path: Path) -> None:
    """The heartbeat process loads with no GC passes, but its step runs with collection enabled."""
    (tmp_path / "gc_agent.py").write_text(
        "import gc, pathlib\n"
        "def step(ctx):\n"
        "    pathlib.Path('gc.txt').write_text(f'{gc.isenabled()} {gc.get_freeze_count() > 0}')\n"
    )
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "gc_agent:step"\n')
    done = subprocess.run(
        [sys.executable, "-m", "heartbeat", "tick"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "gc.txt").read_text() == "True True"  # enabled, the loaded heap frozen


def test_a_library_call_leaves_garbage_collection_alone(talker: Path) -> None:
    """main(argv) in someone else's process: GC neither disabled nor frozen."""
    frozen = gc.get_freeze_count()
    assert cli("tick")[0] == 0
    assert gc.isenabled() and gc.get_freeze_count() == frozen
