"""`heartbeat run`: trigger maths without a clock, and real processes for signals and fleets."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import spawn_heartbeat, wait_until

from heartbeat.base.errors import UsageError
from heartbeat.config.trigger import make_trigger
from heartbeat.state.store import StateStore

AGENT = textwrap.dedent("""
    import os, pathlib, time

    def step(ctx):
        gate = os.environ.get("HB_GATE")
        if gate:  # hold the step until the test opens the gate
            pathlib.Path(gate + ".started").write_text("x")
            while not pathlib.Path(gate).exists():
                time.sleep(0.01)
        ctx.data["n"] = ctx.data.get("n", 0) + 1
        ctx.record("work", {"n": ctx.data["n"]}, output="real progress made")

    def progress(ctx):
        return float(ctx.data.get("n", 0))
""")


def wait_for_file(path: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while not path.exists():  # polling a marker the step writes, not sleeping for a race
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "work_agent.py").write_text(AGENT)
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstep = "work_agent:step"\nprogress = "work_agent:progress"\n'
    )
    return tmp_path


def test_interval_trigger_maths() -> None:
    """--every gives an interval trigger whose next fire time is one interval on."""
    trigger = make_trigger(every=timedelta(minutes=30), cron=None)
    start = datetime(2026, 5, 1, 3, 0, tzinfo=UTC)
    first = trigger.get_next_fire_time(None, start)
    assert trigger.get_next_fire_time(first, first) - first == timedelta(minutes=30)


def test_cron_trigger_maths() -> None:
    """--cron follows the crontab expression (in UTC by default)."""
    trigger = make_trigger(every=None, cron="*/15 2 * * *")
    now = datetime(2026, 5, 1, 2, 7, tzinfo=UTC)
    assert trigger.get_next_fire_time(None, now) == datetime(2026, 5, 1, 2, 15, tzinfo=UTC)
    after = datetime(2026, 5, 1, 2, 45, tzinfo=UTC)
    assert trigger.get_next_fire_time(after, after + timedelta(seconds=1)) == datetime(
        2026, 5, 2, 2, 0, tzinfo=UTC
    )


@pytest.mark.parametrize(("every", "cron"), [(None, None), (timedelta(minutes=1), "* * * * *")])
def test_exactly_one_schedule(every: timedelta | None, cron: str | None) -> None:
    """Neither or both of --every and --cron is a usage error."""
    with pytest.raises(UsageError):
        make_trigger(every=every, cron=cron)


def test_bad_cron_is_usage_error() -> None:
    """A malformed cron expression is a one-line usage error."""
    with pytest.raises(UsageError, match="cron"):
        make_trigger(every=None, cron="every tuesday")


def test_sigterm_lets_the_current_tick_finish(folder: Path) -> None:
    """SIGTERM during a step: the step finishes, its state is saved, run exits 0, no new tick starts."""
    gate = folder / "gate"
    proc = spawn_heartbeat(folder, "run", "--every", "30m", HB_GATE=str(gate))
    try:
        wait_for_file(folder / "gate.started", proc)
        proc.send_signal(signal.SIGTERM)
        gate.touch()
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0 and "SIGTERM" in err
    state = StateStore(folder / "state").load()
    assert state.ticks == 1 and state.data == {"n": 1}


# A step that records a call and is held while HOLD exists; a metric whose every call leaves
# MEASURING<n>, takes 3 s while SLOW exists, then leaves MEASURED<n>.
SLOW_METRIC_AGENT = textwrap.dedent("""
    import pathlib, time

    def step(ctx):
        ctx.record("copy_chunk", {"chunk": 1}, output="copied 13 rows")
        pathlib.Path("STEPPING").touch()
        deadline = time.monotonic() + 30
        while pathlib.Path("HOLD").exists() and time.monotonic() < deadline:
            time.sleep(0.01)

    def progress(ctx):
        n = len(list(pathlib.Path(".").glob("MEASURING*")))
        pathlib.Path(f"MEASURING{n}").touch()
        if pathlib.Path("SLOW").exists():
            time.sleep(3)
        pathlib.Path(f"MEASURED{n}").touch()
        return 1.0
