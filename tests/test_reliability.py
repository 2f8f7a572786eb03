"""Reliability: crashes, concurrency, bad input, disk trouble, notifiers and secrets, on real processes.

Short versions run by default; the ``slow`` ones (``pytest -m slow``) and
bench/stress_*.py are the long versions of the same harnesses
(tests/reliability_agents.py).
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import random
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import reliability_agents as ra
from conftest import heartbeat_over
from hypothesis import HealthCheck, given, settings

from heartbeat.cli.main import main
from heartbeat.config.file import HeartbeatConfig
from heartbeat.core.models import Status
from heartbeat.state.store import StateStore
from heartbeat.tick.context import StepContext
from heartbeat.tick.runner import Heartbeat

STRATEGIES = ra.strategies()
FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,  # a failure prints how to replay it
)
SECRET, TOKEN = "SECRET123", "abc-token"
HOOK_PATH = f"/hooks/T000/{SECRET}?token={TOKEN}"


def cli(*argv: str) -> tuple[int, str, str]:
    """Run the CLI in this process; (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(list(argv), out)
    return code, out.getvalue(), err.getvalue()


def noop_tick(folder: Path) -> tuple[int, str, str]:
    """`heartbeat tick` of the do-nothing step over ``folder/state``, KILL at ``folder/KILL``."""
    return cli(
        "tick",
        "--step",
        "reliability_agents:noop_step",
        "--state-dir",
        str(folder / "state"),
        "--kill-file",
        str(folder / "KILL"),
    )


def run_cli(cwd: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run a real `python -m heartbeat` process (the test agents importable)."""
    return subprocess.run(
        ra.heartbeat_cmd(*argv), cwd=cwd, env=ra.child_env(**env), text=True, capture_output=True, timeout=60
    )


def make(tmp_path: Path, step: Callable[[StepContext], Any], **config: Any) -> Heartbeat:
    """A heartbeat over tmp_path/state with a file notifier (the one conftest helper)."""
    return heartbeat_over(tmp_path, step, progress=lambda ctx: None, **config)


def stuck(ctx: StepContext) -> None:
    """Three identical calls: a `repeat` anomaly every heartbeat."""
    for _ in range(3):
        if ctx.record("search", {"q": "same"}, output="the same page"):
            return


def healthy(ctx: StepContext) -> None:
    """A new action every heartbeat."""
    ctx.record("read", {"page": ctx.tick}, output=f"page {ctx.tick} says something new")


def one_line(text: str) -> bool:
    """Exactly one non-empty line, no traceback."""
    return text.count("\n") == 1 and text.strip() != "" and "Traceback" not in text


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` and its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ================================================================ crashes (SIGKILL)


def test_sigkill_at_random_moments_loses_nothing(
    tmp_path: Path, webhook_server: Any, rng: random.Random
) -> None:
    """40 tick-loop children and 6 CLI processes SIGKILLed mid-tick: state, journal, escalations survive."""
    # The seed comes from the printed one (the rng fixture): HEARTBEAT_TEST_SEED replays the campaign.
    report = ra.crash_campaign(
        tmp_path / "agent", webhook_server, kills=40, cli_kills=6, seed=rng.randrange(2**32)
    )
    assert report.problems == [], report.summary()
    assert report.kills == 40 and report.cli_kills == 6
    assert report.escalations, "the agent never escalated: the test proved nothing about escalations"
    assert report.ticks_final >= report.kills // 2


@pytest.mark.slow
def test_sigkill_long_run(tmp_path: Path, webhook_server: Any, rng: random.Random) -> None:
    """300 child kills and 30 CLI kills (the long version of the test above)."""
    report = ra.crash_campaign(
        tmp_path / "agent", webhook_server, kills=300, cli_kills=30, seed=rng.randrange(2**32)
    )
    assert report.problems == [], report.summary()
    assert report.kills == 300 and report.cli_kills == 30


def test_clean_tick_removes_temp_files_of_killed_writers(tmp_path: Path) -> None:
    """Temp files as a writer killed between mkstemp and os.replace leaves them are gone after a tick."""
    hb = make(tmp_path, healthy)
    hb.tick()
    state_dir = tmp_path / "state"
    left = [state_dir / ".state.json.k1ll3d01.tmp", state_dir / ".ESCALATION.md.k1ll3d02.tmp"]
    for path in left:
        path.write_bytes(b"half a file")
    assert hb.tick().exit_code == 0
    assert [p.name for p in left if p.exists()] == []


def test_killed_exec_step_leaves_no_scratch_folder_behind(tmp_path: Path) -> None:
    """SIGKILL `heartbeat tick --exec` while its program runs: the next tick leaves no `.exec-*` folder."""
    marker, hold = tmp_path / "running", tmp_path / "hold"
    hold.touch()
    program = tmp_path / "agent.py"
    program.write_text(
        textwrap.dedent(f"""
        import os, pathlib, time
        if pathlib.Path({str(hold)!r}).exists():  # hold the step until the test has killed the heartbeat
            pathlib.Path({str(marker)!r}).write_text(str(os.getpid()))
            time.sleep(60)
    """)
    )
    exec_cmd = f"{sys.executable} {program}"
    proc = subprocess.Popen(
        ra.heartbeat_cmd("tick", "--exec", exec_cmd),
        cwd=tmp_path,
        env=ra.child_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not marker.exists() or not marker.read_text():  # the program runs: we are inside the step
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        proc.kill()
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(marker.read_text() or 0), signal.SIGKILL)  # the orphaned program
        hold.unlink()
    assert list((tmp_path / "state").glob(".exec-*")), "the kill left no scratch folder to clean up"
    (tmp_path / "heartbeat.toml").write_text("")
    code, _, err = cli("tick", "--exec", exec_cmd, "--config", str(tmp_path / "heartbeat.toml"))
    assert code == 0, err
    assert list((tmp_path / "state").glob(".exec-*")) == []


def test_an_escalation_whose_save_failed_is_not_announced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An escalating tick whose save fails (ENOSPC), then a healthy re-run: nobody is told to step in."""
    calls = {"n": 0}

    def step(ctx: StepContext) -> None:
        calls["n"] += 1
        (stuck if calls["n"] == 1 else healthy)(ctx)

    hb = make(tmp_path, step, policy={"escalate_after": 1})
    with enospc(monkeypatch, lambda path: path.name.startswith(".state.json.")):
        failed = hb.tick()
    assert failed.exit_code == 2
    rerun = hb.tick()
    assert rerun.exit_code == 0 and StateStore(tmp_path / "state").load().status is Status.ACTIVE
    assert not (tmp_path / "notes.jsonl").exists(), "a human was told about an escalation never saved"
    assert not (tmp_path / "state" / "ESCALATION.md").exists()


def test_a_notification_after_a_torn_line_is_a_line_of_its_own(tmp_path: Path) -> None:
    """notes.jsonl ending in half a line (a kill mid-append): the next notification still parses alone."""
    hb = make(tmp_path, stuck, policy={"escalate_after": 1})
    torn = b'{"anomalies": [{"kind": "repeat", "tick": 1, "message": "search({\\"q\\": \\"the same'
    (tmp_path / "notes.jsonl").write_bytes(torn)  # exactly what a short write() before SIGKILL leaves
    assert hb.tick().exit_code == 4
    key = StateStore(tmp_path / "state").load().escalation.key  # type: ignore[union-attr]
    assert ra.notes_keys(tmp_path / "notes.jsonl", strict=True) == [key]


# ================================================================ concurrency


def test_four_processes_ticking_at_once_lose_no_update(tmp_path: Path) -> None:
    """4 processes x 15 `heartbeat tick` on one folder: each completes or exits 5; ticks == completed."""
    report = ra.race_campaign(tmp_path / "agent", processes=4, calls_each=15)
    assert report.problems == [], report.summary()
    assert report.calls == 60 and set(report.codes) <= {0, 1, 4, 5}
    assert report.completed == report.ticks_final == report.data_n >= 1
    waiting = report.codes[4] - report.escalations  # exit 4 without calling the step (needs_human)
    assert report.completed + report.locked + waiting == 60


@pytest.mark.slow
def test_four_processes_long_race(tmp_path: Path) -> None:
    """4 processes x 125 calls (the long version)."""
    report = ra.race_campaign(tmp_path / "agent", processes=4, calls_each=125)
    assert report.problems == [], report.summary()
    assert report.calls == 500 and report.completed == report.ticks_final


# ================================================================ bad input: fuzzed


@FUZZ
@given(raw=STRATEGIES["state"])
def test_fuzzed_state_files_load_or_fail_cleanly(raw: bytes) -> None:
    """Any state.json: loads (a tick then saves a loadable state), or a one-line error, file untouched."""
    ra.check_state_file(raw)


@FUZZ
@given(raw=STRATEGIES["config"])
def test_fuzzed_config_files_load_or_fail_cleanly(raw: bytes) -> None:
    """Any heartbeat.toml: loads and ticks, or a one-line ConfigError, file untouched."""
    ra.check_config_file(raw)


@FUZZ
@given(raw=STRATEGIES["trace"])
def test_fuzzed_trace_files_replay_or_fail_cleanly(raw: bytes) -> None:
    """Any trace: replays (library and CLI agree), or exit 2 with one stderr line naming the line."""
    ra.check_trace_file(raw)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck), print_blob=True)
