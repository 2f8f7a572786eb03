"""The ``heartbeat`` command: a thin adapter that parses, calls one library function, renders.

argparse keeps a cron tick's start-up cheap; every error is one line on
stderr and a documented exit code. The work lives in the library
(:mod:`heartbeat.flags`, :mod:`heartbeat.status`, :mod:`heartbeat.logview`,
:mod:`heartbeat.metrics`), so each command is a few lines.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from . import __version__
from .config import HeartbeatConfig, load_config, parse_duration
from .errors import HeartbeatError, UsageError, worst_exit_code
from .flags import check_kill_target, config_with_flags, schedule_with_flags

if TYPE_CHECKING:
    from .runner import Heartbeat, TickResult

__all__ = ["build_parser", "main"]

EXIT_CODES = """\
exit codes:
  0  ok (acted, or paused and did nothing)
  1  the agent step raised (recorded as an errored action; `run` goes on)
  2  bad usage, bad config, a corrupt state file or no state folder (nothing overwritten)
  3  stopped by the KILL file (or the fleet stop)
  4  waiting for a human (needs_human)
  5  another heartbeat holds the lock
  6  overdue: no heartbeat for 2 schedule periods or --max-age (status only)
when several apply, the first of 3, 5, 2, 4, 6, 1 wins"""

# Each command's own options (sqlite-utils style: only what the command uses).
_AGENT = ("config", "state-dir", "agent")
_STEP = ("kill-file", "step", "exec", "progress", "webhook")


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line and exit code 2 through our own path."""

    def error(self, message: str) -> Any:  # argparse's signature is NoReturn
        raise UsageError(f"{self.prog}: {message}")


_WEBHOOK_HELP = (
    "notify this webhook (as notifier 'webhook'); a URL on the command line is visible to "
    "every local user in `ps`: give env:NAME (read from that environment variable) or "
    "file:PATH (first line of a file) instead"
)


