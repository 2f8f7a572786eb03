"""What ran after its heartbeat ended: a tool call journaled, a model call's spend counted.

A call in flight when its heartbeat ended (KILL, the fleet stop, a person's
pause, a spent budget, a step abandoned on KILL) ran all the same: the tool
acted, the model call was paid for. No heartbeat holds it, so:

- a tool call is journaled only (:func:`note_after_stop`): it is in no
  ``state.json`` history, and the detectors never see it;
- a model call's tokens and dollars are added to ``state.json``'s spend
  (today's budget counters and the totals, under the lock) and journaled as
  a ``spend`` event (:func:`note_usage_after_stop`, :func:`count_late_spend`).
  Dropping them would let a run that is stopped over and over spend past
  its budget unseen; counted, the next tick finds the budget spent and
  pauses the agent as it would have.

The same holds for the calls of a step whose tick will not be saved: one
abandoned on KILL, or ended by SIGTERM or SIGINT, whether or not the step
unwinds (:func:`account_step`, on the tick's side), and those of an open heartbeat a process leaves in an
emergency (:func:`journal_unsaved`, journal only). Every event is marked
``after_stop`` with what stopped the run (``killed``, ``paused``,
``interrupted``, ...).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ..base.errors import HeartbeatError, StateLocked
from ..core.budget import roll_over
from ..core.models import ModelSpend, add_spend, merged_spend, spend_since
from .context import action_error, priced_call, spend_events
from .stepguard import Accounted

if TYPE_CHECKING:
    from .agent import Agent
    from .context import StepContext

INTERRUPTED = "interrupted: the step was abandoned while this call ran (it may have run)"
"""The error a call still running when its step was abandoned is journaled with."""

__all__ = [
    "INTERRUPTED",
    "Kept",
    "account_step",
    "count_late_spend",
    "journal_unsaved",
    "note_after_stop",
    "note_usage_after_stop",
]

# How long a call that ran after its heartbeat ended waits for the lock to be journaled under it.
_LATE_LOCK_WAIT = 0.2
# How long late spend waits for the lock to be counted in state.json: a `heartbeat pause` that the
# stop let in holds it for a load and a save; past this the spend is journaled only (and says so).
_LATE_SPEND_LOCK_WAIT = 2.0


class Kept(NamedTuple):
    """What became of a call that ran after its heartbeat ended: whether the journal holds it, and
    ``said``, what was kept of it in words a person or a model reads (``""`` when nothing was)."""

    journaled: bool
    said: str


_NOTHING = Kept(False, "")
_ACTION_JOURNALED = Kept(True, "journaled only, not in state.json")
_SPEND_COUNTED = Kept(True, "its spend counted in state.json and journaled")
_SPEND_NOT_JOURNALED = Kept(False, "its spend counted in state.json, not journaled")
_SPEND_UNSAVED = Kept(True, "its spend journaled only, not counted in state.json")


def note_after_stop(
    hb: Agent,
    tool: str,
    args: Mapping[str, Any] | None,
    output: str | None,
    error: str | BaseException | None,
    cost: float,
    why: str,
) -> Kept:
    """Journal a call that ran after its heartbeat ended (a stop, a pause); what was kept of it.

    It is in no ``state.json`` (no heartbeat could be opened to hold it), so the journal
    is its record: masked, cut and escaped as ``ctx.record`` keeps an action (by the same
    functions), marked ``after_stop: why``.
    """
    try:
        event = _late_action(hb, why, tool, args, output=output, error=error, cost=cost)
        try:
            with hb.store.lock(timeout=_LATE_LOCK_WAIT):
                hb.journal([event], hb.clock(), 0)
        except StateLocked:  # held elsewhere: one O_APPEND write cannot tear another's lines
            hb.journal([event], hb.clock(), 0)
    except (HeartbeatError, OSError, TypeError, ValueError):
        return _NOTHING
    return _ACTION_JOURNALED


def _late_action(
    hb: Agent,
    why: str,
    tool: str,
    args: Mapping[str, Any] | None,
    *,
    output: str | None = None,
    error: str | BaseException | None = None,
    cost: float = 0.0,
) -> dict[str, Any]:
    """The journal event of a call no heartbeat holds: masked, cut and escaped as ``ctx.record``
    keeps an action (by the same functions), marked ``after_stop: why``."""
    from ..base.credential_text import mask_name
    from ..core.models import printable
    from ..detect.detectors import summarize
    from ..detect.detectors.fingerprints import error_text

    masked = hb.mask(dict(args)) if args is not None else None
    text = None if output is None else hb.mask(str(output))
    failed = action_error(error, hb.redact)
    return {
        "event": "action",
        "tool": printable(mask_name(tool)),
        "summary": summarize(tool, masked, hb.config.detectors.volatile_args),
        "at": hb.clock(),
        "output_len": None if text is None else len(text.strip()),
        "error": None if failed is None else error_text(failed),
        "cost": float(cost),
        "after_stop": why,
    }


def note_usage_after_stop(
    hb: Agent,
    model: str,
    input_tokens: int,
    output_tokens: int,
    cached_tokens: int,
    cost: float | None,
    why: str,
) -> Kept:
    """Count one model call that ended after its heartbeat did (priced as in a heartbeat); what was
    kept of it (see :func:`count_late_spend`)."""
    unpriced: dict[str, str] = {}
    try:
        model, spend, _ = priced_call(
            model, input_tokens, output_tokens, cached_tokens, cost, hb.plugins.pricer, hb.clock, unpriced
        )
    except (TypeError, ValueError):  # counts no heartbeat would take either
        return _NOTHING
    return count_late_spend(hb, {model: spend}, spend.input + spend.output, spend.cost, unpriced, why)


def count_late_spend(
    hb: Agent,
    usage: Mapping[str, ModelSpend],
    tokens: int,
    cost: float,
    unpriced: Mapping[str, str],
    why: str,
    *,
    locked: bool = False,
    tick: int | None = None,
) -> Kept:
    """Add spend no heartbeat saved to ``state.json`` (today's budget, the totals) and journal it
    (``spend`` marked ``after_stop: why``); what was kept of it.

    ``locked``: the caller holds the state folder's lock (a tick whose step came back after it
    was abandoned). When the lock cannot be had or the state cannot be read or saved, the spend is
    journaled all the same, marked ``unsaved`` with why. ``tick``: the journal's tick number (the
    state's own by default, the heartbeat the calls belonged to).
    """
    now = hb.clock()
    try:
        with contextlib.nullcontext() if locked else hb.store.lock(timeout=_LATE_SPEND_LOCK_WAIT):
            state = hb.store.load()
            events = spend_events(usage, tokens, cost, unpriced, state.spend_totals)
            counters = roll_over(state.budget, now, hb.config.budget)
            counters.tokens += tokens
            counters.cost += cost
            for model, spend in usage.items():
                add_spend(counters.models, model, spend)
            state.budget = counters
            state.spend_totals = merged_spend(state.spend_totals, dict(usage))
            hb.store.save(state)
            journaled = _journal(hb, events, why, state.ticks if tick is None else tick)
            return _SPEND_COUNTED if journaled else _SPEND_NOT_JOURNALED
    except (HeartbeatError, OSError) as exc:  # the spend still happened: the journal keeps it
        events = spend_events(usage, tokens, cost, unpriced, {})
        events[-1]["unsaved"] = hb.redact(str(exc))
        return _SPEND_UNSAVED if _journal(hb, events, why, tick or 0) else _NOTHING


def _journal(hb: Agent, events: list[dict[str, Any]], why: str, tick: int) -> bool:
    """Journal late ``events`` marked ``after_stop: why`` (no lock needed: one O_APPEND write)."""
    try:
        hb.journal([{**event, "after_stop": why} for event in events], hb.clock(), tick)
    except (HeartbeatError, OSError):
        return False
    return True


def journal_unsaved(hb: Agent, ctx: StepContext | None, why: str) -> None:
    """Journal what an open heartbeat's ``ctx`` holds that no save will keep (a process ending in an
    emergency): its actions and its spend, marked ``after_stop: why``; no lock, nothing raised.

    The journal is then their only record; ``state.json`` keeps the heartbeat before them.
    """
    if ctx is None:
        return
    try:
        events = ctx.action_events()
        if ctx.usage or ctx.tick_cost:
            events += spend_events(ctx.usage, ctx.tick_tokens, ctx.tick_cost, ctx.unpriced, {})
            events[-1]["unsaved"] = "the process ended before its heartbeat was saved"
        if events:
            hb.journal([{**event, "after_stop": why} for event in events], hb.clock(), ctx.tick)
    except (HeartbeatError, OSError, RuntimeError):  # RuntimeError: a dict the caller changed meanwhile
        return


def account_step(
    hb: Agent, ctx: StepContext, why: str, tick: int, since: Accounted | None = None
) -> tuple[Accounted, str]:
    """For a step whose tick will not save it (abandoned on KILL, interrupted): journal the actions
    it recorded and count its spend in ``state.json``, those since ``since``, marked ``after_stop:
    why``; the caller holds the state folder's lock. What is accounted for now, and what could not
    be (a note for the tick's message, else "").

    The step may still be running on another thread: its lists are copied first (each copy is one
    step for the interpreter), and whatever it records later is the next call's ``since``.
    """
    since = since or Accounted()
    count = len(ctx.recorded)
    usage = {model: spend.model_copy() for model, spend in list(ctx.usage.items())}
    now = Accounted(count, usage, ctx.tick_cost)
    problems = []
    events = ctx.action_events()[since.actions : count]
    # The calls an adapter let run and that had not come back: they may have acted.
    events += [_late_action(hb, why, tool, args, error=INTERRUPTED) for tool, args in ctx.take_in_flight()]
    # And the model calls sent and not answered: paid for, their tokens never known.
    events += [{"event": "model_in_flight", "model": model} for model in ctx.take_models_in_flight()]
    if events:
        try:
            hb.journal([{**event, "after_stop": why} for event in events], hb.clock(), tick)
        except (HeartbeatError, OSError) as exc:
            problems.append(f"{len(events)} action(s) not journaled: {hb.redact(str(exc))}")
    spent = spend_since(usage, since.usage)
    cost = now.cost - since.cost
    if spent or cost > 0:
        tokens = sum(spend.input + spend.output for spend in spent.values())
        unpriced = {model: reason for model, reason in list(ctx.unpriced.items()) if model in spent}
        if not count_late_spend(hb, spent, tokens, cost, unpriced, why, locked=True, tick=tick).journaled:
            problems.append("its model calls' spend could not be journaled")
    return now, "".join(f" ({problem})" for problem in problems)
