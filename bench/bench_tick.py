"""Tick overhead: one in-process ``Heartbeat.tick()`` over a trivial step vs the I/O floor.

Floor (same run, interleaved with the ticks): take a ``FileLock`` on a sidecar
``.lock`` and write the same ``state.json`` bytes with
``heartbeat.base.fsutil.atomic_write`` (temp file, fsync, ``os.replace``, fsync of
the folder). That is the least any crash-safe, locked tick has to do. Target:
tick <= 1.4x floor (issue 11).

Then a breakdown of where the tick's time goes (timers wrapped around the
runner's parts, nested like a call tree), micro-benchmarks of the single
stages on the same bytes, and optionally a cProfile listing (``--profile``).

    python bench/bench_tick.py [--reps 600] [--warmup 200] [--breakdown-ticks 400] [--profile 25]
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import json
import os
import pstats
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import count, machine, median, quantile, table, trivial_step, us, verdict
from filelock import FileLock

import heartbeat.base.redact as hb_redact
import heartbeat.state.journal as hb_journal
import heartbeat.state.store as hb_store
import heartbeat.tick.effects as hb_effects
import heartbeat.tick.runner as hb_runner
import heartbeat.tick.stepcall as hb_stepcall
from heartbeat.base.fsutil import QuietFolder, atomic_write, ensure_private_dir, sweep_temps
from heartbeat.config.file import AgentConfig, HeartbeatConfig
from heartbeat.core.models import AgentState
from heartbeat.detect.monitor import Monitor
from heartbeat.state.journal import Journal
from heartbeat.state.killswitch import KillSwitch
from heartbeat.state.reader import StateReader
from heartbeat.state.store import StateStore
from heartbeat.state.text import StateText
from heartbeat.state.warm import WarmStart
from heartbeat.tick.context import StepContext
from heartbeat.tick.runner import Heartbeat

TARGET = 1.4


def make_heartbeat(root: Path) -> Heartbeat:
    """A heartbeat with default config, its state in ``root/state``, the trivial step."""
    config = HeartbeatConfig(
        base_dir=root, agent=AgentConfig(state_dir=root / "state", kill_file=root / "KILL")
    )
    return Heartbeat(config, step=trivial_step)


class Floor:
    """FileLock on a sidecar file + one atomic write of the given bytes."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(mode=0o700, exist_ok=True)
        self.lock_path = folder / ".lock"
        self.path = folder / "state.json"
        # One FileLock object, reused, as the store reuses its own: building one per write
        # would add ~30 us to the floor and flatter the ratio.
        self.lock = FileLock(self.lock_path, timeout=0, mode=0o600)

    def __call__(self, data: bytes) -> None:
        self.lock.acquire()
        try:
            atomic_write(self.path, data)
        finally:
            self.lock.release()


def checked_tick(hb: Heartbeat) -> None:
    result = hb.tick()
    if result.outcome != "ran" or result.exit_code != 0 or result.anomalies:
        raise SystemExit(f"the trivial tick did not run cleanly: {result.to_json()}")


def compare(hb: Heartbeat, floor: Floor, reps: int) -> tuple[list[float], list[float]]:
    """Interleave ticks and floor writes (alternating which goes first); return both timings."""
    ticks: list[float] = []
    floors: list[float] = []
    state_path = hb.store.state_path
    clock = time.perf_counter
    for i in range(reps):
        data = state_path.read_bytes()  # the floor writes exactly what the last tick wrote
        order = ("tick", "floor") if i % 2 == 0 else ("floor", "tick")
        for which in order:
            if which == "tick":
                t0 = clock()
                checked_tick(hb)
                ticks.append(clock() - t0)
            else:
                t0 = clock()
                floor(data)
                floors.append(clock() - t0)
    return ticks, floors


# -- breakdown: timers wrapped around the runner's parts, nested like a call tree


