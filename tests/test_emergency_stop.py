"""The emergency stop always stops, and an ``--exec`` agent never outlives its tick (issue 10, items 3, 7-11).

Real ``python -m heartbeat`` processes, real signals, real child processes,
a real HTTP server that never answers. Times are measured from the moment
the KILL file is written to the moment the heartbeat process has exited.
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import Agent, make_agent, wait_until

from heartbeat.config.file import AgentConfig, HeartbeatConfig
from heartbeat.config.trigger import make_trigger
from heartbeat.tick.runner import Heartbeat
from heartbeat.tick.schedule import Runner
from heartbeat.tick.watchdog import INTERRUPT_GRACE_SECONDS

STOP_WITHIN = 0.5  # seconds: what the README promises for KILL

HANGING = """
import pathlib, time

def step(ctx):
    (pathlib.Path(ctx.base_dir) / "started").write_text("x")
    ctx.data["unsaved"] = True
    while True:          # never returns, never looks at ctx.killed
        time.sleep(0.05)

def stuck(ctx):
    for _ in range(3):
        ctx.record("search", {"q": "same"}, output="the same page")
"""

# An --exec agent that leaves a background child behind and records both pids.
EXEC_AGENT = """
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
with open("pids", "a") as f:
    f.write(f"{os.getpid()} {child.pid}\\n")
if len(sys.argv) > 1 and sys.argv[1] == "hang":
    time.sleep(60)
"""


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def exec_pids(root: Path) -> list[int]:
    text = (root / "pids").read_text() if (root / "pids").exists() else ""
    return [int(p) for p in text.split()]


def stop_time(proc: subprocess.Popen[str], kill: Path) -> float:
    """Write KILL; return the seconds until ``proc`` exited."""
    started = time.monotonic()
    kill.write_text("stop now")
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return float("inf")
    return time.monotonic() - started


@pytest.fixture
def hanging(tmp_path: Path) -> Agent:
    return make_agent(tmp_path, HANGING)


# ---------------------------------------------------------------- 7. KILL ends a hung step


def test_kill_ends_run_within_half_a_second_while_a_python_step_hangs(hanging: Agent) -> None:
    """run, step never returns: exit 3 within 0.5 s, the tick's work dropped, the journal says so."""
    proc = hanging.spawn("run", "--every", "1h")
    wait_until(lambda: (hanging.root / "started").exists(), what="the step to start")
    took = stop_time(proc, hanging.kill)
    err = proc.stderr.read() if proc.stderr else ""
    assert proc.returncode == 3, err
    assert took <= STOP_WITHIN, f"run took {took:.2f} s to stop"
    kills = [e for e in hanging.journal() if e["event"] == "kill"]
    assert kills and kills[0]["abandoned"] is True and kills[0]["during_step"] is True
    assert hanging.load().ticks == 0 and hanging.load().data == {}  # nothing of the tick saved


def test_kill_ends_a_tick_process_within_half_a_second_while_its_step_hangs(hanging: Agent) -> None:
    """`heartbeat tick` (cron), step never returns: exit 3 within 0.5 s, journaled, nothing saved."""
    proc = hanging.spawn("tick")
    wait_until(lambda: (hanging.root / "started").exists(), what="the step to start")
    took = stop_time(proc, hanging.kill)
    out = proc.stdout.read() if proc.stdout else ""
    assert proc.returncode == 3 and "abandoned" in out
    assert took <= STOP_WITHIN, f"tick took {took:.2f} s to stop"
    assert any(e.get("abandoned") for e in hanging.journal())
    assert hanging.load().ticks == 0


# A step that starts a program of its own (an agent CLI, a browser), then hangs or returns.
SPAWNING = """
import pathlib, subprocess, sys, time

def _start(ctx):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    (pathlib.Path(ctx.base_dir) / "pids").write_text(str(child.pid))

def hang(ctx):
    _start(ctx)
    while True:
        time.sleep(0.05)

def stop_and_return(ctx):
    _start(ctx)
    (pathlib.Path(ctx.base_dir) / "KILL").write_text("the step stopped itself")
"""


