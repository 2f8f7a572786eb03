"""The ``heartbeat`` command: a thin adapter that parses, calls one library function, renders.

argparse keeps a cron tick's start-up cheap; every error is one line on
stderr and a documented exit code.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from . import __version__
from .config import (
    HeartbeatConfig,
    WebhookNotifierConfig,
    format_validation_error,
    load_config,
    parse_duration,
    read_secret_ref,
)
from .errors import EXIT_CODES as OUTCOME_EXIT_CODES
from .errors import HeartbeatError, UsageError, worst_exit_code

__all__ = ["main"]

EXIT_CODES = """\
exit codes:
  0  ok (acted, or paused and did nothing)
  1  the agent step raised (recorded as an errored action; `run` goes on)
  2  bad usage, bad config or a corrupt state file (nothing overwritten)
  3  stopped by the KILL file
  4  waiting for a human (needs_human)
  5  another heartbeat holds the lock
when several apply, the first of 3, 5, 2, 4, 1 wins"""

_SPARKS = "▁▂▃▄▅▆▇█"


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line and exit code 2 through our own path."""

    def error(self, message: str) -> Any:  # argparse's signature is NoReturn
        raise UsageError(f"{self.prog}: {message}")


def _common(parser: argparse.ArgumentParser, *, agent_flags: bool = True) -> None:
    parser.add_argument(
        "--config", metavar="FILE", help="heartbeat.toml (default: ./heartbeat.toml when present)"
    )
    parser.add_argument("--state-dir", metavar="DIR", help="the agent's state folder")
    parser.add_argument("--agent", metavar="NAME", help="pick one agent of a multi-agent config")
    parser.add_argument("--kill-file", metavar="PATH", help="the KILL file (default: KILL beside the config)")
    if agent_flags:
        parser.add_argument("--step", metavar="MODULE:ATTR", help="the agent's step function")
        parser.add_argument("--exec", metavar="CMD", help="run a program as the step (JSON-lines protocol)")
        parser.add_argument("--progress", metavar="MODULE:ATTR", help="the progress metric")
        parser.add_argument("--webhook", metavar="URL", help=_WEBHOOK_HELP)


_WEBHOOK_HELP = (
    "notify this webhook (as notifier 'webhook'); a URL on the command line is visible to "
    "every local user in `ps`: give env:NAME (read from that environment variable) or "
    "file:PATH (first line of a file) instead"
)