class Probe:
    """Wraps callables so each call adds its inclusive time under its position in the call stack.

    Times are kept per tick (:meth:`end_tick`), so the breakdown can use
    medians: fsync times have long tails on a shared machine.
    """

    def __init__(self) -> None:
        self.now: dict[tuple[str, ...], int] = defaultdict(int)
        self.calls: dict[tuple[str, ...], int] = defaultdict(int)
        self.ticks: list[dict[tuple[str, ...], int]] = []
        self._stack: list[str] = []
        self._undo: list[Callable[[], None]] = []

    def wrap(self, label: str, func: Callable[..., Any]) -> Callable[..., Any]:
        stack, calls, clock = self._stack, self.calls, time.perf_counter_ns

        @functools.wraps(func)
        def timed(*args: Any, **kwargs: Any) -> Any:
            stack.append(label)
            key = tuple(stack)
            t0 = clock()
            try:
                return func(*args, **kwargs)
            finally:
                self.now[key] += clock() - t0
                calls[key] += 1
                stack.pop()

        return timed

    def end_tick(self) -> None:
        self.ticks.append(dict(self.now))
        self.now = defaultdict(int)

    def median(self, key: tuple[str, ...]) -> float:
        """Median ns per tick of ``key`` (0 for ticks that did not reach it)."""
        return median([t.get(key, 0) for t in self.ticks])

    def median_rest(self, key: tuple[str, ...], children: list[tuple[str, ...]]) -> float:
        return median([t.get(key, 0) - sum(t.get(c, 0) for c in children) for t in self.ticks])

    def patch(self, owner: Any, attr: str, label: str) -> None:
        """Replace ``owner.attr`` with a timed version (undone by :meth:`restore`)."""
        had_own = attr in vars(owner)
        own = vars(owner).get(attr)
        setattr(owner, attr, self.wrap(label, getattr(owner, attr)))
        if had_own:
            self._undo.append(lambda: setattr(owner, attr, own))
        else:
            self._undo.append(lambda: delattr(owner, attr))

    def restore(self) -> None:
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()


def instrument(probe: Probe, hb: Heartbeat) -> None:
    lock_cls = FileLock  # the class heartbeat.state.store locks with
    parts: list[tuple[Any, str, str]] = [
        (Heartbeat, "_tick", "tick"),
        (KillSwitch, "reason", "KILL check"),
        (hb_store, "ensure_private_dir", "ensure_private_dir (mkdir)"),
        (hb_journal, "ensure_private_dir", "ensure_private_dir (mkdir)"),
        (lock_cls, "acquire", "lock acquire"),
        (lock_cls, "release", "lock release"),
        (StateStore, "load", "load state.json"),
        (StateStore, "reload", "load state.json (or reuse: unchanged since the last save)"),
        (StateReader, "read", "read the bytes"),
        (StateReader, "parse", "decode + json.loads"),
        (AgentState, "model_validate", "pydantic validate"),
        (hb_effects, "outbox_waiting", "outbox check"),
        (Heartbeat, "retry_outbox", "outbox delivery (only when something waits)"),
        (hb_runner, "roll_over", "budget"),
        (hb_runner, "exhausted", "budget"),
        (hb_runner, "run_step", "run step"),
        (hb_stepcall, "Monitor", "Monitor() (detectors seeded from history)"),
        (Monitor, "start_tick", "Monitor.start_tick (reseed a kept Monitor)"),
        (hb_stepcall, "StepContext", "StepContext()"),
        (StepContext, "record", "ctx.record"),
        (Monitor, "record", "action detectors (Monitor.record)"),
        (Heartbeat, "metric", "progress metric"),
        (Monitor, "add_progress", "progress sample + no_progress"),
        (hb_stepcall, "decide", "policy.decide"),
        (hb_runner, "settle", "settle (the pure core)"),
        (StateStore, "check_writable", "room for the state (statvfs)"),
        (hb_stepcall, "watch", "watchdog watch"),
        (hb_stepcall, "unwatch", "watchdog unwatch"),
        (Heartbeat, "_finish", "finish"),
        (StateStore, "save", "save state.json"),
        (WarmStart, "prepare", "ready the Monitor and state for the next tick (heartbeat.state.warm)"),
        (WarmStart, "keep", "keep them (heartbeat.state.warm)"),
        (StateText, "dump", "state.json text (records' texts reused)"),
        (AgentState, "model_dump_json", "pydantic dump (indent=2)"),
        (StateStore, "_sweep", "clean stale temps + .exec-* (scandir; skipped: folder unchanged)"),
        (StateStore, "_scan", "the scan (every 16th lock, or the folder changed)"),
        (QuietFolder, "saved", "the folder's mtime after the save (stat)"),
        (hb_store, "atomic_write", "atomic_write"),
        (os, "fsync", "fsync"),
        (os, "replace", "os.replace"),
        (tempfile, "mkstemp", "mkstemp"),
        (Journal, "encode_stamped", "journal lines (stamped and encoded, before the save)"),
        (hb_redact, "redact_event", "redact events"),
        (Journal, "write", "journal write (open, append, close)"),
    ]
    for owner, attr, label in parts:
        probe.patch(owner, attr, label)
    # the user's step, for completeness
    hb.plugins._step = probe.wrap("the step itself", trivial_step)