@given(raw=STRATEGIES["state"] | STRATEGIES["config"] | STRATEGIES["trace"])
def test_fuzz_long(raw: bytes) -> None:
    """Long version: the same bytes tried as a state file, a config file and a trace."""
    ra.check_state_file(raw)
    ra.check_config_file(raw)
    ra.check_trace_file(raw, cli=False)


# ================================================================ bad input: named cases via the CLI

DEEP = "[" * 10_000 + "]" * 10_000
BAD_STATES = {
    "not JSON": b"this is not json",
    "empty": b"",
    "torn": b'{"schema_version": 1, "tic',
    "array": b"[1, 2]",
    "wrong type": b'{"schema_version": 1, "ticks": "three"}',
    "1e400": b'{"schema_version": 1, "ticks": 1e400}',
    "NaN": b'{"schema_version": 1, "stuck_streak": NaN}',
    "negative": b'{"schema_version": 1, "ticks": -1}',
    "newer schema": b'{"schema_version": 99}',
    "schema 10**100": b'{"schema_version": 1' + b"0" * 100 + b"}",
    "deep 10_000": b'{"schema_version": 1, "data": {"x": ' + DEEP.encode() + b"}}",
    "not UTF-8": b'{"schema_version": 1, "status_reason": "\xff\xfe"}',
    "extra key": b'{"schema_version": 1, "step": "os:system"}',
}