@pytest.mark.parametrize(
    ("command", "attr"), [("tick", "hang"), ("run", "hang"), ("tick", "stop_and_return")]
)
def test_what_a_python_step_started_ends_with_a_stopped_heartbeat(
    tmp_path: Path, command: str, attr: str
) -> None:
    """KILL (during the step, or seen once it returned): the step's own subprocess does not go on acting."""
    agent = make_agent(tmp_path, SPAWNING)
    proc = agent.spawn(command, *(["--every", "1h"] if command == "run" else []), attr=attr)
    wait_until(lambda: exec_pids(agent.root) != [], what="the step to start its program")
    child = exec_pids(agent.root)[0]
    try:
        if attr == "hang":
            agent.kill.write_text("stop now")
        assert proc.wait(timeout=30) == 3, proc.stderr.read() if proc.stderr else ""
        wait_until(lambda: not alive(child), what=f"the step's program {child} to end", timeout=5)
    finally:  # a failing run leaves nothing behind either
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)


# A module that hangs while it is imported: loading the step runs the agent's own code.
HANGING_IMPORT = """
import pathlib, time
pathlib.Path("started").write_text("x")
while True:          # a connection opened at import that never answers
    time.sleep(0.05)

def step(ctx):
    ctx.record("search", {"q": "never reached"})
"""


@pytest.mark.parametrize("command", ["tick", "run"])
def test_kill_ends_a_heartbeat_within_half_a_second_while_its_step_module_hangs_at_import(
    tmp_path: Path, command: str
) -> None:
    """The agent's module hangs while it loads (under tick's lock, at run's start): KILL still stops it."""
    agent = make_agent(tmp_path, HANGING_IMPORT)
    proc = agent.spawn(command, *(["--every", "1h"] if command == "run" else []))
    wait_until(lambda: (agent.root / "started").exists(), what="the module to start loading")
    took = stop_time(proc, agent.kill)
    err = proc.stderr.read() if proc.stderr else ""
    assert proc.returncode == 3, err
    assert took <= STOP_WITHIN, f"{command} took {took:.2f} s to stop"
    assert any(e["event"] == "kill" for e in agent.journal())
    assert not agent.state.joinpath("state.json").exists() or agent.load().ticks == 0


@pytest.mark.parametrize("command", ["run", "tick"])
def test_kill_ends_a_heartbeat_within_half_a_second_while_a_webhook_never_answers(
    hanging: Agent, webhook_server: Any, command: str
) -> None:
    """An escalation whose webhook accepts and never answers: KILL still ends run and tick within 0.5 s."""
    webhook_server.delay = 60.0
    config = hanging.root / "heartbeat.toml"
    config.write_text(
        f'[policy]\nescalate_after = 1\n[[notify]]\ntype = "webhook"\nurl = "{webhook_server.url()}"\n'
        'timeout = "30s"\n'
    )
    every = ["--every", "1h"] if command == "run" else []
    proc = hanging.spawn(command, *every, "--config", str(config), attr="stuck")
    assert webhook_server.wait_for(1, timeout=30), "the escalation never reached the webhook"
    took = stop_time(proc, hanging.kill)
    assert proc.returncode == 3, proc.stderr.read() if proc.stderr else ""
    assert took <= STOP_WITHIN, f"{command} took {took:.2f} s to stop behind a silent webhook"
    assert hanging.load().status.value == "needs_human"  # the decision itself was saved first
    assert list((hanging.state / "outbox").glob("*.json")), "the undelivered escalation must wait in outbox/"


SLOW_METRIC = """
import pathlib, time

def step(ctx):
    ctx.record("search", {"q": "x"}, output="three new sources found")
    ctx.data["kept"] = True

def progress(ctx):
    if not ctx.data.get("kept") and not ctx.data.get("slow_baseline"):  # the baseline: quick
        return 0.0
    (pathlib.Path(ctx.base_dir) / "measuring").write_text("x")
    time.sleep(30)
    return 1.0
"""


def test_kill_ends_a_tick_within_half_a_second_while_its_metric_is_slow(tmp_path: Path) -> None:
    """KILL while the progress metric runs: exit 3 within 0.5 s, and the step's work is saved."""
    agent = make_agent(tmp_path, SLOW_METRIC)
    proc = agent.spawn("tick", "--progress", f"{agent.module}:progress")
    wait_until(lambda: (agent.root / "measuring").exists(), what="the metric to start", proc=proc)
    took = stop_time(proc, agent.kill)
    assert proc.returncode == 3, proc.stderr.read() if proc.stderr else ""
    assert took <= STOP_WITHIN, f"tick took {took:.2f} s to stop behind a slow metric"
    state = agent.load()
    assert state.ticks == 1 and state.data == {"kept": True}  # the step returned: its work is kept
    errors = [e["error"] for e in agent.journal() if e["event"] == "metric_error"]
    assert errors and "not waited for" in errors[0]