def breakdown(hb: Heartbeat, ticks: int) -> tuple[list[list[str]], float]:
    """Median time per tick of each wrapped part, as an indented call tree."""
    probe = Probe()
    instrument(probe, hb)
    try:
        for _ in range(ticks):
            checked_tick(hb)
            probe.end_tick()
    finally:
        probe.restore()
        hb.plugins._step = trivial_step
    root = ("tick",)
    tick_ns = probe.median(root)
    keys = {k for t in probe.ticks for k in t}
    rows: list[list[str]] = []

    def walk(key: tuple[str, ...], depth: int) -> None:
        children = sorted(
            (k for k in keys if len(k) == len(key) + 1 and k[: len(key)] == key),
            key=lambda k: -probe.median(k),
        )
        each = probe.median(key)
        rows.append(
            [
                "  " * depth + key[-1],
                f"{probe.calls[key] / ticks:g}",
                us(each / 1e9),
                f"{100 * each / tick_ns:.1f}%",
            ]
        )
        for child in children:
            walk(child, depth + 1)
        if children:
            rest = probe.median_rest(key, children)
            rows.append(
                [
                    "  " * (depth + 1) + "(rest, not wrapped)",
                    "",
                    us(rest / 1e9),
                    f"{100 * rest / tick_ns:.1f}%",
                ]
            )

    walk(root, 0)
    return rows, tick_ns / 1e9


# -- micro-benchmarks of single stages on the same bytes


