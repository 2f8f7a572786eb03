"""Growth: state.json size and tick time after 1, 1,000 and 100,000 ticks; journal size with rotation.

Three state folders of the same trivial agent (one recorded action per tick),
in-process ``Heartbeat.tick()``:

* after 1 tick and after 1,000 ticks: real ticks;
* after 100,000 ticks: by default 1,000 real ticks, then *fast-forwarded*:
  the state is loaded once, 99,000 ticks' worth of action records and
  progress samples are appended with the library's ``append_bounded`` (the
  same bounds the runner uses) and saved with ``StateStore.save``; the same
  journal events a real tick writes are appended in batches through
  ``Journal.append`` (so rotation runs as it would). ``--real`` drives all
  100,000 ticks for real instead (several minutes).

Then, interleaved, ``--reps`` timed ticks on each folder, each from the
folder's own snapshot (restored untimed before every tick), so every timed
tick is exactly "the tick after N". Flat means the tick after 100,000 costs
what the tick after 1,000 does and the state is no bigger.

    python bench/bench_growth.py [--ticks 1,1000,100000] [--reps 200] [--real]
        [--journal-max-bytes 1000000] [--journal-keep 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from _common import human_bytes, machine, median, quantile, table, trivial_step, us

from heartbeat.config.file import AgentConfig, HeartbeatConfig, JournalConfig
from heartbeat.core.models import HISTORY_LIMIT, PROGRESS_LIMIT, ActionRecord, ProgressSample, append_bounded
from heartbeat.detect.detectors import fingerprint, summarize
from heartbeat.state.journal import Journal
from heartbeat.tick.runner import Heartbeat, utc_now

TIME_TARGET = 1.2  # tick after N / tick after 1,000: flat within machine noise
SIZE_TARGET = 1.05


def make_heartbeat(folder: Path, journal: JournalConfig) -> Heartbeat:
    config = HeartbeatConfig(
        base_dir=folder,
        agent=AgentConfig(state_dir=folder / "state", kill_file=folder / "KILL"),
        journal=journal,
    )
    return Heartbeat(config, step=trivial_step)


def tick(hb: Heartbeat) -> float:
    t0 = time.perf_counter()
    result = hb.tick()
    elapsed = time.perf_counter() - t0
    if result.outcome != "ran" or result.exit_code != 0 or result.anomalies:
        raise SystemExit(f"the trivial tick did not run cleanly: {result.to_json()}")
    return elapsed


def drive(hb: Heartbeat, n: int, label: str) -> list[float]:
    """``n`` real ticks; their times."""
    times = []
    started = time.perf_counter()
    for i in range(1, n + 1):
        times.append(tick(hb))
        if n >= 20_000 and i % 10_000 == 0:
            rate = i / (time.perf_counter() - started)
            print(f"  {label}: {i:,} real ticks ({rate:,.0f}/s)", file=sys.stderr)
    return times


def fast_forward(hb: Heartbeat, to_ticks: int) -> None:
    """Append ``to_ticks - ticks`` ticks' worth of records to the state and the journal, then save."""
    journal = Journal(
        hb.store.journal_path, max_bytes=hb.config.journal.max_bytes, keep=hb.config.journal.keep
    )
    with hb.store.lock():
        state = hb.store.load()
        template = [e for e in journal.tail(20) if e.get("tick") == state.ticks]
        per_tick = sum(len(repr(e)) for e in template) or 500
        chunk = max(1, hb.config.journal.max_bytes // (4 * per_tick))
        volatile = hb.config.detectors.volatile_args
        now = utc_now()
        batch: list[dict[str, Any]] = []
        for n in range(state.ticks + 1, to_ticks + 1):
            args = {"n": n}
            output = "3 results for the query"
            state.actions_total += 1
            record = ActionRecord(
                index=state.actions_total,
                tick=n,
                at=now,
                tool="noop",
                fingerprint=fingerprint("noop", args, volatile=volatile),
                summary=summarize("noop", args, volatile),
                output_len=len(output),
                error=None,
                cost=0.0,
            )
            append_bounded(state.history, record, max(HISTORY_LIMIT, hb.config.detectors.history_needed()))
            append_bounded(state.progress, ProgressSample(tick=n, at=now, value=None), PROGRESS_LIMIT)
            stamp = now.isoformat()
            for event in template:
                copy = {**event, "tick": n, "at": stamp}
                if copy.get("event") == "action":
                    copy.update(index=state.actions_total, summary=record.summary)
                elif copy.get("event") == "tick":
                    copy["message"] = f"tick {n}: 1 action(s)"
                batch.append(copy)
            if len(batch) >= chunk * max(1, len(template)):
                journal.append(batch)
                batch = []
            now += timedelta(seconds=1)
        if batch:
            journal.append(batch)
        state.ticks = to_ticks
        state.last_tick_at = now
        state.budget.actions += to_ticks
        hb.store.save(state)


def journal_files(hb: Heartbeat) -> tuple[int, int, int]:
    """(live journal bytes, rotated files, all journal bytes)."""
    live = hb.store.journal_path
    rotated = sorted(live.parent.glob(live.name + ".*"))
    live_size = live.stat().st_size if live.exists() else 0
    return live_size, len(rotated), live_size + sum(p.stat().st_size for p in rotated)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--ticks", default="1,1000,100000", help="checkpoints, comma-separated (default 1,1000,100000)"
    )
    parser.add_argument(
        "--real-ticks", type=int, default=1_000, help="real ticks before a fast-forward (default 1000)"
    )
    parser.add_argument("--real", action="store_true", help="drive every checkpoint with real ticks")
    parser.add_argument("--reps", type=int, default=200, help="timed ticks per checkpoint (default 200)")
    parser.add_argument("--journal-max-bytes", type=int, default=JournalConfig().max_bytes)
    parser.add_argument("--journal-keep", type=int, default=JournalConfig().keep)
    parser.add_argument("--dir", type=Path, default=None, help="work folder (default: a temp folder)")
    args = parser.parse_args()
    checkpoints = [int(x) for x in args.ticks.split(",")]
    journal_cfg = JournalConfig(max_bytes=args.journal_max_bytes, keep=args.journal_keep)

    with tempfile.TemporaryDirectory(prefix="hb-bench-growth-", dir=args.dir) as tmp:
        folders: dict[int, Heartbeat] = {}
        how: dict[int, str] = {}
        drive_times: dict[int, list[float]] = {}
        started = time.perf_counter()
        for n in checkpoints:
            hb = make_heartbeat(Path(tmp) / f"after-{n}", journal_cfg)
            if args.real or n <= args.real_ticks:
                drive_times[n] = drive(hb, n, f"after-{n}")
                how[n] = "real ticks"
            else:
                drive_times[n] = drive(hb, args.real_ticks, f"after-{n}")
                fast_forward(hb, n)
                how[n] = f"{args.real_ticks:,} real + fast-forward"
            folders[n] = hb
        setup = time.perf_counter() - started

        snapshots = {n: hb.store.state_path.read_bytes() for n, hb in folders.items()}
        times: dict[int, list[float]] = {n: [] for n in checkpoints}
        for i in range(args.reps):
            order = checkpoints[i % len(checkpoints) :] + checkpoints[: i % len(checkpoints)]
            for n in order:
                hb = folders[n]
                hb.store.state_path.write_bytes(snapshots[n])  # untimed: back to "after n"
                times[n].append(tick(hb))
        journals = {n: journal_files(hb) for n, hb in folders.items()}

    print(f"bench_growth: {machine()}")
    print(
        f"setup {setup:.1f} s; {args.reps} interleaved timed ticks per checkpoint, each from the "
        f"checkpoint's snapshot; journal max_bytes={args.journal_max_bytes:,} keep={args.journal_keep}"
    )
    ref = checkpoints[1] if len(checkpoints) > 1 else checkpoints[0]
    bound = (args.journal_keep + 1) * args.journal_max_bytes
    rows = []
    for n in checkpoints:
        live, rotated, total = journals[n]
        rows.append(
            [
                f"{n:,}",
                how[n],
                f"{len(snapshots[n]):,}",
                us(median(times[n])),
                us(quantile(times[n], 0.9)),
                f"{median(times[n]) / median(times[ref]):.2f}x",
                human_bytes(live),
                str(rotated),
                human_bytes(total),
            ]
        )
    table(
        [
            "after ticks",
            "how",
            "state B",
            "tick med us",
            "p90 us",
            f"vs {ref:,}",
            "journal",
            "rotated",
            "journal total",
        ],
        rows,
    )
    longest = max(checkpoints, key=lambda n: len(drive_times[n]))
    real = drive_times[longest]
    if len(real) >= 10:
        tenth = len(real) // 10
        print(
            f"\nreal ticks while driving the {longest:,} folder, median us per tenth of the run: "
            + ", ".join(us(median(real[i * tenth : (i + 1) * tenth])).strip() for i in range(10))
        )
    total_last = journals[checkpoints[-1]][2]
    print(
        f"journal bound (keep + 1) x max_bytes = {human_bytes(bound)}; after {checkpoints[-1]:,} ticks: "
        f"{human_bytes(total_last)} -> {'within' if total_last <= bound else 'OVER'} the bound"
    )
    last = checkpoints[-1]
    t_ratio = median(times[last]) / median(times[ref])
    s_ratio = len(snapshots[last]) / len(snapshots[ref])
    ok = t_ratio <= TIME_TARGET and s_ratio <= SIZE_TARGET and total_last <= bound
    print(
        f"\nRATIO after {last:,} / after {ref:,}: tick time {t_ratio:.2f}x, state size {s_ratio:.3f}x "
        f"(flat = <= {TIME_TARGET}x and <= {SIZE_TARGET}x, journal within bound: "
        f"{'met' if ok else 'MISSED'}; {how[last]})"
    )


if __name__ == "__main__":
    main()
