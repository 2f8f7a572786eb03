"""Dead-webhook stress: `heartbeat run` behind a webhook that accepts and never answers.

A stuck agent escalates at every tick it runs (escalate_after = 1); its only
notifier is a webhook on 127.0.0.1 that takes each request and never answers
(timeout 1 s, 1 retry). While ``heartbeat run --every 0.5s`` runs for
``--seconds``, an operator resumes the agent and asks for its status in a
loop, from other real processes. At the end a KILL file stops the run.

Promises checked (exit 1 if one breaks):

* no tick takes longer than one delivery's deadline allows (the gap between
  two tick lines stays under every + (retries + 1) * timeout + backoff + slack);
* the webhook is asked at most (retries + 1) times per message per due
  attempt (back-off 5 s, 10 s, ...), never again at every tick;
* `resume` always succeeds (it waits for a tick that holds the lock, up to
  15 s) and settles what waited (the journal says which); `status` never fails;
* KILL ends the run.

    python bench/stress_notify.py [--seconds 60]
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import math
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import reliability_agents as ra

EVERY, TIMEOUT, RETRIES, BACKOFF = 0.5, 1.0, 1, 0.1
AGENT = textwrap.dedent("""
    def step(ctx):
        for _ in range(3):
            if ctx.record("search", {"q": "same"}, output="the same page"):
                return
""")


def heartbeat(cwd: Path, *argv: str) -> tuple[int, float]:
    """Run one real heartbeat command; (exit code, seconds it took)."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "heartbeat", *argv], cwd=cwd, capture_output=True, text=True, timeout=120
    )
    return done.returncode, time.monotonic() - started


def dead_webhook_under_run(seconds: float) -> list[str]:
    """The whole case; prints its figures and returns the broken promises."""
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="hb-deadhook-") as tmp, ra.webhook_server() as server:
        root = Path(tmp)
        server.delay = 3600.0  # accepts, never answers
        (root / "agent.py").write_text(AGENT)
        (root / "heartbeat.toml").write_text(
            textwrap.dedent(f"""
            [agent]
            step = "agent:step"
            [policy]
            escalate_after = 1
            [[notify]]
            type = "webhook"
            url = "{server.url("/hook")}"
            timeout = "{TIMEOUT}s"
            retries = {RETRIES}
            backoff = "{BACKOFF}s"
            """)
        )
        run = subprocess.Popen(
            [sys.executable, "-m", "heartbeat", "run", "--every", f"{EVERY}s", "--json"],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        tick_times: list[float] = []

        def read_ticks() -> None:
            assert run.stdout is not None
            for line in run.stdout:
                if line.startswith("{"):
                    tick_times.append(time.monotonic())

        reader = threading.Thread(target=read_ticks, daemon=True)
        reader.start()
        codes: collections.Counter[str] = collections.Counter()
        slowest = 0.0
        ends = time.monotonic() + seconds
        while time.monotonic() < ends:
            for command in (["resume", "--note", "try the archive"], ["status"]):
                code, took = heartbeat(root, *command)
                codes[f"{command[0]} exit {code}"] += 1
                slowest = max(slowest, took)
                if code not in ((0,) if command[0] == "resume" else (0, 4)):
                    problems.append(f"`{command[0]}` exited {code}")
            time.sleep(0.5)
        (root / "KILL").write_text("stress over\n")
        killed = time.monotonic()
        try:
            run.wait(timeout=30)
        except subprocess.TimeoutExpired:
            run.kill()
            problems.append("run did not stop within 30 s of KILL")
        stop_delay = time.monotonic() - killed
        reader.join(5)
        events = [
            json.loads(x) for x in (root / "state" / "journal.jsonl").read_text().splitlines() if x.strip()
        ]
        escalations = sum(1 for e in events if e.get("event") == "escalation")
        settled = sum(len(e.get("settled") or ()) for e in events if e.get("event") == "resume")
        requests = len(server.requests)
        gaps = [b - a for a, b in itertools.pairwise(tick_times)]
        worst_gap = max(gaps, default=0.0)
        gap_bound = EVERY + (RETRIES + 1) * TIMEOUT + BACKOFF + 2.0
        # Each message is tried when due: at most 1 + log2(seconds / 5) attempts in the run.
        due_attempts = 1 + math.ceil(math.log2(max(seconds, 5) / 5 + 1))
        request_bound = max(escalations, 1) * (RETRIES + 1) * due_attempts
        print(f"run: {len(tick_times)} ticks in {seconds:.0f} s; worst gap between ticks {worst_gap:.2f} s")
        print(f"webhook: {requests} requests for {escalations} escalations ({settled} settled by resume)")
        print(f"operator commands: {dict(sorted(codes.items()))}; slowest {slowest:.2f} s")
        print(f"KILL -> run ended in {stop_delay:.2f} s (exit {run.returncode})")
        if worst_gap > gap_bound:
            problems.append(f"a tick took {worst_gap:.1f} s, over the {gap_bound:.1f} s bound")
        if requests > request_bound:
            problems.append(f"{requests} webhook requests, over the back-off bound {request_bound}")
        if run.returncode != 3:
            problems.append(f"run exited {run.returncode} after KILL, not 3")
        if escalations and not settled:
            problems.append("no resume settled a waiting page")
    return problems


def main() -> int:
    """Run the case and print what it showed; exit 1 if any promise broke."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    print(
        f"dead-webhook stress: `heartbeat run` for {args.seconds:.0f} s behind a webhook that never answers"
    )
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    problems = dead_webhook_under_run(args.seconds)
    for problem in problems:
        print("  -", problem)
    print("RESULT:", "bounded" if not problems else f"{len(problems)} PROBLEMS")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
