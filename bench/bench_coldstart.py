"""Cold start: ``heartbeat tick`` as a fresh process (what cron runs) vs an import floor.

Subjects and baselines are fresh processes, run interleaved in a shuffled
order each round, in a temp folder holding a ``heartbeat.toml`` for a trivial
agent (one recorded action per tick) with a webhook notifier configured, as a
production agent would have (it is never called: nothing is undelivered).

* ``python -c pass``: the interpreter alone.
* floor: ``import pydantic, filelock`` and define one ``BaseModel``: the least
  a pydantic-validated, locked tick can import. Target: tick <= 1.3x floor.
* ``heartbeat tick`` (console script) and ``python -m heartbeat tick``.
* ``import heartbeat.cli.main, heartbeat.tick.runner`` without ticking (the import share).
* promptise 1.10.1 ``from promptise.runtime.health import HealthMonitor``
  (its own venv in bench/.venv-promptise, created when missing).

Then ``python -X importtime -m heartbeat tick``: which modules a tick
imports, the heaviest ones, and a check that httpx, apscheduler, click and
rich are not among them.

    python bench/bench_coldstart.py [--reps 25] [--promptise-reps 5] [--no-promptise]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from _common import BENCH_DIR, TRIVIAL_AGENT, machine, median, ms, quantile, table, verdict

TARGET = 1.3
PROMPTISE = "promptise==1.10.1"
PROMPTISE_VENV = BENCH_DIR / ".venv-promptise"
PROMPTISE_IMPORT = "from promptise.runtime.health import HealthMonitor"
MUST_NOT_IMPORT = ("httpx", "apscheduler", "click", "rich", "httpcore", "anyio", "prometheus_client")

FLOOR_SCRIPT = """\
import filelock
from pydantic import BaseModel


class State(BaseModel):
    ticks: int = 0
"""

PHASES_SCRIPT = """\
import io, json, time
t0 = time.perf_counter()
import filelock
from pydantic import BaseModel
class State(BaseModel):
    ticks: int = 0
t1 = time.perf_counter()
import heartbeat.cli.main
t2 = time.perf_counter()
import heartbeat.tick.runner
t3 = time.perf_counter()
code = heartbeat.cli.main.main(["tick"], out=io.StringIO())
t4 = time.perf_counter()
assert code == 0, code
print(json.dumps({"floor imports": t1 - t0, "import heartbeat.cli.main (config, argparse)": t2 - t1,
                  "import heartbeat.tick.runner (the rest)": t3 - t2,
                  "main(['tick']): config + tick": t4 - t3}))
"""

CONFIG = """\
[agent]
name = "bench"
step = "trivial_agent:step"
state_dir = "state"

[[notify]]
type = "webhook"
url = "http://127.0.0.1:9/never-called"
"""


@dataclass
class Command:
    name: str
    argv: list[str]
    reps: int
    times: list[float] = field(default_factory=list)


def run_once(cmd: Command, cwd: Path, env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(
        cmd.argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{cmd.name}: exit {done.returncode}: {done.stderr.decode()[-2000:]}")
    return elapsed


def promptise_python(create: bool) -> tuple[Path | None, str]:
    """The promptise venv's python, creating the venv if asked; (None, why) when unavailable."""
    python = PROMPTISE_VENV / "bin" / "python"
    if not python.exists():
        if not create:
            return None, f"{PROMPTISE_VENV} missing (--no-promptise-install)"
        print(f"creating {PROMPTISE_VENV} with {PROMPTISE} (once) ...", file=sys.stderr)
        try:
            subprocess.run([sys.executable, "-m", "venv", str(PROMPTISE_VENV)], check=True)
            subprocess.run([str(python), "-m", "pip", "install", "-q", PROMPTISE], check=True, timeout=1200)
        except (subprocess.SubprocessError, OSError) as exc:
            return None, f"not installable here: {exc}"
    probe = subprocess.run([str(python), "-c", PROMPTISE_IMPORT], capture_output=True, check=False)
    if probe.returncode != 0:
        return None, f"import failed: {probe.stderr.decode().strip().splitlines()[-1:]}"
    return python, ""


