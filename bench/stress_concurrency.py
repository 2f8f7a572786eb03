"""Concurrency stress: processes race `heartbeat tick` on one state folder; no update may be lost.

Long version of tests/test_reliability.py::test_four_processes_ticking_at_once_lose_no_update
(same harness: tests/reliability_agents.py). Each process runs the real CLI
(``heartbeat.cli.main.main(["tick", "--json", ...])``) in a loop after a common
barrier, and ``heartbeat resume`` (retried while the lock is busy) when its
tick escalated. The agent counts its own calls in ``data.n``, gets stuck on
every 9th tick (escalate_after = 1) and raises on every 6th.

Every call must complete a tick (exit 0, 1 or 4) or be refused with exit 5;
the completed ticks must be numbered exactly 1..K with no repeat, and the
final ``ticks``, the step's own counter and the journal must all say K;
every escalation must be delivered exactly once.

    python bench/stress_concurrency.py [--processes 4] [--calls 500]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import reliability_agents as ra


def main() -> int:
    """Run the race and print what it showed; exit 1 if any promise broke."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--calls", type=int, default=500, help="tick calls in all")
    args = parser.parse_args()
    each = max(1, args.calls // args.processes)
    print(f"concurrency stress: {args.processes} processes x {each} `heartbeat tick` calls")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hb-race-") as tmp:
        report = ra.race_campaign(Path(tmp) / "agent", processes=args.processes, calls_each=each)
    print(report.summary())
    print(f"took {time.monotonic() - started:.1f} s")
    print("RESULT:", "no lost update" if not report.problems else f"{len(report.problems)} PROBLEMS")
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
