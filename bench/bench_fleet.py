"""Fleet: one ``heartbeat run`` driving 200 agents at a 1-second interval for a minute.

A generated multi-agent ``heartbeat.toml`` (``[[agents]]``, one state_dir
each, the trivial one-action step) is run by ``heartbeat.tick.schedule.Runner``
in this process (or by the ``heartbeat run`` command with ``--cli``). After
``--duration`` seconds a KILL file is written; the run must stop within about
a second.

Reported: ticks completed vs scheduled in the window, misses (coalesced or
skipped runs, APScheduler misfires), how late ticks complete, the wall time
of a tick inside the fleet, and CPU per tick (``time.process_time`` and
``getrusage``). Baseline, same run: the same agents ticked one after another
without a scheduler (half the rounds before the fleet, half after), CPU and
wall per tick.

    python bench/bench_fleet.py [--agents 200] [--duration 60] [--interval 1] [--baseline-rounds 2] [--cli]
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from _common import TRIVIAL_AGENT, machine, median, ms, quantile, table

from heartbeat.config.file import load_config
from heartbeat.config.trigger import make_trigger
from heartbeat.state.killswitch import KillSwitch
from heartbeat.tick.runner import Heartbeat, TickResult, utc_now
from heartbeat.tick.schedule import Runner


def write_fleet(folder: Path, agents: int, interval: float) -> Path:
    lines = ["[agent]", 'step = "fleet_agent:step"', "", "[schedule]", f'every = "{interval:g}s"', ""]
    for i in range(agents):
        lines += ["[[agents]]", f'name = "a{i:03d}"', f'state_dir = "agents/a{i:03d}"', ""]
    (folder / "fleet_agent.py").write_text(TRIVIAL_AGENT)
    config = folder / "heartbeat.toml"
    config.write_text("\n".join(lines))
    return config


def cpu_now() -> tuple[float, float]:
    """(process CPU seconds, wall seconds)."""
    return time.process_time(), time.perf_counter()


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Baseline:
    ticks: int = 0
    cpu: float = 0.0
    wall: list[float] = field(default_factory=list)

    def round(self, heartbeats: list[Heartbeat]) -> None:
        cpu0 = time.process_time()
        for hb in heartbeats:
            t0 = time.perf_counter()
            result = hb.tick()
            self.wall.append(time.perf_counter() - t0)
            if result.exit_code != 0:
                raise SystemExit(f"baseline tick failed: {result.to_json()}")
        self.cpu += time.process_time() - cpu0
        self.ticks += len(heartbeats)


@dataclass
class FleetRun:
    wall: float = 0.0
    cpu: float = 0.0
    rusage_user: float = 0.0
    rusage_sys: float = 0.0
    stop_latency: float = 0.0
    exit_code: int = 0
    reason: str = ""
    completed_in_window: int = 0
    completed: int = 0
    misfired: int = 0
    max_instance_skips: int = 0
    lag: list[float] = field(default_factory=list)
    tick_wall: list[float] = field(default_factory=list)
    outcomes: dict[str, int] = field(default_factory=dict)


def run_in_process(config_path: Path, duration: float, interval: float) -> FleetRun:
    config = load_config(config_path)
    heartbeats = [Heartbeat(config, agent) for agent in config.all_agents()]
    for hb in heartbeats:
        hb.validate()
    out = FleetRun()
    lock = threading.Lock()
    # Per agent, in order: each job run's (scheduled time, done at), and each tick's outcome. A job
    # run calls the tick unless the run is stopping, so the i-th tick belongs to the i-th job run.
    runs: dict[str, list[tuple[datetime, datetime]]] = {hb.name: [] for hb in heartbeats}
    outcomes: dict[str, list[str]] = {hb.name: [] for hb in heartbeats}

    for hb in heartbeats:  # time each tick inside the fleet
        inner = hb.tick

        def timed(inner: Callable[[], TickResult] = inner, name: str = hb.name) -> TickResult:
            t0 = time.perf_counter()
            at = utc_now()  # the Runner starts a tick when it is due: its start is its slot
            result = inner()
            with lock:
                runs[name].append((at, utc_now()))
                out.tick_wall.append(time.perf_counter() - t0)
                out.outcomes[result.outcome] = out.outcomes.get(result.outcome, 0) + 1
                outcomes[name].append(result.outcome)
            return result

        hb.tick = timed  # type: ignore[method-assign]

    runner = Runner(
        heartbeats,
        make_trigger(every=timedelta(seconds=interval), cron=None),
        misfire_grace_time=config.schedule.misfire_grace_time,
        on_note=lambda text: None,
    )

    # One thread per agent: a tick is never started while the last still runs (max_instance_skips 0).
    kill = KillSwitch(config_path.parent / "KILL")
    killed_at: list[float] = []

    def stop() -> None:
        killed_at.append(time.perf_counter())
        kill.engage("bench_fleet: time is up")

    timer = threading.Timer(duration, stop)
    usage0 = resource.getrusage(resource.RUSAGE_SELF)
    cpu0, wall0 = cpu_now()
    timer.start()
    summary = runner.run()
    cpu1, wall1 = cpu_now()
    usage1 = resource.getrusage(resource.RUSAGE_SELF)
    timer.cancel()
    out.wall, out.cpu = wall1 - wall0, cpu1 - cpu0
    out.rusage_user = usage1.ru_utime - usage0.ru_utime
    out.rusage_sys = usage1.ru_stime - usage0.ru_stime
    out.stop_latency = wall1 - killed_at[0] if killed_at else math.nan
    out.exit_code, out.reason, out.misfired = summary.exit_code, summary.reason, summary.missed
    out.completed = sum(o.count("ran") for o in outcomes.values())
    starts = [r[0][0] for r in runs.values() if r]
    if starts:
        end = min(starts) + timedelta(seconds=duration)
        for name, done_runs in runs.items():
            ordered = sorted(done_runs)
            for (at, done), outcome in zip(ordered, outcomes[name], strict=False):
                if at < end and outcome == "ran":
                    out.completed_in_window += 1
                    out.lag.append((done - at).total_seconds())
    return out


def run_cli(config_path: Path, duration: float, agents: list[Path]) -> FleetRun:
    before = {p: _ticks(p) for p in agents}
    cpu0, wall0 = children_cpu(), time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "heartbeat", "run", "--config", str(config_path)],
        cwd=config_path.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    time.sleep(duration)
    killed = time.perf_counter()
    KillSwitch(config_path.parent / "KILL").engage("bench_fleet: time is up")
    _, err = proc.communicate(timeout=120)
    out = FleetRun()
    out.wall = time.perf_counter() - wall0
    out.stop_latency = time.perf_counter() - killed
    out.cpu = children_cpu() - cpu0
    out.exit_code, out.reason = proc.returncode, err.decode().strip().splitlines()[-1:][0] if err else ""
    out.completed = sum(_ticks(p) - before[p] for p in agents)
    out.completed_in_window = out.completed  # no per-tick times from outside; may include the last round
    return out


def _ticks(state_dir: Path) -> int:
    try:
        return int(json.loads((state_dir / "state.json").read_text())["ticks"])
    except FileNotFoundError:
        return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=200, help="agents in the fleet (default 200)")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds before the KILL (default 60)")
    parser.add_argument("--interval", type=float, default=1.0, help="tick interval in seconds (default 1)")
    parser.add_argument(
        "--baseline-rounds",
        type=int,
        default=2,
        help="sequential rounds over all agents, half before and half after (default 2)",
    )
    parser.add_argument("--cli", action="store_true", help="run `heartbeat run` as a child process instead")
    parser.add_argument("--dir", type=Path, default=None, help="work folder (default: a temp folder)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="hb-bench-fleet-", dir=args.dir) as tmp:
        folder = Path(tmp)
        config_path = write_fleet(folder, args.agents, args.interval)
        config = load_config(config_path)
        heartbeats = [Heartbeat(config, agent) for agent in config.all_agents()]
        Baseline().round(heartbeats)  # warm-up: creates the state folders, imports the step
        base = Baseline()
        before = (args.baseline_rounds + 1) // 2
        for _ in range(before):
            base.round(heartbeats)
        if args.cli:
            fleet = run_cli(config_path, args.duration, [hb.state_dir for hb in heartbeats])
        else:
            fleet = run_in_process(config_path, args.duration, args.interval)
        (folder / "KILL").unlink(missing_ok=True)
        for _ in range(args.baseline_rounds - before):
            base.round(heartbeats)

    per_agent = math.ceil(args.duration / args.interval)
    scheduled = args.agents * per_agent
    missing = scheduled - fleet.completed_in_window
    cpu_tick = fleet.cpu / fleet.completed if fleet.completed else math.nan
    base_cpu = base.cpu / base.ticks if base.ticks else math.nan
    mode = "`heartbeat run` child process" if args.cli else "schedule.Runner in this process"
    print(f"bench_fleet: {machine()}")
    print(
        f"{args.agents} agents, every {args.interval:g} s, for {args.duration:g} s ({mode}); "
        f"run ended with exit {fleet.exit_code}: {fleet.reason}"
    )
    rows = [
        ["ticks scheduled in the window", f"{scheduled:,}", f"{args.agents} x {per_agent}"],
        [
            "ticks completed in the window",
            f"{fleet.completed_in_window:,}",
            f"{100 * fleet.completed_in_window / scheduled:.1f}%"
            + ("; counted from state.json, the window starts with the child" if args.cli else ""),
        ],
        ["ticks missing (coalesced/skipped)", f"{missing:,}", ""],
        ["ticks that ran in all", f"{fleet.completed:,}", "incl. any scheduled after the window"],
    ]
    if not args.cli:
        rows += [
            ["APScheduler misfires", str(fleet.misfired), "past misfire_grace_time"],
            ["skipped: still running", str(fleet.max_instance_skips), "max_instances=1"],
            ["outcomes", ", ".join(f"{k} {v}" for k, v in sorted(fleet.outcomes.items())), ""],
            [
                "completion lag p50 / p95 / max ms",
                f"{ms(median(fleet.lag))} / {ms(quantile(fleet.lag, 0.95))} / {ms(max(fleet.lag))}",
                "done minus scheduled time",
            ],
            [
                "tick wall in the fleet p50 / p95 ms",
                f"{ms(median(fleet.tick_wall))} / {ms(quantile(fleet.tick_wall, 0.95))}",
                "32 worker threads",
            ],
            ["rusage user / sys s", f"{fleet.rusage_user:.2f} / {fleet.rusage_sys:.2f}", ""],
        ]
    rows += [
        [
            "CPU s (process) / wall s",
            f"{fleet.cpu:.2f} / {fleet.wall:.2f}",
            f"{100 * fleet.cpu / fleet.wall:.0f}% of one CPU"
            + (", incl. the child's start-up" if args.cli else ""),
        ],
        ["CPU per tick in the fleet", f"{ms(cpu_tick)} ms", ""],
        ["baseline: CPU per sequential tick", f"{ms(base_cpu)} ms", f"{base.ticks} ticks, no scheduler"],
        ["baseline: wall per sequential tick p50", f"{ms(median(base.wall))} ms", ""],
        ["stop after KILL", f"{fleet.stop_latency:.2f} s", "target: about 1 s"],
    ]
    table(["", "value", "note"], rows)
    print(
        f"\nRATIO completed / scheduled = {fleet.completed_in_window / scheduled:.3f} "
        f"({fleet.completed_in_window:,} of {scheduled:,}); CPU per tick fleet / sequential = "
        f"{cpu_tick / base_cpu:.2f}x ({ms(cpu_tick)} vs {ms(base_cpu)} ms)"
    )


if __name__ == "__main__":
    main()