def test_kill_while_the_metric_measures_its_baseline_ends_the_tick_before_its_step(tmp_path: Path) -> None:
    """The first heartbeat measures the metric before its step too: KILL then is exit 3 within 0.5 s,
    and the step is never begun (no call made, nothing it would keep)."""
    agent = make_agent(tmp_path, SLOW_METRIC.replace('ctx.data.get("slow_baseline")', "True"))
    proc = agent.spawn("tick", "--progress", f"{agent.module}:progress")
    wait_until(lambda: (agent.root / "measuring").exists(), what="the baseline to start", proc=proc)
    took = stop_time(proc, agent.kill)
    assert proc.returncode == 3, proc.stderr.read() if proc.stderr else ""
    assert took <= STOP_WITHIN, f"tick took {took:.2f} s to stop behind a slow baseline"
    assert [e for e in agent.journal() if e["event"] == "action"] == []
    state = agent.load() if (agent.state / "state.json").exists() else None
    assert state is None or ("kept" not in state.data and state.history == [])


# ---------------------------------------------------------------- a step's threads end with it

# A step whose thread pool never finishes: Python joins a pool's workers (and every non-daemon
# thread) before the process may exit, so without a hard exit the agent's worker went on
# beating after KILL or a signal, and the heartbeat process never ended. The step says "waiting"
# once its pool has taken the worker on: a signal that lands while the pool is still starting it
# (inside Thread.start) unwinds the step before the pool knows its worker, and nothing waits.
POOLED = """
import concurrent.futures, pathlib, threading, time

def _beat(root):
    while True:
        (root / "beat").write_text(str(time.monotonic_ns()))
        time.sleep(0.02)

def waits_on_a_pool(ctx):
    root = pathlib.Path(ctx.base_dir)
    (root / "started").write_text("x")
    with concurrent.futures.ThreadPoolExecutor() as pool:
        beating = pool.submit(_beat, root)
        (root / "waiting").write_text("x")
        beating.result()

def leaves_a_thread(ctx):
    threading.Thread(target=_beat, args=(pathlib.Path(ctx.base_dir),)).start()

_POOLS = []

def leaves_an_idle_pool(ctx):
    # As the Agents SDK leaves asyncio's default executor: its worker done, waiting for more work.
    pool = concurrent.futures.ThreadPoolExecutor()
    pool.submit(time.sleep, 0).result()
    _POOLS.append(pool)  # never shut down

def leaves_a_busy_pool(ctx):
    pool = concurrent.futures.ThreadPoolExecutor()
    pool.submit(_beat, pathlib.Path(ctx.base_dir))
    _POOLS.append(pool)
"""


