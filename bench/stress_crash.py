"""Crash stress: SIGKILL heartbeats at random moments, hundreds of times, and check nothing is lost.

Long version of tests/test_reliability.py::test_sigkill_at_random_moments_loses_nothing
(same harness: tests/reliability_agents.py). A stuck-now-and-then agent
(escalates every 5 ticks, raises every 7th) with a file notifier and a webhook
notifier whose server answers after 30 ms. Each kill either

* starts a tick-loop child (forkserver), waits until it announces a chosen
  phase (step, save, ESCALATION.md, outbox put, file/webhook delivery, after
  the save, journal append, resume, or just "running"), waits a random
  moment about that phase's length, and SIGKILLs it; or
* starts a real ``python -m heartbeat tick`` or ``run --every 0.1s``, waits for
  its step to run, waits a random 0-50 ms (0-600 ms for run) and SIGKILLs it.

After every kill: state.json loads, the journal reads, ``ticks`` never went
back and is at least the last tick a child reported complete, and an agent
in needs_human has its escalation delivered to each notifier or waiting in
outbox/. Every 10 kills a clean tick must leave no ``.state.json.*.tmp``. At
the end the webhook is healed and every escalation ever decided must have
reached both notifiers.

    python bench/stress_crash.py [--kills 300] [--cli-kills 30] [--seed N]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import reliability_agents as ra


def main() -> int:
    """Run the campaign and print what it showed; exit 1 if any promise broke."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=300, help="tick-loop children to SIGKILL")
    parser.add_argument("--cli-kills", type=int, default=30, help="real CLI processes to SIGKILL")
    parser.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "big"))
    args = parser.parse_args()
    print(f"crash stress: {args.kills} + {args.cli_kills} SIGKILLs, seed {args.seed}")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hb-crash-") as tmp, ra.webhook_server() as server:
        report = ra.crash_campaign(
            Path(tmp) / "agent",
            server,
            kills=args.kills,
            cli_kills=args.cli_kills,
            seed=args.seed,
            log=lambda line: print(line, flush=True),
        )
    print(report.summary())
    print(f"took {time.monotonic() - started:.0f} s")
    print("RESULT:", "nothing lost" if not report.problems else f"{len(report.problems)} PROBLEMS")
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
