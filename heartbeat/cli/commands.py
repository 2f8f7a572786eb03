"""What each ``heartbeat`` command does: a few lines that call one library function and print.

Each ``cmd_<name>(args, out)`` returns the exit code; errors are raised as
:class:`~heartbeat.base.errors.HeartbeatError` and printed by :func:`heartbeat.cli.main.main`.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..base.errors import HeartbeatError, StateWriteError, UsageError, worst_exit_code
from ..config.file import HeartbeatConfig, load_config, parse_duration
from ..config.flags import config_with_flags, schedule_with_flags
from ..core.models import printable, printable_lines
from ..tick.watchdog import done_within, end_left_running, exit_now, flushed_within, is_stop, watching
from .tickoutput import clean_stdout, print_result

if TYPE_CHECKING:
    from ..tick.runner import Heartbeat, TickResult

__all__ = ["COMMANDS", "loading"]

STOP_FLUSH_SECONDS = 0.1
"""How long a tick or run stopped by KILL waits for its output to be written before it leaves without it."""

ACCOUNT_SECONDS = 0.5
"""How long a tick ended by a signal while its step does not unwind may take to journal that step's
calls and count their spend (milliseconds as a rule), before the process ends without them."""

OWN_PROCESS = False
"""Set by :func:`heartbeat.cli.main.main` when it runs as the ``heartbeat`` process (see :func:`loading`)."""


@contextlib.contextmanager
def loading() -> Iterator[None]:
    """Loading the config and the runner in our own process: no garbage-collection passes meanwhile.

    What loads here (config tables, modules, detectors) lives until the process exits, so
    collecting while it loads is wasted work (about 1.5 ms of a cron tick). Afterwards the
    heap is frozen (never scanned again) and collection resumes before any step runs. A
    library caller's process (``main(argv)``) is left alone.
    """
    if not OWN_PROCESS or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def _config(args: argparse.Namespace) -> HeartbeatConfig:
    with loading():
        return config_with_flags(
            args.config,
            agent=getattr(args, "agent", None),
            state_dir=getattr(args, "state_dir", None),
            kill_file=getattr(args, "kill_file", None),
            step=getattr(args, "step", None),
            exec=getattr(args, "exec", None),
            progress=getattr(args, "progress", None),
            webhook=getattr(args, "webhook", None),
        )


def _heartbeats(config: HeartbeatConfig) -> list[Heartbeat]:
    with loading():
        from ..tick.runner import Heartbeat

        return [Heartbeat(config, agent) for agent in config.all_agents()]


def _one(config: HeartbeatConfig, command: str, *, must_exist: bool = True) -> Heartbeat:
    from .status import require_state_dir

    heartbeats = _heartbeats(config)
    if len(heartbeats) > 1:
        names = ", ".join(hb.name for hb in heartbeats)
        raise UsageError(f"{command}: several agents ({names}); pick one with --agent NAME")
    if must_exist:  # a command on an agent that never ran: the wrong folder, said (exit 2)
        require_state_dir(heartbeats[0])
    return heartbeats[0]


def _now() -> datetime:
    return datetime.now(UTC)


# -- commands


def cmd_init(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat init``."""
    from .scaffold import init_project

    try:
        out.writelines(line + "\n" for line in init_project(Path(args.directory)))
    except BrokenPipeError:
        raise
    except OSError as exc:  # a file where the folder should be, a folder that cannot be written
        raise UsageError(
            f"init {args.directory}: {exc.filename or args.directory}: {exc.strerror or exc}"
        ) from None
    return 0


