"""Exec-children stress: an ``--exec`` agent that forks background children never outlives its tick.

Long version of tests/test_emergency_stop.py's exec tests. Each round starts
a real ``heartbeat tick --exec`` (or ``run --every``) whose program starts
1-3 background children and then exits at once or hangs; after a random
0-300 ms the round ends it one of five ways (the program's own exit, KILL,
SIGTERM, SIGINT, the exec timeout of 2 s). Then every process the program and its
children ever were must be gone within 2 s, the heartbeat must have exited
with the documented code, and ``state.json`` must load.

    python bench/stress_exec.py [--rounds 60] [--seed N]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from heartbeat.state.store import StateStore

PROGRAM = """
import os, subprocess, sys, time
sleeper = [sys.executable, "-c", "import time; time.sleep(120)"]
kids = [subprocess.Popen(sleeper) for _ in range(int(sys.argv[1]))]
with open("pids", "a") as f:
    f.write(" ".join(str(p) for p in [os.getpid(), *(k.pid for k in kids)]) + "\\n")
if sys.argv[2] == "hang":
    time.sleep(120)
"""

EXPECTED = {"exit": {0}, "KILL": {3}, "SIGTERM": {143, 0}, "SIGINT": {130, 0}, "timeout": {1}}


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (an unreaped zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def one_round(root: Path, rng: random.Random, number: int) -> tuple[str, list[str]]:
    """Run one round; return how it ended and the broken promises."""
    how = rng.choice(list(EXPECTED))
    command = rng.choice(["tick", "run"]) if how in ("SIGTERM", "SIGINT", "KILL") else "tick"
    kids = rng.randint(1, 3)
    mode = "exit" if how == "exit" else "hang"
    (root / "pids").unlink(missing_ok=True)
    (root / "KILL").unlink(missing_ok=True)
    state = f"state-{number}"  # a fresh agent each round: failed rounds must not add up to an escalation
    config = root / "heartbeat.toml"
    config.write_text(f'[agent]\nexec_timeout = "{2 if how == "timeout" else 60}s"\n')
    argv = [sys.executable, "-m", "heartbeat", command, "--config", str(config), "--state-dir", state]
    argv += ["--exec", f"{sys.executable} program.py {kids} {mode}"]
    if command == "run":
        argv += ["--every", "1h"]
    proc = subprocess.Popen(
        argv, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    deadline = time.monotonic() + 30
    while not (root / "pids").exists() or len((root / "pids").read_text().split()) < kids + 1:
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            return how, [f"{how}/{command}: the program never started (heartbeat exit {proc.wait()})"]
        time.sleep(0.005)
    pids = [int(p) for p in (root / "pids").read_text().split()]
    time.sleep(rng.uniform(0, 0.3))  # a random moment of the step: the point of the stress
    if how == "KILL":
        (root / "KILL").write_text("stress")
    elif how in ("SIGTERM", "SIGINT"):
        proc.send_signal(getattr(signal, how))
    problems = []
    try:
        code = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
        problems.append(f"{how}/{command}: heartbeat did not exit")
    if code not in EXPECTED[how] and not (command == "run" and how == "exit"):
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        problems.append(f"{how}/{command}: exit {code}, expected {EXPECTED[how]}: {err.strip()[:200]}")
    gone_by = time.monotonic() + 2
    while any(alive(p) for p in pids) and time.monotonic() < gone_by:
        time.sleep(0.01)
    left = [p for p in pids if alive(p)]
    if left:
        problems.append(f"{how}/{command}: {len(left)} process(es) of the agent outlived the tick")
        for pid in left:
            os.kill(pid, signal.SIGKILL)
    try:
        StateStore(root / state).load()
    except Exception as exc:
        problems.append(f"{how}/{command}: state.json does not load: {exc}")
    return f"{how}/{command}", problems


def main() -> int:
    """Run the rounds and print what they showed; exit 1 if any promise broke."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "big"))
    args = parser.parse_args()
    print(f"exec stress: {args.rounds} rounds, seed {args.seed}")
    rng = random.Random(args.seed)
    seen: Counter[str] = Counter()
    problems: list[str] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hb-exec-") as tmp:
        root = Path(tmp)
        (root / "program.py").write_text(PROGRAM)
        for number in range(args.rounds):
            how, found = one_round(root, rng, number)
            seen[how] += 1
            problems += found
    print("rounds: " + ", ".join(f"{k} {v}" for k, v in sorted(seen.items())))
    print(f"problems: {len(problems)}" + "".join(f"\n  - {p}" for p in problems[:20]))
    print(f"took {time.monotonic() - started:.0f} s")
    print("RESULT:", "no agent outlived its tick" if not problems else f"{len(problems)} PROBLEMS")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