@pytest.mark.parametrize("how", ["KILL-run", "KILL-tick", "SIGTERM-tick", "SIGINT-tick", "2xSIGTERM-run"])
def test_a_step_waiting_on_a_thread_pool_ends_with_the_process(tmp_path: Path, how: str) -> None:
    """KILL or a signal while the step waits on a pool that never ends: the process (and the pool) ends."""
    agent = make_agent(tmp_path, POOLED)
    command = how.rsplit("-", 1)[1]
    extra = ["--every", "1h"] if command == "run" else []
    with open(tmp_path / "stderr", "w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "heartbeat", command, *agent.flags("waits_on_a_pool"), *extra],
            cwd=agent.root,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        wait_until(lambda: (agent.root / "waiting").exists(), what="the step to wait on its pool", proc=proc)
        started = time.monotonic()
        if how.startswith("KILL"):
            agent.kill.write_text("stop")
        elif how == "2xSIGTERM-run":
            proc.send_signal(signal.SIGTERM)
            wait_until(lambda: "stopping" in (tmp_path / "stderr").read_text(), what="the first SIGTERM")
            started = time.monotonic()
            proc.send_signal(signal.SIGTERM)
        else:
            proc.send_signal(signal.SIGTERM if how.startswith("SIGTERM") else signal.SIGINT)
        code = proc.wait(timeout=20)
        took = time.monotonic() - started
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = (tmp_path / "stderr").read_text()
    expected = {"KILL": 3, "SIGTERM": 143, "SIGINT": 130, "2xSIGTERM": 143}[how.split("-")[0]]
    assert code == expected, stderr
    bound = STOP_WITHIN if how.startswith("KILL") else INTERRUPT_GRACE_SECONDS + STOP_WITHIN
    assert took <= bound, f"{how}: the process took {took:.2f} s to end"
    if how.endswith("tick") and not how.startswith("KILL"):
        interrupted = [e for e in agent.journal() if e["event"] == "interrupted"]
        assert interrupted and interrupted[0]["abandoned"] is True
    assert agent.load().ticks == 0  # nothing of the abandoned tick was saved


@pytest.mark.parametrize("attr", ["leaves_an_idle_pool", "leaves_a_busy_pool"])
def test_an_idle_pool_worker_is_no_thread_left_running(tmp_path: Path, attr: str) -> None:
    """Regression (live round 41): every tick of an Agents SDK step said on stderr "ending 1 thread(s)
    the step left running", even under `--quiet` (cron mailed it each tick): asyncio's default
    executor's worker, idle, which Python's exit hook ends at once. A pool's idle worker is not
    counted now; one still at work is, and ends with the tick as before."""
    agent = make_agent(tmp_path, POOLED)
    done = agent.cli("tick", "--quiet", attr=attr, timeout=20)
    assert done.returncode == 0, done.stderr
    if attr == "leaves_an_idle_pool":
        assert done.stderr == ""
    else:
        assert "ending 1 thread(s) the step left running" in done.stderr
    assert agent.load().ticks == 1


def test_a_thread_a_step_leaves_running_ends_with_its_tick(tmp_path: Path) -> None:
    """A step that returns and leaves a non-daemon thread at work: the tick still ends, and the thread."""
    agent = make_agent(tmp_path, POOLED)
    done = agent.cli("tick", attr="leaves_a_thread", timeout=20)
    assert done.returncode == 0, done.stderr
    assert "left running" in done.stderr
    assert agent.load().ticks == 1  # the tick itself was saved as usual


QUICK = """
import random, string

def step(ctx):
    word = "".join(random.choice(string.ascii_lowercase) for _ in range(12))
    ctx.record("search", {"q": word}, output=f"results for {word}")
    ctx.report_progress(float(ctx.tick))

def chatty(ctx):
    while True:
        print("a line the agent prints " * 8)
"""


@pytest.mark.parametrize("how", ["run --json", "tick, the step printing"])
def test_kill_ends_a_heartbeat_whose_stdout_nobody_reads(tmp_path: Path, how: str) -> None:
    """stdout a pipe nobody reads (a stalled log collector): KILL still ends run or tick within 0.5 s."""
    agent = make_agent(tmp_path, QUICK)
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)  # the smallest pipe: full after a few ticks
    argv = ["run", "--json", "--every", "0.01s", *agent.flags()]
    if how.startswith("tick"):  # the step itself blocks printing; KILL abandons it
        argv = ["tick", *agent.flags("chatty")]
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "heartbeat", *argv],
            cwd=agent.root,
            stdout=write_end,
            stderr=subprocess.DEVNULL,
        )
        os.close(write_end)

        def full() -> bool:
            waiting = array.array("i", [0])
            fcntl.ioctl(read_end, termios.FIONREAD, waiting)
            return waiting[0] > 4096 - 512  # no further line fits: the next tick's write blocks

        wait_until(full, what="stdout to fill up", proc=proc)
        took = stop_time(proc, agent.kill)
    finally:
        os.close(read_end)
    assert proc.returncode == 3
    assert took <= STOP_WITHIN, f"{how}: {took:.2f} s to stop behind a full stdout"


# ---------------------------------------------------------------- 3. --exec process groups


def exec_agent(tmp_path: Path, *args: str) -> tuple[Agent, list[str]]:
    agent = make_agent(tmp_path, EXEC_AGENT, module="exec_agent")
    command = " ".join([sys.executable, str(agent.root / "exec_agent.py"), *args])
    return agent, ["--exec", command]


def test_an_exec_agents_background_child_ends_with_the_step(tmp_path: Path) -> None:
    """The program exits 0 and leaves a child running: the child is ended with the step."""
    agent, flags = exec_agent(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "heartbeat", "tick", *flags, "--state-dir", str(agent.state)],
        cwd=agent.root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    pids = exec_pids(agent.root)
    assert len(pids) == 2
    wait_until(lambda: not any(alive(p) for p in pids), timeout=5, what="the exec group to end")


