"""Report rendering: ``heartbeat report`` over a journal of 100,000 events, against reading it alone.

The journal is generated in the runner's shape (actions, anomalies,
decisions with recovery instructions, escalations, resumes, pauses, KILLs
and tick events, one batch per heartbeat), with a state folder around it so
the report reads ``state.json`` too.

Baseline, same run, interleaved: ``list(Journal(path).read())``, the journal
read and parsed and nothing else. Subjects: :func:`heartbeat.report.write.write_report`
in process (read + fold + render + atomic write), and ``heartbeat report`` as
a fresh process against a fresh process that only reads the journal. Also
printed: the page's size, and how the in-process time splits.

    python bench/bench_report.py [--events 100000] [--reps 5] [--cli-reps 3]
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

from _common import REPO, human_bytes, machine, median, table

from heartbeat.config.file import HeartbeatConfig
from heartbeat.core.models import AgentState, Status
from heartbeat.report.data import collect
from heartbeat.report.page import render_agent
from heartbeat.report.write import agent_page, write_report
from heartbeat.state.journal import Journal
from heartbeat.state.store import StateStore
from heartbeat.tick.runner import Heartbeat

READ_ONLY = (
    "import sys\nfrom heartbeat.state.journal import Journal\n"
    "print(sum(1 for _ in Journal(sys.argv[1]).read()))\n"
)
TOOLS = ("search", "read", "summarize", "write_note")
INSTRUCTIONS = (
    "heartbeat: you look stuck (recovery attempt 1; a human is called after 2 more stuck heartbeats).\n"
    "What happened:\n- repeat: search({...}) was called 3 times in a row with the same arguments\n"
    "Do not repeat: search({...}).\nTry a different approach: another tool, other arguments or source."
)


def make_journal(path: Path, events: int) -> tuple[int, int]:
    """Write about ``events`` events; return (events written, heartbeats)."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    lines: list[str] = []
    tick = index = 0
    written = 0
    while written < events:
        tick += 1
        at = (start + timedelta(minutes=30 * tick)).isoformat()
        stamp: dict[str, Any] = {"at": at, "agent": "bench", "tick": tick}
        batch: list[dict[str, Any]] = []
        stuck = tick % 40 in (37, 38, 39)
        for j in range(3):
            index += 1
            args = '{"q":"the same query"}' if stuck else f'{{"page":{j},"q":"topic {tick}"}}'
            error = "TimeoutError: upstream did not answer in 30s" if index % 23 == 0 else None
            tool = TOOLS[index % 4]
            batch.append(
                {"event": "action", "index": index, "tool": tool, "summary": f"{tool}({args})",
                 "output_len": None if error else 40 + j, "error": error, "cost": 0.002}
            )  # fmt: skip
        if stuck:
            batch.append(
                {"event": "anomaly", "kind": "repeat" if tick % 80 < 40 else "loop", "message": "stuck",
                 "action": index, "tool": "search", "evidence": {}}
            )  # fmt: skip
        streak = tick % 40 - 36 if stuck else 0
        decision = "escalate" if streak == 3 else "try_alternative" if stuck else "continue"
        batch.append(
            {"event": "decision", "decision": decision, "stuck_streak": streak,
             "instructions": INSTRUCTIONS if decision == "try_alternative" else None}
        )  # fmt: skip
        if decision == "escalate":
            key = f"bench-escalation-{tick}"
            batch += [
                {"event": "notify", "kind": "escalation", "key": key, "notifiers": ["file"]},
                {"event": "escalation", "key": key, "reason": "stuck for 3 heartbeats"},
            ]
        outcome = "needs_human" if decision == "escalate" else "ran"
        batch.append({"event": "tick", "outcome": outcome, "actions": 3, "progress": tick // 7})
        if decision == "escalate":
            batch.append({"event": "resume", "from": "needs_human", "note": "try the archive"})
        if tick % 500 == 0:
            batch.append({"event": "pause", "reason": "nightly maintenance"})
            batch.append({"event": "resume", "from": "paused", "note": None})
        lines += [json.dumps({**stamp, **event}, separators=(",", ":")) for event in batch]
        written += len(batch)
    path.write_text("\n".join(lines) + "\n")
    return written, tick


def timed(func: Callable[[], object]) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = func()
    return time.perf_counter() - t0, out


def run(argv: list[str]) -> float:
    env_path = str(REPO)
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, check=False, env={"PYTHONPATH": env_path, "PATH": ""})
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{argv}: exit {done.returncode}: {done.stderr.decode()[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=100_000, help="journal events (default 100000)")
    parser.add_argument("--reps", type=int, default=5, help="in-process rounds (default 5)")
    parser.add_argument("--cli-reps", type=int, default=3, help="fresh-process rounds (default 3; 0: skip)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="hb-bench-report-") as tmp:
        folder = Path(tmp)
        state_dir = folder / "state"
        state_dir.mkdir(mode=0o700)
        journal = state_dir / "journal.jsonl"
        events, ticks = make_journal(journal, args.events)
        StateStore(state_dir).save(AgentState(status=Status.ACTIVE, ticks=ticks))
        config = HeartbeatConfig.model_validate(
            {"agent": {"name": "bench", "state_dir": str(state_dir)}, "base_dir": folder}
        )
        hb = Heartbeat(config)
        now = datetime(2027, 1, 1, tzinfo=UTC)
        out = folder / "report.html"
        keys = ("read", "report", "fold", "render", "cli", "cli_read")
        times: dict[str, list[float]] = {k: [] for k in keys}
        for _ in range(args.reps):
            elapsed, read = timed(lambda: list(Journal(journal).read()))
            assert isinstance(read, list) and len(read) == events
            times["read"].append(elapsed)
            elapsed, _ = timed(lambda read=read: collect(read))
            times["fold"].append(elapsed)
            del read  # not kept alive while the report runs: its garbage collections would scan it
            elapsed, _ = timed(lambda: write_report(hb, out, now=now))
            times["report"].append(elapsed)
            page = agent_page(hb, now=now)
            elapsed, _ = timed(lambda page=page: render_agent(page))
            times["render"].append(elapsed)
        size = out.stat().st_size
        py = sys.executable
        for _ in range(args.cli_reps):
            times["cli_read"].append(run([py, "-c", READ_ONLY, str(journal)]))
            times["cli"].append(
                run([py, "-m", "heartbeat", "report", "--state-dir", str(state_dir), "--out", str(out)])
            )
        journal_size = journal.stat().st_size

    base = median(times["read"])

    def row(name: str, key: str, baseline: float) -> list[str]:
        t = median(times[key])
        return [name, f"{t:.3f}", f"{events / t:,.0f}", f"{t / baseline:.2f}x"]

    print(f"bench_report: {machine()}")
    print(
        f"journal: {events:,} events in {ticks:,} heartbeats, {human_bytes(journal_size)}; "
        f"medians of {args.reps} interleaved rounds"
    )
    rows = [
        row("baseline: Journal.read() into a list", "read", base),
        row("write_report (read + fold + render + write)", "report", base),
        row("  of which: fold the events (collect)", "fold", base),
        row("  of which: render the page (render_agent)", "render", base),
    ]
    if args.cli_reps:
        cli_base = median(times["cli_read"])
        rows += [
            row("fresh process: read the journal only", "cli_read", cli_base),
            row("fresh process: heartbeat report", "cli", cli_base),
        ]
    table(["", "seconds", "events/s", "vs baseline"], rows)
    print(f"\npage: {human_bytes(size)} ({size / journal_size:.1%} of the journal)")
    ratio = median(times["report"]) / base
    cli_note = ""
    if args.cli_reps:
        cli = median(times["cli"])
        cli_note = f"; CLI {cli:.2f} s, {cli / median(times['cli_read']):.2f}x"
    print(
        f"\nRATIO write_report / Journal.read = {ratio:.2f}x ({median(times['report']):.2f} s for "
        f"{events:,} events{cli_note}; page {human_bytes(size)})"
    )


if __name__ == "__main__":
    main()
