"""The ``heartbeat`` command: a thin adapter that parses, calls one library function, renders.

argparse keeps a cron tick's start-up cheap; every error is one line on
stderr and a documented exit code. The grammar is :mod:`heartbeat.cli.parser`,
the commands :mod:`heartbeat.cli.commands` (each a few lines over the library:
:mod:`heartbeat.config.flags`, :mod:`heartbeat.cli.status`, :mod:`heartbeat.cli.logview`,
:mod:`heartbeat.cli.metrics`); this module runs one and turns errors into exit codes.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from ..base.errors import HeartbeatError
from . import commands
from .commands import COMMANDS
from .parser import build_parser

__all__ = ["COMMANDS", "build_parser", "main"]


# Line breaks and other control characters in an error (a path or a name holding them, an
# exception's text) are shown escaped: an error is one line, and it cannot drive the terminal.
_CONTROLS = {code: f"\\x{code:02x}" for code in (*range(32), 127)} | {9: "\\t", 10: "\\n", 13: "\\r"}


def _one_line(text: str) -> str:
    return text.translate(_CONTROLS)


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
        commands.OWN_PROCESS = True  # the heartbeat process itself: see commands.loading
        for stream in (sys.stdout, sys.stderr):  # an ASCII or Latin-1 terminal: never a crash
            with contextlib.suppress(AttributeError, ValueError):
                stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    out = out or sys.stdout or open(os.devnull, "w")  # noqa: SIM115 - started with stdout closed
    parser = build_parser(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(out)
            return 2
        return COMMANDS[args.command](args, out)
    except HeartbeatError as exc:
        print(f"heartbeat: error: {_one_line(str(exc))}", file=sys.stderr)
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
            f"heartbeat: internal error: {type(exc).__name__}: {_one_line(str(exc))} "
            "(set HEARTBEAT_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 1
