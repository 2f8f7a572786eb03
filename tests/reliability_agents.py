"""Agents, child-process bodies and harnesses for the reliability tests and bench/stress_*.py.

The same code runs the short versions (tests/test_reliability.py, default test
run) and the long ones (bench/stress_crash.py, stress_concurrency.py,
stress_fuzz.py); only the numbers differ.

* Agents: :func:`crash_step` (records actions, gets stuck on a fixed
  schedule so it escalates every few ticks, raises now and then) and
  :func:`race_step` (counts its own calls in ``ctx.data``).
* Crash campaign: :func:`crash_campaign` SIGKILLs heartbeats at random
  moments, in forkserver children that tick in a loop and announce each phase
  of the tick (step, save, ESCALATION.md, outbox, notify, journal, resume)
  through a pipe, and in real ``python -m heartbeat tick``/``run``
  processes. After every kill it checks the state folder
  (:func:`inspect_state_folder`).
* Concurrency: :func:`race_campaign` runs the real CLI (``cli.main``) in 4
  processes on one state folder.
* Bad input: hypothesis strategies for state files, config files and trace
  lines, and the checks (:func:`check_state_file`, :func:`check_config_file`,
  :func:`check_trace_file`) that say what every input must lead to.

Children are started from a forkserver that has imported heartbeat already,
so one starts in milliseconds; Python 3.11's forkserver does pass the
parent's ``sys.path`` to each child, so this module must sit on it
(pytest puts ``tests/`` there; the bench scripts add it).
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import math
import multiprocessing
import multiprocessing.connection
import multiprocessing.context
import os
import queue
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TESTS_DIR = Path(__file__).resolve().parent
REPO_DIR = TESTS_DIR.parent

# Set in a crash child: called with the name of each phase the tick enters.
ANNOUNCE: Callable[[Any], None] | None = None


def _announce(message: Any) -> None:
    if ANNOUNCE is not None:
        ANNOUNCE(message)


# ----------------------------------------------------------------------------- agents


def crash_step(ctx: Any) -> None:
    """Records actions; stuck (3 identical calls) on ticks 1, 2 of every 5; raises on every 7th.

    Every 11th tick it calls ``sys.exit(0)`` (a step error like any other) and
    every 13th leaves an object in ``ctx.data`` (made savable, journaled).

    With ``escalate_after = 2`` it escalates on every tick numbered 5k + 2.
    It is deterministic in the tick number, so a tick re-run after a crash
    decides the same as the run that was killed.
    """
    _announce("step")
    marker = os.environ.get("HB_MARKER")
    if marker:  # a real CLI process says "the step is running" to the test
        with open(marker, "a") as handle:
            handle.write(f"{ctx.tick}\n")
    ctx.data["n"] = int(ctx.data.get("n", 0)) + 1
    if ctx.tick % 5 in (1, 2):
        for _ in range(3):
            if ctx.record("search", {"q": "the same query"}, output="the same page again"):
                break
    else:
        ctx.record("read", {"page": ctx.tick}, output=f"page {ctx.tick}: new text here")
        ctx.record("write", {"note": ctx.tick}, output="saved a note of some length")
        ctx.data["done"] = int(ctx.data.get("done", 0)) + 1
    ctx.data.pop("client", None)
    if ctx.tick % 13 == 0:
        ctx.data["client"] = object()  # cannot be saved as it is
    if ctx.tick % 7 == 0:
        raise RuntimeError(f"the search API failed on tick {ctx.tick}")
    if ctx.tick % 11 == 0:
        sys.exit(0)
    _announce("step/done")


def crash_progress(ctx: Any) -> float:
    """Moves with every working tick and stays flat on the stuck ones (a rise would overrule them)."""
    return float(ctx.data.get("done", 0))


def race_step(ctx: Any) -> None:
    """Counts its calls in ``data.n``; stuck on every 9th tick, raises on every 6th.

    Every 10th tick it raises SystemExit (a step error), every 8th leaves an
    unsavable object in ``ctx.data`` (made savable): neither may lose a count.
    """
    ctx.data["n"] = int(ctx.data.get("n", 0)) + 1
    ctx.data.pop("client", None)
    if ctx.tick % 8 == 0:
        ctx.data["client"] = object()
    ctx.data.setdefault("calls", []).append(ctx.tick)
    del ctx.data["calls"][:-5]
    if ctx.tick % 9 == 0:
        for _ in range(3):
            if ctx.record("poll", {"q": "same"}, output="the same three results as before"):
                break
    else:
        ctx.record("work", {"tick": ctx.tick}, output=f"did unit of work {ctx.tick}")
        ctx.data["done"] = int(ctx.data.get("done", 0)) + 1
    if ctx.tick % 6 == 0:
        raise RuntimeError("flaky tool")
    if ctx.tick % 10 == 0:
        raise SystemExit(0)


def race_progress(ctx: Any) -> float:
    """Moves with every working call and stays flat on the stuck ones (a rise would overrule them)."""
    return float(ctx.data.get("done", 0))


def noop_step(ctx: Any) -> None:
    """One harmless action (for fuzzed state and config files)."""
    ctx.record("look", {"at": ctx.tick}, output="looked at something useful")


def no_metric(ctx: Any) -> None:
    """A metric with nothing to say."""
    return None


# ----------------------------------------------------------------------------- helpers


def forkserver_context() -> multiprocessing.context.ForkServerContext:
    """A forkserver context; its server preloads heartbeat when this call starts it."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(
        [
            "__main__",
            "heartbeat.tick.runner",
            "heartbeat.cli.main",
            "heartbeat.notify.notifiers",
            "heartbeat.notify.outbox",
            "heartbeat.state.journal",
            "httpx",
        ]
    )
    return ctx


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a real ``python -m heartbeat`` process that can import these agents."""
    path = os.pathsep.join(p for p in (str(TESTS_DIR), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, **extra}


def heartbeat_cmd(*argv: str) -> list[str]:
    """argv of a real heartbeat process."""
    return [sys.executable, "-m", "heartbeat", *argv]


def write_project(
    root: Path,
    *,
    step: str,
    progress: str,
    escalate_after: int = 2,
    webhook_url: str | None = None,
    webhook_timeout: str = "2s",
    webhook_retries: int = 1,
    extra: str = "",
) -> Path:
    """A folder with heartbeat.toml (file notifier, maybe a webhook); returns the config path."""
    root.mkdir(parents=True, exist_ok=True)
    text = textwrap.dedent(f'''
        [agent]
        name = "agent"
        step = "{step}"
        progress = "{progress}"
        state_dir = "state"
        kill_file = "KILL"

        [policy]
        escalate_after = {escalate_after}

        [[notify]]
        type = "file"
        name = "file"
        path = "notes.jsonl"
    ''')
    if webhook_url:
        text += textwrap.dedent(f'''
            [[notify]]
            type = "webhook"
            name = "webhook"
            url = "{webhook_url}"
            timeout = "{webhook_timeout}"
            retries = {webhook_retries}
            backoff = "0.01s"
        ''')
    config = root / "heartbeat.toml"
    config.write_text(text + extra)
    return config


def notes_keys(path: Path, *, strict: bool = False) -> list[str]:
    """Idempotency keys of the notifications a file notifier appended, one per JSON line.

    A torn line (a kill mid-append) is skipped. Unless ``strict``, a whole
    notification glued to the end of a torn line is still counted (see
    :func:`glued_lines`): it reached the file, though no line-by-line reader
    can see it.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    keys = []
    for line in raw.splitlines():
        try:
            keys.append(json.loads(line)["idempotency_key"])
        except (ValueError, KeyError, TypeError):
            if not strict:
                keys += _glued(line)
    return keys