def build_parser() -> argparse.ArgumentParser:
    """The whole command line."""
    parser = _Parser(
        prog="heartbeat",
        description="A file-based heartbeat for scheduled AI agents.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"heartbeat {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def command(name: str, help: str, **kw: Any) -> argparse.ArgumentParser:
        return sub.add_parser(
            name,
            help=help,
            description=help,
            epilog=EXIT_CODES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            **kw,
        )

    p = command("init", "create heartbeat.toml, a state folder and a starter step")
    p.add_argument("directory", nargs="?", default=".", help="where (default: here)")

    p = command("run", "tick on a schedule until KILL, SIGINT/SIGTERM or --ticks")
    _common(p)
    p.add_argument("--every", metavar="DURATION", help="interval, e.g. 30s, 30m, 1h")
    p.add_argument("--cron", metavar="EXPR", help="cron expression, e.g. '*/30 * * * *'")
    p.add_argument("--ticks", type=int, metavar="N", help="stop after N ticks (per agent)")
    p.add_argument("--json", action="store_true", help="one JSON object per tick")

    p = command("tick", "run one heartbeat now (what cron and systemd timers call)")
    _common(p)
    p.add_argument("--json", action="store_true", help="print the tick result as JSON")

    p = command("status", "show status, streak, recovery, progress and recent anomalies")
    _common(p, agent_flags=False)
    p.add_argument("--json", action="store_true")

    p = command("kill", "write the KILL file (stops every heartbeat before it acts)")
    _common(p, agent_flags=False)
    p.add_argument("--reason", default="stopped by hand", help="the KILL file's text")
    p.add_argument("--off", action="store_true", help="remove the KILL file instead")

    p = command("pause", "pause the agent: ticks do nothing until resume")
    _common(p, agent_flags=False)
    p.add_argument("--reason", help="why (shown by status)")

    p = command("resume", "clear needs_human/paused and reset the streak")
    _common(p, agent_flags=False)
    p.add_argument("--note", metavar="TEXT", help="becomes the next step's instructions")

    p = command("log", "show the journal")
    _common(p, agent_flags=False)
    p.add_argument("-n", "--lines", type=int, default=30, metavar="N", help="last N events (0: all)")
    p.add_argument("--json", action="store_true", help="the events as JSON lines")

    p = command(
        "outbox",
        "list, retry or drop undelivered notifications (list, retry [SEL...], drop SEL...|--all)",
    )
    _common(p, agent_flags=False)
    p.add_argument("action", nargs="?", choices=("list", "retry", "drop"), default="list")
    p.add_argument("selectors", nargs="*", metavar="SEL", help="a key, a key prefix or a file name")
    p.add_argument("--all", action="store_true", help="drop: every entry")
    p.add_argument("--webhook", metavar="URL", help=_WEBHOOK_HELP)
    p.add_argument("--json", action="store_true", help="list: one JSON object per entry")

    p = command("replay", "run detectors and policy over a recorded trace")
    p.add_argument(
        "trace", help="a JSONL trace (one heartbeat per line), an agent history, or a folder of them"
    )
    p.add_argument("--config", metavar="FILE")
    p.add_argument("--json", action="store_true", help="one JSON object per tick (stable contract)")
    p.add_argument(
        "--format",
        metavar="NAME",
        help="trace, journal, swe-agent, mini-swe-agent, openai or otlp (default: detected)",
    )
    p.add_argument("--per-heartbeat", type=int, metavar="N", help="group the actions N per heartbeat")
    p.add_argument(
        "--labels", metavar="FILE", help="with a folder: CSV trace,label,onset for a confusion table"
    )
    p.add_argument(
        "--html", metavar="OUT", help="with a folder: also write the tuning page (onsets, detectors, table)"
    )

    p = command("validate", "check the config, its plug-ins and the state file")
    _common(p)

    command("schema", "print the JSON Schema of state.json")

    p = command(
        "mcp-proxy",
        "serve a stdio MCP server through heartbeat: `heartbeat mcp-proxy [flags] -- SERVER_CMD ARGS...`",
    )
    _common(p, agent_flags=False)
    p.add_argument("--actions", type=int, default=50, metavar="N", help="a heartbeat every N calls (50)")
    p.add_argument(
        "--idle",
        default="2s",
        metavar="DURATION",
        help="a heartbeat ends after this long without a call (2s)",
    )
    p.add_argument("--longest", default="60s", metavar="DURATION", help="and lasts at most this long (60s)")
    p.add_argument(
        "server", nargs=argparse.REMAINDER, metavar="-- SERVER_CMD ARGS", help="the MCP server to run"
    )
    p = command("report", "write a self-contained HTML report (one agent's page, or an overview of all)")
    _common(p, agent_flags=False)
    p.add_argument("--out", metavar="FILE", help="where (default: <state dir>/report.html; '-' for stdout)")
    p.add_argument("--since", metavar="WHEN", help="only events since a duration ago (6h, 2d) or an ISO date")
    p.add_argument("--stretch", metavar="FROM:TO", help="ticks whose actions the table shows")
    return parser


# -- helpers


def _config(args: argparse.Namespace) -> HeartbeatConfig:
    """The config with flags applied (flag paths are relative to the current folder)."""
    config = load_config(args.config)

    def absolute(value: str | None) -> Path | None:
        return Path(value).resolve() if value else None

    changes: dict[str, Any] = {
        "state_dir": absolute(getattr(args, "state_dir", None)),
        "kill_file": absolute(getattr(args, "kill_file", None)),
        "step": getattr(args, "step", None),
        "progress": getattr(args, "progress", None),
    }
    changes["exec"] = getattr(args, "exec", None)
    if getattr(args, "agent", None):
        picked = [a for a in config.all_agents() if a.name == args.agent]
        if not picked:
            names = ", ".join(a.name for a in config.all_agents())
            raise UsageError(f"no agent named {args.agent!r} (agents: {names})")
        config = config.model_copy(update={"agent": picked[0], "agents": []})
    if any(v is not None for v in changes.values()):
        if len(config.all_agents()) > 1:
            raise UsageError("flags that change an agent need --agent NAME in a multi-agent config")
        config = config.with_agent(**changes)
    if getattr(args, "webhook", None):
        url = read_secret_ref(args.webhook, "--webhook")
        try:
            hook = WebhookNotifierConfig(type="webhook", name="webhook", url=url)
        except ValidationError as exc:
            raise UsageError(f"--webhook: {format_validation_error(exc)}") from None
        config = config.model_copy(
            update={"notify": [*(n for n in config.notify if n.name != "webhook"), hook]}
        )
    return config


def _heartbeats(config: HeartbeatConfig) -> list[Any]:
    from .runner import Heartbeat

    return [Heartbeat(config, agent) for agent in config.all_agents()]


def _one(config: HeartbeatConfig, command: str) -> Any:
    heartbeats = _heartbeats(config)
    if len(heartbeats) > 1:
        names = ", ".join(hb.name for hb in heartbeats)
        raise UsageError(f"{command}: several agents ({names}); pick one with --agent NAME")
    return heartbeats[0]


def _worst(codes: Sequence[int]) -> int:
    return worst_exit_code(codes)


def _print_result(result: Any, as_json: bool, out: TextIO) -> None:
    if as_json:
        out.write(json.dumps(result.to_json()) + "\n")
        out.flush()
        return
    prefix = f"[{result.agent}] " if result.agent != "agent" else ""
    if result.outcome in ("error", "locked"):
        print(f"heartbeat: {prefix}error: {result.message}", file=sys.stderr)
        return
    out.write(prefix + result.message.replace("\n", "\n" + prefix) + "\n")
    if result.decision is not None and result.decision.instructions and result.outcome == "ran":
        text = result.decision.instructions.replace("\n", f"\n{prefix}    ")
        out.write(f"{prefix}  instructions for the next step:\n{prefix}    {text}\n")
    out.writelines(
        f"{prefix}  notification not delivered (kept in outbox/): {line}\n" for line in result.undelivered
    )
    if result.waiting and not result.undelivered:
        out.write(f"{prefix}  {result.waiting} notification(s) waiting in outbox/\n")
    out.flush()


def sparkline(values: Sequence[float]) -> str:
    """Recent progress as ``▁▂▅█``."""
    if not values:
        return ""
    low, high = min(values), max(values)
    span = high - low
    return "".join(_SPARKS[0 if span == 0 else round((v - low) / span * (len(_SPARKS) - 1))] for v in values)


# -- commands


def cmd_init(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat init``."""
    from .scaffold import init_project

    out.writelines(line + "\n" for line in init_project(Path(args.directory)))
    return 0


def cmd_tick(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat tick``: one heartbeat of every (or the chosen) agent."""
    from .watchdog import TickInterrupted, signals_interrupt

    def abandoned(result: Any) -> None:
        # KILL while the step hangs (watchdog thread): say it, then end the process at once;
        # the step's thread cannot be stopped any other way. The journal has the kill already.
        with contextlib.suppress(OSError, ValueError):
            _print_result(result, args.json, out)
            sys.stderr.flush()
        os._exit(3)

    codes = []
    try:
        with signals_interrupt():
            for hb in _heartbeats(_config(args)):
                hb.on_abandon = abandoned
                result = hb.tick()
                _print_result(result, args.json, out)
                codes.append(result.exit_code)
    except TickInterrupted as exc:
        print(f"heartbeat: {exc}; the tick's work was not saved", file=sys.stderr)
        return 128 + exc.signum
    return _worst(codes)


def cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat run``: tick on a schedule."""
    from .schedule import Runner, make_trigger

    config = _config(args)
    if args.ticks is not None and args.ticks < 1:
        raise UsageError("--ticks must be at least 1")
    every = parse_duration(args.every) if args.every else None
    cron = args.cron
    if every is None and cron is None:
        every, cron = config.schedule.every, config.schedule.cron
    elif every is not None and cron is not None:
        raise UsageError("give --every or --cron, not both")
    trigger = make_trigger(every=every, cron=cron, timezone=config.schedule.timezone)
    heartbeats = _heartbeats(config)
    for hb in heartbeats:
        hb.validate()

    def print_tick(result: Any) -> None:
        try:
            _print_result(result, args.json, out)
        except OSError:
            # A closed pipe: point stdout at /dev/null, or the exit's flush fails again.
            with contextlib.suppress(OSError):
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno() if sys.stdout else 1)
            raise

    runner = Runner(
        heartbeats,
        trigger,
        ticks=args.ticks,
        misfire_grace_time=config.schedule.misfire_grace_time,
        on_tick=print_tick,
    )
    summary = runner.run()
    print(f"heartbeat: run ended: {summary.reason}", file=sys.stderr)
    return summary.exit_code


def cmd_status(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat status``."""
    codes = []
    for hb in _heartbeats(_config(args)):
        state = hb.read_state()
        kill = hb.kill.reason()
        values = [s.value for s in state.progress if s.value is not None]
        report = {
            "agent": hb.name,
            "status": state.status.value,
            "status_reason": state.status_reason,
            "killed": kill,
            "ticks": state.ticks,
            "last_tick_at": state.last_tick_at.isoformat() if state.last_tick_at else None,
            "stuck_streak": state.stuck_streak,
            "escalate_after": hb.config.policy.escalate_after,
            "recovery": state.recovery.model_dump(mode="json") if state.recovery else None,
            "instructions": state.instructions,
            "progress": values[-20:],
            "anomalies": [a.model_dump(mode="json") for a in state.anomalies[-5:]],
            "outbox": len(hb.outbox().pending()) if hb.store.outbox_dir.is_dir() else 0,
            "state_dir": str(hb.state_dir),
        }
        outcome = "killed" if kill else "needs_human" if state.status.value == "needs_human" else "ran"
        codes.append(OUTCOME_EXIT_CODES[outcome])
        if args.json:
            out.write(json.dumps(report) + "\n")
            continue
        lines = [
            f"agent        {hb.name}   ({hb.state_dir})",
            f"status       {state.status.value}"
            + (f" ({state.status_reason})" if state.status_reason else ""),
            f"KILL         {'PRESENT: ' + kill if kill else 'absent'}",
            f"ticks        {state.ticks}   last "
            + (state.last_tick_at.isoformat(timespec="seconds") if state.last_tick_at else "never"),
            f"stuck streak {state.stuck_streak} of {hb.config.policy.escalate_after}",
            f"recovery     {_recovery_text(state)}",
            f"instructions {state.instructions or 'none'}",
            f"progress     {sparkline(values[-20:])} {values[-1]:g}" if values else "progress     no samples",
        ]
        if report["outbox"]:
            lines.append(f"outbox       {report['outbox']} notification(s) waiting")
        if state.anomalies:
            lines.append("anomalies")
            lines += [f"  tick {a.tick:>4}  {a.kind:<11} {a.message}" for a in state.anomalies[-5:]]
        out.write("\n".join(lines) + "\n\n")
    return _worst(codes)


def _recovery_text(state: Any) -> str:
    recovery = state.recovery
    return f"{recovery.mode.value} (attempt {recovery.attempts})" if recovery else "none"


def cmd_kill(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat kill``: write (or with --off remove) the KILL file."""
    seen = set()
    for hb in _heartbeats(_config(args)):
        if hb.kill.path in seen:
            continue
        seen.add(hb.kill.path)
        if args.off:
            removed = hb.kill.release()
            out.write(f"{hb.kill.path}: {'removed' if removed else 'was not there'}\n")
        else:
            text = hb.kill.engage(args.reason)
            out.write(f"{hb.kill.path}: written ({text}); `heartbeat kill --off` or rm it to go on\n")
    return 0


def cmd_pause(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat pause``."""
    hb = _one(_config(args), "pause")
    state = hb.pause(args.reason)
    out.write(f"{hb.name}: paused ({state.status_reason}); `heartbeat resume` goes on\n")
    return 0


def cmd_resume(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat resume [--note TEXT]``."""
    hb = _one(_config(args), "resume")
    state = hb.resume(args.note)
    note = f"; next instructions: {state.instructions}" if state.instructions else ""
    out.write(f"{hb.name}: resumed{note}\n")
    return 0


def cmd_log(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat log``."""
    from .journal import Journal

    for hb in _heartbeats(_config(args)):
        journal = Journal(hb.store.journal_path)
        # tail() reads from the end: `log -n 5` on a 100 MB journal reads a few KB.
        events = journal.tail(args.lines) if args.lines > 0 else list(journal.read())
        for event in events:
            if args.json:
                out.write(json.dumps(event) + "\n")
            else:
                out.write(_render_event(event) + "\n")
    return 0


def _render_event(event: dict[str, Any]) -> str:
    at = str(event.get("at", ""))[:19].replace("T", " ")
    kind = event.get("event", "?")
    rest = {k: v for k, v in event.items() if k not in ("at", "event", "agent", "tick") and v is not None}
    text = rest.pop("message", None) or rest.pop("reason", None) or rest.pop("summary", None)
    detail = " ".join(str(text).split()) if text else ", ".join(f"{k}={v}" for k, v in rest.items())
    return f"{at}  tick {event.get('tick', '-'):>4}  {kind:<11} {detail}"


def cmd_outbox(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat outbox [list|retry|drop]``: what waits to be delivered, and what to do with it."""
    from .outbox_cli import run_outbox

    return run_outbox(_heartbeats(_config(args)), args, out)


def cmd_replay(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat replay TRACE``."""
    from .replay import run_replay

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
    for hb in _heartbeats(config):
        hb.validate()
        state = hb.read_state() if hb.store.state_path.exists() else None
        what = f"state ok ({state.ticks} ticks, {state.status.value})" if state else "no state yet"
        out.write(f"{hb.name}: config ok, step and plug-ins load, {what}\n")
    return 0


def cmd_schema(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat schema``."""
    from .store import state_schema

    out.write(json.dumps(state_schema(), indent=2) + "\n")
    return 0


def cmd_mcp_proxy(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat mcp-proxy -- SERVER_CMD ARGS...``: stdout is the MCP protocol, so nothing is printed."""
    server = args.server[1:] if args.server[:1] == ["--"] else args.server
    if not server:
        raise UsageError("mcp-proxy: give the server to run after --, e.g. -- npx -y @acme/server")
    try:
        idle, longest = parse_duration(args.idle), parse_duration(args.longest)
    except ValueError as exc:
        raise UsageError(f"mcp-proxy: {exc}") from None
    hb = _one(_config(args), "mcp-proxy")
    try:
        from .mcp_proxy import run_proxy
    except ImportError as exc:
        raise UsageError(f"mcp-proxy needs the mcp package ({exc}): pip install 'heartbeat[mcp]'") from None
    from .session import Session

    try:
        session = Session(
            hb.config,
            hb.agent,
            actions=args.actions,
            idle=idle.total_seconds(),
            seconds=longest.total_seconds(),
        )
    except ValueError as exc:
        raise UsageError(f"mcp-proxy: {exc}") from None
    try:
        return run_proxy(session, server)
    except OSError as exc:
        raise UsageError(f"mcp-proxy: cannot start {server[0]!r}: {exc.strerror or exc}") from None


def cmd_report(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat report``: an agent's HTML page, or with several agents an overview and each page."""
    from .report import make_reports

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
    "schema": cmd_schema,
    "mcp-proxy": cmd_mcp_proxy,
    "report": cmd_report,
}


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Entry point of the ``heartbeat`` command; returns the exit code."""
    try:
        return _main(argv, out)
    finally:
        if argv is None:
            # The command's own process is about to exit: freezing spares the interpreter a
            # full garbage collection of every object at teardown (~15 ms of a cron tick).
            import gc

            gc.freeze()


def _main(argv: Sequence[str] | None, out: TextIO | None) -> int:
    out = out or sys.stdout or open(os.devnull, "w")  # noqa: SIM115 - started with stdout closed
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(out)
            return 2
        return COMMANDS[args.command](args, out)
    except HeartbeatError as exc:
        print(f"heartbeat: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug of ours: one line, the traceback only on request
        if os.environ.get("HEARTBEAT_DEBUG"):
            raise
        print(
            f"heartbeat: internal error: {type(exc).__name__}: {exc} "
            "(set HEARTBEAT_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 1