@dataclass
class ImportRow:
    name: str
    self_us: int
    cumulative_us: int
    depth: int


_IMPORT_LINE = re.compile(r"import time:\s+(\d+)\s+\|\s+(\d+)\s+\|( *)(\S+)")


def import_times(argv: list[str], cwd: Path, env: dict[str, str]) -> list[ImportRow]:
    done = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    rows = []
    for line in done.stderr.splitlines():
        match = _IMPORT_LINE.match(line)
        if match:
            self_us, cum, indent, name = match.groups()
            rows.append(ImportRow(name, int(self_us), int(cum), (len(indent) - 1) // 2))
    return rows


def parents(rows: list[ImportRow]) -> list[ImportRow | None]:
    """Each row's importer: importtime lists children before their parent, one level deeper."""
    found: list[ImportRow | None] = []
    for i, row in enumerate(rows):
        found.append(next((r for r in rows[i + 1 :] if r.depth < row.depth), None))
    return found


def top_level_package(name: str) -> str:
    return name.split(".", 1)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=25, help="rounds of every command (default 25)")
    parser.add_argument("--promptise-reps", type=int, default=5, help="rounds of the promptise import")
    parser.add_argument("--no-promptise", action="store_true", help="leave promptise out")
    parser.add_argument(
        "--no-promptise-install", action="store_true", help="use bench/.venv-promptise only if it exists"
    )
    parser.add_argument(
        "--phase-reps", type=int, default=10, help="fresh processes timing their own phases (default 10)"
    )
    parser.add_argument("--top", type=int, default=12, help="heaviest imports to list")
    parser.add_argument("--seed", type=int, default=1, help="seed of the shuffled order")
    args = parser.parse_args()

    python = sys.executable
    script = shutil.which("heartbeat", path=str(Path(python).parent))
    # PYTHON* variables change start-up; PYTHONPATH stays, so a worktree measures its own code.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") or k == "PYTHONPATH"}
    promptise_note = "left out (--no-promptise)"
    promptise_py: Path | None = None
    if not args.no_promptise:
        promptise_py, promptise_note = promptise_python(create=not args.no_promptise_install)

    with tempfile.TemporaryDirectory(prefix="hb-bench-cold-") as tmp:
        work = Path(tmp)
        (work / "heartbeat.toml").write_text(CONFIG)
        (work / "trivial_agent.py").write_text(TRIVIAL_AGENT)
        (work / "floor.py").write_text(FLOOR_SCRIPT)
        (work / "phases.py").write_text(PHASES_SCRIPT)
        floor = Command("floor: import pydantic+filelock, 1 BaseModel", [python, "floor.py"], args.reps)
        tick_m = Command("python -m heartbeat tick", [python, "-m", "heartbeat", "tick"], args.reps)
        commands = [
            Command("python -c pass", [python, "-c", "pass"], args.reps),
            floor,
            Command(
                "import heartbeat.cli.main + heartbeat.tick.runner (no tick)",
                [python, "-c", "import heartbeat.cli.main, heartbeat.tick.runner"],
                args.reps,
            ),
            tick_m,
        ]
        tick_script: Command | None = None
        if script:
            tick_script = Command("heartbeat tick (console script)", [script, "tick"], args.reps)
            commands.append(tick_script)
        if promptise_py is not None:
            commands.append(
                Command(
                    f"promptise 1.10.1: {PROMPTISE_IMPORT}",
                    [str(promptise_py), "-c", PROMPTISE_IMPORT],
                    args.promptise_reps,
                )
            )

        for cmd in commands:  # warm the page cache and the .pyc files
            run_once(cmd, work, env)
        order = random.Random(args.seed)
        for rnd in range(max(c.reps for c in commands)):
            todo = [c for c in commands if rnd < c.reps]
            order.shuffle(todo)
            for cmd in todo:
                cmd.times.append(run_once(cmd, work, env))

        phases: dict[str, list[float]] = {}
        for _ in range(args.phase_reps):
            done = subprocess.run(
                [python, "phases.py"], cwd=work, env=env, capture_output=True, text=True, check=True
            )
            for name, seconds in json.loads(done.stdout).items():
                phases.setdefault(name, []).append(seconds)
        tick_rows = import_times([python, "-m", "heartbeat", "tick"], work, env)
        floor_rows = import_times([python, "floor.py"], work, env)
        ticks_done = json.loads((work / "state" / "state.json").read_text())["ticks"]

    base = median(floor.times)
    print(f"bench_coldstart: {machine()}")
    with_promptise = f" (promptise: {args.promptise_reps})" if promptise_py is not None else ""
    print(
        f"{args.reps} shuffled rounds of fresh processes{with_promptise}; "
        f"the trivial agent ticked {ticks_done} times in all"
    )
    table(
        ["command", "median ms", "p10 ms", "p90 ms", "vs floor"],
        [
            [
                c.name,
                ms(median(c.times)),
                ms(quantile(c.times, 0.1)),
                ms(quantile(c.times, 0.9)),
                f"{median(c.times) / base:.2f}x",
            ]
            for c in commands
        ],
        title="Fresh-process wall time",
    )
    if promptise_py is None:
        print(f"promptise 1.10.1: {promptise_note}")

    if phases:
        table(
            ["phase (timed inside one fresh process)", "median ms", "p90 ms"],
            [[name, ms(median(t)), ms(quantile(t, 0.9))] for name, t in phases.items()],
            title=f"Where a fresh tick's time goes ({args.phase_reps} processes; interpreter start-up "
            "and exit are outside these)",
        )
    packages = {top_level_package(r.name) for r in tick_rows}
    ours = sorted((r for r in tick_rows if r.name.startswith("heartbeat")), key=lambda r: -r.cumulative_us)
    print(
        f"\nheartbeat modules imported by a tick ({len(ours)}): "
        + ", ".join(f"{r.name} {r.cumulative_us / 1000:.1f}/{r.self_us / 1000:.1f}" for r in ours)
        + " (cumulative/self ms, python -X importtime; it inflates the times)"
    )
    direct = sorted(
        (
            (r, parent)
            for r, parent in zip(tick_rows, parents(tick_rows), strict=True)
            if parent is not None
            and parent.name.startswith("heartbeat")
            and not r.name.startswith("heartbeat")
        ),
        key=lambda pair: -pair[0].cumulative_us,
    )[: args.top]
    table(
        ["imported by", "module", "cumulative ms"],
        [[parent.name, r.name, ms(r.cumulative_us / 1e6)] for r, parent in direct],
        title="Heaviest modules heartbeat's own modules import first (importtime)",
    )
    extra = sorted(packages - {top_level_package(r.name) for r in floor_rows})
    print(
        f"\nmodules imported: tick {len(tick_rows)}, floor {len(floor_rows)}; top-level names a tick "
        f"imports beyond the floor: {', '.join(extra)}"
    )
    bad = [p for p in MUST_NOT_IMPORT if p in packages]
    print(
        f"must not be imported by a tick ({', '.join(MUST_NOT_IMPORT)}): "
        + ("none imported: OK" if not bad else f"IMPORTED: {', '.join(bad)}")
    )

    ratio_m = median(tick_m.times) / base
    line = f"python -m heartbeat tick {ratio_m:.2f}x"
    main_ratio, main_ms = ratio_m, median(tick_m.times)
    if tick_script is not None:
        main_ratio, main_ms = median(tick_script.times) / base, median(tick_script.times)
        line = f"console script {main_ratio:.2f}x, {line}"
    print(
        f"\nRATIO heartbeat tick / pydantic floor = {main_ratio:.2f}x ({ms(main_ms)} ms vs "
        f"{ms(base)} ms; {line}); {verdict(main_ratio, TARGET)}"
    )


if __name__ == "__main__":
    main()