def _glued(line: bytes) -> list[str]:
    """Keys of whole notifications inside a line that does not parse (a torn one glued to them)."""
    text = line.decode("utf-8", "replace")
    found, start = [], text.find("{", 1)
    while start != -1:
        try:
            obj, end = json.JSONDecoder().raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(obj, dict) and "idempotency_key" in obj and end == len(text):
            found.append(obj["idempotency_key"])
            break
        start = text.find("{", start + 1)
    return found


def glued_lines(path: Path) -> int:
    """Lines of a notifications file that hold a torn notification with a whole one glued to it."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return 0
    bad = 0
    for line in raw.splitlines():
        try:
            json.loads(line)
        except ValueError:
            bad += bool(_glued(line))
    return bad


def request_keys(server: Any) -> list[str]:
    """Idempotency-Key headers of every request the webhook server received."""
    keys = []
    for request in list(server.requests):
        for name, value in request.headers.items():
            if name.lower() == "idempotency-key":
                keys.append(value)
    return keys


def outbox_entries(state_dir: Path) -> tuple[set[tuple[str, str]], list[str]]:
    """(key, notifier) of each outbox entry, and the files that did not parse; read only."""
    from heartbeat.notify.outbox import OutboxEntry

    found: set[tuple[str, str]] = set()
    bad: list[str] = []
    folder = state_dir / "outbox"
    if not folder.is_dir():
        return found, bad
    for path in folder.glob("*.json"):
        try:
            entry = OutboxEntry.model_validate_json(path.read_bytes())
        except FileNotFoundError:
            continue
        except Exception:
            bad.append(path.name)
            continue
        found.add((entry.notification.key, entry.notifier))
    return found, bad


def temp_paths(state_dir: Path) -> dict[str, str]:
    """Leftovers of killed writers in a state folder: relative path -> kind."""
    found: dict[str, str] = {}
    if not state_dir.is_dir():
        return found
    for path in state_dir.rglob("*"):
        name, where = path.name, str(path.relative_to(state_dir))
        if name.endswith(".tmp"):
            if path.parent.name == "outbox":
                found[where] = "outbox/.*.tmp"
            elif name.startswith(".state.json."):
                found[where] = ".state.json.*.tmp"
            else:
                base = name[1:].rsplit(".", 2)[0] if name.startswith(".") else name
                found[where] = f".{base}.*.tmp"
        elif name.startswith(".exec-") and path.is_dir():
            found[where] = ".exec-*/"
    return found


def temp_files(state_dir: Path) -> dict[str, int]:
    """Leftovers of killed writers in a state folder, counted by kind."""
    return dict(Counter(temp_paths(state_dir).values()))


# ----------------------------------------------------------------------------- webhook server


def webhook_server() -> contextlib.AbstractContextManager[Any]:
    """The conftest webhook server (same class, same handler), for the bench scripts."""
    from conftest import running_webhook_server

    return running_webhook_server()


# ----------------------------------------------------------------------------- crash campaign

PHASES = (
    "step",
    "save",
    "escalation_md",
    "outbox",
    "notify:file",
    "notify:webhook",
    "saved",
    "journal",
    "resume",
    "anywhere",
)
# How long after a phase starts the kill may come (seconds, uniform): about the phase's length.
_MAX_DELAY = {
    "step": 0.001,
    "save": 0.002,
    "escalation_md": 0.0015,
    "outbox": 0.0015,
    "notify:file": 0.001,
    "notify:webhook": 0.045,
    "saved": 0.004,
    "journal": 0.0015,
    "resume": 0.002,
    "anywhere": 0.15,
}


def _instrument(hb: Any, send: Callable[[Any], None]) -> None:
    """Make a child's heartbeat say which phase it is in (test instrumentation, child only)."""
    import heartbeat.tick.effects as effects
    from heartbeat.notify.outbox import Outbox

    global ANNOUNCE
    ANNOUNCE = send

    def wrap(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            send(name)
            value = fn(*args, **kwargs)
            send(f"{name}/done")
            return value

        return wrapped

    save = hb.store.save

    def save_and_say(state: Any) -> None:
        send("save")
        save(state)
        send("saved")

    hb.store.save = save_and_say
    # ESCALATION.md is written by heartbeat.tick.effects, the I/O half of the tick's core.
    effects.write_escalation_file = wrap("escalation_md", effects.write_escalation_file)
    Outbox.put = wrap("outbox", Outbox.put)
    hb._journal_file.write = wrap("journal", hb._journal_file.write)
    for notifier in hb.notifiers():
        notifier.send = wrap(f"notify:{notifier.name}", notifier.send)


def tick_until_killed(config_path: str, conn: multiprocessing.connection.Connection) -> None:
    """Child body: tick (and resume after an escalation) in a loop, announcing phases, until killed."""
    from heartbeat.config.file import load_config
    from heartbeat.tick.runner import Heartbeat

    hb = Heartbeat(load_config(config_path))
    _instrument(hb, conn.send)
    conn.send("ready")
    while True:
        result = hb.tick()
        conn.send(("done", result.exit_code, result.tick, result.outcome))
        if result.outcome == "needs_human":
            conn.send("resume")
            hb.resume("carry on")
            conn.send("resume/done")


@dataclass
class CrashReport:
    """What a crash campaign did and found."""

    kills: int = 0
    cli_kills: int = 0
    cli_finished: int = 0
    killed_in: Counter[str] = field(default_factory=Counter)
    targeted: Counter[str] = field(default_factory=Counter)
    ticks_final: int = 0
    ticks_completed_acked: int = 0
    escalations: set[str] = field(default_factory=set)
    duplicates: Counter[str] = field(default_factory=Counter)
    torn_journal_lines: int = 0
    pending_at_kill: int = 0
    glued_notification_lines: int = 0
    temps_seen: Counter[str] = field(default_factory=Counter)
    temps_after_clean_ticks: Counter[str] = field(default_factory=Counter)
    clean_ticks: int = 0
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """A few lines for a human."""
        where = ", ".join(f"{k} {v}" for k, v in sorted(self.killed_in.items()))
        return "\n".join(
            [
                f"SIGKILLs survived: {self.kills + self.cli_kills} "
                f"({self.kills} tick-loop children, {self.cli_kills} `heartbeat tick`/`run` processes; "
                f"{self.cli_finished} CLI processes finished before their kill)",
                f"killed while in: {where}",
                f"final ticks: {self.ticks_final}; escalations decided: {len(self.escalations)}, "
                f"every one delivered to both notifiers (file, webhook) or waiting in outbox/ "
                f"(or, {self.pending_at_kill} times, in state.json's notices, queued by the next tick); "
                f"repeat deliveries (at-least-once): {sum(self.duplicates.values())}",
                f"torn journal lines skipped by readers: {self.torn_journal_lines}; notes.jsonl lines "
                f"torn by a kill with the re-delivery glued on: {self.glued_notification_lines}",
                f"temp files left by killed writers: {dict(self.temps_seen) or 'none'}; "
                f"still there after the last of {self.clean_ticks} clean ticks: "
                f"{dict(self.temps_after_clean_ticks) or 'none'}",
                f"problems: {len(self.problems)}" + "".join(f"\n  - {p}" for p in self.problems[:20]),
            ]
        )


class CrashCampaign:
    """SIGKILL a heartbeat again and again over one state folder; check it after every death."""

    def __init__(self, root: Path, server: Any, *, seed: int, server_delay: float = 0.03) -> None:
        self.root = root
        self.server = server
        self.server_delay = server_delay
        server.delay = server_delay
        self.rng = random.Random(seed)
        self.phase_offset = self.rng.randrange(len(PHASES))
        self.config = write_project(
            root,
            step="reliability_agents:crash_step",
            progress="reliability_agents:crash_progress",
            escalate_after=2,
            webhook_url=server.url("/hooks/crash"),
        )
        self.state_dir = root / "state"
        self.report = CrashReport()
        self.last_ticks = 0
        self.acked_tick = 0
        self.seen_temps: set[str] = set()
        self.ctx = forkserver_context()

    # -- checks

    def problem(self, text: str) -> None:
        """Record a broken promise (the test fails on any)."""
        self.report.problems.append(text)

    def check(self, when: str) -> Any:
        """The promises that must hold after any crash; returns the state (or None)."""
        from heartbeat.base.errors import HeartbeatError
        from heartbeat.core.models import Status
        from heartbeat.state.journal import Journal
        from heartbeat.state.store import StateStore

        state = None
        if (self.state_dir / "state.json").exists():
            try:
                state = StateStore(self.state_dir).load()
            except HeartbeatError as exc:
                self.problem(f"{when}: state.json does not load: {exc}")
                return None
        journal = Journal(self.state_dir / "journal.jsonl")
        try:
            list(journal.read())
        except Exception as exc:
            self.problem(f"{when}: the journal does not read: {exc!r}")
        ticks = state.ticks if state else 0
        if ticks < self.last_ticks:
            self.problem(f"{when}: ticks went backwards: {self.last_ticks} -> {ticks}")
        if ticks < self.acked_tick:
            self.problem(f"{when}: tick {self.acked_tick} completed but state.json has {ticks}")
        self.last_ticks = max(self.last_ticks, ticks)
        entries, bad = outbox_entries(self.state_dir)
        if bad:
            self.problem(f"{when}: unreadable outbox entries {bad}")
        if state is not None and state.status is Status.NEEDS_HUMAN:
            if state.escalation is None:
                self.problem(f"{when}: needs_human without an escalation record")
            else:
                key = state.escalation.key
                self.report.escalations.add(key)
                # Saved with the decision, queued right after the save (or by the next tick).
                pending = {n.key for n in state.notices}
                if key in pending:
                    self.report.pending_at_kill += 1
                elif not (self.state_dir / "ESCALATION.md").exists():
                    self.problem(f"{when}: needs_human ({key}) but no ESCALATION.md")
                self._check_delivered_or_waiting(
                    key, entries | {(k, n) for k in pending for n in ("file", "webhook")}, when
                )
        for where, kind in temp_paths(self.state_dir).items():
            if where not in self.seen_temps:
                self.seen_temps.add(where)
                self.report.temps_seen[kind] += 1
        return state

    def _check_delivered_or_waiting(self, key: str, entries: set[tuple[str, str]], when: str) -> None:
        delivered = {
            "file": key in notes_keys(self.root / "notes.jsonl"),
            "webhook": key in request_keys(self.server),
        }
        for notifier, done in delivered.items():
            if not done and (key, notifier) not in entries:
                self.problem(f"{when}: escalation {key} lost for {notifier}: not delivered, not in outbox/")

    # -- one kill

    def kill_child(self, number: int) -> None:
        """Start a tick-loop child, wait for a chosen phase, wait a random moment, SIGKILL it."""
        phase = PHASES[(self.phase_offset + number) % len(PHASES)]  # every phase in turn
        reader, writer = self.ctx.Pipe(duplex=False)
        child = self.ctx.Process(target=tick_until_killed, args=(str(self.config), writer))
        child.start()
        writer.close()
        last: Any = None
        deadline = time.monotonic() + 20
        target = "ready" if phase == "anywhere" else phase
        try:
            while True:
                try:
                    if not reader.poll(max(0.0, deadline - time.monotonic())):
                        self.problem(f"kill {number}: phase {phase} never came")
                        break
                    last = reader.recv()
                except EOFError:
                    child.join()
                    self.problem(f"kill {number}: the child died by itself (exit {child.exitcode})")
                    return
                self._note(last)
                if last == target:
                    break
            # The kill point: a random moment from the start of that phase on.
            time.sleep(self.rng.uniform(0, _MAX_DELAY[phase]))
            os.kill(child.pid, signal.SIGKILL)  # type: ignore[arg-type]
            child.join()
            while True:
                try:
                    last = reader.recv()
                except EOFError:
                    break
                self._note(last)
        finally:
            reader.close()
            if child.is_alive():
                child.kill()
                child.join()
        if child.exitcode != -signal.SIGKILL:
            self.problem(f"kill {number}: the child ended with {child.exitcode}, not SIGKILL")
        self.report.kills += 1
        self.report.killed_in[_where(last)] += 1
        self.report.targeted[f"{phase} -> {_where(last)}"] += 1
        self.check(f"after kill {number} (in {_where(last)})")

    def _note(self, message: Any) -> None:
        if isinstance(message, tuple) and message[0] == "done":
            _, code, tick, outcome = message
            if code not in (0, 1, 4):
                self.problem(f"a tick exited {code} ({outcome})")
            if tick is not None:
                self.acked_tick = max(self.acked_tick, tick)
                self.report.ticks_completed_acked += 1

    def kill_cli(self, number: int) -> None:
        """Kill a real `heartbeat tick` or `heartbeat run --every 0.1s` process at a random moment."""
        self._resume_if_waiting(f"before CLI kill {number}")
        marker = self.root / "marker"
        marker.unlink(missing_ok=True)
        command = self.rng.choice(["tick", "run"])
        argv = ["tick"] if command == "tick" else ["run", "--every", "0.1s"]
        proc = subprocess.Popen(
            heartbeat_cmd(*argv, "--config", str(self.config)),
            cwd=self.root,
            env=child_env(HB_MARKER=str(marker)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 30
            while not marker.exists() and proc.poll() is None:  # wait for the step to run
                if time.monotonic() > deadline:
                    self.problem(f"CLI kill {number}: the step never ran")
                    break
                time.sleep(0.002)
            time.sleep(self.rng.uniform(0, 0.05 if command == "tick" else 0.6))
            alive = proc.poll() is None
            if alive:
                proc.send_signal(signal.SIGKILL)
            _, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if alive:
            self.report.cli_kills += 1
            self.report.killed_in[f"cli {command}"] += 1
        else:
            self.report.cli_finished += 1
            if proc.returncode not in (0, 1, 4):
                self.problem(f"`heartbeat {command}` exited {proc.returncode}: {err.decode()[-300:]}")
        if b"Traceback" in err:
            self.problem(f"`heartbeat {command}` printed a traceback: {err.decode()[-300:]}")
        self.check(f"after CLI {command} kill {number}")

    # -- clean ticks

    def _heartbeat(self) -> Any:
        from heartbeat.config.file import load_config
        from heartbeat.tick.runner import Heartbeat

        return Heartbeat(load_config(self.config))

    def _resume_if_waiting(self, when: str) -> None:
        from heartbeat.core.models import Status

        state = self.check(when)
        if state is not None and state.status is Status.NEEDS_HUMAN:
            self._heartbeat().resume("carry on")

    def clean_tick(self, when: str) -> Any:
        """One uninterrupted tick in this process; afterwards no state.json temp file may be left."""
        result = self._heartbeat().tick()
        self.report.clean_ticks += 1
        if result.exit_code not in (0, 1, 4):
            self.problem(f"{when}: a clean tick exited {result.exit_code}: {result.message}")
        leftovers = temp_files(self.state_dir)
        if leftovers.get(".state.json.*.tmp"):
            self.problem(f"{when}: {leftovers} temp files left after a clean tick")
        self.check(f"{when}, after a clean tick")
        return result

    # -- the whole run

    def run(self, kills: int, cli_kills: int, log: Callable[[str], None] = lambda s: None) -> CrashReport:
        """``kills`` child kills and ``cli_kills`` CLI kills, interleaved; then drain and check all."""
        cli_every = max(1, kills // max(cli_kills, 1)) if cli_kills else 0
        number = 0
        while self.report.kills < kills or self.report.cli_kills < cli_kills:
            number += 1
            want_cli = (
                cli_kills
                and self.report.cli_kills < cli_kills
                and (self.report.kills >= kills or number % (cli_every + 1) == 0)
            )
            if want_cli:
                self.kill_cli(number)
            else:
                self.kill_child(number)
            if number % 10 == 0:
                self.clean_tick(f"after kill {number}")
                log(
                    f"  {self.report.kills + self.report.cli_kills} kills, ticks {self.last_ticks}, "
                    f"problems {len(self.report.problems)}"
                )
        self.finish()
        return self.report

    def finish(self) -> None:
        """Heal: deliver everything; then every escalation ever decided reached both notifiers."""
        from heartbeat.core.models import Status
        from heartbeat.state.journal import Journal

        self.server.delay = 0
        for attempt in range(6):
            result = self.clean_tick(f"final tick {attempt}")
            # Past the back-off: what waits is sent now (`heartbeat outbox retry`), before a resume
            # would settle it.
            hb = self._heartbeat()
            hb.outbox().deliver(hb.notifiers(), hb.clock(), force=True)
            entries, _ = outbox_entries(self.state_dir)
            if result.outcome == "needs_human":
                self._heartbeat().resume("carry on")
            if not entries and result.outcome != "needs_human":
                break
        entries, _ = outbox_entries(self.state_dir)
        if entries:
            self.problem(f"outbox not drained by healthy ticks: {sorted(entries)}")
        journal = Journal(self.state_dir / "journal.jsonl")
        events = list(journal.read())
        self.report.torn_journal_lines = journal.skipped
        self.report.glued_notification_lines = glued_lines(self.root / "notes.jsonl")
        if journal.skipped > self.report.kills + self.report.cli_kills:
            self.problem(f"{journal.skipped} bad journal lines for {self.report.kills} kills")
        decided = {e["key"] for e in events if e.get("event") == "escalation"}
        self.report.escalations |= decided
        # A resume settles what was not delivered yet: that page must never arrive late.
        settled = {k for e in events if e.get("event") == "resume" for k in e.get("settled") or ()}
        file_keys = Counter(notes_keys(self.root / "notes.jsonl"))
        hook_keys = Counter(request_keys(self.server))
        for key in sorted(self.report.escalations):
            for notifier, keys in (("file", file_keys), ("webhook", hook_keys)):
                if keys[key] == 0 and key not in settled:
                    self.problem(f"escalation {key} was never delivered to {notifier}")
                elif keys[key] > 1:
                    self.report.duplicates[f"{notifier}:{key}"] = keys[key] - 1
        stepped = [e["tick"] for e in events if e.get("event") == "tick" and e.get("actions")]
        if any(b <= a for a, b in itertools.pairwise(stepped)):
            self.problem(f"journal tick numbers of stepped ticks are not increasing: {stepped[-30:]}")
        state = self.check("at the end")
        self.report.ticks_final = state.ticks if state else 0
        if state is not None and state.status is Status.NEEDS_HUMAN:
            self.problem("still needs_human at the end")
        self.report.temps_after_clean_ticks.update(temp_files(self.state_dir))


def _where(last: Any) -> str:
    """Where a child was when it died, from the last message it sent."""
    if isinstance(last, str):
        if last.endswith("/done") or last in ("ready", "saved"):
            return f"after {last.removesuffix('/done')}" if last != "saved" else "after save"
        return last
    return "between ticks"


def crash_campaign(
    root: Path,
    server: Any,
    *,
    kills: int,
    cli_kills: int,
    seed: int,
    log: Callable[[str], None] = lambda s: None,
) -> CrashReport:
    """Run a :class:`CrashCampaign` and return its report."""
    return CrashCampaign(root, server, seed=seed).run(kills, cli_kills, log)


# ----------------------------------------------------------------------------- concurrency


def race_worker(config_path: str, calls: int, start: Any, results: Any, worker: int) -> None:
    """Child body: after the barrier, call `heartbeat tick --json` ``calls`` times (resume when told)."""
    from heartbeat.cli.main import main

    rows = []
    start.wait()
    for _ in range(calls):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err):
            code = main(["tick", "--json", "--config", config_path], out)
        lines = out.getvalue().splitlines()
        row = json.loads(lines[-1]) if lines else {}
        rows.append(
            {
                "worker": worker,
                "code": code,
                "tick": row.get("tick"),
                "outcome": row.get("outcome"),
                "message": row.get("message", ""),
                "stderr": err.getvalue(),
            }
        )
        if row.get("outcome") == "needs_human":
            for _ in range(100_000):  # another heartbeat may hold the lock; try again at once
                with contextlib.redirect_stderr(io.StringIO()):
                    resumed = main(["resume", "--config", config_path, "--note", "go on"], io.StringIO())
                if resumed != 5:
                    break
            rows.append({"worker": worker, "resume": resumed})
    results.put(rows)


@dataclass
class RaceReport:
    """What a concurrency campaign did and found."""

    calls: int = 0
    completed: int = 0
    locked: int = 0
    codes: Counter[int] = field(default_factory=Counter)
    resumes: int = 0
    ticks_final: int = 0
    data_n: int = 0
    escalations: int = 0
    notifications: int = 0
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """A few lines for a human."""
        return "\n".join(
            [
                f"tick calls: {self.calls} from 4 processes on one state folder; exit codes "
                f"{dict(sorted(self.codes.items()))}",
                f"ticks that called the step: {self.completed}; final `ticks` {self.ticks_final}, "
                f"step's own counter {self.data_n} (lost updates: {self.completed - self.ticks_final})",
                f"refused with exit 5 (lock busy): {self.locked}; resumes {self.resumes}; "
                f"escalations {self.escalations}, notifications delivered {self.notifications}",
                f"problems: {len(self.problems)}" + "".join(f"\n  - {p}" for p in self.problems[:20]),
            ]
        )


def race_campaign(root: Path, *, processes: int = 4, calls_each: int) -> RaceReport:
    """``processes`` processes each call the real CLI tick ``calls_each`` times on one state folder."""
    from heartbeat.state.journal import Journal
    from heartbeat.state.store import StateStore

    config = write_project(
        root,
        step="reliability_agents:race_step",
        progress="reliability_agents:race_progress",
        escalate_after=1,
    )
    ctx = forkserver_context()
    start = ctx.Barrier(processes)
    results = ctx.Queue()
    workers = [
        ctx.Process(target=race_worker, args=(str(config), calls_each, start, results, n))
        for n in range(processes)
    ]
    for w in workers:
        w.start()
    rows: list[dict[str, Any]] = []
    report = RaceReport()
    done = 0
    while done < len(workers):
        try:
            rows += results.get(timeout=1)
            done += 1
        except queue.Empty:
            dead = [w.exitcode for w in workers if w.exitcode not in (None, 0)]
            if dead:
                report.problems.append(f"a worker died: exit codes {dead}")
                break
    for w in workers:
        w.join(60)
        if w.is_alive():
            w.kill()
    ticks = [r for r in rows if "code" in r]
    report.calls = len(ticks)
    report.resumes = sum(1 for r in rows if "resume" in r)
    for r in ticks:
        report.codes[r["code"]] += 1
        if r["code"] not in (0, 1, 4, 5):
            report.problems.append(f"exit {r['code']}: {r['message']} {r['stderr']}")
        if r["code"] == 5 and (r["outcome"] != "locked" or r["tick"] is not None):
            report.problems.append(f"exit 5 but {r}")
        if r["stderr"].strip():
            report.problems.append(f"stderr from a tick: {r['stderr']!r}")
    stepped = sorted(r["tick"] for r in ticks if r["tick"] is not None)
    report.completed = len(stepped)
    report.locked = report.codes[5]
    if stepped != list(range(1, len(stepped) + 1)):
        dupes = [t for t, c in Counter(stepped).items() if c > 1]
        report.problems.append(f"tick numbers are not 1..{len(stepped)}; repeated: {dupes[:10]}")
    state = StateStore(root / "state").load()
    report.ticks_final = state.ticks
    report.data_n = int(state.data.get("n", 0))
    if state.ticks != report.completed:
        report.problems.append(
            f"lost update: {report.completed} ticks called the step, state has {state.ticks}"
        )
    if report.data_n != report.completed:
        report.problems.append(f"the step's counter is {report.data_n}, {report.completed} calls")
    events = list(Journal(root / "state" / "journal.jsonl").read())
    journaled = sorted(e["tick"] for e in events if e.get("event") == "tick" and e.get("actions"))
    if journaled != stepped:
        report.problems.append(f"journal has {len(journaled)} stepped ticks, {len(stepped)} happened")
    keys = [e["key"] for e in events if e.get("event") == "escalation"]
    delivered = notes_keys(root / "notes.jsonl")
    report.escalations, report.notifications = len(keys), len(delivered)
    if sorted(keys) != sorted(delivered) or len(set(keys)) != len(keys):
        report.problems.append(f"escalations {sorted(keys)} but notifications {sorted(delivered)}")
    return report


# ----------------------------------------------------------------------------- bad input: checks


def one_line_error(exc: BaseException) -> str | None:
    """What is wrong with a HeartbeatError's message as a one-line error, or None."""
    text = str(exc)
    if not text.strip():
        return "empty message"
    if "\n" in text or "\r" in text:
        return f"message is several lines: {text[:300]!r}"
    if "Traceback" in text:
        return f"message holds a traceback: {text[:300]!r}"
    return None


def run_main(*argv: str) -> tuple[int, str, str]:
    """The CLI in this process: (exit code, stdout, stderr)."""
    from heartbeat.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(list(argv), out)
    return code, out.getvalue(), err.getvalue()


def assert_cli_error(code: int, err: str) -> None:
    """Exit 2 and exactly one `heartbeat: error: ...` line on stderr."""
    assert code == 2, (code, err)
    assert err.count("\n") == 1 and err.startswith("heartbeat: error: "), err
    assert "Traceback" not in err, err


def check_state_file(raw: bytes | None, *, directory: bool = False) -> str:
    """Load a state.json holding ``raw``; a tick on what loads; raise AssertionError on a broken promise.

    Returns "accepted", "rejected" or "rejected at save" (loaded, but the
    tick could not save it: a StateWriteError, the file untouched).
    """
    from heartbeat.base.errors import HeartbeatError
    from heartbeat.config.file import HeartbeatConfig
    from heartbeat.state.store import StateStore
    from heartbeat.tick.runner import Heartbeat

    with tempfile.TemporaryDirectory(prefix="hb-fuzz-") as tmp:
        state_dir = Path(tmp) / "state"
        state_dir.mkdir()
        path = state_dir / "state.json"
        if directory:
            path.mkdir()
        else:
            assert raw is not None
            path.write_bytes(raw)
        try:
            StateStore(state_dir).load()
        except HeartbeatError as exc:
            problem = one_line_error(exc)
            assert problem is None, problem
            assert directory or path.read_bytes() == raw, "a rejected state file was changed"
            for copy in state_dir.glob("state.json.corrupt-*"):
                assert copy.read_bytes() == raw, "the corrupt copy differs from the file"
            code, _, err = run_main("status", "--state-dir", str(state_dir), "--kill-file", f"{tmp}/KILL")
            assert_cli_error(code, err)
            assert directory or path.read_bytes() == raw, "`heartbeat status` changed the state file"
            return "rejected"
        code, _, err = run_main(
            "status", "--json", "--state-dir", str(state_dir), "--kill-file", f"{tmp}/KILL"
        )
        if code == 2:  # it loads but could never be saved again (too deep, lone surrogates)
            assert_cli_error(code, err)
            assert path.read_bytes() == raw, "`heartbeat status` changed the state file"
            return "rejected at save"
        assert code in (0, 4, 6) and err == "", (code, err)  # 6: overdue (an old last tick)
        config = HeartbeatConfig.model_validate(
            {
                "agent": {"state_dir": str(state_dir), "kill_file": str(Path(tmp) / "KILL")},
                "base_dir": tmp,
            }
        )
        hb = Heartbeat(config, step=noop_step, progress=no_metric, notifiers=[])
        result = hb.tick()  # a HeartbeatError inside becomes a result; anything else propagates
        assert result.exit_code in (0, 1, 2, 4), result
        if result.exit_code == 2:
            assert "\n" not in result.message, result.message
            assert path.read_bytes() == raw, "the state file was changed by a failed tick"
            return "rejected at save"
        try:
            StateStore(state_dir).load()
        except HeartbeatError as exc:
            raise AssertionError(f"heartbeat saved a state it cannot load again: {exc}") from None
        return "accepted"


def check_config_file(raw: bytes) -> str:
    """Load heartbeat.toml holding ``raw``; build and tick what loads (paths redirected to a temp dir)."""
    from heartbeat.base.errors import ConfigError, HeartbeatError
    from heartbeat.config.file import load_config
    from heartbeat.notify.notifiers import build_notifiers
    from heartbeat.tick.runner import Heartbeat

    with tempfile.TemporaryDirectory(prefix="hb-fuzz-") as tmp:
        path = Path(tmp) / "heartbeat.toml"
        path.write_bytes(raw)
        try:
            config = load_config(path)
        except ConfigError as exc:
            problem = one_line_error(exc)
            assert problem is None, problem
            assert path.read_bytes() == raw, "a rejected config file was changed"
            code, _, err = run_main(
                "validate", "--config", str(path), "--step", "reliability_agents:noop_step"
            )
            assert_cli_error(code, err)
            return "rejected"
        assert path.read_bytes() == raw, "the config file was changed"
        try:
            build_notifiers(config.notify, base_dir=Path(tmp))
            safe = config.with_agent(state_dir=Path(tmp) / "state", kill_file=Path(tmp) / "KILL")
            hb = Heartbeat(safe, step=noop_step, progress=no_metric, notifiers=[])
        except HeartbeatError as exc:
            problem = one_line_error(exc)
            assert problem is None, problem
            return "rejected"
        result = hb.tick()
        assert result.exit_code in (0, 1, 4), result
        result = hb.tick()
        assert result.exit_code in (0, 1, 4), result
        return "accepted"


def check_trace_file(raw: bytes, *, cli: bool = True) -> str:
    """Replay a trace holding ``raw`` (library and CLI); accepted, or a TraceError naming the line."""
    from heartbeat.base.errors import TraceError, UsageError
    from heartbeat.config.file import HeartbeatConfig
    from heartbeat.replay.play import replay

    lines = raw.split(b"\n")
    with tempfile.TemporaryDirectory(prefix="hb-fuzz-") as tmp:
        path = Path(tmp) / "trace.jsonl"
        path.write_bytes(raw)
        try:
            ticks = list(replay(path, HeartbeatConfig()))
            outcome = "accepted"
        except (TraceError, UsageError) as exc:
            problem = one_line_error(exc)
            assert problem is None, problem
            if isinstance(exc, TraceError):
                assert 1 <= exc.line <= len(lines), f"line {exc.line} of {len(lines)}"
                assert f"line {exc.line}" in str(exc), str(exc)
            outcome = "rejected"
            ticks = []
        assert path.read_bytes() == raw, "the trace file was changed"
        if not cli:
            return outcome
        config = Path(tmp) / "empty.toml"
        config.write_text("")
        code, out, err = run_main("replay", str(path), "--json", "--config", str(config))
        if outcome == "accepted":
            assert code == 0, (code, err)
            rows = [json.loads(line) for line in out.splitlines()]
            assert [r["tick"] for r in rows] == [t.tick for t in ticks]
        else:
            assert_cli_error(code, err)
        return outcome


# ----------------------------------------------------------------------------- bad input: strategies


def strategies() -> dict[str, Any]:
    """Hypothesis strategies for state files, config files and trace files (as bytes)."""
    from hypothesis import strategies as st

    raw_numbers = [
        "1e400",
        "-1e400",
        "NaN",
        "Infinity",
        "-Infinity",
        "10" + "0" * 100,
        "-" + "9" * 400,
        "1e-400",
        "0.1e999999",
        "-0",
        "1.7976931348623157e308",
    ]
    deep = [
        "[" * 10_000 + "]" * 10_000,
        '{"a":' * 3000 + "1" + "}" * 3000,
        "[" * 300 + "]" * 300,
        "[" * 990 + "]" * 990,
    ]
    weird_text = st.sampled_from(
        [
            "",
            " ",
            "\ud800",
            "\x00",
            "é",
            "2026-13-45T99:00:00Z",
            "9999-12-30T00:00:00+00:00",
            "0001-01-01T00:00:00+00:00",
            "9999-12-31T23:59:59+00:00",
            "x" * 5000,
            "needs_human",
            "paused",
            "active",
            "os:system",
        ]
    )
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(min_value=-(10**30), max_value=10**30)
        | st.floats(allow_nan=True, allow_infinity=True)
        | st.text(max_size=30)
        | weird_text
    )
    json_values = st.recursive(
        scalars,
        lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=10), c, max_size=4),
        max_leaves=20,
    )
    raw_token = st.sampled_from(raw_numbers + deep)
    state_raw_token = raw_token

    def dumps(value: Any) -> str:
        return json.dumps(value, allow_nan=True)

    # -- state.json
    valid_state = {
        "schema_version": 1,
        "status": "active",
        "status_reason": None,
        "ticks": 3,
        "last_tick_at": "2026-05-01T03:00:00+00:00",
        "data": {"n": 3, "sources": ["a", "b"]},
        "instructions": "try something else",
        "recovery": {
            "mode": "try_alternative",
            "attempts": 1,
            "since_tick": 2,
            "kinds": ["repeat"],
            "avoid": ["search(q='x')"],
        },
        "stuck_streak": 1,
        "actions_total": 2,
        "history": [
            {
                "index": 1,
                "tick": 1,
                "at": "2026-05-01T02:00:00+00:00",
                "tool": "search",
                "fingerprint": "abc",
                "summary": "search(q='x')",
                "output_len": 3,
                "error": None,
                "cost": 0.5,
            },
            {
                "index": 2,
                "tick": 2,
                "at": "2026-05-01T02:30:00+00:00",
                "tool": "read",
                "fingerprint": "def",
                "summary": "read()",
                "output_len": None,
                "error": "boom",
                "cost": 0.0,
            },
        ],
        "progress": [{"tick": 1, "at": "2026-05-01T02:00:00+00:00", "value": 0.5, "error": None}],
        "anomalies": [
            {
                "kind": "repeat",
                "message": "m",
                "tick": 2,
                "action": 2,
                "at": "2026-05-01T02:30:00+00:00",
                "tool": "search",
                "evidence": {"n": 3},
            }
        ],
        "budget": {"day": "2026-05-01", "actions": 2, "cost": 0.5},
        "escalation": None,
        # A pending notice, so its fields get mutated too.
        "notices": [
            {
                "key": "agent-escalation-2",
                "kind": "escalation",
                "agent": "agent",
                "reason": "stuck",
                "text": "help",
                "payload": {"n": 1},
                "created_at": "2026-05-01T02:30:00+00:00",
            }
        ],
    }

    def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        found = [prefix]
        if isinstance(value, dict):
            for k, v in value.items():
                found += paths(v, (*prefix, k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                found += paths(v, (*prefix, i))
        return found

    state_paths = [p for p in paths(valid_state) if p]
    edge_ints = st.sampled_from([0, 1, -1, 2**31, 2**63, 10**100, 10**400]) | st.integers()
    edge_floats = st.sampled_from([0.0, -0.0, 5e-324, 1e308, 1.7976931348623157e308]) | st.floats(0, 1e300)
    edge_texts = weird_text | st.text(max_size=40)

    def same_kind(value: Any) -> Any:
        """A value of the same JSON type as ``value`` (edges included), so the file often still loads."""
        if isinstance(value, bool):
            return st.booleans()
        if isinstance(value, int):
            return edge_ints
        if isinstance(value, float):
            return edge_floats
        if isinstance(value, str):
            return edge_texts
        if isinstance(value, list):
            if value and not isinstance(value[0], dict):
                return st.lists(json_values, max_size=3)
            return st.just([])
        return st.dictionaries(st.text(max_size=10), json_values, max_size=4)

    @st.composite
    def mutated_state(draw: Any) -> bytes:
        doc = json.loads(json.dumps(valid_state))
        tokens: dict[str, str] = {}
        for _ in range(draw(st.integers(1, 3))):
            where = draw(st.sampled_from(state_paths))
            holder = doc
            try:
                for part in where[:-1]:
                    holder = holder[part]
                how = draw(st.sampled_from(["same kind"] * 5 + ["raw", "raw", "delete", "any", "any"]))
                if how == "same kind" and where[-1] != "schema_version":
                    holder[where[-1]] = draw(same_kind(holder[where[-1]]))
                elif how == "raw":
                    name = f"@@RAW{len(tokens)}@@"
                    tokens[f'"{name}"'] = draw(state_raw_token)
                    holder[where[-1]] = name
                elif how == "delete" and isinstance(holder, dict) and where[-1] != "schema_version":
                    del holder[where[-1]]
                else:
                    holder[where[-1]] = draw(json_values)
            except (KeyError, IndexError, TypeError):
                continue
        if draw(st.integers(0, 4)) == 0:
            doc[draw(st.sampled_from(["step", "progress", "exec", "agent", "x"]))] = draw(json_values)
        text = dumps(doc)
        for name, token in tokens.items():
            text = text.replace(name, token)
        return text.encode("utf-8", "surrogatepass")

    @st.composite
    def cut_state(draw: Any) -> bytes:
        text = dumps(valid_state).encode()
        cut = draw(st.integers(0, len(text)))
        data = bytearray(text[:cut])
        if data and draw(st.booleans()):
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        return bytes(data)

    state_files = st.one_of(  # mutations of a real state weigh most: they get past the parser
        mutated_state(),
        mutated_state(),
        mutated_state(),
        mutated_state(),
        st.binary(max_size=200),
        json_values.map(lambda v: dumps(v).encode("utf-8", "surrogatepass")),
        mutated_state(),
        cut_state(),
        st.sampled_from(deep + raw_numbers).map(str.encode),
    )

    # -- heartbeat.toml
    def toml_key(key: str) -> str:
        return json.dumps(key)

    def toml_value(value: Any) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            return str(value)
        if isinstance(value, float):
            if math.isnan(value):
                return "nan"
            return ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
        if isinstance(value, str):
            return json.dumps(value)
        if isinstance(value, list):
            return "[" + ", ".join(toml_value(v) for v in value) + "]"
        if isinstance(value, dict):
            return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
        raise TypeError(type(value))

    durations = st.sampled_from(
        [
            "30m",
            "1h30m",
            "0.1s",
            "0s",
            "-5s",
            "1e400",
            "10y",
            "nan",
            "30",
            "0.0000001ms",
            "5ms",
            "99999999999999999999d",
        ]
    )
    toml_scalars = (
        st.booleans()
        | st.integers(min_value=-(10**20), max_value=10**20)
        | st.floats(allow_nan=True, allow_infinity=True)
        | st.text(max_size=20)
        | durations
        | st.sampled_from(
            ["${HB_FUZZ_UNSET}", "${HOME}", "${HB_FUZZ_UNSET:-7}", "off", "webhook", "file", "command"]
        )
    )
    toml_values = st.recursive(
        toml_scalars,
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
        max_leaves=8,
    )
    sections = {
        "agent": ["name", "state_dir", "kill_file", "exec_timeout"],
        "schedule": ["every", "cron", "timezone", "misfire_grace_time"],
        "detectors": ["volatile_args", "polling", "exempt", "stalled"],
        "detectors.repeat": ["threshold", "tools", "enabled"],
        "detectors.loop": ["window", "repeats", "exempt"],
        "detectors.empty": ["threshold", "max_chars"],
        "detectors.error_rate": ["window", "threshold"],
        "detectors.no_progress": ["samples", "min_delta"],
        "policy": ["escalate_after", "templates"],
        "budget": ["actions_per_tick", "actions_per_day", "cost_per_day", "max_ticks", "reset_hour"],
        "escalation": ["reminder_every"],
        "journal": ["max_bytes", "keep"],
        "frobnicate": ["x"],
    }

    counts = st.integers(-2, 50) | st.sampled_from([10**4, 10**6, 2**63, 10**30])
    names = st.lists(st.text(max_size=8), max_size=3)
    plausible = {
        "name": st.text(max_size=12),
        "state_dir": st.just("state"),
        "kill_file": st.just("KILL"),
        "exec_timeout": durations,
        "every": durations,
        "cron": st.sampled_from(["*/5 * * * *", "nope"]),
        "timezone": st.sampled_from(["UTC", "Europe/Paris", "Mars/Base"]),
        "misfire_grace_time": durations,
        "volatile_args": names,
        "polling": names,
        "exempt": names,
        "stalled": counts,
        "threshold": counts | st.floats(-1, 2),
        "tools": st.dictionaries(st.text(max_size=6), counts | st.just("off"), max_size=2),
        "enabled": st.booleans(),
        "window": counts,
        "repeats": counts,
        "max_chars": counts,
        "samples": counts,
        "min_delta": st.floats(allow_nan=True, allow_infinity=True),
        "escalate_after": counts,
        "templates": st.dictionaries(
            st.sampled_from(["try_alternative", "reassess_goal", "other"]), st.text(max_size=20), max_size=2
        ),
        "actions_per_tick": counts,
        "actions_per_day": counts,
        "max_ticks": counts,
        "cost_per_day": st.floats(allow_nan=True, allow_infinity=True),
        "reset_hour": counts,
        "reminder_every": durations,
        "max_bytes": counts,
        "keep": counts,
        "x": toml_values,
    }

    @st.composite
    def config_text(draw: Any) -> bytes:
        out = []
        for section in draw(st.lists(st.sampled_from(sorted(sections)), max_size=4, unique=True)):
            out.append(f"[{section}]")
            for key in draw(st.lists(st.sampled_from(sections[section]), max_size=3, unique=True)):
                value = draw(plausible[key] if draw(st.integers(0, 3)) else toml_values)
                out.append(f"{key} = {toml_value(value)}")
        if draw(st.booleans()):
            kind = draw(st.sampled_from(["webhook", "file", "bogus"]))
            table = {"type": kind, "name": draw(st.sampled_from(["webhook", "file", "a b", ""]))}
            if kind == "webhook":
                table["url"] = draw(
                    st.sampled_from(
                        [
                            "http://127.0.0.1:9/h/SECRET",
                            "ftp://x/y",
                            "nope",
                            "http://",
                            "https://[::1]:99999/x",
                        ]
                    )
                )
                table["timeout"] = draw(durations)
            elif kind == "file":
                table["path"] = "notes.jsonl"
            out.append(f"notify = [{toml_value(table)}]")
        return ("\n".join(out) + "\n").encode("utf-8", "surrogatepass")

    config_files = st.one_of(
        config_text(),
        config_text(),
        config_text(),
        config_text(),
        st.binary(max_size=120),
        st.text(max_size=120).map(lambda t: t.encode("utf-8", "surrogatepass")),
        st.sampled_from(
            [
                "a = " + "[" * 200 + "]" * 200,
                "a = " + "{b=" * 100 + "1" + "}" * 100,
                "a = " + "[" * 10_000 + "]" * 10_000,
                "a = " + "{b=" * 600 + "1" + "}" * 600,
                "[policy]\nescalate_after = 1e400",
                "[journal]\nkeep = " + "9" * 100,
                "[detectors.no_progress]\nmin_delta = nan",
            ]
        ).map(str.encode),
    )

    # -- trace files
    action = st.fixed_dictionaries(
        {},
        optional={
            "tool": st.text(max_size=8) | json_values,
            "args": st.dictionaries(st.text(max_size=5), json_values, max_size=3) | json_values,
            "output": st.text(max_size=20) | json_values,
            "error": st.none() | st.text(max_size=10) | json_values,
            "cost": st.floats(allow_nan=True, allow_infinity=True) | json_values,
        },
    )
    line_obj = st.fixed_dictionaries(
        {},
        optional={
            "progress": st.none() | st.floats(allow_nan=True, allow_infinity=True) | json_values,
            "actions": st.lists(action, max_size=4) | json_values,
            "at": weird_text | json_values,
            "extra": json_values,
        },
    )

    @st.composite
    def trace_line(draw: Any) -> bytes:
        choice = draw(st.integers(0, 9))
        if choice == 0:
            return draw(st.binary(max_size=40)).replace(b"\n", b"")
        if choice == 1:
            return draw(raw_token).encode()
        if choice == 2:
            return ('{"progress": ' + draw(raw_token) + "}").encode()
        if choice == 3:
            return ('{"actions": [{"tool": "t", "args": {"a": ' + draw(raw_token) + "}}]}").encode()
        return dumps(draw(line_obj)).encode("utf-8", "surrogatepass")

    trace_files = st.lists(trace_line(), min_size=1, max_size=6).map(lambda ls: b"\n".join(ls))

    return {"state": state_files, "config": config_files, "trace": trace_files}
