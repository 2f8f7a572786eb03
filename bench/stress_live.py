"""Live-path stress: KILL and the fleet stop under a steady call stream (Session, mcp-proxy, an adapter).

Long version of tests/test_live_stops.py (same harness: tests/live_streams.py).
Each round streams tool calls (one every ``--pace`` seconds) through a library
``Session``, ``heartbeat mcp-proxy`` in front of examples/mcp/server.py (a real
MCP client over stdio) and a PydanticAI agent whose toolset is guarded by a
state folder; after ``--before`` seconds it writes the agent's KILL file or
the fleet stop (``[stop] path``), and keeps calling for ``--after`` seconds.

Every stream must be refused within ``--bound`` seconds of the stop (about a
second: the fleet stop is read at most once a second), every call the tool
executed must be in the journal, and the stop must be journaled.

    python bench/stress_live.py [--rounds 3] [--pace 0.05] [--before 2] [--after 3] [--bound 1.5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import live_streams as ls


def main() -> int:
    """Run the rounds and print what they showed; exit 1 if any promise broke."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pace", type=float, default=0.05, help="seconds between two calls")
    parser.add_argument("--before", type=float, default=2.0, help="seconds of calls before the stop")
    parser.add_argument("--after", type=float, default=3.0, help="seconds of calls after the stop")
    parser.add_argument("--bound", type=float, default=1.5, help="refused within this many seconds")
    args = parser.parse_args()
    print(f"live stress: {args.rounds} round(s) x 3 paths x 2 stops, a call every {args.pace} s")
    started = time.monotonic()
    problems: list[str] = []
    worst: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="hb-live-") as tmp:
        for round_ in range(args.rounds):
            reports = ls.everything(
                Path(tmp) / f"round-{round_}", pace=args.pace, before=args.before, after=args.after
            )
            for report in reports:
                report.check(args.bound)
                print(report.summary())
                problems += report.problems
                key = f"{report.path}/{report.stop}"
                if report.refused_after is not None:
                    worst[key] = max(worst.get(key, 0.0), report.refused_after)
    print("slowest refusal after the stop: " + ", ".join(f"{k} {v:.2f} s" for k, v in worst.items()))
    print(f"took {time.monotonic() - started:.1f} s")
    for problem in problems:
        print("PROBLEM:", problem)
    print(
        "RESULT:",
        "every stop honoured, every call journaled" if not problems else f"{len(problems)} PROBLEMS",
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