@pytest.mark.parametrize("how", ["KILL", "SIGTERM-tick", "SIGINT-tick", "SIGTERM-run", "timeout"])
def test_an_exec_agent_never_outlives_its_tick(tmp_path: Path, how: str) -> None:
    """KILL, a signal to tick or run, or the timeout: the whole process group is ended."""
    agent, flags = exec_agent(tmp_path, "hang")
    command = "run" if how.endswith("run") else "tick"
    extra = ["--every", "1h"] if command == "run" else []
    env = {**os.environ}
    if how == "timeout":
        config = agent.root / "heartbeat.toml"
        config.write_text('[agent]\nexec_timeout = "1s"\n')
        extra += ["--config", str(config)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "heartbeat", command, *flags, "--state-dir", str(agent.state), *extra],
        cwd=agent.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=os.setpgrp,  # its own group, so a group kill of the agent cannot reach pytest
    )
    try:
        wait_until(lambda: len(exec_pids(agent.root)) == 2, what="the exec agent and its child")
        pids = exec_pids(agent.root)
        if how == "KILL":
            (agent.root / "KILL").write_text("stop")
        elif how.startswith("SIGTERM"):
            proc.send_signal(signal.SIGTERM)
        elif how.startswith("SIGINT"):
            proc.send_signal(signal.SIGINT)
        wait_until(lambda: not any(alive(p) for p in pids), timeout=5, what="the exec group to end")
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    expected = {"KILL": 3, "SIGTERM-tick": 128 + 15, "SIGINT-tick": 128 + 2, "SIGTERM-run": 0, "timeout": 1}
    assert code == expected[how], proc.stderr.read() if proc.stderr else ""
    assert not any(alive(p) for p in pids)


@pytest.mark.parametrize("command", ["tick", "run"])
def test_an_exec_agent_does_not_outlive_a_sigkilled_heartbeat(tmp_path: Path, command: str) -> None:
    """SIGKILL of tick or run: the program dies with it, and the next tick (a KILL one) ends its child."""
    agent, flags = exec_agent(tmp_path, "hang")
    extra = ["--every", "1h"] if command == "run" else []
    argv = [sys.executable, "-m", "heartbeat", command, *flags, "--state-dir", str(agent.state), *extra]
    proc = subprocess.Popen(
        argv, cwd=agent.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=os.setpgrp
    )
    try:
        wait_until(lambda: len(exec_pids(agent.root)) == 2, what="the exec agent and its child", proc=proc)
        program, child = exec_pids(agent.root)
        proc.kill()  # SIGKILL: no finally block of ours runs
        proc.wait()
        wait_until(lambda: not alive(program), timeout=5, what="the program to die with its heartbeat")
        agent.kill.write_text("stop")
        tick = [sys.executable, "-m", "heartbeat", "tick", *flags, "--state-dir", str(agent.state)]
        done = subprocess.run(tick, cwd=agent.root, capture_output=True, text=True, timeout=60)
        assert done.returncode == 3, done.stderr
        wait_until(lambda: not alive(child), timeout=5, what="the next tick to end the orphaned child")
        assert not [p for p in agent.state.iterdir() if p.name.startswith(".exec-")]
    finally:
        for pid in exec_pids(agent.root):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_python_steps_process_does_not_outlive_a_sigkilled_heartbeat(tmp_path: Path) -> None:
    """SIGKILL of a tick (the OOM killer) while its Python step runs a child process: the next tick
    ends the child, as it ends an ``--exec`` program's (until 2026-12-06 it ran on, unwatched), and
    leaves no scratch folder; a child started by a tick that ended normally is not touched."""
    source = (
        "import pathlib, subprocess, sys, time\n"
        "def step(ctx):\n"
        "    if pathlib.Path('go').exists():\n"
        "        quiet = {'stdout': subprocess.DEVNULL, 'stderr': subprocess.DEVNULL}\n"
        "        child = subprocess.Popen(['sleep', '300'], **quiet)\n"
        "        pathlib.Path('pids').write_text(pathlib.Path('pids').read_text() + f'{child.pid} '"
        " if pathlib.Path('pids').exists() else f'{child.pid} ')\n"
        "        if ctx.tick > 1:\n"
        "            time.sleep(300)\n"
    )
    agent = make_agent(tmp_path, source)
    (agent.root / "go").touch()
    kept = agent.cli("tick")  # ends normally: its child is the agent's own business
    assert kept.returncode == 0, kept.stderr
    argv = [sys.executable, "-m", "heartbeat", "tick", *agent.flags()]
    proc = subprocess.Popen(
        argv, cwd=agent.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=os.setpgrp
    )
    pids: list[int] = []
    try:
        wait_until(lambda: len(exec_pids(agent.root)) == 2, what="the step's second child", proc=proc)
        pids = exec_pids(agent.root)
        proc.kill()  # SIGKILL: no finally block of ours runs
        proc.wait()
        assert alive(pids[1]), "the child outlives the SIGKILLed tick until the next one"
        (agent.root / "go").unlink()
        assert agent.cli("tick").returncode == 0
        wait_until(lambda: not alive(pids[1]), timeout=5, what="the next tick to end the orphaned child")
        assert alive(pids[0])  # started by a tick that ended normally
        assert not [p for p in agent.state.iterdir() if p.name.startswith(".exec-")]
    finally:
        for pid in pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_no_two_copies_of_an_exec_agent_after_sigterm(tmp_path: Path) -> None:
    """SIGTERM to a tick, then the next tick: the first agent is gone before the second starts."""
    agent, flags = exec_agent(tmp_path, "hang")
    argv = [sys.executable, "-m", "heartbeat", "tick", *flags, "--state-dir", str(agent.state)]
    first = subprocess.Popen(argv, cwd=agent.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_until(lambda: len(exec_pids(agent.root)) == 2, what="the first agent")
    old = exec_pids(agent.root)
    first.send_signal(signal.SIGTERM)
    first.wait(timeout=30)
    second = subprocess.Popen(argv, cwd=agent.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: len(exec_pids(agent.root)) == 4, what="the second agent")
        assert not any(alive(p) for p in old)
        assert any(e["event"] == "interrupted" for e in agent.journal())
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=30)


