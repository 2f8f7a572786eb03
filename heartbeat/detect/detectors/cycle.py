"""``cycle``: long, noisy cycles and wandering: the window keeps returning to what it has seen.

A strict ``loop`` needs the same cycle twice back to back. Real agents go
round cycles of 10-20 steps, insert an odd step (a note whose text changes
every time), or wander back to places and observations they have already
seen. Each action's key is its masked call plus its result (the exact
call when the result is at most 10 characters); an action is a
*revisit* when its key occurred earlier in the last W actions. Fires when
at least N of the last W actions are revisits spread over at least two
different calls (one call again and again is ``recurring`` or ``repeat``),
or sooner when the agent re-checks: since it last wrote, acted or waited,
:data:`~.rechecks.RECHECKS` calls went back to what they answered since then
(see :mod:`.rechecks`: the suite rerun and the diff shown again and again
after the work is done), or when the share of revisits grows: at least 6 of the last 10
actions revisit a key seen earlier among those 10 (an agent idling
through look / inventory / examine, seeing what it has seen), or 6 of the
last 10 in the window that are not the agent's notes (``think``): a note
is the agent talking to itself, neither an observation nor a revisit, and
one worded anew between every look would otherwise hide the idling.
A conversation going round is the same thing in words: :data:`TALK` messages to
a person in a row (``respond``, ``send_message``) that neither told nor heard
anything the window had not seen (no id, number, amount or address in a
message or its answer that was not in one before, and no more than
:data:`TOLD` of a message's words said for the first time; between them only
notes and calls answered as before) are one request asked again in other
words, the person's every answer worded anew ("I don't have the order
number", "Like I said, I don't have it"). A person who gives what was asked
for gives data; a walkthrough's next step ("now tap Mobile Network") says
something new, however briefly the person answers "ok". So is a promise never kept:
:data:`PROMISES` messages saying an act is under way (:func:`~.promises.promises`: "I'm
processing your return now", "I'll enable roaming on your line now") while nothing moved between
them (no call answered anything new): the agent tells the person it acts instead of acting.
And so is a person asked again for what they gave: :data:`RETOLD` answers saying they had
already said it (:func:`~.retold.retold`: "I just told you, it's #W4817420", "for the third
time") while nothing moved between them, and a message after them that asks again or draws
another such answer: the agent is not hearing the person. And so is a person sent through the
same steps again: of the last :data:`REDONE_OF` acts a person reports doing at the agent's word
(tau2's ``[user] toggle_airplane_mode({}) -> Airplane Mode is now OFF.``), :data:`REDONE` redid
one with the same result (numbers masked: a battery's level) since the conversation last moved,
a walkthrough that brings nothing new, the customer's "still no service" after every round. A
step that shows something new (mobile data now on) or a call that answers something new (data
added to the line) moves it: a walkthrough fixing one problem after another re-runs the same
status check and speed test after each fix, and each fix is news.
A failed call without arguments (a harness's complaint about a malformed turn) holds its place
in the window but has no key (N + 3 back to back are a ``repeat``); so does a call that waits
(a poller's ``sleep 60``), and an answer of nothing (an empty list, silence: a poll ``since`` its
cursor finding nothing new again saw nothing; runs of them are ``empty``'s). How writes, acts and
all-clear reports are keyed: :func:`_key_of`.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ...core.models import Anomaly
from .calls import CONFIRMATION_LONGEST, acts_by_name, is_note, silent_by_design, waits
from .commands import steps_bisect
from .consulted import unconsulted
from .contract import (
    ActionTracker,
    ActionView,
    History,
    StepTracker,
    Windowed,
    attempted_nothing,
    frozen_names,
    make_anomaly,
    need_int,
    tail_of,
)
from .empty import is_empty_answer
from .rechecks import RecheckWindow, rechecks
from .said import all_clear_result
from .talk import (
    MARK_ASKED,
    MARK_PROMISED,
    MARK_RETOLD,
    PROMISES,
    REDONE,
    REDONE_OF,
    RETOLD,
    TALK,
    Beat,
    beat,
    talked,
)
from .volatile import mask_times
from .window import KeyWindow, count_revisits

__all__ = ["Cycle", "CycleTracker"]


def _key_of(action: ActionView, before: Hashable = None, stepped: bool = False) -> Hashable:
    """An action's key, ``before`` the key of the action before it; None for a call that attempted
    nothing, waits (a poller's ``sleep``) or was answered nothing: a position, never a revisit. A
    write answered ``INSERT 0 3`` or ``ok`` is keyed with the look before it: a monitor storing each
    round's new readings carries their news; the same write after the same look is a revisit. A
    tool named for an act, confirmed in a line ("Ticket closed."), is keyed by its call, times
    masked: its numbers name what it acted on (ticket 9004, then 9005), a timestamp does not. An
    all-clear is each call's own verdict ("OK: checksum matches", file after file): the exact
    call, as a short answer (until 2026-12-06 a backup verifier was a cycle at its fifth turn).
    A call right after a bisect's step (``stepped``: see :func:`~.commands.steps_bisect`) is keyed
    with that step, which names the commit checked out: the test passing at one commit and failing
    at the next is each commit's answer, and the same answer at the same commit is a revisit."""
    key = _plain_key(action, before)
    if stepped and key is not None and before is not None:
        return (*key[:2], before)
    return key


def _plain_key(action: ActionView, before: Hashable) -> tuple[Hashable, ...] | None:
    """:func:`_key_of` but for a call after a bisect's step."""
    length = action.output_len
    if attempted_nothing(action) or waits(action.tool, action.summary):
        return None
    if is_empty_answer(length, action.result):
        return None
    if length is not None and length > _SHORT and not all_clear_result(action.result):
        if length > CONFIRMATION_LONGEST or is_note(action.tool):  # a page: the cheap test first
            return (_dated(action), action.result)
        act = acts_by_name(action.tool)  # by its name alone (cached): a command's text is not read
        return (mask_times(action.summary), action.result) if act else (_dated(action), action.result)
    # A short answer, an all-clear or none (a failure) cannot tell two pages apart: the exact call.
    if before is not None and silent_by_design(action.tool, action.summary) and not is_note(action.tool):
        return (action.fingerprint, action.result, before)
    return (action.fingerprint, action.result)


# A calendar day a call names (2026-03-05, not a moment: a time of day after it is the call's own).
_DAY = re.compile(r"(?<!\d)\d{4}-\d\d-\d\d(?![\dT]| \d\d:)")


def _dated(action: ActionView) -> Hashable:
    """``action``'s shape with the days its call names: a daily check asks about another day each
    morning (``run_date = '2026-03-05'``), however alike its answer ("0 flags"); the shape drops
    every digit."""
    summary = action.summary
    if "-" not in summary:  # the cheap test first: most calls name no day
        return action.shape
    days = _DAY.findall(summary)
    return (action.shape, *days) if days else action.shape


def _keys(actions: Sequence[ActionView], n: int) -> list[Hashable]:
    """The keys of the newest ``n`` of ``actions``, each keyed after the one before it."""
    keys: list[Hashable] = []
    stepped = False
    for action in actions[-n - 1 :]:
        keys.append(_key_of(action, _base(keys[-1]) if keys else None, stepped))
        stepped = _steps(action)
    return keys[-n:]


def _steps(action: ActionView) -> bool:
    """Whether ``action`` is a bisect's step (the substring test first: almost no call is)."""
    return "bisect" in action.summary and steps_bisect(action.tool, action.summary)


def _base(key: Hashable) -> Hashable:
    """``key`` without the look it was written after: what the next write is keyed with."""
    return key[:2] if isinstance(key, tuple) and len(key) == 3 else key


def _share(keys: list[Hashable]) -> tuple[int, int] | None:
    """The revisits among ``keys`` (the newest last, and a key) and how many keys come more than
    once, when the newest is a revisit and they reach the growing share (:data:`RECENT_SHARE`,
    two keys or more); else None."""
    counts, revisits, repeated = count_revisits(keys)
    if counts[keys[-1]] >= 2 and revisits >= RECENT_SHARE and repeated >= 2:
        return revisits, repeated
    return None


_SHORT = 10  # characters: what recurring's min_chars and empty's max_chars default to
RECENT = 10
"""The newest actions the growing share of revisits is judged on."""
RECENT_SHARE = 6
"""Revisits among the :data:`RECENT` newest actions that trip ``cycle`` before N."""
_NOTHING_MOVED = " and no call since answered anything new"
_ASKING_AGAIN = "asking the person again: act on what they have said, or hand the conversation over"


@dataclass(frozen=True)
class Cycle(Windowed):
    """``cycle``: N of the last W actions revisit a call+result seen earlier in the window, or a
    conversation goes round (see the module docstring)."""

    threshold: int = 10
    window: int = 30
    exempt: Collection[str] = frozenset()
    kind: str = field(default="cycle", init=False, repr=False)

    def __post_init__(self) -> None:
        need_int("cycle", "threshold", self.threshold)
        need_int("cycle", "window", self.window, self.threshold + 1)
        object.__setattr__(self, "exempt", frozen_names(self.exempt))

    @property
    def history_needed(self) -> int:
        """Past actions this detector needs to see."""
        return self.window + 1  # the window and the action before it, whose key a write's holds

    def check(self, history: History, now: datetime) -> Anomaly | None:
        """Whether the newest action is a revisit that brings the window's revisits to N, or the
        recent share of revisits to :data:`RECENT_SHARE`, or a message to a person that ends
        :data:`TALK` telling and hearing nothing new."""
        last = history.last
        if last is None or last.tool in self.exempt:
            return None
        pool = [a for a in history.actions if a.tool not in self.exempt]
        acts = pool[-self.window :]
        seq = _keys(pool, len(acts))
        if last.facts is not None:  # a message to a person
            talk = talked(beat(a, None if is_note(a.tool) else key) for a, key in zip(acts, seq, strict=True))
            found = self._conversation(last, talk, history.tick, now)
            if found is not None:
                return found
        if seq[-1] is None:
            return None
        newest = seq[-1]
        counts, revisits, repeated = count_revisits(seq)
        if counts[newest] < 2:
            return None
        if revisits >= self.threshold and repeated >= 2:
            found = self._revisited(last, seq, acts, history.tick, now)
            if found is not None:
                return found
        size = min(RECENT, self.window)
        share = _share(seq[-size:])
        if share is not None:
            return self._report(last, *share, min(len(seq), size), history.tick, now)
        again = rechecks(acts, seq)
        if again is not None:
            return self._report(last, *again, history.tick, now, rechecked=True)
        if is_note(last.tool):
            return None
        others = [key for a, key in zip(acts, seq, strict=True) if key is not None and not is_note(a.tool)]
        others = others[-size:]
        share = _share(others)
        if share is not None:
            return self._report(last, *share, len(others), history.tick, now, notes=True)
        return None

    def tracker(self, history: History) -> ActionTracker:
        """An incremental ``check`` seeded from ``history``."""
        return CycleTracker(self, history)

    def _conversation(
        self, action: ActionView, counts: tuple[int, int, int, int], tick: int, at: datetime
    ) -> Anomaly | None:
        """The finding of a conversation going round, ended by the message ``action``, whose
        :func:`.talk.talked` counts are ``counts``; None when it moves."""
        talk, promised, again, redone = counts
        if talk >= TALK:
            return self._talk(action, talk, tick, at)
        marks = (action.facts or "").split()
        if again >= RETOLD and (MARK_RETOLD in marks or MARK_ASKED in marks):
            said = f"answers from the person said they had already said it{_NOTHING_MOVED}"
            found = ("retold", again, RETOLD, said, "asking again what was answered", _ASKING_AGAIN)
        elif redone >= REDONE:
            said = f"of the last {REDONE_OF} acts the person reported doing redid one, showing the same"
            avoid = "asking the person to redo what they did: try another fix, or hand the conversation over"
            found = ("redone", redone, REDONE, said, "the same steps asked again", avoid)
        elif promised >= PROMISES and MARK_PROMISED in marks:
            said = f"messages to a person said an act was under way{_NOTHING_MOVED}"
            avoid = "saying it is being done: call the tool that does it, or say you cannot"
            found = ("promises", promised, PROMISES, said, "a promise never kept", avoid)
        else:
            return None
        name, count, threshold, said, meaning, avoid = found
        return make_anomaly(
            "cycle",
            f"{count} {said}: {meaning}; last: {action.summary}",
            tick=tick,
            at=at,
            action=action,
            evidence={
                name: count,
                "window": self.window,
                "threshold": threshold,
                "call": action.summary,
                "avoid": avoid,
            },
        )

    def _talk(self, action: ActionView, talk: int, tick: int, at: datetime) -> Anomaly:
        return make_anomaly(
            "cycle",
            f"{talk} messages to a person in a row told and heard nothing the last {self.window} "
            f"actions had not (no new id, number or address): the same request in other words; "
            f"last: {action.summary}",
            tick=tick,
            at=at,
            action=action,
            evidence={
                "messages": talk,
                "window": self.window,
                "threshold": TALK,
                "call": action.summary,
                "avoid": _ASKING_AGAIN,
            },
        )

    def _revisited(
        self,
        action: ActionView,
        keys: Sequence[Hashable],
        acts: Sequence[ActionView],
        tick: int,
        at: datetime,
    ) -> Anomaly | None:
        """The finding of N revisits among the window's ``keys`` (one for each of ``acts``, the
        newest ``action`` last), a reference consulted before each new item not counted (see
        :func:`~.consulted.unconsulted`: a writer's style guide read before each new section);
        None when the revisits left fall short of it."""
        seq = unconsulted(keys, acts)
        counts, revisits, repeated = count_revisits(seq)
        if seq[-1] is None or counts[seq[-1]] < 2 or revisits < self.threshold or repeated < 2:
            return None
        return self._report(action, revisits, repeated, len(seq), tick, at)

    def _report(
        self,
        action: ActionView,
        revisits: int,
        repeated: int,
        span: int,
        tick: int,
        at: datetime,
        *,
        notes: bool = False,
        rechecked: bool = False,
    ) -> Anomaly:
        actions = "actions other than notes" if notes else "actions"
        if rechecked:
            actions += " since the last write, act or wait"
        return make_anomaly(
            "cycle",
            f"{revisits} of the last {span} {actions} went back to a call and result already seen "
            f"({repeated} different ones, not back to back): going round in circles; last: {action.summary}",
            tick=tick,
            at=at,
            action=action,
            evidence={
                "revisits": revisits,
                "distinct": repeated,
                "window": self.window,
                "threshold": self.threshold,
                "call": action.summary,
                # One hint for the whole cycle (the policy compares it with the last one): a
                # cycle found again in the next stuck heartbeat is the agent still going round.
                "avoid": "going back to calls whose results you have already seen",
            },
        )


class CycleTracker(StepTracker):
    """A key window of masked call+result keys, counting revisits.

    The share of revisits among the newest actions (all, and those that are
    not notes) is counted from the window's newest keys only when the newest
    key is a revisit: most actions are not, and two more windows pushed at
    every action would cost more than counting a few keys at those.
    """

    __slots__ = (
        "_acts",
        "_beats",
        "_before",
        "_det",
        "_exempt",
        "_keys",
        "_notes",
        "_position",
        "_since",
        "_size",
        "_stepped",
    )

    def __init__(self, det: Cycle, history: History) -> None:
        self._det = det
        self._exempt = det.exempt
        self._keys = KeyWindow(det.window)
        self._size = min(RECENT, det.window)  # the newest keys: the growing share
        self._notes: deque[int] = deque(maxlen=det.window)  # the positions of the notes (rare)
        self._acts: deque[ActionView] = deque(maxlen=det.window)  # read only at N revisits
        self._position = 0
        self._beats: deque[Beat] = deque(maxlen=det.window)  # read only at a message
        self._since = RecheckWindow(det.window)  # the keys since the agent last changed anything
        self._before: Hashable = None  # the key of the newest action, which a write's holds
        seed = tail_of(history.actions, det.window + 1, det.exempt)
        self._stepped = False  # whether the newest action stepped a bisect: see _key_of
        if len(seed) > det.window:
            first = seed.pop(0)
            self._before = _base(_key_of(first))
            self._stepped = _steps(first)
        for action in seed:
            self._push(action)

    def _push(self, action: ActionView) -> int:
        """Add an action's key to the window: its count in the window."""
        key = _key_of(action, self._before, self._stepped)
        self._before = _base(key)
        self._stepped = _steps(action)
        self._position += 1
        note = is_note(action.tool)
        if note:
            self._notes.append(self._position)
        self._beats.append(beat(action, None if note else key))
        self._acts.append(action)
        self._since.push(action, key)
        return self._keys.push(key)

    def _others(self) -> list[Hashable]:
        """The newest keys in the window that are not notes, at most the newest share's, oldest first."""
        position = self._position
        notes = set(self._notes)  # those older than the window match no position in it
        found: list[Hashable] = []
        for at, key in enumerate(reversed(self._keys.newest())):
            if key is not None and position - at not in notes:
                found.append(key)
                if len(found) == self._size:
                    break
        found.reverse()
        return found

    def step(
        self, action: ActionView, tool: str, fp: str, length: int | None, error: str | None, report: bool
    ) -> Anomaly | None:
        """:meth:`push` with the action's fields already read (see ``BuiltinStep``)."""
        if tool in self._exempt:
            return None
        count = self._push(action)
        if not report:
            return None
        if action.facts is not None:  # a message to a person
            found = self._det._conversation(action, talked(self._beats), action.tick, action.at)
            if found is not None:
                return found
        if count < 2:
            return None
        keys = self._keys
        if keys.revisits >= self._det.threshold and keys.repeated >= 2:
            found = self._det._revisited(action, keys.newest(), self._acts, action.tick, action.at)
            if found is not None:
                return found
        newest = keys.newest(self._size)
        share = _share(newest)
        if share is not None:
            return self._det._report(action, *share, len(newest), action.tick, action.at)
        again = self._since.found(newest[-1], keys.revisits)
        if again is not None:
            return self._det._report(action, *again, action.tick, action.at, rechecked=True)
        if is_note(tool):
            return None
        others = self._others()
        share = _share(others)
        if share is not None:
            return self._det._report(action, *share, len(others), action.tick, action.at, notes=True)
        return None
