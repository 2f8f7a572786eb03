"""Bad-input stress: thousands of generated state files, config files and traces.

Long version of the fuzz tests in tests/test_reliability.py (same strategies
and checks: tests/reliability_agents.py). Each input must be accepted, or
rejected with a HeartbeatError whose message is one line (the file byte for
byte unchanged); an accepted state must survive a tick and load again, an
accepted config must build and tick, and ``heartbeat replay --json`` must
agree with the library (exit 0, or exit 2 with one stderr line naming the
line). Inputs include binary junk, truncations and byte flips of a real
state, wrong types, 1e400, 10**100, NaN, Infinity, lone surrogates,
non-UTF-8 bytes and nesting up to 10_000 levels.

    python bench/stress_fuzz.py [--examples 3000] [--seed N]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import reliability_agents as ra
from hypothesis import HealthCheck, given, seed, settings

CHECKS = {"state": ra.check_state_file, "config": ra.check_config_file, "trace": ra.check_trace_file}


def _counting(check: Any, outcomes: Counter[str]) -> Any:
    """A one-argument function for @given that runs ``check`` and counts its outcome."""

    def one(raw: bytes) -> None:
        outcomes[check(raw)] += 1

    return one


def main() -> int:
    """Fuzz each kind of input and print the counts; exit 1 on the first broken promise."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=3000, help="inputs per kind")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    strategies = ra.strategies()
    failed = False
    for kind, check in CHECKS.items():
        outcomes: Counter[str] = Counter()
        started = time.monotonic()

        test = settings(
            max_examples=args.examples, deadline=None, database=None, suppress_health_check=list(HealthCheck)
        )(given(strategies[kind])(_counting(check, outcomes)))
        if args.seed is not None:
            test = seed(args.seed)(test)
        try:
            test()
        except Exception as exc:
            failed = True
            print(f"{kind}: BROKEN PROMISE after {sum(outcomes.values())} inputs: {exc!r}"[:2000])
            continue
        tried = sum(outcomes.values())
        print(
            f"{kind:>6}: {tried} inputs tried in {time.monotonic() - started:.0f} s: "
            + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()))
        )
    print("RESULT:", "every input accepted or cleanly rejected" if not failed else "PROBLEMS")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
