"""An idle wake-up: a heartbeat that looked for work, found none and did nothing.

A scheduled agent wakes, checks its inbox, queue or feed, finds nothing and sleeps: the same round every
quiet heartbeat, the metric flat because no work came. Its calls look like a loop and its flat metric like
no progress, yet it did its job. What tells it from a stuck agent is the heartbeat as a whole: it only
looked (no act, no write, no failure, no call twice; but for the bookkeeping it did the heartbeat before, a
write of the same shape, its values moved on: a sync saving the time it last ran), and a source it had
looked at in an earlier heartbeat answered nothing (an empty list, an envelope around nothing, "no results",
"No new messages.") or that nothing needs doing (an all-clear report: "0 broken anchors of 214 links", "All
systems operational"; see :func:`.detectors.said.all_clear`; silence is a shell gone dark, not an answer; a
poll ``since`` the last wake-up asks the same source, its time moved on). A stuck agent does, fails, or asks
the same thing again within a heartbeat; new searches finding nothing ask something new each time and are no
re-check. Nor is a live agent's next model turn a wake-up (a Session's heartbeat begun soon after its last,
:attr:`.monitor.Monitor.turn`): a lookup answered "No more results." turn after turn is asked again, not
polled.
A watcher's round is the other quiet shape: every heartbeat over a flat stretch of the metric asked the same
looks as the others (a certificate's expiry checked each day, a build's status every two minutes; the first
may also start what the others watch, the others keep the agent's bookkeeping as the one before did),
however their answers move. Its metric is flat because nothing has happened yet, not because work goes
undone: ``no_progress`` is about a busy agent. Whether the answers themselves say it is stuck (the same
status, identical, again and again) is the other detectors' call; but a wake-up that only looked, each call
once, after a heartbeat that did the same, asking again mostly what that heartbeat asked, one look answering
anew (an A/B monitor's hourly round, each experiment's counts grown), saw something move, and its findings
of no visible effect are dropped as an idle wake-up's are (:func:`quiet_wakeup`); so are those of one that
came later (time passed: no model turn, no trace line without its time) and heard the very answers again to
the very calls (a certificate's days left, a replica's lag: nothing moved, nothing to do), unless one names
a state on its way (a job "RUNNING" hour after hour: a wait that froze), names a job waiting its turn the
:data:`TURN_WAIT`-th time running, or is work taken from a queue (the same message received again: work
undone); and a round that took from a queue what it took the round before is no watcher's, whatever else
moved (a backlog growing behind poison messages). Nor is telling a person how the wait goes ("still
uploading, 3/6 parts") work: a round or a wait may hold a message it had not sent the heartbeat before. A
monitor's round that fails where what it watches broke, or tells a person so, is quiet as well (see
:mod:`.probes`).
A wait is the third: every heartbeat of the stretch after its first waited (a ``sleep``, a call that waits)
and did nothing but look, no act, no write, no failure, and in each a look asked before answered anew (a CI
run's jobs finishing one by one, a deploy's pods coming up), or every look was new (the watch of a run just
started begins): the agent waits on work outside it that moves, and its metric (deploys done) moves when
that work ends. A frozen job polled between sleeps answers as before however many new looks go with it, and
stays judged. A wake-up of the schedule (no model turn) is a wait the calls do not show: a heartbeat that
only looked, none twice, mostly asking again the very calls asked before, one of them answering anew (a
job's page, its percent moving), waited as well; a crawl asks new pages and a drifting agent new commands,
and stay judged. And a stretch of heartbeats without a call, from an agent that records its calls, did
nothing: idle; so did a stretch that held an idle wake-up before its newest heartbeat (a calendar
assistant's quiet looks at its inbox, then a request it handles whose meeting is confirmed only when the
invitees answer): the metric was flat while no work came.
An exploration is the fourth: every look answered by something the run had not seen (a file read, a test
failing anew after an edit), no act done twice: steps of a search, not busy work (see :func:`exploring` and
:mod:`.exploration`).
Pure: a live Monitor and a replay agree.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import timedelta
from itertools import pairwise
from typing import Literal, NamedTuple

from ..core.models import ProgressSample
from .bookkeeping import heard_nothing, records, told_again, untold, without_bookkeeping, written
from .detectors.calls import keeps_record, pauses, silence_answers, silent_by_design, takes, waits
from .detectors.commands import copies_sql
from .detectors.contract import ActionView, answered_alike, heartbeat_bounds
from .detectors.fingerprints import NO_ROWS_RESULT
from .detectors.no_progress import NoProgress
from .detectors.recurring_error import BACKOFF_EXTRA, RecurringError
from .detectors.said import queued_result, rereads, underway_result
from .detectors.volatile import mask_times
from .exploration import explored, noted
from .probes import probe_round

__all__ = [
    "WOKE_AFTER",
    "exploring",
    "idle_wakeup",
    "looked_once",
    "quiet_before",
    "quiet_wakeup",
    "spared",
    "watching",
]

WOKE_AFTER = timedelta(seconds=30)
"""How long after the heartbeat before a wake-up may have seen the world move (ticks back to back,
a loop calling ``tick`` or a test, are no wake-ups where anything had time to change)."""
TURN_WAIT = 6
"""Wake-ups running a job may be heard waiting its turn unchanged before that turn is judged lost."""


def _asked(actions: Iterable[ActionView], rerun: Collection[str] = ()) -> set[str] | None:
    """The calls one heartbeat's ``actions`` asked, or None when one did more than look: a failure,
    an act or a write (but a round's write that matched no row again, see :func:`looked_once`), or
    a call asked twice (a stuck agent's, not a round's)."""
    asked: set[str] = set()
    for action in actions:
        if not looked_once(asked, action, rerun):
            return None
    return asked


def looked_once(asked: set[str], action: ActionView, rerun: Collection[str] = ()) -> bool:
    """Whether ``action`` only looked, at a call not among ``asked`` (a heartbeat's looks so far,
    to which it is added): no failure, no act or write, no call asked twice. A copy of a query's rows
    asked in ``rerun`` (the calls of the heartbeat before) that matched no row did nothing: an hourly
    sync's ``INSERT 0 0``, nothing new to copy, its round run again. An update or a delete matching
    no row stays an act (the same order's status set hour after hour), and so does a write reworded
    until it matches."""
    if action.error is not None or action.fingerprint in asked or rereads(action.result):
        return False  # a failure, a call twice, a page saying to read it again (a read going nowhere)
    if silent_by_design(action.tool, action.summary) and not (
        action.result == NO_ROWS_RESULT and action.fingerprint in rerun and copies_sql(action.summary)
    ):
        return False
    asked.add(action.fingerprint)
    return True


def _split(
    kept: Iterable[ActionView], tick: int
) -> tuple[list[ActionView], list[ActionView], list[ActionView]]:
    """The actions of ``kept`` before heartbeat ``tick`` (the newest), those of the heartbeat
    before it, and those of ``tick`` but its bookkeeping (see :func:`_without_bookkeeping`); none
    at all when one of ``tick``'s failed: no idle wake-up nor a watcher's round."""
    actions = kept if isinstance(kept, list) else list(kept)
    start, first = heartbeat_bounds(actions, tick)
    newest = _got_past(actions[first:])
    if any(action.error is not None for action in newest):
        return [], [], []  # a failure: more than looks (most busy heartbeats)
    last = _got_past(actions[start:first])
    older = written(actions[heartbeat_bounds(actions, actions[start - 1].tick)[0] : start]) if start else ()
    return actions[:first], last, without_bookkeeping(newest, last, older, records(newest, actions[:start]))


def _got_past(actions: list[ActionView]) -> list[ActionView]:
    """``actions`` (one heartbeat's) without the failures of a call the same call answered later in
    them: a resolver's ``SERVFAIL`` twice, then the address. A failure retried past is no failure
    of the round, and its tries are one look."""
    if all(action.error is None for action in actions):
        return actions
    answered: set[str] = set()
    kept: list[ActionView] = []
    for action in reversed(actions):
        if action.error is None:
            answered.add(action.fingerprint)
        elif action.fingerprint in answered:
            continue
        kept.append(action)
    return kept[::-1]


def quiet_wakeup(
    kept: Iterable[ActionView], tick: int, timed: bool = True
) -> Literal["idle", "polled", "unchanged", "probed"] | None:
    """What heartbeat ``tick`` (the newest of ``kept``) was: ``"idle"``, an idle wake-up (no work
    came: its metric may stay flat), ``"polled"``, a watcher's round that saw something move
    (it only looked, each call once, asking again at least as many calls of the heartbeat before
    as new ones, and one of those answered anew: an A/B monitor's hourly round, the same list of
    experiments and each one's counts grown, after a heartbeat that failed nothing and asked each
    call once), or, ``timed`` (when it came is known: not a trace line without its time) and
    :data:`WOKE_AFTER` or more after the heartbeat before, ``"unchanged"``, a watcher's round
    that saw nothing move (see :func:`_unchanged`), or ``"probed"``, a monitor's round that
    failed where what it watches broke or told a person (:func:`.probes.probed`); else None.
    Looking is a watcher's job; a stuck agent does, fails or asks again within its heartbeat."""
    earlier, last, newest = _split(kept, tick)
    if _idle(earlier, _looks(newest), last):
        return "idle"
    if not newest or _asked(newest) is None:  # more than looks (most heartbeats): perhaps an alert
        return "probed" if timed and probe_round(kept, tick, WOKE_AFTER) else None
    looks = [action for action in last if not noted(action)]
    if _asked(looks) is None:
        return None  # the heartbeat before failed or asked a call twice: no round to poll again
    if timed and looks and newest[0].at - last[-1].at >= WOKE_AFTER and _unchanged(newest, looks, earlier):
        return "unchanged"
    calls = {action.fingerprint: action.result for action in last}
    return "polled" if _polled_anew(newest, calls) and not _taken_again(last, newest) else None


def _unchanged(newest: list[ActionView], looks: list[ActionView], earlier: list[ActionView]) -> bool:
    """Whether the wake-up ``newest`` (it only looked, each call once) asked the very calls of the heartbeat
    before (``looks``, each asked once, the newest of ``earlier``) and heard the very answers again (a
    certificate's days left, the same feed items). None may be silence but a listing's, a search's or git's
    (a shell gone dark answers so), name a state on its way (a job's "RUNNING": a wait that froze) or a job
    waiting its turn heard so :data:`TURN_WAIT` times running, or be work taken from a queue again."""
    if len(newest) != len(looks):
        return False
    calls = {action.fingerprint: action.result for action in looks}
    return all(
        calls.get(action.fingerprint, _NEVER) == action.result
        and not underway_result(action.result)
        and not (queued_result(action.result) and answered_alike(action, earlier) >= TURN_WAIT)
        and not takes(action.tool, action.summary)
        and not _dark(action)
        for action in newest
    )


def _dark(action: ActionView) -> bool:
    """Whether ``action`` answered silence though it is no listing, search or question of what is
    new (see :func:`~.detectors.calls.silence_answers`): a shell gone dark answers every command so
    (``ls -1 incoming/`` of an empty folder, a grep's "no match", ``git fetch`` with no new commits
    say nothing came)."""
    return action.output_len == 0 and not silence_answers(action.tool, action.summary)


def quiet_before(kept: Iterable[ActionView], tick: int, timed: bool = True) -> int:
    """The newest action of the heartbeat before ``tick`` when that one was a quiet wake-up (see
    :func:`quiet_wakeup`), else 0; or, when heartbeat ``tick`` opens by asking that wake-up's
    sources again and hearing nothing again, the last of those re-polls. It speaks for its looks
    and those before it as a rise of the metric does (see :mod:`.evidence`): a link checker's
    rounds, each idle, are no circles it went round when a broken link makes it file an issue at
    last, and an inbox that stayed empty at the wake-up a reminder went out is no search in vain."""
    actions = list(kept)
    end = len(actions)
    while end and actions[end - 1].tick >= tick:
        end -= 1
    start = end
    while start and actions[start - 1].tick == actions[end - 1].tick:
        start -= 1
    if start == end or not quiet_wakeup(actions[:end], actions[end - 1].tick, timed):
        return 0  # none, or no quiet wake-up (one that failed is told by _split's cheap test)
    sources = {mask_times(action.summary) for action in actions[start:end]}
    last = end
    while (
        last < len(actions) and heard_nothing(actions[last]) and mask_times(actions[last].summary) in sources
    ):
        last += 1
    return actions[last - 1].index


def idle_wakeup(kept: Iterable[ActionView], tick: int) -> bool:
    """Whether the actions of heartbeat ``tick`` (the newest of ``kept``) are an idle wake-up."""
    earlier, last, newest = _split(kept, tick)
    return _idle(earlier, _looks(newest), last)


def _looks(actions: list[ActionView]) -> list[ActionView]:
    """``actions`` but their pauses (see :func:`~.detectors.calls.pauses`; a long poll looks): a
    consumer's ``sleep`` after an empty poll does nothing."""
    return [action for action in actions if not pauses(action.tool, action.summary)]


def _idle(earlier: list[ActionView], newest: list[ActionView], last: list[ActionView]) -> bool:
    """:func:`idle_wakeup` for the actions ``earlier`` than its heartbeat, those of the heartbeat
    before (``last``) and its own ``newest`` (its waits aside): whether they only looked, each call
    once (a round's copy that matched no row again, see :func:`looked_once`), and heard nothing came."""
    if not newest or _asked(newest, {action.fingerprint for action in last}) is None:
        return False  # nothing looked at, or more than looks: work, a failure, a call twice
    # A source looked at before answered nothing: no work came; other silence (see _dark) is a
    # shell gone dark, and the heartbeat is no idle one.
    if any(map(_dark, newest)):
        return False
    empty = [a for a in newest if heard_nothing(a)]
    if not empty:
        return False
    asked = {action.fingerprint for action in earlier}
    if any(action.fingerprint in asked for action in empty):
        return True
    # Asked again since the last wake-up (``after:1710141306``, ``since=2024-03-11T07:00:02Z``):
    # the same source, its time moved on.
    sources = {mask_times(action.summary) for action in earlier}
    return any(mask_times(action.summary) in sources for action in empty)


class _Stretch(NamedTuple):
    """A ``no_progress`` finding's flat stretch: the heartbeat of the first of its last N measured
    samples, the actions of each heartbeat after it, and N."""

    first: int
    heartbeats: list[list[ActionView]]
    samples: int


def _flat_stretch(
    detector: object, kept: Iterable[ActionView], progress: Sequence[ProgressSample]
) -> _Stretch | None:
    """The flat stretch of ``detector``'s finding, or None when it is no ``no_progress`` or
    nothing was measured."""
    if not isinstance(detector, NoProgress):
        return None
    measured = [sample.tick for sample in progress if sample.value is not None][-detector.samples :]
    if not measured:
        return None
    stretch: dict[int, list[ActionView]] = {}
    for action in kept:
        if action.tick > measured[0]:  # the first sample measured what came before (a rise, perhaps)
            stretch.setdefault(action.tick, []).append(action)
    return _Stretch(measured[0], list(stretch.values()), detector.samples)


def spared(
    detector: object, kept: Iterable[ActionView], progress: Sequence[ProgressSample], turn: bool | None = True
) -> bool:
    """Whether ``detector`` is ``no_progress`` and its flat stretch is no busy work (see the module's
    docstring): no call at all from an agent that records its calls (one that records none has only its
    metric to be judged by), a watcher's rounds, a wait (scheduled, ``turn`` not true: each heartbeat a
    wake-up of the schedule, no model turn), a back-off (``turn`` false: a known wake-up, the schedule
    paused before it), an exploration, or, scheduled, an idle wake-up in it, or, a live agent's turns, a
    flat run of fewer than two actions a sample (see :func:`_thin`)."""
    kept, scheduled = list(kept), not turn
    found = _flat_stretch(detector, kept, progress)
    return found is not None and (
        (not found.heartbeats and bool(kept))  # an agent that records its calls made none: idle
        # A message in the very words of one before is no news of how the wait goes: it froze.
        or (_rounds(found.heartbeats) and not told_again(found.heartbeats, kept))
        or _next_work(found, kept)
        or (_waited(found, kept, scheduled) and not told_again(found.heartbeats, kept))
        or _backed_off(found, kept, turn is False)
        or explored(*found, kept)
        or (scheduled and _quiet_within(found, kept))
        or (not scheduled and _thin(detector, kept, progress))
    )


def _thin(detector: object, kept: list[ActionView], progress: Sequence[ProgressSample]) -> bool:
    """Whether the metric's flat run, however far back it goes, holds fewer than two actions a
    sample of ``no_progress``'s N. Said of a live agent's turns only: a Session's heartbeat is a
    burst of calls, and one whose model thinks longer than ``idle`` makes a heartbeat of each call,
    so four flat samples may be four calls of a fix underway (live round 44); a scheduled agent's
    heartbeat is a wake-up of the schedule its user chose, and N of them flat are judged."""
    assert isinstance(detector, NoProgress)
    values = [(sample.tick, sample.value) for sample in progress if sample.value is not None]
    if not values:
        return False
    first = values[-1][0]
    low = high = values[-1][1]
    for tick, value in reversed(values):
        low, high = min(low, value), max(high, value)
        if high - low >= detector.min_delta:
            break
        first = tick
    return sum(1 for action in kept if action.tick > first) < 2 * detector.samples


def _quiet_within(found: _Stretch, kept: list[ActionView]) -> bool:
    """Whether a heartbeat of the flat stretch ``found`` before its newest was an idle wake-up (it
    looked, and no work came): the metric was flat then because there was nothing to do."""
    ticks = sorted({beat[0].tick for beat in found.heartbeats})[:-1]
    return any(idle_wakeup([a for a in kept if a.tick <= tick], tick) for tick in ticks)


def watching(detector: object, kept: Iterable[ActionView], progress: Sequence[ProgressSample]) -> bool:
    """Whether ``detector`` is ``no_progress`` and the heartbeats of its flat stretch (after the
    first of its last N measured samples) each only looked (no act, no write, no failure, no call
    twice) and asked the same calls as the others: a watcher's rounds, nothing to do yet."""
    found = _flat_stretch(detector, kept, progress)
    return found is not None and _rounds(found.heartbeats)


def _rounds(heartbeats: list[list[ActionView]]) -> bool:
    """Whether ``heartbeats`` (a flat stretch's) are a watcher's rounds (see :func:`watching`)."""
    if not heartbeats:
        return False
    # Rounds that wait (a sleep after each poll) are rounds when what they watch moved in them (a
    # build queued, running, passed); a frozen job polled between sleeps stays judged.
    looks = [_looks(beat) for beat in heartbeats]
    if looks != heartbeats and not _moved(looks):
        return False
    heartbeats = looks
    # The first may also start what the others watch (a job, a migration, a CI run); the others
    # may keep the agent's bookkeeping as the one before did (the poll's count, its time).
    rounds = [_asked([action for action in heartbeats[0] if not noted(action)])]
    rounds += [
        _asked(untold(now, then, _older(heartbeats, i))) for i, (then, now) in enumerate(pairwise(heartbeats))
    ]
    if not rounds[0] or any(asked != rounds[0] for asked in rounds):
        return False
    # The same messages taken from a queue again are work left undone, no watcher's quiet look.
    return not any(_taken_again(then, now) for then, now in pairwise(heartbeats))


def _next_work(found: _Stretch, kept: list[ActionView]) -> bool:
    """Whether the flat stretch ``found`` of ``kept`` was a watcher's rounds up to its newest
    heartbeat, which began the next work (an act the run had not done, nothing failing: a rollout's
    next wave promoted once the soak ended): the metric measures that work from then on."""
    *before, newest = found.heartbeats or [[]]
    if not before or not newest or any(a.error is not None for a in newest) or not _rounds(before):
        return False
    done = {a.shape for a in kept if a.tick < newest[0].tick}  # numbers masked: bookkeeping is no news
    return any(noted(a) and a.shape not in done for a in newest)


def _moved(heartbeats: list[list[ActionView]]) -> bool:
    """Whether a call asked in ``heartbeats`` answered differently at one of them than before."""
    answers: dict[str, str | None] = {}
    for action in (action for beat in heartbeats for action in beat):
        if answers.setdefault(action.fingerprint, action.result) != action.result:
            return True
    return False


def _older(heartbeats: list[list[ActionView]], i: int) -> frozenset[str]:
    """The writes of the heartbeat before the ``i``-th pair of ``heartbeats`` (see
    :func:`.bookkeeping.written`)."""
    return written(heartbeats[i - 1]) if i else frozenset()


def _taken_again(before: list[ActionView], heartbeat: list[ActionView]) -> bool:
    """Whether a call of ``heartbeat`` took from a queue what the same call took in ``before``."""
    took = {
        a.fingerprint: a.result
        for a in before
        if takes(a.tool, a.summary) and a.output_len and not heard_nothing(a)
    }
    return any(took.get(action.fingerprint, _NEVER) == action.result for action in heartbeat)


def _waited(found: _Stretch, kept: list[ActionView], scheduled: bool = False) -> bool:
    """Whether the flat stretch ``found`` of ``kept`` is a wait (see the module's docstring): each
    heartbeat after its first waited, otherwise only looked, and a look asked before answered anew
    (or all its looks were new: the watch of a run just started begins)."""
    heartbeats = found.heartbeats
    if len(heartbeats) < 2:
        return False
    # What each look answered before the heartbeats judged: by its shape (a wait's looks) and as
    # the very call (a wake-up's), each call's last answer.
    answers: dict[str, set[str | None]] = {}
    calls: dict[str, str | None] = {}
    for action in kept:
        if action.tick >= heartbeats[1][0].tick:
            break
        answers.setdefault(action.shape or action.fingerprint, set()).add(action.result)
        calls[action.fingerprint] = action.result
    for i, (then, now) in enumerate(pairwise(heartbeats)):
        older = _older(heartbeats, i)
        if not any(waits(a.tool, a.summary) for a in now):
            # A scheduled wake-up is a wait the calls do not show: the very call asked at an
            # earlier one answering anew (a job's page moving) is the thing waited on moving.
            # Right after the heartbeat that started it (an act), the watch of what it started
            # begins: a look never asked before is news as well.
            begins = now is heartbeats[1] and any(noted(action) for action in then)
            if not scheduled or not _polled_anew(untold(now, then, older), calls, begins):
                return False
            continue
        moved = again = False  # a look asked before answered anew; a look asked before at all
        for action in without_bookkeeping(now, then, older):
            wait = waits(action.tool, action.summary)
            if action.error is not None or (noted(action) and not wait) or rereads(action.result):
                return False
            if wait and not action.output_len:
                continue  # a pause that shows nothing; one that shows something (sleep 60 && look) looks
            # By its shape: the same look at a run whose id is new, or behind another sleep's length.
            before = answers.setdefault(action.shape or action.fingerprint, set())
            again = again or bool(before)
            moved = moved or (bool(before) and action.result not in before)
            before.add(action.result)
        if again and not moved:  # only new looks: the watch of what was just started begins
            return False
        calls.update((a.fingerprint, a.result) for a in now)
    return True


def _backed_off(found: _Stretch, kept: list[ActionView], scheduled: bool = False) -> bool:
    """Whether the flat stretch ``found`` of ``kept`` waited out one call's failure (a 429): it paused
    (a ``sleep``; ``scheduled``, wake-ups not trying the call asking the same looks), only looked and
    kept its record (``log.info``), and its one failing call (a 503 with its ``retry-after`` or
    without) was tried in the run no more than a back-off's tries (see
    :mod:`.detectors.recurring_error`); tried more, it will not pass: the metric is judged."""
    actions = [action for heartbeat in found.heartbeats for action in heartbeat]
    failures = {a.fingerprint for a in actions if a.error is not None}  # one call's, however worded
    rounds = [frozenset(a.fingerprint for a in b) for b in found.heartbeats if all(not a.error for a in b)]
    waited = scheduled and len(rounds) > 1 and len(set(rounds)) == 1  # the same looks, wake-up after wake-up
    if len(failures) != 1 or not (waited or any(pauses(a.tool, a.summary) for a in actions)):
        return False
    if any(noted(a) and not (waits(a.tool, a.summary) or keeps_record(a.tool, a.summary)) for a in actions):
        return False  # work done while it waited: busy
    call = next(iter(failures))
    tries = sum(1 for a in kept if a.fingerprint == call and a.error is not None)
    return tries <= RecurringError.threshold + BACKOFF_EXTRA


def _polled_anew(heartbeat: list[ActionView], calls: dict[str, str | None], begins: bool = False) -> bool:
    """Whether ``heartbeat`` only looked (no act, no write, no failure, no call twice), asked again
    at least as many calls asked before (the very calls, ``calls``: each one's last answer) as new
    ones (a crawl fetches new pages), and one of those answered anew, or, when the watch of what
    the heartbeat before started ``begins``, one was asked for the first time (a job's status
    after it was submitted); ``calls`` is brought up to date."""
    if _asked(heartbeat) is None:  # more than looks: an act, a write, a failure, a call twice
        return False
    anew = False
    again = 0  # the calls asked before; the others are new (a log tail looked at once more)
    for action in heartbeat:
        before = calls.get(action.fingerprint, _NEVER)
        if before is not _NEVER:
            again += 1
            anew = anew or before != action.result
        calls[action.fingerprint] = action.result
    return (anew or (begins and again < len(heartbeat))) and 2 * again >= len(heartbeat)


_NEVER = object()  # a call not asked before


def exploring(detector: object, kept: Iterable[ActionView], progress: Sequence[ProgressSample]) -> bool:
    """Whether ``detector`` is ``no_progress`` and its flat stretch is steps of a search: each look
    answered by what the run had not seen before (an error's words count as its answer; silence
    is no news), no act or write done before again, and either fewer than two actions a sample,
    not all one call with its numbers moving, or more, only looks, no one call most of them."""
    kept = list(kept)
    found = _flat_stretch(detector, kept, progress)
    return found is not None and explored(*found, kept)