def cmd_tick(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat tick``: one heartbeat of every (or the chosen) agent."""
    from ..tick.watchdog import TickInterrupted, signals_interrupt

    streams = [out]  # where results go: under --json, the real stdout kept aside
    ticking: list[Heartbeat] = []  # the agent whose tick runs now

    def abandoned(result: Any) -> None:
        # KILL while the step hangs (watchdog thread): say it, then end the process at once;
        # the step's thread cannot be stopped any other way. The journal has the kill already.
        def say() -> None:
            print_result(result, streams[-1], as_json=args.json, quiet=args.quiet)
            streams[-1].flush()
            sys.stderr.flush()

        done_within(say, STOP_FLUSH_SECONDS)  # a stdout nobody reads must not keep the process
        exit_now(3, None)  # what the step started ends too

    def stuck(signum: int) -> None:
        # SIGTERM/SIGINT, and the step's own clean-up holds the exception back (a thread pool
        # joining its workers): end its --exec group and the process, as the signal would.
        from ..tick.control import interrupted_message, note_interrupted
        from ..tick.execstep import end_all
        from ..tick.stepcall import account_interrupted
        from ..tick.watchdog import TickInterrupted

        end_all()
        reason = str(TickInterrupted(signum))
        notes = [""]
        said = f"{reason}; the step did not unwind; its work was not saved"
        if ticking and ticking[-1].delivering is not None:  # a tick saved, then stopped as it delivered
            said = f"{interrupted_message(ticking[-1], reason)}; the delivery did not unwind"
        if ticking:
            # The calls the step made ran: journaled and their spend counted before the process
            # ends without it. Bounded: a state folder that hangs must not keep the process alive.
            done_within(lambda: notes.append(account_interrupted(ticking[-1], reason)), ACCOUNT_SECONDS)
            note_interrupted(ticking[-1], reason)
        with contextlib.suppress(OSError, ValueError):
            streams[-1].flush()  # results of agents ticked before this one
        exit_now(128 + signum, f"heartbeat: {said}{notes[-1]}")

    codes = []
    heartbeats = _heartbeats(_config(args))
    try:
        with signals_interrupt(stuck), clean_stdout(out, args.json) as stream:
            streams.append(stream)
            for hb in heartbeats:
                hb.on_abandon = abandoned
                ticking.append(hb)
                result = hb.tick()
                print_result(result, stream, as_json=args.json, quiet=args.quiet)
                codes.append(result.exit_code)
    except TickInterrupted as exc:
        from ..tick.control import interrupted_message

        print(
            f"heartbeat: {interrupted_message(ticking[-1] if ticking else None, str(exc))}", file=sys.stderr
        )
        return end_left_running(128 + exc.signum, own_process=OWN_PROCESS)
    return end_left_running(worst_exit_code(codes), own_process=OWN_PROCESS)


def cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat run``: tick on a schedule."""
    from functools import partial

    from ..config.trigger import make_trigger
    from ..tick.control import killed_while_loading
    from ..tick.schedule import Runner

    config = _config(args)
    if args.ticks is not None and args.ticks < 1:
        raise UsageError("--ticks must be at least 1")
    heartbeats = _heartbeats(config)
    for hb in heartbeats:  # the wrong folder is said first, as `tick` says it, not a missing schedule
        hb.plugins.check_configured()
    every, cron = schedule_with_flags(config, every=args.every, cron=args.cron)
    trigger = make_trigger(every=every, cron=cron, timezone=config.schedule.timezone)
    for hb in heartbeats:
        # Loading runs the agent's module code, which may hang: KILL must stop that too.
        on_kill = partial(killed_while_loading, hb)  # ends the process: only ever our own
        with watching(hb.kill, on_kill) if OWN_PROCESS else contextlib.nullcontext():
            hb.validate()
    if args.metrics_port:
        from .metrics import serve

        server, _ = serve(heartbeats, args.metrics_port, _now)
        host, port = server.server_address[:2]
        print(f"heartbeat: metrics on http://{host}:{port}/metrics", file=sys.stderr)

    said: set[str] = set()  # errors already on stderr: the run's last line does not repeat them

    def on_tick(result: TickResult) -> None:
        if result.outcome in ("error", "locked") and not args.json:
            said.add(result.message)
        try:
            print_result(result, stream, as_json=args.json)
        except OSError:
            # A closed pipe: point stdout at /dev/null, or the exit's flush fails again.
            with contextlib.suppress(OSError):
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno() if sys.stdout else 1)
            raise
        at = runner.next_run(result.agent)
        # Said when worth saying: a heartbeat seconds away (the demo's) is obvious and noisy.
        soon = at is not None and (at - _now()).total_seconds() < 10
        if at is not None and not soon and not args.json and result.outcome not in ("killed", "error"):
            prefix = f"[{result.agent}] " if result.agent != "agent" else ""
            stream.write(f"{prefix}  next heartbeat at {at.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC\n")
            stream.flush()

    with clean_stdout(out, args.json) as stream:
        runner = Runner(
            heartbeats,
            trigger,
            ticks=args.ticks,
            misfire_grace_time=config.schedule.misfire_grace_time,
            on_tick=on_tick,
            initial_tick=not args.no_initial_tick,
        )
        if args.no_initial_tick and not args.json:
            first = trigger.get_next_fire_time(None, _now())
            if first is not None:
                stream.write(f"first heartbeat at {first.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC\n")
                stream.flush()
        summary = runner.run()
        if is_stop(summary.exit_code) and not flushed_within(stream, STOP_FLUSH_SECONDS):
            # KILL, and stdout is a pipe nobody reads: waiting for it would keep the run alive.
            exit_now(
                summary.exit_code,
                f"heartbeat: run ended: {summary.reason} (output that could not be written dropped)",
            )
    if summary.reason not in said:
        print(f"heartbeat: run ended: {summary.reason}", file=sys.stderr)
    return end_left_running(summary.exit_code, own_process=OWN_PROCESS, step_left=bool(summary.abandoned))


