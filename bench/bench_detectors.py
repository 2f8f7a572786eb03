"""Per-action detector cost: heartbeat's Monitor.record against promptise 1.10.1's HealthMonitor.

One generated trace (default 20,000 actions: research steps, cursor paging,
status polling, notes, and now and then a stuck burst, a search/read loop or
a burst of failures) is fed action by action to

* ``heartbeat.detect.monitor.Monitor.record``: fingerprinting (canonical JSON +
  hash, the masked shape and the result key), the ActionRecord, and every
  default detector (repeat, loop, empty, error_rate, near_repeat,
  recurring, recurring_error, cycle), with the loop window at 20 and at 500;
* promptise 1.10.1 ``HealthMonitor.record_tool_call`` (its per-call
  recording: hashing plus its stuck and loop checks) with ``loop_window`` at
  20 and 500, in its own venv ``bench/.venv-promptise`` (created with
  ``pip install promptise==1.10.1`` when missing), driven by a child process
  that times one round per request so both sides run interleaved.

A third row times ``Monitor.record`` with no detectors: the fingerprint
and ActionRecord every action pays before any detection. Each round times
the whole trace; the table shows the best round (as
``timeit`` does: the least disturbed by other work on the machine) and the
median, in microseconds per action, and the ratios of the best rounds
(ours / theirs) come last.
Targets (issue 25 item 8): at most 1.0x at window 20, at most 0.1x at window 500.

    python bench/bench_detectors.py [--actions 20000] [--rounds 5] [--no-promptise]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _common import BENCH_DIR, machine, median, table, verdict

from heartbeat.config.file import DetectorsConfig, LoopConfig, RepeatConfig
from heartbeat.detect.monitor import Monitor

WINDOWS = (20, 500)
TARGETS = {20: 1.0, 500: 0.1}
PER_TICK = 10  # actions per heartbeat: start_tick is called this often
PROMPTISE = "promptise==1.10.1"
PROMPTISE_VENV = BENCH_DIR / ".venv-promptise"
PROMPTISE_IMPORT = "from promptise.runtime.health import HealthMonitor"

# Runs inside the promptise venv: load the trace, then time one round per window read on stdin.
CHILD = r'''
import json, logging, sys, time
from promptise.runtime.config import HealthConfig
from promptise.runtime.health import HealthMonitor

logging.getLogger("promptise").setLevel(logging.ERROR)  # its anomaly warnings would flood stderr
calls = [(tool, args or {}) for tool, args, _output, _error in json.load(open(sys.argv[1]))]


def drive(coro):
    """Run a coroutine that never awaits, without an event loop's cost in the timing."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    raise RuntimeError("record_tool_call awaited something")


for line in sys.stdin:
    window = int(line)
    monitor = HealthMonitor(HealthConfig(enabled=True, loop_window=window), process_id="bench")
    record = monitor.record_tool_call
    t0 = time.perf_counter()
    for tool, args in calls:
        drive(record(tool, args))
    elapsed = time.perf_counter() - t0
    print(json.dumps({"seconds": elapsed, "anomalies": len(monitor.anomalies)}), flush=True)
