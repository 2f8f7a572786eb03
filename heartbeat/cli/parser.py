"""The ``heartbeat`` command line: every command, its options, its help with examples.

:func:`build_parser` is the whole grammar; :mod:`heartbeat.cli.commands` holds
what each command does and :mod:`heartbeat.cli.main` runs them.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from typing import Any

from .. import __version__
from ..base.errors import EXIT_CODES, EXIT_PRIORITY, UsageError

__all__ = ["EXIT_CODES_HELP", "build_parser", "exit_codes_help"]

_EXIT_MEANINGS: dict[str, str] = {
    "ran": "ok (acted, or paused and did nothing)",
    "step_error": "the agent step raised (recorded as an errored action; `run` goes on)",
    "error": "bad usage, bad config, a corrupt state file or no state folder (nothing overwritten)",
    "killed": "stopped by the KILL file (or the fleet stop)",
    "needs_human": "waiting for a human (needs_human)",
    "locked": "another heartbeat holds the lock",
    "overdue": "overdue: no heartbeat for 2 schedule periods or --max-age (status only)",
}


_TICKING = ("ran", "step_error", "error", "killed", "needs_human", "locked")


def exit_codes_help(outcomes: Sequence[str] = tuple(_EXIT_MEANINGS), **meaning: str) -> str:
    """The exit-code table of ``outcomes`` (names of :data:`heartbeat.errors.EXIT_CODES`), in code order.

    ``meaning`` gives a command's own words for an outcome (``step_error="..."``).
    """
    meanings = dict(_EXIT_MEANINGS)
    if not set(_TICKING) <= set(outcomes):  # a command that runs no step: nothing acted or paused
        meanings["ran"] = "ok"
    meanings.update(meaning)
    codes = sorted({EXIT_CODES[name]: meanings[name] for name in outcomes}.items())
    lines = ["exit codes:", *(f"  {code}  {meaning}" for code, meaning in codes)]
    ranked = [code for code in EXIT_PRIORITY if code and code in dict(codes)]
    if len(ranked) > 1:
        lines.append(f"when several apply, the first of {', '.join(map(str, ranked))} wins")
    return "\n".join(lines)


EXIT_CODES_HELP = exit_codes_help()
"""Every exit code, for ``heartbeat --help``; each command lists only its own."""

# Each command's own options (sqlite-utils style: only what the command uses); every command
# that reads an agent takes the common flags, so a script can pass one set to all of them.
_COMMON = ("config", "state-dir", "agent", "kill-file", "step", "exec", "progress", "webhook")

# What each command can exit with, by outcome name (heartbeat.errors.EXIT_CODES).
_EXITS: dict[str, tuple[str, ...]] = {
    "init": ("ran", "error"),
    "run": ("ran", "error", "killed", "locked"),
    "tick": _TICKING,
    "status": ("ran", "error", "killed", "needs_human", "overdue"),
    "kill": ("ran", "error"),
    "pause": ("ran", "error", "locked"),
    "resume": ("ran", "error", "locked"),
    "log": ("ran", "error"),
    "outbox": ("ran", "error", "locked"),  # retry says a busy delivery lock; drop refuses (5)
    "replay": ("ran", "error"),
    "validate": ("ran", "error"),
    "notify": ("ran", "step_error", "error"),
    "metrics": ("ran", "error"),
    "schema": ("ran",),
    "mcp-proxy": ("ran", "step_error", "error"),
    "report": ("ran", "error", "locked"),  # a page inside the state folder is written under its lock
}
_OWN_MEANINGS: dict[str, dict[str, str]] = {
    "run": {"ran": "ok: --ticks done, or stopped by SIGINT/SIGTERM (130/143: a second one)"},
    "notify": {"step_error": "a notifier could not deliver"},
    "mcp-proxy": {"step_error": "the MCP server did not start, or exited mid-session"},
    "outbox": {"locked": "drop: a delivery held the outbox for 5 s; nothing was dropped"},
}


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line and exit code 2 through our own path."""

    def error(self, message: str) -> Any:  # argparse's signature is NoReturn
        found = re.match(r"argument (\S+): invalid choice: '([^']*)'", message)
        if found:  # a mistyped command (or outbox action)
            choices = next((list(a.choices) for a in self._actions if a.choices), [])
            close = _closest(found.group(2), choices)
            message += f" (did you mean {close}?)" if close else ""
        elif message.startswith("unrecognized arguments: "):
            # The top parser reports a command's unknown flags: look among the commands' options too.
            parsers = [self, *(p for a in self._actions if a.choices for p in dict(a.choices).values())]
            options = [
                o
                for p in parsers
                if isinstance(p, argparse.ArgumentParser)
                for a in p._actions
                for o in a.option_strings
                if o.startswith("--")
            ]
            words = message.removeprefix("unrecognized arguments: ").split()
            hints = [(w, m) for w in words if w.startswith("-") and (m := _closest(w, options))]
            if len(hints) == 1:
                message += f" (did you mean {hints[0][1]}?)"
            elif hints:
                message += f" (did you mean {', '.join(f'{m} for {w}' for w, m in hints)}?)"
        # The command's own name, not the program's: "heartbeat: error: tick: ..." (never "heartbeat" twice).
        command = self.prog.removeprefix("heartbeat").strip()
        raise UsageError(f"{command}: {message}" if command else message)