@pytest.mark.parametrize("case", sorted(BAD_STATES))
def test_bad_state_file_is_exit_2_one_line_and_kept(tmp_path: Path, case: str) -> None:
    """`status` exits 2 with one stderr line; `tick` exits 2, calls no step, never rewrites the file."""
    state_dir = tmp_path / "state"
    state_dir.mkdir()
    (state_dir / "state.json").write_bytes(BAD_STATES[case])
    flags = ("--state-dir", str(state_dir), "--kill-file", str(tmp_path / "KILL"))
    code, out, err = cli("status", *flags)
    assert code == 2 and one_line(err) and "state.json" in err and out == ""
    code, out, err = cli("tick", "--step", "reliability_agents:noop_step", "--json", *flags)
    assert code == 2 and json.loads(out)["tick"] is None and "Traceback" not in out + err
    assert (state_dir / "state.json").read_bytes() == BAD_STATES[case]
    journal = state_dir / "journal.jsonl"
    assert not journal.exists() or b"look" not in journal.read_bytes()  # noop_step's tool never ran


GOOD_NOTICE = {
    "key": "agent-escalation-2",
    "kind": "escalation",
    "agent": "agent",
    "reason": "stuck",
    "text": "help",
    "created_at": "2026-05-01T02:30:00+00:00",
    "payload": {},
}
BAD_NOTICES = {
    "unknown key": [{"x": 1}],
    "empty": [{}],
    "bad time": [{**GOOD_NOTICE, "created_at": "yesterday"}],
    "empty key": [{**GOOD_NOTICE, "key": ""}],
    "text not a string": [{**GOOD_NOTICE, "text": ["a"]}],
}


@pytest.mark.parametrize("case", sorted(BAD_NOTICES))
def test_a_bad_notice_in_state_is_a_clean_error(tmp_path: Path, case: str) -> None:
    """state.json with a malformed pending notice: exit 0, or 2 with one stderr line, the file untouched."""
    (tmp_path / "state").mkdir()
    raw = json.dumps({"schema_version": 1, "notices": BAD_NOTICES[case]}).encode()
    (tmp_path / "state" / "state.json").write_bytes(raw)
    code, _, err = noop_tick(tmp_path)
    assert code in (0, 2) and "internal error" not in err, err
    if code == 2:
        assert one_line(err) and (tmp_path / "state" / "state.json").read_bytes() == raw


def test_status_of_a_state_nested_300_deep_is_not_a_crash(tmp_path: Path) -> None:
    """300 levels of nesting in an anomaly's evidence: `status` answers or exits 2 with one line."""
    deep = "[" * 300 + "]" * 300
    anomaly = (
        '{"kind": "repeat", "message": "m", "tick": 2, "at": "2026-05-01T02:30:00+00:00", '
        '"evidence": {"n": ' + deep + "}}"
    )
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "state.json").write_text('{"schema_version": 1, "anomalies": [' + anomaly + "]}")
    flags = ("--state-dir", str(tmp_path / "state"), "--kill-file", str(tmp_path / "KILL"))
    for argv in (("status", *flags), ("status", "--json", *flags)):
        code, _, err = cli(*argv)
        assert code in (0, 2) and "internal error" not in err, (argv, err)
        assert code == 0 or one_line(err)


def test_state_file_that_is_a_directory_is_exit_2(tmp_path: Path) -> None:
    """state.json is a folder: exit 2, one line, the folder left alone."""
    (tmp_path / "state" / "state.json").mkdir(parents=True)
    (tmp_path / "state" / "state.json" / "keep").write_text("mine")
    code, _, err = cli("status", "--state-dir", str(tmp_path / "state"))
    assert code == 2 and one_line(err) and "folder" in err
    assert ra.check_state_file(None, directory=True) == "rejected"
    assert (tmp_path / "state" / "state.json" / "keep").read_text() == "mine"


def test_tick_reports_a_corrupt_state_on_stderr(tmp_path: Path) -> None:
    """`heartbeat tick` on a corrupt state: exit 2 and the error as one line on stderr."""
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "state.json").write_bytes(b"{")
    code, _, err = cli(
        "tick", "--step", "reliability_agents:noop_step", "--state-dir", str(tmp_path / "state")
    )
    assert code == 2 and one_line(err) and "state.json" in err