def _counting(text: str) -> int:
    """``-n``: a whole number >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give 0 (all) or more")
    return value


_OPTIONS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "config": (("--config",), {"metavar": "FILE", "help": "heartbeat.toml (default: ./heartbeat.toml)"}),
    "state-dir": (("--state-dir",), {"metavar": "DIR", "help": "the agent's state folder"}),
    "agent": (("--agent",), {"metavar": "NAME", "help": "one agent of a multi-agent config"}),
    "kill-file": (
        ("--kill-file",),
        {"metavar": "PATH", "help": "the KILL file (default: KILL beside the config)"},
    ),
    "step": (("--step",), {"metavar": "MODULE:ATTR", "help": "the agent's step function"}),
    "exec": (("--exec",), {"metavar": "CMD", "help": "run a program as the step (JSON-lines protocol)"}),
    "progress": (("--progress",), {"metavar": "MODULE:ATTR", "help": "the progress metric"}),
    "webhook": (("--webhook",), {"metavar": "URL", "help": _WEBHOOK_HELP}),
}


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

    def command(name: str, help: str, examples: str, options: Sequence[str] = ()) -> argparse.ArgumentParser:
        p = sub.add_parser(
            name,
            help=help,
            description=help,
            epilog=f"examples:\n{examples}\n\n{EXIT_CODES}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        for option in options:
            flags, kw = _OPTIONS[option]
            p.add_argument(*flags, **kw)
        return p

    p = command(
        "init", "create heartbeat.toml, a state folder and a starter step", "  heartbeat init my-agent"
    )
    p.add_argument("directory", nargs="?", default=".", help="where (default: here)")

    p = command(
        "run",
        "tick on a schedule until KILL, SIGINT/SIGTERM or --ticks",
        "  heartbeat run --every 30m\n"
        "  heartbeat run --cron '*/30 * * * *' --no-initial-tick --metrics-port 9464",
        (*_AGENT, *_STEP),
    )
    p.add_argument("--every", metavar="DURATION", help="interval, e.g. 30s, 30m, 1h")
    p.add_argument("--cron", metavar="EXPR", help="cron expression, e.g. '*/30 * * * *'")
    p.add_argument("--ticks", type=int, metavar="N", help="stop after N ticks (per agent)")
    p.add_argument("--no-initial-tick", action="store_true", help="first tick on the schedule, not at start")
    p.add_argument(
        "--metrics-port", metavar="[HOST:]PORT", help="serve Prometheus /metrics (HOST: 127.0.0.1)"
    )
    p.add_argument(
        "--json", action="store_true", help="one JSON object per tick on stdout (the step's prints: stderr)"
    )

    p = command(
        "tick",
        "run one heartbeat now (what cron and systemd timers call)",
        "  heartbeat tick\n  heartbeat tick --quiet        # cron: output only when a person must look\n"
        "  heartbeat tick --json | jq .outcome",
        (*_AGENT, *_STEP),
    )
    output = p.add_mutually_exclusive_group()
    output.add_argument(
        "--json", action="store_true", help="the result as JSON on stdout (the step's prints: stderr)"
    )
    output.add_argument(
        "--quiet", action="store_true", help="print only errors and undelivered notifications"
    )

    p = command(
        "status",
        "status, last tick, overdue, streak, recovery, progress; one line per agent for a fleet",
        "  heartbeat status\n  heartbeat status --json | jq .overdue\n"
        "  heartbeat status --max-age 2h || page-someone",
        (*_AGENT, "kill-file"),
    )
    p.add_argument("--json", action="store_true", help="one JSON object per agent")
    p.add_argument("--max-age", metavar="DURATION", help="overdue after this long without a heartbeat")

    p = command(
        "kill",
        "write the KILL file the agent reads (stops every heartbeat before it acts)",
        "  heartbeat kill --reason 'runaway bill'\n  heartbeat kill --off",
        (*_AGENT, "kill-file"),
    )
    p.add_argument("--reason", default="stopped by hand", help="the KILL file's text")
    p.add_argument("--off", action="store_true", help="remove the KILL file instead")

    p = command(
        "pause",
        "pause the agent: ticks do nothing until resume",
        "  heartbeat pause --reason 'deploy'",
        _AGENT,
    )
    p.add_argument("--reason", help="why (shown by status)")

    p = command(
        "resume",
        "clear needs_human/paused, reset the streak and the progress window",
        "  heartbeat resume --note 'the API moved to v2; use search_v2'",
        _AGENT,
    )
    p.add_argument("--note", metavar="TEXT", help="becomes the next step's instructions")

    p = command(
        "log",
        "show the journal (every agent's, merged by time)",
        "  heartbeat log -n 50\n  heartbeat log --follow --event anomaly --event step_error\n"
        "  heartbeat log --since 2h --json",
        _AGENT,
    )
    p.add_argument("-n", "--lines", type=_counting, default=30, metavar="N", help="last N events (0: all)")
    p.add_argument("--event", action="append", metavar="KIND", help="only this event kind (repeatable)")
    p.add_argument("--since", metavar="WHEN", help="only events since a duration ago (2h) or a time")
    p.add_argument("-f", "--follow", action="store_true", help="keep printing new events until Ctrl-C")
    p.add_argument("--json", action="store_true", help="the events as JSON lines")

    p = command(
        "outbox",
        "list, retry or drop undelivered notifications",
        "  heartbeat outbox\n  heartbeat outbox retry\n  heartbeat outbox drop agent-escalation-12\n"
        "  heartbeat outbox drop --all",
        (*_AGENT, "webhook"),
    )
    p.add_argument("action", nargs="?", choices=("list", "retry", "drop"), default="list")
    p.add_argument("selectors", nargs="*", metavar="SEL", help="a key, a key prefix or a file name")
    p.add_argument("--all", action="store_true", help="drop: every entry")
    p.add_argument("--json", action="store_true", help="list: one JSON object per entry")

    p = command(
        "replay",
        "run detectors and policy over a recorded trace",
        "  heartbeat replay trace.jsonl --config heartbeat.toml\n  heartbeat replay trace.jsonl --json\n"
        "  heartbeat replay runs/ --labels labels.csv",
        ("config",),
    )
    p.add_argument(
        "trace", help="a JSONL trace (one heartbeat per line), an agent history, or a folder of them"
    )
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

    command(
        "validate",
        "check the config, its plug-ins and the state file",
        "  heartbeat validate --config prod.toml",
        (*_AGENT, *_STEP),
    )

    p = command(
        "notify",
        "send a test message through every notifier and report",
        "  heartbeat notify --test",
        (*_AGENT, "webhook"),
    )
    p.add_argument("--test", action="store_true", required=True, help="send a test message")

    p = command(
        "metrics",
        "Prometheus metrics of every agent (text format, for node_exporter's textfile collector)",
        "  heartbeat metrics --output /var/lib/node_exporter/textfile/heartbeat.prom",
        _AGENT,
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write FILE atomically (default: stdout)")

    command("schema", "print the JSON Schema of state.json", "  heartbeat schema > state.schema.json")

    p = command(
        "mcp-proxy",
        "serve a stdio MCP server through heartbeat: `heartbeat mcp-proxy [flags] -- SERVER_CMD ARGS...`",
        "  heartbeat mcp-proxy --config heartbeat.toml -- python server.py\n"
        "  heartbeat mcp-proxy --actions 20 --idle 5s -- npx some-mcp-server",
        (*_AGENT, "kill-file"),
    )
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

    p = command(
        "report",
        "write a self-contained HTML report (one agent's page, or an overview of all)",
        "  heartbeat report\n  heartbeat report --since 2d --out - > report.html",
        (*_AGENT, "kill-file"),
    )
    p.add_argument("--out", metavar="FILE", help="where (default: <state dir>/report.html; '-' for stdout)")
    p.add_argument("--since", metavar="WHEN", help="only events since a duration ago (6h, 2d) or an ISO date")
    p.add_argument("--stretch", metavar="FROM:TO", help="ticks whose actions the table shows")
    return parser


# -- helpers


def _config(args: argparse.Namespace) -> HeartbeatConfig:
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
    from .runner import Heartbeat

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


def _worst(codes: Sequence[int]) -> int:
    return worst_exit_code(codes)


def _warn(prefix: str, text: str) -> None:
    print(f"heartbeat: {prefix}warning: {text}", file=sys.stderr)


def _print_result(result: TickResult, out: TextIO, *, as_json: bool = False, quiet: bool = False) -> None:
    """A tick on stdout; errors and notifications a human has not received on stderr (cron mails it)."""
    prefix = f"[{result.agent}] " if result.agent != "agent" else ""
    if as_json:
        out.write(json.dumps(result.to_json()) + "\n")
    elif result.outcome in ("error", "locked"):
        if not (quiet and result.outcome == "locked"):  # cron overlapping itself is harmless
            print(f"heartbeat: {prefix}error: {result.message}", file=sys.stderr)
    elif quiet and result.exit_code == 1:
        print(f"heartbeat: {prefix}{result.message}", file=sys.stderr)
    elif not quiet:
        from .style import Style

        colour = "red" if result.exit_code else "yellow" if result.anomalies else None
        first, _, rest = (prefix + result.message.replace("\n", "\n" + prefix)).partition("\n")
        out.write((Style.for_stream(out).paint(first, colour) if colour else first) + "\n")
        if rest:
            out.write(rest + "\n")
        if result.decision is not None and result.decision.instructions and result.outcome == "ran":
            text = result.decision.instructions.replace("\n", f"\n{prefix}    ")
            out.write(f"{prefix}  instructions for the next step:\n{prefix}    {text}\n")
    out.flush()
    for line in result.undelivered:
        _warn(prefix, f"notification not delivered (kept in outbox/): {line}")
    if result.waiting and not result.undelivered:
        _warn(prefix, f"{result.waiting} notification(s) waiting in outbox/: not delivered yet")


@contextlib.contextmanager
def _clean_stdout(out: TextIO, enabled: bool) -> Iterator[TextIO]:
    """Under --json: stdout carries only our JSON; the step's prints (and its children's) go to stderr."""
    if not enabled:
        yield out
        return
    try:
        is_real = out is sys.__stdout__ and out.fileno() == 1
    except (AttributeError, OSError, ValueError):
        is_real = False
    if not is_real:  # a caller's stream: redirecting Python's stdout is enough
        with contextlib.redirect_stdout(sys.stderr):
            yield out
        return
    out.flush()
    saved = os.dup(1)
    os.dup2(2, 1)  # a child process (an --exec step) inherits fd 1: point it at stderr
    real = os.fdopen(saved, "w", encoding="utf-8", buffering=1, closefd=False)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield real
    finally:
        real.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _now() -> datetime:
    return datetime.now(UTC)


# -- commands


def cmd_init(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat init``."""
    from .scaffold import init_project

    out.writelines(line + "\n" for line in init_project(Path(args.directory)))
    return 0