# ---------------------------------------------------------------- 8. kill --reason with any bytes


def test_kill_reason_with_latin1_bytes_writes_the_kill_file(tmp_path: Path) -> None:
    """A reason typed in a Latin-1 terminal: the KILL file holds those bytes, exit 0, and it stops."""
    agent = make_agent(tmp_path, "def step(ctx):\n    pass\n")
    argv = [
        b"-m",
        b"heartbeat",
        b"kill",
        b"--kill-file",
        str(agent.kill).encode(),
        b"--reason",
        b"caf\xe9 down",
    ]
    done = subprocess.run([sys.executable.encode(), *argv], cwd=agent.root, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert agent.kill.read_bytes() == b"caf\xe9 down\n"
    assert agent.cli("tick").returncode == 3


# ---------------------------------------------------------------- 9. a stepped-back wall clock


class SteppingBack:
    """A wall clock that jumps back an hour every time it is read (NTP gone mad, a VM resumed)."""

    def __init__(self) -> None:
        self.now = datetime(2026, 6, 1, 12, tzinfo=UTC)
        self.lock = threading.Lock()

    def __call__(self) -> datetime:
        with self.lock:
            self.now -= timedelta(hours=1)
            return self.now


def runner_over(tmp_path: Path, ticks: int | None, clock: Callable[[], datetime]) -> tuple[Runner, list[Any]]:
    config = HeartbeatConfig(
        base_dir=tmp_path, agent=AgentConfig(state_dir=tmp_path / "state", kill_file=tmp_path / "KILL")
    )
    results: list[Any] = []
    hb = Heartbeat(config, step=lambda ctx: ctx.record("work", {"n": ctx.tick}, output="ok"), clock=clock)
    trigger = make_trigger(every=timedelta(seconds=0.05), cron=None)
    return Runner([hb], trigger, ticks=ticks, on_tick=results.append, clock=clock), results


def test_a_stepped_back_wall_clock_never_stalls_run(tmp_path: Path) -> None:
    """Every read of the wall clock an hour earlier: an interval schedule still ticks on time."""
    runner, results = runner_over(tmp_path, 5, SteppingBack())
    started = time.monotonic()
    summary = runner.run()
    assert summary.exit_code == 0 and len(results) == 5
    assert time.monotonic() - started < 5


def test_a_stepped_back_wall_clock_never_stalls_the_kill_watch(tmp_path: Path) -> None:
    """The KILL watch works off the monotonic clock too."""
    runner, _ = runner_over(tmp_path, None, SteppingBack())
    timer = threading.Timer(0.3, lambda: (tmp_path / "KILL").write_text("stop"))
    timer.start()
    started = time.monotonic()
    summary = runner.run()
    timer.cancel()
    assert summary.exit_code == 3 and time.monotonic() - started < 0.3 + 1.0


# ---------------------------------------------------------------- 10. two runs on one folder


def test_a_second_run_on_one_state_folder_refuses_to_start(tmp_path: Path) -> None:
    """Two `heartbeat run` loops would double the pace: the second exits 5 with one line."""
    agent = make_agent(tmp_path, "def step(ctx):\n    ctx.data['n'] = ctx.data.get('n', 0) + 1\n")
    first = agent.spawn("run", "--every", "1h")
    try:
        wait_until(lambda: (agent.state / "state.json").exists(), what="the first run's tick")
        second = agent.cli("run", "--every", "1h", timeout=30)
        assert second.returncode == 5, second.stderr
        assert second.stderr.count("\n") == 1 and "another `heartbeat run`" in second.stderr
        assert agent.cli("tick").returncode == 0  # a cron tick beside a run still works
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(timeout=30)
    assert first.returncode == 0


# ---------------------------------------------------------------- 11. --ticks with stdout closed


@pytest.mark.parametrize("how", ["broken-pipe", "closed-fd"])
def test_run_ticks_n_stops_after_n_ticks_with_stdout_closed(tmp_path: Path, how: str) -> None:
    """No BrokenPipe loop: N ticks, then exit 0."""
    agent = make_agent(tmp_path, "def step(ctx):\n    ctx.record('work', {'n': ctx.tick}, output='ok')\n")
    argv = [sys.executable, "-m", "heartbeat", "run", *agent.flags(), "--every", "0.05s", "--ticks", "4"]
    if how == "broken-pipe":
        proc = subprocess.Popen(argv, cwd=agent.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None
        proc.stdout.close()  # the reader is gone: every write is EPIPE
    else:
        proc = subprocess.Popen(argv, cwd=agent.root, stderr=subprocess.PIPE, preexec_fn=lambda: os.close(1))
    try:
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 0, proc.stderr.read() if proc.stderr else b""
    assert agent.load().ticks == 4


def test_the_fleet_stop_ends_a_tick_while_its_metric_is_slow(tmp_path: Path) -> None:
    """Live round 49: the fleet stop (``[stop] path``) engaged while the metric measured at the
    tick's end was ignored until the metric returned (exit 0 after seconds); KILL was not. Exit 3."""
    agent = make_agent(tmp_path, SLOW_METRIC)
    stop = tmp_path / "STOP-ALL"
    (tmp_path / "heartbeat.toml").write_text(f'[stop]\npath = "{stop}"\n')
    proc = agent.spawn(
        "tick", "--config", str(tmp_path / "heartbeat.toml"), "--progress", f"{agent.module}:progress"
    )
    wait_until(lambda: (agent.root / "measuring").exists(), what="the metric to start", proc=proc)
    took = stop_time(proc, stop)
    assert proc.returncode == 3, proc.stderr.read() if proc.stderr else ""
    assert took <= 2.0, (
        f"tick took {took:.2f} s to stop behind a slow metric"
    )  # the fleet stop: about a second


def test_a_pause_asked_for_while_the_baseline_is_measured_comes_before_the_step(tmp_path: Path) -> None:
    """Live round 49: a person's ``heartbeat pause`` while the first heartbeat measured its baseline
    waited for the slow metric, then the step ran a whole heartbeat. The step is never begun now."""
    agent = make_agent(tmp_path, SLOW_METRIC.replace('ctx.data.get("slow_baseline")', "True"))
    proc = agent.spawn("tick", "--progress", f"{agent.module}:progress")
    wait_until(lambda: (agent.root / "measuring").exists(), what="the baseline to start", proc=proc)
    began = time.monotonic()
    paused = agent.cli("pause", "--reason", "lunch")
    took = time.monotonic() - began
    out, err = proc.communicate(timeout=60)
    assert paused.returncode == 0, paused.stderr
    assert took < 6.0  # a fresh CLI process and its wait; it waited out the 30 s metric before
    assert proc.returncode == 0 and "paused before the step began" in out + err, (out, err)
    assert [e for e in agent.journal() if e["event"] == "action"] == []
    assert agent.load().status.value == "paused"