def stage_costs(hb: Heartbeat, scratch: Path, reps: int) -> list[list[str]]:
    data = hb.store.state_path.read_bytes()
    raw = json.loads(data)
    state = AgentState.model_validate(raw)
    events = [
        {
            "at": "2026-01-01T00:00:00+00:00",
            "agent": "agent",
            "tick": 1,
            "event": "action",
            "index": 1,
            "tool": "noop",
            "summary": 'noop({"n":1})',
            "output_len": 8,
            "error": None,
            "cost": 0.0,
        },
        {
            "at": "2026-01-01T00:00:00+00:00",
            "agent": "agent",
            "tick": 1,
            "event": "decision",
            "decision": "continue",
            "stuck_streak": 0,
            "instructions": None,
        },
        {
            "at": "2026-01-01T00:00:00+00:00",
            "agent": "agent",
            "tick": 1,
            "event": "tick",
            "outcome": "ran",
            "exit_code": 0,
            "actions": 1,
            "progress": None,
            "message": "tick 1",
        },
    ]
    scratch.mkdir(exist_ok=True)
    journal = Journal(scratch / "journal.jsonl", max_bytes=10**9)
    kill = KillSwitch(scratch / "KILL")
    path = scratch / "state.json"

    def lock_cycle() -> None:
        lock = FileLock(scratch / ".lock", timeout=0, mode=0o600)
        lock.acquire()
        lock.release()

    payload = b"".join(hb_journal.encode_event(e) for e in events)
    raw_log = scratch / "raw.jsonl"

    def append_with(sync: Callable[[int], None] | None) -> Callable[[], None]:
        def append() -> None:
            fd = os.open(raw_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, payload)
                if sync is not None:
                    sync(fd)
            finally:
                os.close(fd)

        return append

    stages: list[tuple[str, Callable[[], object]]] = [
        ("read state.json", hb.store.state_path.read_bytes),
        ("json.loads", lambda: json.loads(data)),
        ("AgentState.model_validate(dict)", lambda: AgentState.model_validate(raw)),
        ("AgentState.model_validate_json(bytes)", lambda: AgentState.model_validate_json(data)),
        ("model_dump_json(indent=2)", lambda: state.model_dump_json(indent=2)),
        ("model_dump_json() compact", state.model_dump_json),
        ("FileLock acquire + release", lock_cycle),
        ("atomic_write (2 fsyncs)", lambda: atomic_write(path, data)),
        ("Journal.append 3 events (no fsync)", lambda: journal.append(events)),
        ("raw append of the same bytes + fsync", append_with(os.fsync)),
        ("raw append of the same bytes + fdatasync", append_with(os.fdatasync)),
        ("raw append of the same bytes, no sync", append_with(None)),
        ("ensure_private_dir (exists)", lambda: ensure_private_dir(scratch)),
        (
            "sweep_temps (one scandir)",
            lambda: sweep_temps(
                scratch, subfolder="outbox", spare=(".lock",), spare_temps_of=(), scratch_prefix=".exec-"
            ),
        ),
        ("KILL check (absent)", kill.reason),
    ]
    times: dict[str, list[float]] = {name: [] for name, _ in stages}
    clock = time.perf_counter
    for _ in range(reps):  # interleaved: one of each per round
        for name, func in stages:
            t0 = clock()
            func()
            times[name].append(clock() - t0)
    return [[name, us(median(t)), us(quantile(t, 0.9))] for name, t in times.items()] + [
        ["(state.json size)", f"{len(data):,} B", ""]
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--reps", type=count(1), default=600, help="interleaved tick/floor pairs (default 600)"
    )
    parser.add_argument(
        "--warmup",
        type=count(0),
        default=200,
        help="ticks before timing, so the history is at its bound (default 200)",
    )
    parser.add_argument(
        "--breakdown-ticks", type=count(0), default=400, help="ticks for the breakdown (0: no breakdown)"
    )
    parser.add_argument(
        "--stage-reps", type=count(0), default=300, help="rounds of the stage micro-benchmarks (0: none)"
    )
    parser.add_argument(
        "--profile",
        type=count(0),
        default=0,
        metavar="N",
        help="also cProfile the ticks and print the top N functions by own time",
    )
    parser.add_argument("--dir", type=Path, default=None, help="work folder (default: a temp folder)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="hb-bench-tick-", dir=args.dir) as tmp:
        root = Path(tmp)
        hb = make_heartbeat(root)
        floor = Floor(root / "floor")
        for _ in range(args.warmup):
            checked_tick(hb)
        size = hb.store.state_path.stat().st_size
        ticks, floors = compare(hb, floor, args.reps)

        rows, instrumented = breakdown(hb, args.breakdown_ticks) if args.breakdown_ticks else ([], 0.0)
        stages = stage_costs(hb, root / "stages", args.stage_reps) if args.stage_reps else []
        if args.profile and args.breakdown_ticks:
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(args.breakdown_ticks):
                checked_tick(hb)
            profiler.disable()

        tick_med, floor_med = median(ticks), median(floors)
        ratio = tick_med / floor_med
        print(f"bench_tick: {machine()}")
        print(
            f"state.json {size:,} B after {args.warmup} warm-up ticks; {args.reps} interleaved pairs; "
            f"temp folder on {root}"
        )
        table(
            ["", "median us", "p10 us", "p90 us"],
            [
                [
                    "floor: FileLock + atomic_write",
                    us(floor_med),
                    us(quantile(floors, 0.1)),
                    us(quantile(floors, 0.9)),
                ],
                [
                    "Heartbeat.tick() (trivial step)",
                    us(tick_med),
                    us(quantile(ticks, 0.1)),
                    us(quantile(ticks, 0.9)),
                ],
                ["difference", us(tick_med - floor_med), "", ""],
            ],
            title="Tick vs floor",
        )
        if rows:
            table(
                ["part", "calls/tick", "us/tick", "of tick"],
                rows,
                title=f"Where a tick's time goes (medians per tick over {args.breakdown_ticks} "
                f"instrumented ticks; {us(instrumented)} us each incl. timer overhead)",
            )
        if stages:
            table(
                ["stage (same bytes, alone)", "median us", "p90 us"],
                stages,
                title=f"Single stages ({args.stage_reps} interleaved rounds)",
            )
        if args.profile and args.breakdown_ticks:
            print(f"\ncProfile of {args.breakdown_ticks} ticks, top {args.profile} by own time:")
            pstats.Stats(profiler).sort_stats("tottime").print_stats(args.profile)
        print(
            f"\nRATIO tick / floor = {ratio:.2f}x ({us(tick_med)} us vs {us(floor_med)} us); "
            f"{verdict(ratio, TARGET)}"
        )


if __name__ == "__main__":
    main()