BAD_CONFIGS: dict[str, tuple[bytes, str]] = {
    "not TOML": (b"[agent\nname = ", "not valid TOML"),
    "not UTF-8": (b'[agent]\nname = "\xff"\n', "UTF-8"),
    "unknown key": (b'[agent]\nstepp = "x:y"\n', "agent.stepp"),
    "unknown section": (b'[agnet]\nname = "x"\n', "agnet"),
    "unknown detector": (b"[detectors.stalled]\nthreshold = 3\n", "detectors.stalled"),
    "bad custom detector": (b'[detectors]\ncustom = ["nowhere_at_all:detector"]\n', "nowhere_at_all"),
    "custom detector not a detector": (b'[detectors]\ncustom = ["json:__name__"]\n', "json:__name__"),
    "wrong type": (b'[policy]\nescalate_after = "three"\n', "policy.escalate_after"),
    "1e400": (b"[policy]\nescalate_after = 1e400\n", "policy.escalate_after"),
    "10**100": (b"[journal]\nkeep = 1" + b"0" * 100 + b"\n", "journal.keep"),
    "nan": (b"[detectors.no_progress]\nmin_delta = nan\n", "min_delta"),
    "bad duration": (b'[schedule]\nevery = "soon"\n', "schedule.every"),
    "unset env": (b'[[notify]]\ntype = "webhook"\nurl = "${HB_TEST_SURELY_UNSET}"\n', "HB_TEST_SURELY_UNSET"),
    "deep 600": (b"a = " + b"[" * 600 + b"]" * 600 + b"\n", "heartbeat.toml"),
    "deep 10_000": (b"a = " + DEEP.encode() + b"\n", "heartbeat.toml"),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_bad_config_is_exit_2_one_line_naming_it(tmp_path: Path, case: str) -> None:
    """A bad heartbeat.toml: exit 2, one stderr line naming the key or problem, the file unchanged."""
    raw, named = BAD_CONFIGS[case]
    config = tmp_path / "heartbeat.toml"
    config.write_bytes(raw)
    code, _, err = cli("validate", "--config", str(config), "--step", "reliability_agents:noop_step")
    assert code == 2 and one_line(err) and named in err, err
    assert config.read_bytes() == raw


BAD_TRACES: dict[str, tuple[bytes, int]] = {
    "not JSON": (b'{"progress": 1}\nnope\n', 2),
    "not UTF-8": (b'{"progress": 1}\n{"progress": 2}\n\xff\xfe\n', 3),
    "array": (b"[]\n", 1),
    "deep 10_000": (b'{"actions": [{"tool": "t", "args": {"a": ' + DEEP.encode() + b"}}]}\n", 1),
    "progress 1e400": (b'{"progress": 1e400}\n', 1),
    "progress NaN": (b'{"progress": 0.5}\n{"progress": NaN}\n', 2),
    "progress 400 digits": (b'{"progress": 1' + b"0" * 400 + b"}\n", 1),
    "cost -1": (b'{"actions": [{"tool": "t", "cost": -1}]}\n', 1),
    "actions not a list": (b'{"actions": {"tool": "t"}}\n', 1),
    "tool missing": (b'{"actions": [{"args": {}}]}\n', 1),
    "bad time": (b'{"at": "yesterday"}\n', 1),
    "last possible time": (b'{"at": "9999-12-31T23:59:59+00:00"}\n', 1),
}


@pytest.mark.parametrize("case", sorted(BAD_TRACES))
def test_bad_trace_is_exit_2_naming_the_line(tmp_path: Path, case: str) -> None:
    """A bad trace line: `replay` exits 2 with one stderr line that says `line N`."""
    raw, line = BAD_TRACES[case]
    trace = tmp_path / "trace.jsonl"
    trace.write_bytes(raw)
    (tmp_path / "empty.toml").write_text("")
    code, _, err = cli("replay", str(trace), "--json", "--config", str(tmp_path / "empty.toml"))
    assert code == 2 and one_line(err) and f"line {line}" in err, err
    assert trace.read_bytes() == raw


@pytest.mark.parametrize("kind", ["state", "trace", "config"])
def test_ten_thousand_levels_of_nesting_in_a_real_process(tmp_path: Path, kind: str) -> None:
    """`python -m heartbeat` on 10_000-deep JSON/TOML: exit 2, one stderr line, no traceback."""
    (tmp_path / "heartbeat.toml").write_text("")
    if kind == "state":
        (tmp_path / "state").mkdir()
        (tmp_path / "state" / "state.json").write_text('{"schema_version": 1, "data": ' + DEEP + "}")
        argv = ["tick", "--step", "reliability_agents:noop_step"]
    elif kind == "trace":
        (tmp_path / "t.jsonl").write_text('{"actions": [{"tool": "t", "args": {"a": ' + DEEP + "}}]}\n")
        argv = ["replay", "t.jsonl"]
    else:
        (tmp_path / "heartbeat.toml").write_text("a = " + DEEP + "\n")
        argv = ["validate"]
    done = run_cli(tmp_path, *argv)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr + done.stdout and "RecursionError" not in done.stderr
    assert (done.stderr + done.stdout).count("\n") == 1


@pytest.mark.parametrize(
    ("configured", "flag"),
    [
        ('step = "reliability_agents:noop_step"', "--exec=true"),
        ('exec = "true"', "--step=reliability_agents:noop_step"),
    ],
)
def test_a_step_flag_overrides_the_configured_kind_of_step(
    tmp_path: Path, configured: str, flag: str
) -> None:
    """`--exec` over a config with `step` (and `--step` over `exec`): the flag wins, or one clear line."""
    (tmp_path / "heartbeat.toml").write_text(f"[agent]\n{configured}\n")
    code, _, err = cli("validate", "--config", str(tmp_path / "heartbeat.toml"), flag)
    assert code == 0 or (code == 2 and one_line(err)), err


def test_deeply_nested_arguments_from_the_step_do_not_crash_the_tick(tmp_path: Path) -> None:
    """A step that records 10_000-deep arguments: the tick ends (step error) and the state stays loadable."""

    def step(ctx: StepContext) -> None:
        args: list[Any] = []
        for _ in range(10_000):
            args = [args]
        ctx.record("deep", {"a": args})

    result = make(tmp_path, step).tick()
    assert result.exit_code in (0, 1) and "\n" not in result.message
    assert StateStore(tmp_path / "state").load().ticks == 1


def test_huge_costs_never_make_an_unloadable_state(tmp_path: Path) -> None:
    """Two finite costs of 1e308: the tick's saved state loads again on the next tick."""

    def step(ctx: StepContext) -> None:
        ctx.record("buy", {"i": 1}, cost=1e308)
        ctx.record("buy", {"i": 2}, cost=1e308)

    hb = make(tmp_path, step)
    assert hb.tick().exit_code in (0, 1)  # refused or recorded, never a state that cannot be saved
    assert hb.tick().exit_code in (0, 1)  # exit 2 here would be the first tick's state not loading
    assert StateStore(tmp_path / "state").load().ticks == 2


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_progress_from_the_step_is_not_a_crash(tmp_path: Path, value: float) -> None:
    """ctx.report_progress(NaN or inf): the tick ends with a result and the state is saved."""

    def step(ctx: StepContext) -> None:
        ctx.record("x", {"v": 1}, output="something long enough")
        ctx.report_progress(value)

    hb = Heartbeat(
        HeartbeatConfig.model_validate(
            {  # no metric: the step's own report is the sample
                "agent": {"state_dir": str(tmp_path / "state"), "kill_file": str(tmp_path / "KILL")}
            }
        ),
        step=step,
    )
    result = hb.tick()
    assert result.exit_code in (0, 1)
    assert StateStore(tmp_path / "state").load().ticks == 1


# ================================================================ disk trouble


@contextlib.contextmanager
def enospc(monkeypatch: pytest.MonkeyPatch, match: Callable[[Path], bool]) -> Iterator[Counter[str]]:
    """os.write fails with ENOSPC half-way through any write to a file whose path ``match``es."""
    real_write = os.write
    hits: Counter[str] = Counter()

    def write(fd: int, data: Any) -> int:
        try:
            path = Path(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            return real_write(fd, data)
        if not match(path):
            return real_write(fd, data)
        hits[path.name] += 1
        half = bytes(data)[: len(data) // 2]
        if half:
            real_write(fd, half)  # the disk filled up in the middle of the write
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as patch:
        patch.setattr(os, "write", write)
        yield hits


def test_enospc_mid_save_keeps_the_previous_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A save failing half-way (ENOSPC): exit 2, one clear line, state.json byte-identical, no temp file."""
    hb = make(tmp_path, healthy)
    assert hb.tick().exit_code == 0
    before = (tmp_path / "state" / "state.json").read_bytes()
    with enospc(monkeypatch, lambda path: path.name.startswith(".state.json.")) as hits:
        result = hb.tick()
        code, out, err = noop_tick(tmp_path)
    assert hits, "the fault was never injected"
    assert result.exit_code == 2 and "No space left on device" in result.message
    assert "previous state kept" in result.message and "\n" not in result.message
    assert code == 2 and one_line(out + err) and "No space left" in out + err
    assert (tmp_path / "state" / "state.json").read_bytes() == before
    assert ra.temp_files(tmp_path / "state") == {}
    assert hb.tick().exit_code == 0 and StateStore(tmp_path / "state").load().ticks == 2


def test_full_disk_at_the_outbox_keeps_the_escalation_until_it_can_be_queued(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outbox writes fail (ENOSPC) on the escalating tick: exit 2, then the next tick delivers it once."""
    hb = make(tmp_path, stuck, policy={"escalate_after": 1})
    with enospc(monkeypatch, lambda path: path.parent.name == "outbox") as hits:
        failed = hb.tick()
    assert hits and failed.exit_code == 2 and "\n" not in failed.message
    state = StateStore(tmp_path / "state").load()
    assert state.status is Status.NEEDS_HUMAN and state.escalation is not None
    assert not (tmp_path / "notes.jsonl").exists()
    retried = hb.tick()
    assert retried.exit_code == 4 and hb.tick().exit_code == 4
    assert ra.notes_keys(tmp_path / "notes.jsonl") == [state.escalation.key]
    assert ra.outbox_entries(tmp_path / "state") == (set(), [])


def test_enospc_at_the_journal_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The journal append fails (ENOSPC) after the save: exit 2 with one line; the state loads."""
    hb = make(tmp_path, healthy)
    hb.tick()
    with enospc(monkeypatch, lambda path: path.name == "journal.jsonl"):
        result = hb.tick()
    assert result.exit_code == 2 and "journal" in result.message and "\n" not in result.message
    assert StateStore(tmp_path / "state").load().ticks == 2


def test_disk_full_on_an_escalating_tick_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every write in the state folder fails on the tick that escalates: exit 2, one line, old state kept."""
    hb = make(tmp_path, stuck, policy={"escalate_after": 2})
    hb.tick()
    before = (tmp_path / "state" / "state.json").read_bytes()
    with enospc(monkeypatch, lambda path: (tmp_path / "state") in path.parents) as hits:
        result = hb.tick()
    assert hits
    assert result.exit_code == 2 and "No space left" in result.message and "\n" not in result.message
    assert (tmp_path / "state" / "state.json").read_bytes() == before


# ================================================================ notifiers


def webhook_heartbeat(tmp_path: Path, url: str, **notify: Any) -> Heartbeat:
    """A stuck agent that escalates on its first tick to one webhook notifier."""
    hook = {
        "type": "webhook",
        "name": "webhook",
        "url": url,
        "timeout": "0.3s",
        "retries": 2,
        "backoff": "0.05s",
        **notify,
    }
    raw = {
        "agent": {"name": "t", "state_dir": str(tmp_path / "state"), "kill_file": str(tmp_path / "KILL")},
        "policy": {"escalate_after": 1},
        "notify": [hook],
        "base_dir": tmp_path,
    }
    return Heartbeat(HeartbeatConfig.model_validate(raw), step=stuck, progress=lambda ctx: None)


def closed_port() -> int:
    """A localhost port nobody listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def delivered(server: Any) -> Counter[str]:
    """Successful (2xx) deliveries the server answered, by Idempotency-Key."""
    return Counter(r.headers.get("Idempotency-Key") for r in server.requests if 200 <= r.status < 300)


@pytest.mark.parametrize("failure", ["500", "timeout", "refused", "redirect"])
def test_failed_webhook_waits_in_outbox_then_is_delivered_once(
    tmp_path: Path, webhook_server: Any, failure: str
) -> None:
    """Webhook down: the tick ends within timeout*(retries+1)+backoffs, the note waits, later one delivery."""
    url = webhook_server.url("/hook")
    if failure == "500":
        webhook_server.status = 500
    elif failure == "timeout":
        webhook_server.status, webhook_server.delay = 504, 5.0  # never answered in time
    elif failure == "redirect":
        webhook_server.status, webhook_server.headers = 302, {"Location": "http://127.0.0.1:9/elsewhere"}
    else:
        url = f"http://127.0.0.1:{closed_port()}/hook"
    hb = webhook_heartbeat(tmp_path, url)
    started = time.monotonic()
    first = hb.tick()
    elapsed = time.monotonic() - started
    bound = 0.3 * 3 + 0.05 + 0.1  # timeout * (retries + 1) + backoffs
    assert first.exit_code == 4 and first.undelivered and first.waiting == 1
    assert elapsed < bound + 1.5, f"tick took {elapsed:.2f}s, bound {bound:.2f}s"
    entries, _ = ra.outbox_entries(tmp_path / "state")
    key = StateStore(tmp_path / "state").load().escalation.key  # type: ignore[union-attr]
    assert entries == {(key, "webhook")}
    if failure == "redirect":
        assert len(webhook_server.requests) == 1  # neither retried nor followed
    webhook_server.status, webhook_server.delay, webhook_server.headers = 200, 0.0, {}
    healed = webhook_heartbeat(tmp_path, webhook_server.url("/hook"))  # the current config's "webhook"
    later = datetime.now(UTC) + timedelta(minutes=11)  # past the back-off of the failed send
    healed.clock = lambda: later
    second, third = healed.tick(), healed.tick()
    assert second.exit_code == 4 and second.delivered == [f"{key} to webhook"]
    assert third.delivered == [] and ra.outbox_entries(tmp_path / "state")[0] == set()
    assert delivered(webhook_server) == Counter({key: 1})
    assert set(ra.request_keys(webhook_server)) == {key}


def test_slow_webhook_is_delivered_within_the_tick(tmp_path: Path, webhook_server: Any) -> None:
    """A server that takes 0.5 s (timeout 2 s): delivered in the tick, once, nothing left in outbox/."""
    webhook_server.delay = 0.5
    hb = webhook_heartbeat(tmp_path, webhook_server.url("/hook"), timeout="2s")
    started = time.monotonic()
    result = hb.tick()
    assert 0.5 <= time.monotonic() - started < 2 * 3 + 1
    assert result.exit_code == 4 and len(result.delivered) == 1 and result.waiting == 0
    assert ra.outbox_entries(tmp_path / "state")[0] == set()
    assert hb.tick().delivered == [] and sum(delivered(webhook_server).values()) == 1


def test_a_tampered_outbox_entry_cannot_redirect_a_notification(tmp_path: Path, webhook_server: Any) -> None:
    """An outbox entry edited to carry a URL is set aside as corrupt; nothing is sent to that URL."""
    webhook_server.status = 500
    hb = webhook_heartbeat(tmp_path, webhook_server.url("/hook"), retries=0)
    assert hb.tick().waiting == 1
    (entry,) = (tmp_path / "state" / "outbox").glob("*.json")
    tampered = json.loads(entry.read_text())
    tampered["url"] = webhook_server.url("/evil")
    entry.write_text(json.dumps(tampered))
    webhook_server.status = 200
    result = hb.tick()
    assert result.exit_code == 4 and result.delivered == []
    assert [r.path for r in webhook_server.requests if r.path == "/evil"] == []
    assert list((tmp_path / "state" / "outbox").glob("*.corrupt*"))


def test_a_corrupt_outbox_entry_is_reported(tmp_path: Path, webhook_server: Any) -> None:
    """An unreadable outbox entry is set aside and the tick's output and journal say so."""
    webhook_server.status = 500
    hb = webhook_heartbeat(tmp_path, webhook_server.url("/hook"), retries=0)
    hb.tick()
    (entry,) = (tmp_path / "state" / "outbox").glob("*.json")
    entry.write_bytes(entry.read_bytes()[:40])  # a disk error or a bad hand edit
    result = hb.tick()
    _, out, _ = cli("log", "--json", "-n", "5", "--state-dir", str(tmp_path / "state"))
    assert entry.name in json.dumps(result.to_json()) and entry.name in out  # e.g. "<name>.corrupt"


# ================================================================ security

STUCK_AGENT = textwrap.dedent("""
    import os

    def step(ctx):
        if os.environ.get("HB_STEP_ERROR"):
            raise RuntimeError(os.environ["HB_STEP_ERROR"])
        for _ in range(3):
            if ctx.record("search", {"q": "same"}, output="the same page"):
                return
""")


def secret_project(tmp_path: Path, server: Any) -> tuple[Path, dict[str, str]]:
    """A stuck agent whose webhook URL (with a token) comes from the environment."""
    (tmp_path / "stuck_agent.py").write_text(STUCK_AGENT)
    (tmp_path / "heartbeat.toml").write_text(
        textwrap.dedent("""
        [agent]
        step = "stuck_agent:step"
        [policy]
        escalate_after = 1
        [[notify]]
        type = "webhook"
        url = "${HB_TEST_HOOK}"
        timeout = "1s"
        retries = 0
    """)
    )
    return tmp_path, {"HB_TEST_HOOK": server.url(HOOK_PATH)}


def leaks(tmp_path: Path, outputs: list[str]) -> list[str]:
    """Every file under tmp_path (config and agent aside) and every output that holds the secret or token."""
    found = []
    for path in sorted(tmp_path.rglob("*")):
        if path.is_file() and path.name not in ("heartbeat.toml", "stuck_agent.py"):
            data = path.read_bytes()
            found += [f"{path.relative_to(tmp_path)}: {s}" for s in (SECRET, TOKEN) if s.encode() in data]
    found += [f"output {i}: {s}" for i, text in enumerate(outputs) for s in (SECRET, TOKEN) if s in text]
    return found


def test_webhook_secret_never_reaches_a_file_or_the_output(tmp_path: Path, webhook_server: Any) -> None:
    """URL token from the environment: tick (500, then ok), status, log, validate, bad --webhook: no leak."""
    project, env = secret_project(tmp_path, webhook_server)
    webhook_server.status = 500
    outputs = []
    for argv in (["tick"], ["status"], ["status", "--json"], ["log", "-n", "0"], ["tick", "--json"]):
        done = run_cli(project, *argv, **env)
        outputs += [done.stdout, done.stderr]
        if argv == ["tick"]:
            assert done.returncode == 4 and "not delivered" in done.stderr
    assert list((project / "state" / "outbox").glob("*.json"))
    webhook_server.status = 200
    for argv in (
        ["outbox"],
        ["outbox", "retry"],  # the tick would wait for the back-off; `outbox retry` sends now
        ["tick"],
        ["validate"],
        ["log", "--json"],
        ["tick", "--webhook", "ftp://h/" + HOOK_PATH],
    ):
        done = run_cli(project, *argv, **env)
        outputs += [done.stdout, done.stderr]
    assert done.returncode == 2 and one_line(done.stderr)  # the bad --webhook: redacted one-line error
    assert delivered(webhook_server) and all(SECRET in r.path for r in webhook_server.requests)
    assert leaks(project, outputs) == []


def test_a_secret_in_a_step_error_is_redacted_everywhere(tmp_path: Path, webhook_server: Any) -> None:
    """The agent's own error quotes the webhook token: no file and no output holds it."""
    project, env = secret_project(tmp_path, webhook_server)
    webhook_server.status = 500
    env["HB_STEP_ERROR"] = f"POST to the hook failed: token {TOKEN} rejected for {SECRET}"
    outputs = []
    for argv in (["tick"], ["status", "--json"], ["log", "--json"]):
        done = run_cli(project, *argv, **env)
        outputs += [done.stdout, done.stderr]
    assert leaks(project, outputs) == []


def test_state_files_are_0600_and_folders_0700_even_with_umask_0(tmp_path: Path, webhook_server: Any) -> None:
    """Under umask 000: every file in the state folder 0600 (corrupt copies too), its folders 0700."""
    project, env = secret_project(tmp_path, webhook_server)
    (project / "heartbeat.toml").write_text(
        (project / "heartbeat.toml")
        .read_text()
        .replace("[agent]\n", '[agent]\nstate_dir = "deep/er/state"\n')
    )
    webhook_server.status = 500

    def tick() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ra.heartbeat_cmd("tick"),
            cwd=project,
            env=ra.child_env(**env),
            text=True,
            capture_output=True,
            timeout=60,
            umask=0,
        )

    done = tick()
    assert done.returncode == 4, done.stderr
    state_dir = project / "deep" / "er" / "state"
    (state_dir / "state.json").write_bytes(b"{broken")
    done = tick()
    assert done.returncode == 2
    names = {
        p.relative_to(state_dir).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in state_dir.rglob("*")
    }
    assert {"state.json", "journal.jsonl", "ESCALATION.md", ".lock", "outbox"} <= set(names)
    assert any(n.startswith("state.json.corrupt-") for n in names)
    assert any(n.startswith("outbox/") for n in names)
    wrong = {
        n: oct(m)
        for n, m in names.items()
        if m != (0o700 if (state_dir / n).is_dir() else 0o600) and n != "state.json"
    }
    assert wrong == {}
    assert stat.S_IMODE(state_dir.stat().st_mode) == 0o700


def test_a_tampered_state_file_cannot_choose_code_to_run(tmp_path: Path) -> None:
    """state.json naming a step/metric module: refused as corrupt (exit 2); the module is never imported."""
    marker = tmp_path / "imported"
    (tmp_path / "evil.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('pwned')\ndef step(ctx):\n    pass\n"
    )
    (tmp_path / "good.py").write_text(STUCK_AGENT)
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "good:step"\n')
    (tmp_path / "state").mkdir()
    tampered = {
        "step": "evil:step",
        "progress": "evil:step",
        "exec": "touch pwned",
        "agent": {"step": "evil:step"},
    }
    for key, value in tampered.items():
        raw = json.dumps({"schema_version": 1, key: value}).encode()
        (tmp_path / "state" / "state.json").write_bytes(raw)
        done = run_cli(tmp_path, "tick")
        assert done.returncode == 2 and "state.json" in done.stdout + done.stderr, key
        assert (tmp_path / "state" / "state.json").read_bytes() == raw
        assert not marker.exists() and not (tmp_path / "pwned").exists()
    data_only = {"schema_version": 1, "data": {"step": "evil:step"}}
    (tmp_path / "state" / "state.json").write_text(json.dumps(data_only))
    done = run_cli(tmp_path, "tick")
    assert done.returncode == 0 and not marker.exists()  # the agent's own data is only data
    assert StateStore(tmp_path / "state").load().history[0].tool == "search"


def kill_kinds(tmp_path: Path) -> dict[str, Callable[[Path], None]]:
    """Ways a KILL file can exist that are not a readable regular file."""
    target = tmp_path / "elsewhere"
    target.write_text("a reason in another file")
    return {
        "dangling symlink": lambda p: p.symlink_to(tmp_path / "missing"),
        "symlink to a file": lambda p: p.symlink_to(target),
        "symlink to a folder": lambda p: p.symlink_to(tmp_path),
        "directory": lambda p: p.mkdir(),
        "fifo": lambda p: os.mkfifo(p),
        "empty": lambda p: p.write_bytes(b""),
        "binary": lambda p: p.write_bytes(b"\xff\xfe\x00stop"),
    }


@pytest.mark.parametrize(
    "kind",
    ["dangling symlink", "symlink to a file", "symlink to a folder", "directory", "fifo", "empty", "binary"],
)
def test_odd_kill_files_still_stop_the_agent(tmp_path: Path, kind: str) -> None:
    """A KILL that is a symlink, a folder, a FIFO, empty or binary: exit 3, the step never called."""
    kill = tmp_path / "KILL"
    kill_kinds(tmp_path)[kind](kill)
    marker = tmp_path / "called"
    (tmp_path / "agent.py").write_text(
        f"import pathlib\ndef step(ctx):\n    pathlib.Path({str(marker)!r}).touch()\n"
    )
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "agent:step"\n')
    started = time.monotonic()
    done = run_cli(tmp_path, "tick")
    assert done.returncode == 3 and "KILL" in done.stdout and time.monotonic() - started < 5
    assert not marker.exists() and not (tmp_path / "state" / "state.json").exists()


def unreadable_kill_tick(folder: str, results: Any) -> None:
    """Child body: drop to user nobody, then tick an agent whose KILL file root made unreadable."""
    from heartbeat.config.file import HeartbeatConfig as Config
    from heartbeat.tick.runner import Heartbeat as HB

    def step(ctx: Any) -> None:
        Path(folder, "called").touch()

    warm = Path(folder, "warm")  # first a tick as root, so every lazy import is done before setuid
    (warm / "KILL").parent.mkdir()
    (warm / "KILL").write_text("warm up")
    HB(
        Config.model_validate({"agent": {"state_dir": str(warm / "s"), "kill_file": str(warm / "KILL")}}),
        step=step,
    ).tick()
    if os.geteuid() == 0:
        os.setgid(65534)
        os.setuid(65534)
    config = Config.model_validate({"agent": {"state_dir": f"{folder}/state", "kill_file": f"{folder}/KILL"}})
    result = HB(config, step=step).tick()
    results.put((result.exit_code, result.message))


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder every user can reach and write (tmp_path's parents are 0700)."""
    folder = Path(tempfile.mkdtemp(prefix="hb-shared-"))
    folder.chmod(0o777)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_unreadable_kill_file_still_stops_the_agent(shared_folder: Path) -> None:
    """A KILL file the heartbeat's user cannot read (mode 000; run as nobody when root): exit 3, no step."""
    folder = shared_folder
    (folder / "KILL").write_text("stop")
    (folder / "KILL").chmod(0)
    ctx = ra.forkserver_context()
    results = ctx.Queue()
    child = ctx.Process(target=unreadable_kill_tick, args=(str(folder), results))
    child.start()
    code, message = results.get(timeout=60)
    child.join(30)
    assert code == 3 and "unreadable" in message and "Permission denied" in message
    assert not (folder / "called").exists()


def test_kill_file_whose_path_cannot_be_checked_still_stops(tmp_path: Path) -> None:
    """kill_file under a regular file (ENOTDIR): fails closed, exit 3, step not called."""
    (tmp_path / "file").write_text("not a folder")
    called: list[int] = []
    hb = Heartbeat(
        HeartbeatConfig.model_validate(
            {"agent": {"state_dir": str(tmp_path / "state"), "kill_file": str(tmp_path / "file" / "KILL")}}
        ),
        step=lambda ctx: called.append(1),
    )
    result = hb.tick()
    assert result.exit_code == 3 and "cannot be checked" in result.message and called == []


@pytest.mark.parametrize("broken", ["state folder is a file", "journal is a folder"])
def test_kill_wins_over_a_broken_state_folder(tmp_path: Path, broken: str) -> None:
    """KILL present and the state folder unusable: still exit 3 (3 wins over 2), the step never called."""
    (tmp_path / "KILL").write_text("stop everything")
    if broken == "state folder is a file":
        (tmp_path / "state").write_text("oops")
    else:
        (tmp_path / "state" / "journal.jsonl").mkdir(parents=True)
    called: list[int] = []
    hb = make(tmp_path, lambda ctx: called.append(1))
    result = hb.tick()
    assert result.exit_code == 3 and called == []
