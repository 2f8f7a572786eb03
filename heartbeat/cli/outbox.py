"""``heartbeat outbox``: list, retry and drop undelivered notifications.

The rendering side of one CLI command, kept out of ``cli.py``. ``list`` and
``drop`` need no notifier secret (an operator at 3 a.m. may not have the
webhook URL in their shell); ``retry`` sends, so it needs them.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from ..base.errors import HeartbeatError, UsageError
from ..core.models import printable
from ..tick.control import note_delivery_between_ticks

if TYPE_CHECKING:
    from ..notify.outbox import OutboxItem
    from ..tick.runner import Heartbeat

__all__ = ["run_outbox"]


def _item_json(agent: str, item: OutboxItem) -> dict[str, Any]:
    entry = item.entry
    note = entry.notification if entry else None
    return {
        "agent": agent,
        "file": item.name,
        "key": note.key if note else None,
        "kind": note.kind if note else None,
        "notifier": entry.notifier if entry else None,
        "created_at": note.created_at.isoformat() if note else None,
        "attempts": entry.attempts if entry else None,
        "next_attempt_at": entry.next_attempt_at.isoformat() if entry else None,
        "last_error": entry.last_error if entry else None,
        "problem": item.problem,
    }


def _item_line(item: OutboxItem) -> str:
    entry = item.entry
    if entry is None:
        return f"  {item.name}: {item.problem}"
    note = entry.notification
    line = (
        f"  {note.key} -> {entry.notifier}  ({note.kind}, {entry.attempts} failed attempt(s), "
        f"next {entry.next_attempt_at.isoformat(timespec='seconds')})"
    )
    if item.problem:
        line += f"\n    {item.problem}"
    if entry.last_error:  # escaped again: an entry is a file, and whoever can write the folder wrote it
        line += f"\n    last error: {printable(entry.last_error)}"
    return line


def run_outbox(heartbeats: Sequence[Heartbeat], args: argparse.Namespace, out: TextIO) -> int:
    """Carry out ``heartbeat outbox`` over each agent that has a state folder (none: exit 2); exit 0
    (``drop`` while a delivery holds the outbox past the wait: StateLocked, exit 5; a selector of
    ``drop`` or ``retry`` that matches nothing: exit 2)."""
    action = args.action
    selectors = list(args.selectors)
    if action == "drop" and not (selectors or args.all):
        raise UsageError("outbox drop: name what to drop (a key, a key prefix, a file name) or give --all")
    if args.all and action != "drop":
        raise UsageError("--all goes with `outbox drop`")
    if action == "list" and selectors:
        raise UsageError("outbox list takes no selector")
    from .status import require_state_dir

    # Nothing at all where the state folder goes: the wrong folder, said as status and log say it
    # (in a fleet, an agent that never ran is left out). Something there that is no folder (a file,
    # a symlink loop) is listed and refused with its own reason.
    present = [hb for hb in heartbeats if os.path.lexists(hb.state_dir)]
    if not present:
        require_state_dir(heartbeats[0])
    matched = False
    for hb in present:
        outbox = hb.outbox()
        prefix = f"[{hb.name}] " if len(heartbeats) > 1 else ""
        try:
            if action == "list":
                items = outbox.items(known=[n.name for n in hb.config.notify])
                if args.json:
                    out.writelines(json.dumps(_item_json(hb.name, i)) + "\n" for i in items)
                    continue
                out.write(f"{prefix}{len(items)} file(s) in {outbox.directory}\n")
                out.writelines(_item_line(i) + "\n" for i in items)
            elif selectors and not args.all and not outbox.picked(selectors):
                continue  # nothing of this agent's is named: the error below, if no agent's is
            elif action == "drop":
                dropped = outbox.drop(["*"] if args.all else selectors)
                matched = matched or bool(dropped)
                out.writelines(f"{prefix}dropped {name}\n" for name in dropped)
            else:
                hb.config.require_env()
                report = outbox.deliver(hb.notifiers(), hb.clock(), force=True, only=selectors or None)
                if report.busy:
                    out.write(f"{prefix}another heartbeat is delivering right now; nothing tried\n")
                    matched = True  # not known: the selectors are not said to match nothing
                    continue
                note_delivery_between_ticks(hb, report)
                matched = matched or bool(report.delivered or report.failed)
                said = hb.redact(report.summary())
                if said or not selectors:  # named ones that match nothing: the error below says so
                    out.write(prefix + (said or "notifications: nothing to retry") + "\n")
        except (BrokenPipeError, TimeoutError, HeartbeatError):
            raise  # a closed stdout; drop's busy delivery lock (StateLocked, exit 5): theirs to report
        except OSError as exc:  # an outbox folder that cannot be listed, an entry that cannot go
            raise UsageError(f"{prefix}{exc.filename or outbox.directory}: {exc.strerror or exc}") from None
    if action != "list" and selectors and not matched:
        raise UsageError(f"outbox {action}: nothing matches {' '.join(selectors)}")
    return 0