""")


def _slow_metric_run(folder: Path, *marks: str) -> subprocess.Popen[str]:
    """``heartbeat run`` of the agent above, with the marker files ``marks`` (SLOW, HOLD) made first;
    its stderr goes to ``folder/stderr``."""
    (folder / "slow_agent.py").write_text(SLOW_METRIC_AGENT)
    (folder / "heartbeat.toml").write_text(
        '[agent]\nstep = "slow_agent:step"\nprogress = "slow_agent:progress"\n'
    )
    for mark in marks:
        (folder / mark).touch()
    with (folder / "stderr").open("w") as err:
        argv = [sys.executable, "-m", "heartbeat", "run", "--every", "30m"]
        return subprocess.Popen(argv, cwd=folder, text=True, stdout=subprocess.DEVNULL, stderr=err)


def _ended(folder: Path, proc: subprocess.Popen[str]) -> tuple[list[str], list[dict[str, Any]], Any]:
    """Wait for the run to end (exit 0, as a first SIGTERM ends it); the metric's marker files,
    the journal and the last progress sample."""
    try:
        proc.wait(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, (folder / "stderr").read_text()
    marks = sorted(p.name for p in folder.glob("MEASUR*"))
    lines = (folder / "state" / "journal.jsonl").read_text().splitlines()
    return marks, [json.loads(line) for line in lines], StateStore(folder / "state").load().progress[-1]


def test_sigterm_while_run_measures_the_first_baseline_begins_no_step_and_waits_for_nothing(
    tmp_path: Path,
) -> None:
    """SIGTERM while the first heartbeat's metric (3 s) measures the baseline: the metric is not
    waited for, the step is not begun, nothing is measured after it; the tick says why. Until
    2026-12-07 the run waited for the baseline, called the step after the signal, and measured again
    (live c18: 1.8 s with a 1 s metric)."""
    proc = _slow_metric_run(tmp_path, "SLOW")
    wait_for_file(tmp_path / "MEASURING0", proc)
    proc.send_signal(signal.SIGTERM)
    marks, journal, sample = _ended(tmp_path, proc)
    assert marks == ["MEASURING0"]  # neither waited out nor measured again
    assert not (tmp_path / "STEPPING").exists()
    stops = [e for e in journal if e["event"] in ("action", "interrupted")]
    assert [(e["event"], e.get("before_step")) for e in stops] == [("interrupted", True)]
    assert stops[0]["reason"].startswith("stopped by SIGTERM before the step began")
    assert sample.value is None and sample.error is not None
    assert sample.error.endswith("was not measured: stopped by SIGTERM")


def test_sigterm_while_runs_step_runs_saves_its_calls_and_measures_nothing_after(tmp_path: Path) -> None:
    """SIGTERM while the step runs: the step finishes and its call is saved, and no closing
    measurement is begun (its sample says why, and is no value). Until 2026-12-07 a metric then
    measured again, as long as it took, before the run could end."""
    proc = _slow_metric_run(tmp_path, "HOLD")
    wait_for_file(tmp_path / "STEPPING", proc)
    proc.send_signal(signal.SIGTERM)
    wait_until(lambda: "SIGTERM" in (tmp_path / "stderr").read_text(), what="the signal taken", proc=proc)
    (tmp_path / "HOLD").unlink()  # the step returns now
    marks, journal, sample = _ended(tmp_path, proc)
    assert marks == ["MEASURED0", "MEASURING0"]  # the baseline only
    assert [e["tool"] for e in journal if e["event"] == "action"] == ["copy_chunk"]
    assert StateStore(tmp_path / "state").load().actions_total == 1
    assert sample.value is None and sample.error is not None
    assert sample.error.endswith("was not measured: stopped by SIGTERM")


def two_agents(folder: Path, head: str = "", **lines: str) -> None:
    """heartbeat.toml for the agents alpha and beta, each in state/<name>: ``head`` after [agent],
    and each agent's own ``lines`` (a TOML line, by agent name)."""
    agents = "".join(
        f'[[agents]]\nname = "{n}"\nstate_dir = "state/{n}"\n{lines.get(n, "")}\n' for n in ("alpha", "beta")
    )
    agent = '[agent]\nstep = "work_agent:step"\nprogress = "work_agent:progress"\n'
    (folder / "heartbeat.toml").write_text(f"{agent}{head}\n{agents}")


def test_one_run_drives_several_agents(folder: Path) -> None:
    """[[agents]]: one run ticks each agent in its own state folder, each --ticks times."""
    two_agents(folder)
    proc = spawn_heartbeat(folder, "run", "--every", "0.2s", "--ticks", "3", "--json")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    agents = sorted(json.loads(line)["agent"] for line in out.splitlines())
    assert agents == ["alpha"] * 3 + ["beta"] * 3
    for name in ("alpha", "beta"):
        assert StateStore(folder / "state" / name).load().ticks == 3


def test_run_exits_2_on_bad_config(folder: Path) -> None:
    """A run whose step cannot be loaded fails before the first tick with exit 2."""
    proc = spawn_heartbeat(folder, "run", "--every", "1s", "--step", "missing_module:step")
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 2 and "missing_module" in err and "Traceback" not in err


