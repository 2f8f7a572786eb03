"""What a command prints of a tick: its result on stdout; errors and undelivered notices on stderr.

Under ``--json`` stdout carries only heartbeat's JSON lines (:func:`clean_stdout`),
so a script can parse it while the step prints what it likes.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, TextIO

from ..core.delivery import SET_ASIDE
from ..core.models import printable_lines

if TYPE_CHECKING:
    from ..core.result import TickResult

__all__ = ["clean_stdout", "print_result", "warn"]


def warn(prefix: str, text: str) -> None:
    """One warning line on stderr (``prefix``: the agent's ``[name] `` in a fleet, else empty)."""
    print(f"heartbeat: {prefix}warning: {text}", file=sys.stderr)


def print_result(result: TickResult, out: TextIO, *, as_json: bool = False, quiet: bool = False) -> None:
    """A tick on stdout; errors and notifications a human has not received on stderr (cron mails it)."""
    prefix = f"[{result.agent}] " if result.agent != "agent" else ""
    if as_json:
        out.write(json.dumps(result.to_json()) + "\n")
    elif result.outcome in ("error", "locked"):
        if not (quiet and result.outcome == "locked"):  # cron overlapping itself is harmless
            print(f"heartbeat: {prefix}error: {result.message}", file=sys.stderr)
    elif quiet and (result.exit_code == 1 or result.untold):
        # A step that raised, or an escalation no notifier carries: cron's mail is the only word.
        print(f"heartbeat: {prefix}{result.message}", file=sys.stderr)
    elif quiet and result.exit_code == 2 and not result.errors:  # an error kept no line of its own
        print(f"heartbeat: {prefix}error: {result.message}", file=sys.stderr)
    elif not quiet:
        colour = "red" if result.exit_code else "yellow" if result.anomalies else None
        first, _, rest = (prefix + result.message.replace("\n", "\n" + prefix)).partition("\n")
        if colour:  # a quiet tick is plain text: no need to import the styling
            from .style import Style

            first = Style.for_stream(out).paint(first, colour)
        out.write(first + "\n")
        if rest:
            out.write(rest + "\n")
        if result.decision is not None and result.decision.instructions and result.outcome == "ran":
            text = printable_lines(result.decision.instructions, f"{prefix}    ")
            out.write(f"{prefix}  instructions for the next step:\n{prefix}    {text}\n")
    out.flush()
    if result.outcome not in ("error", "locked"):
        # An error beside the tick's outcome (the journal could not be written, a notifier could not
        # be built): its one line, quiet or not (quiet silences normal output only).
        for line in result.errors:
            print(f"heartbeat: {prefix}error: {line}", file=sys.stderr)
    for line in result.undelivered:  # a failed send waits in outbox/; an unreadable entry was set aside
        warn(
            prefix,
            line if line.startswith(SET_ASIDE) else f"notification not delivered (kept in outbox/): {line}",
        )
    if result.waiting and not result.undelivered:
        warn(prefix, f"{result.waiting} notification(s) waiting in outbox/: not delivered yet")
    if result.untold:
        warn(prefix, "no notifier is configured: nobody was told of this escalation (add a [[notify]] table)")


@contextlib.contextmanager
def clean_stdout(out: TextIO, enabled: bool) -> Iterator[TextIO]:
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