def cmd_status(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat status``: one agent in detail, or one line per agent of a fleet."""
    from .status import agent_report, fleet_reports, render_detail, render_fleet
    from .style import Style

    try:
        max_age = parse_duration(args.max_age) if args.max_age else None
    except ValueError as exc:
        raise UsageError(f"--max-age: {exc}") from None
    heartbeats, now = _heartbeats(_config(args)), _now()
    if len(heartbeats) == 1:
        report = agent_report(heartbeats[0], now, max_age=max_age)
        detail = render_detail(report, Style.for_stream(out)) + "\n\n"
        out.write(json.dumps(report.to_json()) + "\n" if args.json else detail)
        return report.exit_code
    rows, codes = fleet_reports(heartbeats, now, max_age=max_age)
    if args.json:
        for row in rows:
            item = {"agent": row[0], "error": row[1]} if isinstance(row, tuple) else row.to_json()
            out.write(json.dumps(item) + "\n")
    else:
        out.write(render_fleet(rows, Style.for_stream(out)) + "\n")
    return worst_exit_code(codes)


def cmd_kill(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat kill``: write (or with --off remove) the KILL file the agent reads."""
    from .kill import run_kill

    return run_kill(args, out, load=_config)


def cmd_pause(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat pause``."""
    hb = _one(_config(args), "pause")
    before = hb.read_state()
    state = hb.pause(args.reason)
    again = before.status.value == "paused"
    earlier = printable(before.status_reason or "")  # state.json is a file anyone can write
    was = f", replacing the earlier reason ({earlier})" if again else ""
    out.write(f"{hb.name}: paused ({state.status_reason}){was}; `heartbeat resume` goes on\n")
    return 0


def cmd_resume(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat resume [--note TEXT]``."""
    hb = _one(_config(args), "resume")
    before = hb.read_state()
    state = hb.resume(args.note, seen=before.status)
    told = printable_lines(state.instructions or "", "    ")
    note = f"; next instructions: {told}" if state.instructions else ""
    if args.note is None and state.instructions:
        note = (
            f"; the note of the last resume is kept as the next instructions: {told} "
            '(--note TEXT replaces it, --note "" clears it)'
        )
    done = "resumed" if before.status.value != "active" else "was not paused or waiting for a human"
    out.write(f"{hb.name}: {done}{note}\n")
    from ..core.budget import exhausted, roll_over, until_reset

    now = _now()
    budget = hb.config.budget
    spent = exhausted(state.model_copy(update={"budget": roll_over(state.budget, now, budget)}), budget)
    if spent is not None:  # resumed all the same: the human may raise the limit before the next tick
        then = (
            until_reset(spent, now, budget)
            or "the next tick pauses again unless the limit in [budget] is raised"
        )
        out.write(f"{hb.name}: but the budget is still spent ({spent.removeprefix('budget: ')}): {then}\n")
    return 0


def cmd_log(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat log``: the journal, filtered, merged across agents, optionally followed."""
    from .logview import run_log

    return run_log(_heartbeats(_config(args)), args, out, _now())


def cmd_outbox(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat outbox [list|retry|drop]``: what waits to be delivered, and what to do with it."""
    from .outbox import run_outbox

    return run_outbox(_heartbeats(_config(args)), args, out)


def cmd_replay(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat replay TRACE``."""
    from ..replay.run import run_replay

    config = load_config(args.config)
    return run_replay(
        Path(args.trace),
        config,
        as_json=args.json,
        out=out,
        fmt=args.format,
        per_heartbeat=args.per_heartbeat,
        labels=Path(args.labels) if args.labels else None,
        html=Path(args.html) if args.html else None,
    )


def cmd_validate(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat validate``: config, plug-ins and state, without ticking."""
    config = _config(args)
    if config.schedule.every or config.schedule.cron:  # the trigger `run` builds: a bad cron said now
        from ..config.trigger import make_trigger

        make_trigger(
            every=config.schedule.every, cron=config.schedule.cron, timezone=config.schedule.timezone
        )
    for hb in _heartbeats(config):
        hb.validate()
        if os.path.lexists(hb.state_dir) and not hb.state_dir.is_dir():  # a file, a broken link
            raise UsageError(f"{hb.name}: the state folder {hb.state_dir} is not a folder")
        unmade = hb.store.cannot_make()  # what a tick would meet before its step: said now
        if unmade is not None:
            raise HeartbeatError(f"{hb.name}: {hb.state_dir}: {unmade}; a tick would stop before its step")
        # lexists: a symlink loop or a dangling link in place of state.json is read (and refused), not skipped
        state = hb.read_state() if os.path.lexists(hb.store.state_path) else None
        if hb.state_dir.is_dir():  # what a tick checks before its step: said now, not at the next tick
            try:
                hb.store.check_writable()
            except StateWriteError as exc:
                where = f"{hb.name}: {hb.state_dir}"
                raise HeartbeatError(f"{where}: {exc.reason}; a tick would stop before its step") from None
        what = f"state ok ({state.ticks} ticks, {state.status.value})" if state else "no state yet"
        out.write(f"{hb.name}: config ok, step and plug-ins load, {what}\n")
    if not config.notify:
        print(
            "heartbeat: warning: no notifier is configured: when an agent needs a human, nobody will be "
            "told (only ESCALATION.md is written); add a [[notify]] table or give --webhook",
            file=sys.stderr,
        )
    return 0


def cmd_notify(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat notify --test``: one test message through every notifier; exit 1 if one failed."""
    from .notifytest import send_test

    failed = 0
    for hb in _heartbeats(_config(args)):
        for name, error in send_test(hb, _now()):
            failed += error is not None
            out.write(f"{hb.name}: {name}: {'FAILED: ' + error if error else 'delivered'}\n")
    return 1 if failed else 0


def cmd_metrics(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat metrics``: the Prometheus text format, on stdout or into a file."""
    from .metrics import render, write_textfile

    heartbeats = _heartbeats(_config(args))
    if args.output:
        write_textfile(heartbeats, Path(args.output), _now)
    else:
        out.write(render(heartbeats, _now))
    return 0


def cmd_schema(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat schema``."""
    from ..state.store import state_schema

    out.write(json.dumps(state_schema(), indent=2) + "\n")
    return 0


def cmd_mcp_proxy(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat mcp-proxy -- SERVER_CMD ARGS...``: stdout is the MCP protocol, so nothing is printed."""
    server = args.server[1:] if args.server[:1] == ["--"] else args.server
    if not server:
        raise UsageError("mcp-proxy: give the server to run after --, e.g. -- npx -y @acme/server")
    try:
        idle, longest = parse_duration(args.idle), parse_duration(args.longest)
        wake_gap = parse_duration(args.wake_gap)
    except ValueError as exc:
        raise UsageError(f"mcp-proxy: {exc}") from None
    hb = _one(_config(args), "mcp-proxy", must_exist=False)
    try:
        from ..integrations.mcp_proxy import run_proxy
    except ImportError as exc:
        hint = "pip install -e '.[mcp]' in the heartbeat checkout"
        raise UsageError(f"mcp-proxy needs the mcp package ({exc}): {hint}") from None
    from ..integrations.session import Session

    try:
        session = Session(
            hb.config,
            hb.agent,
            actions=args.actions,
            idle=idle.total_seconds(),
            seconds=longest.total_seconds(),
            wake_gap=wake_gap.total_seconds(),
        )
    except ValueError as exc:
        raise UsageError(f"mcp-proxy: {exc}") from None
    try:
        return run_proxy(session, server)
    except OSError as exc:
        raise UsageError(f"mcp-proxy: cannot start {server[0]!r}: {exc.strerror or exc}") from None


def cmd_report(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat report``: an agent's HTML page, or with several agents an overview and each page."""
    from ..report.write import make_reports

    printed = make_reports(_heartbeats(_config(args)), out=args.out, since=args.since, stretch=args.stretch)
    out.write(printed)
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO], int]] = {
    "init": cmd_init,
    "run": cmd_run,
    "tick": cmd_tick,
    "status": cmd_status,
    "kill": cmd_kill,
    "pause": cmd_pause,
    "resume": cmd_resume,
    "log": cmd_log,
    "outbox": cmd_outbox,
    "replay": cmd_replay,
    "validate": cmd_validate,
    "notify": cmd_notify,
    "metrics": cmd_metrics,
    "schema": cmd_schema,
    "mcp-proxy": cmd_mcp_proxy,
    "report": cmd_report,
}
