"""Carrying out a settled tick's notices: ``ESCALATION.md``, the outbox, delivery.

The I/O half of :mod:`heartbeat.core.settle`. Only a decision that is saved is
announced: the runner saves the state (its notices ride in it), then calls
:func:`announce`, which writes ``ESCALATION.md`` for an escalation and puts
one outbox entry per notice and notifier (:func:`queue_notices`); the state
is saved again without them, the tick's events are journaled, and
:func:`deliver` sends what waits. A crash between the two saves leaves the
notices in ``state.json``; the next tick queues them. A delivery may hang (a
webhook that never answers) and be stopped (KILL, a signal): the tick's last
journal lines (:class:`~heartbeat.tick.stepguard.Closing`) are then written
by the stop, so its journal is whole.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..base.errors import HeartbeatError, StateUnsavable
from ..core.models import AgentState, Notification, Status
from ..state.store import StateStore

if TYPE_CHECKING:  # imported where used: a healthy tick never needs them
    from ..core.delivery import DeliveryReport
    from ..core.result import TickResult
    from ..notify.notifiers import Notifier
    from ..notify.outbox import Outbox
    from .agent import Agent

__all__ = [
    "announce",
    "deliver",
    "outbox",
    "outbox_waiting",
    "queue_notices",
    "reaching_someone",
    "save",
    "write_escalation_file",
    "write_report",
]


def outbox(store: StateStore, secrets: Sequence[str] = ()) -> Outbox:
    """The agent's outbox of undelivered notifications (``secrets`` masked out of what it writes)."""
    from ..notify.outbox import Outbox

    return Outbox(store.outbox_dir, secrets=secrets)


def outbox_waiting(store: StateStore) -> bool:
    """Whether anything waits in outbox/ (one scandir; no outbox folder is an empty one)."""
    try:
        with os.scandir(store.outbox_dir) as entries:
            # Entries only: a corrupt file set aside or a temp file is nothing to send.
            return any(e.name.endswith(".json") and e.name[0] != "." for e in entries)
    except OSError:
        return False


def reaching_someone(store: StateStore, notifiers: Sequence[str]) -> bool:
    """Whether an outbox entry still waits for one of ``notifiers`` (names; corrupt or orphaned: no)."""
    return outbox_waiting(store) and outbox(store).waiting_for(notifiers)


def deliver(
    store: StateStore,
    notifiers: Callable[[], Sequence[Notifier]],
    now: datetime,
    *,
    force: bool,
    secrets: Sequence[str] = (),
) -> DeliveryReport:
    """Try to deliver what waits in the outbox (only entries that are due unless forced)."""
    if not outbox_waiting(store):
        from ..core.delivery import DeliveryReport

        return DeliveryReport()
    return outbox(store, secrets).deliver(notifiers(), now, force=force)


def announce(
    hb: Agent,
    state: AgentState,
    events: list[dict[str, Any]],
    result: TickResult,
    *,
    resume_hint: str,
    secrets: Sequence[str] = (),
) -> None:
    """Queue the saved state's notices (:func:`queue_notices`), then save the state without them.

    Every notifier gets each notice: one that cannot be built stands in as one whose sends fail
    (its message waits in outbox/), and the tick says so in one line (exit 2).
    """
    notifiers = hb.plugins.notifiers()
    # An escalation with no notifier reaches nobody but ESCALATION.md: the CLI says so.
    result.untold = any(n.kind == "escalation" for n in state.notices) and not notifiers
    # Only a decision that is on disk is announced: a failed save before this raised already.
    queue_notices(
        state, hb.store, notifiers, agent=hb.name, resume_hint=resume_hint, redact=hb.redact,
        report=lambda note: write_report(hb, state, note, events), secrets=secrets,
    )  # fmt: skip
    hb.store.save(state)
    for line in hb.plugins.unbuilt:  # the others were called: exit 2, and said
        result.add_error(hb.redact(f"{line}; its notifications wait in outbox/"))


def queue_notices(
    state: AgentState,
    store: StateStore,
    notifiers: Sequence[Notifier],
    *,
    agent: str,
    resume_hint: str,
    redact: Callable[[str], str],
    report: Callable[[Notification], None] | None = None,
    secrets: Sequence[str] = (),
) -> None:
    """Queue the saved state's notices in outbox/ (and write ESCALATION.md), then forget them.

    An escalation's reports are written here, once, when it is announced:
    ``ESCALATION.md``, then ``report(note)`` (the runner's ``report.html``).
    """
    box = outbox(store, secrets)
    for note in state.notices:
        if note.kind == "escalation" and state.status is Status.NEEDS_HUMAN:
            write_escalation_file(state, note, store, agent=agent, resume_hint=resume_hint, redact=redact)
            if report is not None:
                report(note)
        for notifier in notifiers:
            box.put(note, notifier.name, None)
    state.notices = []


def write_escalation_file(
    state: AgentState,
    note: Notification,
    store: StateStore,
    *,
    agent: str,
    resume_hint: str,
    redact: Callable[[str], str],
) -> None:
    """Write ``ESCALATION.md`` for an escalation: the one place every escalation report is written.

    A further report of the same escalation (an HTML page, say) belongs
    here too, beside the Markdown, so it is written exactly when the
    escalation is announced.
    """
    from ..base.fsutil import atomic_write
    from ..core.escalation import escalation_markdown

    tick = state.escalation.tick if state.escalation else state.ticks
    evidence = [a for a in state.anomalies if a.tick == tick]
    text = escalation_markdown(
        agent,
        state,
        evidence,
        reason=note.reason,
        now=note.created_at,
        resume_hint=resume_hint,
        redact=redact,
    )
    atomic_write(store.escalation_path, text.encode("utf-8"))


def save(store: StateStore, state: AgentState, events: list[dict[str, Any]]) -> str:
    """Save; a state holding what cannot be written is made savable, and the journal says how.

    Returns what to add to the tick's message ("" when the state saved as it was).
    """
    try:
        store.save(state)
    except StateUnsavable:
        from ..core.sanitize import make_savable

        changes = make_savable(state)
        store.save(state)
        events.append({"event": "sanitised", "changes": changes})
        return f"; {len(changes)} unsavable value(s) in the state changed (see the journal)"
    return ""


def write_report(hb: Agent, state: AgentState, note: Notification, events: list[dict[str, Any]]) -> None:
    """report.html beside ESCALATION.md; a page that cannot be made costs the page, never the tick."""
    from ..report.write import write_report as write_page

    stamp = {"at": note.created_at.isoformat(), "agent": hb.name, "tick": state.ticks}
    try:
        write_page(hb, now=note.created_at, pending=[{**stamp, **e} for e in events], locked=True)
    except (HeartbeatError, OSError, ValueError) as exc:
        events.append({"event": "report_error", "error": hb.redact(str(exc))})