'''

Trace = list[tuple[str, dict[str, Any] | None, str | None, str | None]]
TOPICS = (
    "heat pump subsidies",
    "river flood models",
    "battery recycling",
    "urban tree cover",
    "coastal erosion",
    "grid storage",
    "soil carbon",
    "wildfire smoke",
    "rail freight",
)


def _text(rng: random.Random, low: int, high: int) -> str:
    words = ("the", "data", "report", "shows", "a", "rise", "in", "cost", "per", "unit", "2024")
    size = rng.randint(low, high)
    out: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(words)
        out.append(word)
        length += len(word) + 1
    return " ".join(out)


def make_trace(n: int, seed: int = 7) -> Trace:
    """A realistic mix of agent actions: (tool, args, output, error)."""
    rng = random.Random(seed)
    trace: Trace = []
    cursor = 0
    status = 0

    def add(tool: str, args: dict[str, Any] | None, output: str | None, error: str | None = None) -> None:
        if args is not None and rng.random() < 0.3:
            args = {**args, "request_id": f"req-{rng.getrandbits(48):x}"}  # volatile
        trace.append((tool, args, output, error))

    while len(trace) < n:
        roll = rng.random()
        if roll < 0.45:  # research: a search and one to three reads
            query = f"{rng.choice(TOPICS)} {rng.randrange(5000)}"
            add("search", {"q": query, "limit": 10}, _text(rng, 200, 800))
            for _ in range(rng.randint(1, 3)):
                url = f"https://example.org/articles/{rng.randrange(10**6)}"
                if rng.random() < 0.08:
                    add("fetch", {"url": url, "timeout": 30}, None, "503 Service Unavailable")
                else:
                    add("fetch", {"url": url, "timeout": 30}, _text(rng, 500, 1500))
        elif roll < 0.60:  # paging with an advancing cursor
            add(
                "list_items",
                {"cursor": cursor, "limit": 50, "filter": {"state": "open"}},
                _text(rng, 100, 400),
            )
            cursor += 50
        elif roll < 0.70:  # polling a job until its status stops changing
            status += rng.random() < 0.7
            add("get_status", {"job_id": "job-17"}, f"running, {status % 100}% done")
        elif roll < 0.80:  # writing notes
            add("write_note", {"path": f"notes/{rng.randrange(200)}.md", "text": _text(rng, 80, 240)}, "ok")
        elif roll < 0.84:  # stuck: the same search again and again
            query = f"{rng.choice(TOPICS)} latest"
            for _ in range(rng.randint(3, 5)):
                add("search", {"q": query, "limit": 10}, "no results")
        elif roll < 0.87:  # a search/read loop with fixed arguments
            query = f"{rng.choice(TOPICS)} overview"
            url = f"https://example.org/overview/{rng.randrange(100)}"
            for _ in range(3):
                add("search", {"q": query, "limit": 10}, _text(rng, 200, 400))
                add("fetch", {"url": url, "timeout": 30}, _text(rng, 500, 900))
        elif roll < 0.90:  # a failing dependency
            for _ in range(rng.randint(2, 6)):
                add(
                    "fetch",
                    {"url": "https://api.example.org/v2/items", "timeout": 30},
                    None,
                    "503 Service Unavailable",
                )
        else:  # asking the model: the prompt is the argument
            add(
                "llm",
                {"model": "small", "prompt": _text(rng, 300, 1200), "temperature": 0.2},
                _text(rng, 50, 600),
            )
    return trace[:n]


def config(window: int) -> DetectorsConfig:
    """The detector configuration of the benchmark: our defaults with the loop window set."""
    return DetectorsConfig(
        volatile_args=["request_id"],
        polling=["get_status"],
        repeat=RepeatConfig(tools={"get_status": 10}),
        loop=LoopConfig(window=window),
    )


def time_ours(trace: Trace, window: int, *, detect: bool = True) -> tuple[float, int]:
    """Seconds to record the whole trace, and the anomalies reported (detect=False: no detectors)."""
    monitor = Monitor(config(window), detectors=None if detect else [])
    now = datetime(2026, 1, 1, tzinfo=UTC)
    record = monitor.record
    found = 0
    t0 = time.perf_counter()
    for i, (tool, args, output, error) in enumerate(trace):
        if i % PER_TICK == 0:
            found += len(monitor.tick_anomalies)
            monitor.start_tick(i // PER_TICK + 1)
        record(tool, args, output=output, error=error, now=now)
    elapsed = time.perf_counter() - t0
    return elapsed, found + len(monitor.tick_anomalies)


def promptise_python() -> tuple[Path | None, str]:
    """The promptise venv's python, created when missing; (None, why) when it cannot be had."""
    python = PROMPTISE_VENV / "bin" / "python"
    probe = [str(python), "-c", PROMPTISE_IMPORT]
    if python.exists() and subprocess.run(probe, capture_output=True, check=False).returncode == 0:
        return python, ""
    print(f"installing {PROMPTISE} into {PROMPTISE_VENV} (once) ...", file=sys.stderr)
    try:
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(PROMPTISE_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", PROMPTISE], check=True, timeout=1200)
    except (subprocess.SubprocessError, OSError) as exc:
        return None, f"{PROMPTISE} could not be installed: {exc}"
    done = subprocess.run(probe, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return None, f"{PROMPTISE} does not import: {done.stderr.strip().splitlines()[-1:]}"
    return python, ""


def main() -> None:
    """Generate the trace, time both sides interleaved, print the table and the ratios last."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=20_000, help="actions in the trace")
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds per subject and window")
    parser.add_argument("--no-promptise", action="store_true", help="time heartbeat only")
    args = parser.parse_args()

    print(machine())
    trace = make_trace(args.actions)
    python, why = (None, "left out (--no-promptise)") if args.no_promptise else promptise_python()
    child: subprocess.Popen[str] | None = None
    with tempfile.TemporaryDirectory() as tmp:
        if python is not None:
            trace_file = Path(tmp) / "trace.json"
            trace_file.write_text(json.dumps(trace))
            script = Path(tmp) / "promptise_child.py"
            script.write_text(CHILD)
            child = subprocess.Popen(
                [str(python), str(script), str(trace_file)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )

        ours: dict[int, list[float]] = {w: [] for w in WINDOWS}
        floor: dict[int, list[float]] = {w: [] for w in WINDOWS}
        theirs: dict[int, list[float]] = {w: [] for w in WINDOWS}
        found: dict[str, int] = {}
        time_ours(trace, WINDOWS[0])  # warm-up: imports, caches
        for _ in range(args.rounds):
            for window in WINDOWS:
                seconds, count = time_ours(trace, window)
                ours[window].append(seconds / len(trace))
                floor[window].append(time_ours(trace, window, detect=False)[0] / len(trace))
                found[f"heartbeat w={window}"] = count
                if child is not None and child.stdin is not None and child.stdout is not None:
                    child.stdin.write(f"{window}\n")
                    child.stdin.flush()
                    answer = json.loads(child.stdout.readline())
                    theirs[window].append(answer["seconds"] / len(trace))
                    found[f"promptise w={window}"] = answer["anomalies"]
        if child is not None:
            assert child.stdin is not None
            child.stdin.close()
            child.wait(timeout=60)

    def us(values: list[float]) -> list[str]:
        if not values:
            return ["-", "-"]
        return [f"{min(values) * 1e6:,.2f}", f"{median(values) * 1e6:,.2f}"]

    rows = [
        [
            "heartbeat Monitor.record (every default detector)",
            *(cell for w in WINDOWS for cell in us(ours[w])),
        ],
        [
            "  of which fingerprint + ActionRecord (no detectors)",
            *(cell for w in WINDOWS for cell in us(floor[w])),
        ],
    ]
    if python is not None:
        rows.append(
            [
                "promptise 1.10.1 HealthMonitor.record_tool_call",
                *(cell for w in WINDOWS for cell in us(theirs[w])),
            ]
        )
    table(
        ["subject (µs per action)", *(f"{k} w={w}" for w in WINDOWS for k in ("best", "median"))],
        rows,
        title=f"{len(trace):,} actions, {args.rounds} interleaved rounds",
    )
    print("anomalies reported: " + ", ".join(f"{k} {v}" for k, v in found.items()))
    if python is None:
        print(f"promptise: {why}; only heartbeat's numbers are shown")
        return
    print()
    for window in WINDOWS:
        ratio = min(ours[window]) / min(theirs[window])
        print(f"ours/theirs at window {window}: {ratio:.3f}x  ({verdict(ratio, TARGETS[window])})")


if __name__ == "__main__":
    main()
