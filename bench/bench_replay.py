"""Replay throughput: actions per second over a generated 100,000-action trace.

The trace (the format `heartbeat replay` reads) has ``--actions-per-tick`` actions per
heartbeat with fresh arguments, rising progress, an errored action now and
then, and every ``--stuck-every`` heartbeats one that repeats an action
(a ``repeat`` anomaly and a recovery, cleared by the next heartbeat), so the
replay runs to the end instead of escalating.

Baseline, same run, interleaved: reading the file and ``json.loads`` of each
line, nothing else. Subjects: ``heartbeat.replay.play.load_trace`` (parse +
validate), ``heartbeat.replay.play.replay`` (the whole replay, consumed), and
``heartbeat replay TRACE --json`` as a fresh process against a fresh process
that only json-parses the lines.

    python bench/bench_replay.py [--actions 100000] [--actions-per-tick 5] [--reps 3] [--cli-reps 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from _common import human_bytes, machine, median, table

from heartbeat.config.file import HeartbeatConfig
from heartbeat.replay.play import load_trace, replay

PARSE_ONLY = "import json, sys\nfor line in open(sys.argv[1], 'rb'):\n    json.loads(line)\n"
TOOLS = ("search", "read", "summarize", "write_note")


def make_trace(path: Path, actions: int, per_tick: int, stuck_every: int, error_every: int) -> int:
    """Write the trace; return the number of heartbeats."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    lines: list[str] = []
    done = tick = 0
    while done < actions:
        tick += 1
        n = min(per_tick, actions - done)
        batch: list[dict[str, Any]] = []
        if stuck_every and tick % stuck_every == 0:
            batch = [
                {"tool": "search", "args": {"q": "the same query"}, "output": "no new results"}
                for _ in range(n)
            ]
        else:
            for j in range(n):
                k = done + j + 1
                action: dict[str, Any] = {
                    "tool": TOOLS[k % len(TOOLS)],
                    "args": {"q": f"topic {tick} angle {j}", "page": j + 1},
                }
                if error_every and k % error_every == 0:
                    action["error"] = "TimeoutError: upstream did not answer in 30s"
                else:
                    action["output"] = f"result {k}: a paragraph of text about topic {tick}"
                batch.append(action)
        done += n
        at = (start + timedelta(minutes=30 * tick)).isoformat()
        lines.append(json.dumps({"at": at, "progress": float(tick), "actions": batch}))
    path.write_text("\n".join(lines) + "\n")
    return tick


def parse_only(path: Path) -> int:
    count = 0
    with path.open("rb") as handle:
        for line in handle:
            count += len(json.loads(line)["actions"])
    return count


def run_replay(path: Path, config: HeartbeatConfig) -> tuple[int, int]:
    ticks = anomalies = 0
    last = "continue"
    for result in replay(path, config):
        ticks += 1
        anomalies += len(result.anomalies)
        last = result.decision.action
    if last == "escalate":
        raise SystemExit("the generated trace escalated: the benchmark would stop early")
    return ticks, anomalies


def timed(func: Callable[[], object]) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = func()
    return time.perf_counter() - t0, out


def cli_lines(argv: list[str]) -> tuple[float, int]:
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, check=False)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{argv}: exit {done.returncode}: {done.stderr.decode()[-2000:]}")
    return elapsed, done.stdout.count(b"\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--actions", type=int, default=100_000, help="actions in the trace (default 100000)")
    parser.add_argument("--actions-per-tick", type=int, default=5, help="actions per heartbeat (default 5)")
    parser.add_argument(
        "--stuck-every", type=int, default=100, help="a repeating heartbeat every N (0: none)"
    )
    parser.add_argument("--error-every", type=int, default=25, help="an errored action every N (0: none)")
    parser.add_argument("--reps", type=int, default=3, help="in-process rounds (default 3)")
    parser.add_argument("--cli-reps", type=int, default=3, help="fresh-process rounds (default 3; 0: skip)")
    args = parser.parse_args()

    config = HeartbeatConfig()
    with tempfile.TemporaryDirectory(prefix="hb-bench-replay-") as tmp:
        trace = Path(tmp) / "trace.jsonl"
        ticks = make_trace(trace, args.actions, args.actions_per_tick, args.stuck_every, args.error_every)
        size = trace.stat().st_size
        times: dict[str, list[float]] = {"parse": [], "load": [], "replay": [], "cli": [], "cli_parse": []}
        replayed = anomalies = 0
        for _ in range(args.reps):
            elapsed, counted = timed(lambda: parse_only(trace))
            assert counted == args.actions, counted
            times["parse"].append(elapsed)
            elapsed, loaded = timed(lambda: load_trace(trace))
            assert isinstance(loaded, list) and len(loaded) == ticks
            times["load"].append(elapsed)
            elapsed, outcome = timed(lambda: run_replay(trace, config))
            assert isinstance(outcome, tuple)
            replayed, anomalies = outcome
            times["replay"].append(elapsed)
        py = sys.executable
        for _ in range(args.cli_reps):
            elapsed, lines = cli_lines([py, "-m", "heartbeat", "replay", str(trace), "--json"])
            assert lines == ticks, (lines, ticks)
            times["cli"].append(elapsed)
            elapsed, _ = cli_lines([py, "-c", PARSE_ONLY, str(trace)])
            times["cli_parse"].append(elapsed)

    n = args.actions
    base = median(times["parse"])

    def row(name: str, key: str, baseline: float) -> list[str]:
        t = median(times[key])
        return [name, f"{t:.3f}", f"{n / t:,.0f}", f"{ticks / t:,.0f}", f"{t / baseline:.1f}x"]

    print(f"bench_replay: {machine()}")
    print(
        f"trace: {n:,} actions in {ticks:,} heartbeats ({args.actions_per_tick}/heartbeat), "
        f"{human_bytes(size)}; {replayed:,} heartbeats replayed, {anomalies} anomalies "
        f"(a repeat every {args.stuck_every} heartbeats); medians of {args.reps} interleaved rounds"
    )
    rows = [
        row("baseline: read + json.loads per line", "parse", base),
        row("heartbeat.replay.play.load_trace (parse + validate)", "load", base),
        row("heartbeat.replay.play.replay (whole replay)", "replay", base),
    ]
    if args.cli_reps:
        cli_base = median(times["cli_parse"])
        rows += [
            row("fresh process: python -c json.loads per line", "cli_parse", cli_base),
            row("fresh process: heartbeat replay TRACE --json", "cli", cli_base),
        ]
    table(["", "seconds", "actions/s", "heartbeats/s", "vs baseline"], rows)
    detect = median(times["replay"]) - median(times["load"])
    print(
        f"\nreplay share: parse + validate {median(times['load']):.3f} s, detectors + policy + state "
        f"copies {detect:.3f} s ({detect / n * 1e6:.1f} us per action, {detect / ticks * 1e6:.0f} us "
        f"per heartbeat)"
    )
    ratio = median(times["replay"]) / base
    cli_note = ""
    if args.cli_reps:
        cli_note = (
            f"; CLI {n / median(times['cli']):,.0f} actions/s, "
            f"{median(times['cli']) / median(times['cli_parse']):.1f}x its parse-only process"
        )
    print(
        f"\nRATIO replay / json-parse baseline = {ratio:.1f}x slower "
        f"({n / median(times['replay']):,.0f} vs {n / base:,.0f} actions/s{cli_note})"
    )


if __name__ == "__main__":
    main()