def cmd_tick(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat tick``: one heartbeat of every (or the chosen) agent."""
    from .watchdog import TickInterrupted, signals_interrupt

    streams = [out]  # where results go: under --json, the real stdout kept aside

    def abandoned(result: Any) -> None:
        # KILL while the step hangs (watchdog thread): say it, then end the process at once;
        # the step's thread cannot be stopped any other way. The journal has the kill already.
        with contextlib.suppress(OSError, ValueError):
            _print_result(result, streams[-1], as_json=args.json, quiet=args.quiet)
            streams[-1].flush()
            sys.stderr.flush()
        os._exit(3)

    codes = []
    heartbeats = _heartbeats(_config(args))
    try:
        with signals_interrupt(), _clean_stdout(out, args.json) as stream:
            streams.append(stream)
            for hb in heartbeats:
                hb.on_abandon = abandoned
                result = hb.tick()
                _print_result(result, stream, as_json=args.json, quiet=args.quiet)
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
    every, cron = schedule_with_flags(config, every=args.every, cron=args.cron)
    trigger = make_trigger(every=every, cron=cron, timezone=config.schedule.timezone)
    heartbeats = _heartbeats(config)
    for hb in heartbeats:
        hb.validate()
    if args.metrics_port:
        from .metrics import serve

        server, _ = serve(heartbeats, args.metrics_port, _now)
        host, port = server.server_address[:2]
        print(f"heartbeat: metrics on http://{host}:{port}/metrics", file=sys.stderr)

    def on_tick(result: TickResult) -> None:
        try:
            _print_result(result, stream, as_json=args.json)
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

    with _clean_stdout(out, args.json) as stream:
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
    print(f"heartbeat: run ended: {summary.reason}", file=sys.stderr)
    return summary.exit_code


def cmd_status(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat status``: one agent in detail, or one line per agent of a fleet."""
    from .status import agent_report, fleet_reports, render_detail, render_fleet, worst
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
    return worst(codes)


def cmd_kill(args: argparse.Namespace, out: TextIO) -> int:
    """``heartbeat kill``: write (or with --off remove) the KILL file the agent reads."""
    config = _config(args)
    check_kill_target(config, config_file=args.config, state_dir=args.state_dir, kill_file=args.kill_file)
    seen = set()
    for hb in _heartbeats(config):
        if hb.kill.path in seen:
            continue
        seen.add(hb.kill.path)
        if args.off:
            try:
                removed = hb.kill.release()
            except OSError as exc:
                raise UsageError(
                    f"{hb.kill.path}: cannot remove ({exc.strerror}); a KILL folder with files in it "
                    "is removed by hand only: look inside, then rm -r it"
                ) from None
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
    """``heartbeat log``: the journal, filtered, merged across agents, optionally followed."""
    from .logview import EventFilter, follow, parse_since, read_events, render_event
    from .status import require_state_dir
    from .style import Style

    heartbeats = _heartbeats(_config(args))
    width = max(len(hb.name) for hb in heartbeats) if len(heartbeats) > 1 else 0  # the agent column
    present = [hb for hb in heartbeats if hb.state_dir.is_dir()]
    if not present:  # the wrong folder; in a fleet, an agent that never ran has no journal yet
        require_state_dir(heartbeats[0])
    heartbeats = present
    since = parse_since(args.since, _now()) if args.since else None
    keep = EventFilter(frozenset(args.event or ()), since)
    journals = [(hb.name, hb.store.journal_path) for hb in heartbeats]
    style = Style.for_stream(out)

    def show(event: dict[str, Any]) -> None:
        out.write((json.dumps(event) if args.json else render_event(event, style, agent_width=width)) + "\n")

    for event in read_events(journals, keep, last=args.lines):
        show(event)
    out.flush()
    if args.follow:
        try:
            for event in follow(journals, keep):
                show(event)
                out.flush()
        except KeyboardInterrupt:  # the way to end --follow: not an error
            return 0
    return 0


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
    for hb in _heartbeats(_config(args)):
        hb.validate()
        state = hb.read_state() if hb.store.state_path.exists() else None
        what = f"state ok ({state.ticks} ticks, {state.status.value})" if state else "no state yet"
        out.write(f"{hb.name}: config ok, step and plug-ins load, {what}\n")
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
    hb = _one(_config(args), "mcp-proxy", must_exist=False)
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
    "notify": cmd_notify,
    "metrics": cmd_metrics,
    "schema": cmd_schema,
    "mcp-proxy": cmd_mcp_proxy,
    "report": cmd_report,
}


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Entry point of the ``heartbeat`` command; returns the exit code."""
    code = 1
    try:
        code = _main(argv, out)
        return code
    finally:
        if argv is None:
            if code == 130:
                # Interrupted: leave at once. Joining a worker thread still inside a step would
                # wait, and a further Ctrl-C there prints the interpreter's traceback.
                with contextlib.suppress(Exception):
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(130)
            # The command's own process is about to exit: freezing spares the interpreter a
            # full garbage collection of every object at teardown (~15 ms of a cron tick).
            import gc

            gc.freeze()


def _main(argv: Sequence[str] | None, out: TextIO | None) -> int:
    if argv is None:
        for stream in (sys.stdout, sys.stderr):  # an ASCII or Latin-1 terminal: never a crash
            with contextlib.suppress(AttributeError, ValueError):
                stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
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
        if argv is None:  # our own process: a third Ctrl-C must not interrupt the goodbye
            import signal

            signal.signal(signal.SIGINT, signal.SIG_IGN)
        print(
            "heartbeat: interrupted (a tick in progress was abandoned; its work is not saved)",
            file=sys.stderr,
        )
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
