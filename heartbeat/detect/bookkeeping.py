"""Bookkeeping: what a heartbeat writes that is no work, and what is left of it without that.

A sync that found nothing saves the time it last ran; a poller appends the
line it appended the heartbeat before, or stores back the cursor it read. Such
writes keep the agent's own record and change nothing it works on: the
judgements of :mod:`.idle` (an idle wake-up, a watcher's round, a wait) read a
heartbeat without them. A setting written back to what it was before the
heartbeat before (a pool size 20, 10, 20) is no record moving on: it is tried
again. Pure: a live Monitor and a replay agree.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from .detectors.calls import keeps_record, silent_by_design
from .detectors.contract import ActionView
from .detectors.empty import is_empty_answer
from .detectors.fingerprints import prints
from .detectors.memory import keeps_place, written_back
from .detectors.said import all_clear_result
from .detectors.talk import MARK_ASKED
from .exploration import noted
from .probes import alerts, keeps_note, said_again

__all__ = ["bookkeeping", "heard_nothing", "records", "untold", "without_bookkeeping", "written"]


def heard_nothing(action: ActionView) -> bool:
    """Whether ``action`` heard nothing to act on: an answer of nothing or an all-clear."""
    return action.error is None and (
        is_empty_answer(action.output_len, action.result) or all_clear_result(action.result)
    )


def written(actions: list[ActionView]) -> frozenset[str]:
    """The calls among ``actions`` that wrote or acted (the ``older`` of :func:`bookkeeping`)."""
    return frozenset(a.fingerprint for a in actions if noted(a))


def records(actions: list[ActionView], earlier: list[ActionView]) -> frozenset[str]:
    """The records of the agent's own among ``actions`` also written among ``earlier`` (the
    ``recorded`` of :func:`bookkeeping`); ``earlier`` is read only when ``actions`` hold one."""
    mine = {a.fingerprint for a in actions if noted(a) and keeps_record(a.tool, a.summary)}
    return frozenset(a.fingerprint for a in earlier if a.fingerprint in mine) if mine else frozenset()


def bookkeeping(
    before: list[ActionView],
    shapes: set[str] | None = None,
    older: Collection[str] = (),
    recorded: Collection[str] = (),
) -> Callable[[ActionView], bool]:
    """Whether an action is bookkeeping after the heartbeat ``before``: a write of the same shape as
    one of that heartbeat's, its values moved on (numbers and times masked), no work: a sync that
    found nothing saves the time it last ran; or the very same record of the agent's own (the line
    ``log.info`` or ``append_log`` wrote, the poll time ``state.touch`` set) as the heartbeat
    before wrote, or as one of ``recorded`` (earlier in the run: a drift watcher's "no drift" after
    a heartbeat that applied a fix). The very same act again (a hand-off back and forth) is no
    bookkeeping, nor a write of ``older`` (the writes of the heartbeat before ``before``: a setting
    put back as it was, 20, 10, 20, is tried again). Only writes of ``shapes`` are asked about,
    when given (the shapes of the heartbeat judged: what is read of each call is read only then)."""
    notes = [a for a in before if a.shape and (shapes is None or a.shape in shapes) and noted(a)]
    shaped, done = {a.shape for a in notes}, {a.fingerprint for a in notes}

    def kept(a: ActionView) -> bool:
        if a.shape not in shaped:  # the same record of its own as earlier in the run
            return a.fingerprint in recorded and keeps_record(a.tool, a.summary) and noted(a)
        if a.fingerprint in older and a.fingerprint not in done:
            return False
        return (a.fingerprint not in done or keeps_record(a.tool, a.summary)) and noted(a)

    return kept


def without_bookkeeping(
    heartbeat: list[ActionView],
    before: list[ActionView],
    older: Collection[str] = (),
    recorded: Collection[str] = (),
) -> list[ActionView]:
    """The actions of ``heartbeat`` but its bookkeeping after the heartbeat ``before``, and, when its
    other looks found nothing, the writes keeping its memory: storing back what it read (a cursor,
    see :func:`_stored_back`) or where it is as ``before`` stored it (the same ``state.set``), and
    the report ``before`` made, made again (an on-call handoff's "no open incidents" each shift; a
    question asked again is no report);
    ``older`` and ``recorded`` as for :func:`bookkeeping`."""
    kept = bookkeeping(before, {a.shape for a in heartbeat if a.shape}, older, recorded)
    actions = [a for a in heartbeat if not kept(a)]
    memory: set[int] = set()  # the writes storing back what a read answered, and those reads
    places = {a.fingerprint for a in before if noted(a) and (keeps_place(a.tool) or _reports(a))}
    for i, action in enumerate(actions):
        if noted(action) and action.fingerprint in places:
            memory.add(i)  # its place kept, or its report made, as the heartbeat before did
        elif noted(action) and (read := _stored_back(action, actions[:i])) is not None:
            memory |= {i, read}
    looks = [a for i, a in enumerate(actions) if i not in memory and not noted(a)]
    if not memory or not looks or not all(map(heard_nothing, looks)):
        return actions  # no write-back, or work found: a cursor written back keeps stuck work going
    return [a for i, a in enumerate(actions) if i not in memory or not noted(a)]


def untold(
    heartbeat: list[ActionView], before: list[ActionView], older: Collection[str] = ()
) -> list[ActionView]:
    """The actions of ``heartbeat`` but its bookkeeping after ``before`` and, when it is the one
    message to a person of both, what it told them ("still uploading, 3/6 parts") or the note it
    kept for them (``save_checkpoint_note``): how a wait goes now and then, no work; a message or
    two each round is."""
    actions = without_bookkeeping(heartbeat, before, older)
    told = [i for i, a in enumerate(actions) if noted(a) and _tells(a.tool)]
    if len(told) != 1 or any(noted(a) and _tells(a.tool) for a in before):
        return actions
    return actions[: told[0]] + actions[told[0] + 1 :]


def told_again(heartbeats: Sequence[Sequence[ActionView]], kept: Sequence[ActionView]) -> bool:
    """Whether a heartbeat of ``heartbeats`` (among ``kept``) told a person, or noted for one, the
    very words of another message of ``kept`` (see :func:`.probes.said_again`): no news of how a
    wait goes."""
    return said_again([a for beat in heartbeats for a in beat if noted(a)], kept, _tells)


def _reports(action: ActionView) -> bool:
    """Whether ``action`` tells a person something (or notes it for one) without asking them
    anything: a report made again is the wake-up's; a question asked again, its answer still
    awaited ("what's your update for today?" every wake-up, no reply yet), is asking again."""
    return _tells(action.tool) and MARK_ASKED not in (action.facts or "").split()


def _tells(tool: str) -> bool:
    """Whether ``tool`` tells a person (see :func:`.probes.alerts`) or keeps a note for one."""
    return alerts(tool) or keeps_note(tool)


def _stored_back(write: ActionView, earlier: list[ActionView]) -> int | None:
    """The position among ``earlier`` of the read whose answer ``write`` stores back unchanged (see
    :func:`~.detectors.memory.written_back`), else None."""
    for i, read in enumerate(earlier):
        if read.error is None and read.result is not None and not silent_by_design(read.tool, read.summary):
            value = written_back((read.tool, read.summary), (write.tool, write.summary))
            if value is not None and prints(read.tool, None, value).result == read.result:
                return i
    return None