def _closest(word: str, choices: Sequence[str]) -> str | None:
    """The one of ``choices`` closest to ``word`` (``--kil-file=X`` is compared as ``--kil-file``), if any."""
    import difflib  # here: only a mistyped command line needs it

    close = difflib.get_close_matches(word.split("=", 1)[0], choices, n=1, cutoff=0.6)
    return close[0] if close else None


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
    return value if value <= sys.maxsize else 0  # more events than any journal holds: all of them


def _given(text: str) -> str:
    """A path, a name or a command: not empty (``--state-dir ""``, an unset variable in a cron
    line, would otherwise run the step against the config's defaults)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty value; give one or leave the flag out")
    return text


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


class _Unused:
    """Stands in for the parser of a command not being run: its options are not built."""

    def add_argument(self, *args: Any, **kwargs: Any) -> None:
        """Ignore an option of a command not being run."""

    def add_mutually_exclusive_group(self, **kwargs: Any) -> _Unused:
        """Ignore a group of options of a command not being run."""
        return self


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line; given ``argv`` naming a command, only that command's options.

    A cron tick is a fresh process: building sixteen commands' options it will not
    parse is a few milliseconds of its start-up. ``heartbeat --help`` names every
    command, so without a command every one is built.
    """
    only = argv[0] if argv and not argv[0].startswith("-") else None
    parser = _Parser(
        prog="heartbeat",
        description="A file-based heartbeat for scheduled AI agents.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"heartbeat {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def command(name: str, help: str, examples: str, options: Sequence[str] = ()) -> Any:
        if only is not None and name != only:
            return _Unused()
        p = sub.add_parser(
            name,
            help=help,
            description=help,
            epilog=f"examples:\n{examples}\n\n{exit_codes_help(_EXITS[name], **_OWN_MEANINGS.get(name, {}))}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        common = p.add_argument_group("common flags (every command that reads an agent takes them)")
        for option in options:
            flags, kw = _OPTIONS[option]
            common.add_argument(*flags, type=_given, **kw)  # each a path, a name or a command
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
        _COMMON,
    )
    p.add_argument("--every", metavar="DURATION", help="interval, e.g. 30s, 30m, 1h")
    p.add_argument("--cron", metavar="EXPR", help="cron expression, e.g. '*/30 * * * *'")
    p.add_argument("--ticks", type=int, metavar="N", help="stop after N ticks (per agent)")
    p.add_argument("--no-initial-tick", action="store_true", help="first tick on the schedule, not at start")
    p.add_argument(
        "--metrics-port",
        type=_given,
        metavar="[HOST:]PORT",
        help="serve Prometheus /metrics (HOST: 127.0.0.1)",
    )
    p.add_argument(
        "--json", action="store_true", help="one JSON object per tick on stdout (the step's prints: stderr)"
    )

    p = command(
        "tick",
        "run one heartbeat now (what cron and systemd timers call)",
        "  heartbeat tick\n  heartbeat tick --quiet        # cron: output only when a person must look\n"
        "  heartbeat tick --json | jq .outcome",
        _COMMON,
    )
    output = p.add_mutually_exclusive_group()
    output.add_argument(
        "--json", action="store_true", help="the result as JSON on stdout (the step's prints: stderr)"
    )
    output.add_argument(
        "--quiet",
        action="store_true",
        help="print only what needs a person (errors, undelivered notifications, an escalation "
        "when no notifier is configured; on stderr)",
    )

    p = command(
        "status",
        "status, last tick, overdue, streak, recovery, progress; one line per agent for a fleet",
        "  heartbeat status\n  heartbeat status --json | jq .overdue\n"
        "  heartbeat status --max-age 2h || page-someone",
        _COMMON,
    )
    p.add_argument("--json", action="store_true", help="one JSON object per agent")
    p.add_argument(
        "--max-age", type=_given, metavar="DURATION", help="overdue after this long without a heartbeat"
    )

    p = command(
        "kill",
        "write the KILL file the agent reads (stops every heartbeat before it acts)",
        "  heartbeat kill --reason 'runaway bill'\n  heartbeat kill --off",
        _COMMON,
    )
    p.add_argument("--reason", default="stopped by hand", help="the KILL file's text")
    p.add_argument("--off", action="store_true", help="remove the KILL file instead")

    p = command(
        "pause",
        "pause the agent: ticks do nothing until resume",
        "  heartbeat pause --reason 'deploy'",
        _COMMON,
    )
    p.add_argument("--reason", help="why (shown by status)")

    p = command(
        "resume",
        "clear needs_human/paused, reset the streak and the progress window",
        "  heartbeat resume --note 'the API moved to v2; use search_v2'",
        _COMMON,
    )
    p.add_argument(
        "--note",
        metavar="TEXT",
        help="becomes the next step's instructions (without --note, a note no step has read yet is "
        'kept; --note "" clears it)',
    )

    p = command(
        "log",
        "show the journal (every agent's, merged by time)",
        "  heartbeat log -n 50\n  heartbeat log --follow --event anomaly --event step_error\n"
        "  heartbeat log --since 2h --json",
        _COMMON,
    )
    p.add_argument("-n", "--lines", type=_counting, default=30, metavar="N", help="last N events (0: all)")
    p.add_argument("--event", action="append", metavar="KIND", help="only this event kind (repeatable)")
    p.add_argument(
        "--since", type=_given, metavar="WHEN", help="only events since a duration ago (2h) or a time"
    )
    p.add_argument("-f", "--follow", action="store_true", help="keep printing new events until Ctrl-C")
    p.add_argument("--json", action="store_true", help="the events as JSON lines")

    p = command(
        "outbox",
        "list, retry or drop undelivered notifications",
        "  heartbeat outbox\n  heartbeat outbox retry\n  heartbeat outbox drop agent-escalation-12\n"
        "  heartbeat outbox drop --all",
        _COMMON,
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
        type=_given,
        metavar="NAME",
        help="trace, journal, swe-agent, mini-swe-agent, openai, openai-responses, anthropic, "
        "pydantic-ai, langchain, otlp, claude-code or codex (default: detected)",
    )
    p.add_argument("--per-heartbeat", type=int, metavar="N", help="group the actions N per heartbeat")
    p.add_argument(
        "--labels",
        type=_given,
        metavar="FILE",
        help="with a folder: CSV trace,label,onset for a confusion table",
    )
    p.add_argument(
        "--html",
        type=_given,
        metavar="OUT",
        help="with a folder: also write the tuning page (onsets, detectors, table)",
    )

    command(
        "validate",
        "check the config, its plug-ins and the state file",
        "  heartbeat validate --config prod.toml",
        _COMMON,
    )

    p = command(
        "notify",
        "send a test message through every notifier and report",
        "  heartbeat notify --test",
        _COMMON,
    )
    p.add_argument("--test", action="store_true", required=True, help="send a test message")

    p = command(
        "metrics",
        "Prometheus metrics of every agent (text format, for node_exporter's textfile collector)",
        "  heartbeat metrics --output /var/lib/node_exporter/textfile/heartbeat.prom",
        _COMMON,
    )
    p.add_argument(
        "-o", "--output", type=_given, metavar="FILE", help="write FILE atomically (default: stdout)"
    )

    command("schema", "print the JSON Schema of state.json", "  heartbeat schema > state.schema.json")

    p = command(
        "mcp-proxy",
        "serve a stdio MCP server through heartbeat: `heartbeat mcp-proxy [flags] -- SERVER_CMD ARGS...`",
        "  heartbeat mcp-proxy --config heartbeat.toml -- python server.py\n"
        "  heartbeat mcp-proxy --actions 20 --idle 5s -- npx some-mcp-server",
        _COMMON,
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
        "--wake-gap",
        default="60s",
        metavar="DURATION",
        help="one begun sooner after the last call is the agent's next turn, never an idle wake-up (60s)",
    )
    p.add_argument(
        "server", nargs=argparse.REMAINDER, metavar="-- SERVER_CMD ARGS", help="the MCP server to run"
    )

    p = command(
        "report",
        "write a self-contained HTML report (one agent's page, or an overview of all)",
        "  heartbeat report\n  heartbeat report --since 2d --out - > report.html",
        _COMMON,
    )
    p.add_argument(
        "--out", type=_given, metavar="FILE", help="where (default: <state dir>/report.html; '-' for stdout)"
    )
    p.add_argument(
        "--since",
        type=_given,
        metavar="WHEN",
        help="only events since a duration ago (6h, 2d) or an ISO date",
    )
    p.add_argument("--stretch", type=_given, metavar="FROM:TO", help="ticks whose actions the table shows")
    if only is not None and only not in sub.choices:  # not a command: the error lists them all
        return build_parser()
    return parser


# -- helpers