def kill_events(state: Path) -> list[dict[str, object]]:
    lines = (state / "journal.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["event"] == "kill"]


@pytest.mark.parametrize("switch", ["KILL", "fleet stop"])
def test_a_stop_between_ticks_is_journaled_naming_its_switch(switch: str, folder: Path) -> None:
    """Regression: `heartbeat run --ticks N` stopped between two ticks by KILL or the fleet stop exited 3
    and journaled nothing (a stop within a tick is journaled). Now each agent's journal says it was
    stopped, by which switch and why, as a tick's kill event does."""
    share = folder / "share"
    share.mkdir()
    two_agents(folder, f'[stop]\npath = "{share / "STOP"}"\n')
    proc = spawn_heartbeat(folder, "run", "--every", "1h", "--ticks", "5", "--json")
    try:
        assert proc.stdout is not None
        ticked = [json.loads(proc.stdout.readline())["agent"] for _ in range(2)]
        assert sorted(ticked) == ["alpha", "beta"]  # both waiting an hour for their next tick
        where = folder / "KILL" if switch == "KILL" else share / "STOP"
        where.write_text("maintenance window\n")
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 3, err
    by = f"the KILL file {where}" if switch == "KILL" else f"the fleet stop {where}"
    assert f"stopped by {by}: maintenance window" in err
    for name in ("alpha", "beta"):
        events = kill_events(folder / "state" / name)
        assert [(e["by"], e["reason"]) for e in events] == [(by, "maintenance window")], events
        assert StateStore(folder / "state" / name).load().ticks == 1
    log = subprocess.run(
        [sys.executable, "-m", "heartbeat", "log"], cwd=folder, capture_output=True, text=True, timeout=60
    )
    assert log.stdout.count(f"stopped by {by} between ticks: maintenance window") == 2, log.stdout


def test_an_agents_own_kill_file_stops_that_agent_and_the_run_goes_on(folder: Path) -> None:
    """Regression (live round 41): `heartbeat kill --agent beta` wrote beta's own KILL file and the
    whole run exited 3, alpha journaling a kill "by KILL-beta". Now only beta stops; alpha ticks on
    to its --ticks, and the run exits 3 naming beta's switch."""
    two_agents(folder, alpha='kill_file = "KILL-alpha"', beta='kill_file = "KILL-beta"')
    (folder / "KILL-beta").write_text("beta only\n")
    proc = spawn_heartbeat(folder, "run", "--every", "0.1s", "--ticks", "4", "--json")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err
    assert "beta stopped by the KILL file" in err and "beta only" in err
    # said when it stops, not only in the run's last line (live round 43: silence until the end)
    assert "beta stopped by the KILL file" in err.split("run ended")[0] and "the others go on" in err
    ticks = [json.loads(line) for line in out.splitlines()]
    assert [t["agent"] for t in ticks if t["outcome"] == "ran"] == ["alpha"] * 4
    assert StateStore(folder / "state" / "alpha").load().ticks == 4
    assert kill_events(folder / "state" / "alpha") == []
    assert [e["reason"] for e in kill_events(folder / "state" / "beta")] == ["beta only"]


SLOW_AGENT = textwrap.dedent("""
    import pathlib, time

    def step(ctx):
        gate = pathlib.Path("gate")  # each tick holds the lock until the test opens the gate once
        pathlib.Path(f"started-{ctx.tick}").write_text("x")
        while not gate.exists():
            time.sleep(0.01)
        gate.unlink()
        ctx.record("work", {"tick": ctx.tick}, output=f"page {ctx.tick}")
""")


def test_a_pause_gets_in_between_ticks_that_come_back_to_back(folder: Path) -> None:
    """Regression (live round 41): under `heartbeat run` whose step outlasts its schedule, the next
    tick took the lock the moment the last let go, and `heartbeat pause` waited its 15 s and exited
    5, nothing changed. Now a tick lets a waiting pause in first: the pause lands as soon as the
    running tick ends, and the tick after it does nothing."""
    (folder / "slow_agent.py").write_text(SLOW_AGENT)
    proc = spawn_heartbeat(folder, "run", "--every", "0.1s", "--step", "slow_agent:step", "--json")
    try:
        wait_for_file(folder / "started-1", proc)
        pause = spawn_heartbeat(folder, "pause", "--reason", "human looks")
        wait_for_file(folder / "state" / ".pause-request", proc)  # the pause waits for the lock
        (folder / "gate").write_text("x")  # tick 1 ends; tick 2 would hold the lock until a gate
        _, err = pause.communicate(timeout=60)
        assert pause.returncode == 0, err
        (folder / "KILL").write_text("done\n")
        proc.communicate(timeout=60)
    finally:
        proc.kill()
    state = StateStore(folder / "state").load()
    assert state.status.value == "paused" and state.status_reason == "human looks"
    assert not (folder / "started-2").exists()  # no step ran after the pause
