"""``repeat``: the same call with the same result, N times in a row.

Output-aware: a poll or a "scroll down" whose answer moves on is not a
repeat (that is ``near_repeat``'s business once it goes on and on); the
same call answered the same way again is, and so is the same call failing
again, whatever the error says, unless it failed as before and what it
reports moved on (a status poll timing out while the replicas come up). An
action that reports no output repeats on its call alone, as do records
saved before results were kept, and so does a message to a person
(``respond``, ``send_message``): the same words sent again are no news,
however the person words each answer. A long poll that found nothing yet (an
idle queue worker's receive with ``wait_s``, answered ``{"messages": []}``)
is waiting for work, no repeat.

A turn the harness rejected (a failed call without arguments: "exactly one
action, please") needs N + 3 in a row: models slip into a few empty or
malformed replies now and then and come out of them at the harness's word;
one that goes on spinning keeps the harness answering it to its limit.

A call heartbeat refused before it ran (its error :data:`REFUSED`: a framework
adapter's model asked again for a call it was told not to make) is a repeat at
once, going on with the run of that call whatever it answered before: the model
is not listening, and the heartbeat that holds only refusals is stuck, not
quiet (two such once cleared the recovery).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ...config.file import ToolThreshold
from ...core.models import REFUSED, Anomaly
from .calls import speaks
from .contract import (
    ActionTracker,
    ActionView,
    History,
    StepTracker,
    attempted_nothing,
    frozen_names,
    make_anomaly,
    need_int,
    times,
)
from .empty import idle_poll, is_empty_answer
from .volatile import mask_volatile

__all__ = ["MALFORMED_EXTRA", "Repeat", "RepeatTracker"]

MALFORMED_EXTRA = 3
"""How many more than N turns the harness rejected in a row (see the module docstring) make a repeat."""


_Link = tuple[str, str | None, str | None]


def _link(tool: str, fingerprint: str, result: str | None, error: str | None) -> _Link:
    """An action as a run of repeats reads it: the call and its result as one key (the call alone
    when there is no result or it is a person's answer to a message, or when it failed), and for
    a failure its error and result."""
    if error is not None:
        return (f"{fingerprint}\x00!", error, result)
    return (fingerprint if result is None or speaks(tool) else f"{fingerprint}\x00{result}", None, None)


_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")  # a number standing alone: a count, a percentage
_DIGITS = re.compile(r"\d+")


def _goes_on(before: _Link, after: _Link) -> bool:
    """Whether ``after`` goes on with a run of repeats ending at ``before``: the same call with the
    same result, or the same call failing again whatever the error says (the harness answering a
    third identical lookup with "invalid action"), unless it failed as before and what it reports
    moved on (a status poll timing out while it reports 1, then 2 of 8 replicas ready)."""
    if after[1] == REFUSED:  # the same call asked again, whatever it answered when it ran
        return after[0].partition("\x00")[0] == before[0].partition("\x00")[0]
    if after[0] != before[0] or after[1] is None:
        return after[0] == before[0]
    if after[1] == before[1]:
        return after[2] == before[2]
    # Another error: other words go on (the harness's "invalid action"), and so do the same words
    # with only their times and ids moved (a request's "req_c9eb..." is a word); the same words whose
    # numbers moved, a number standing alone among them, report something that moves (a rollout's
    # status: 1, then 2 of 8 replicas ready; a vacuum's "2 of 12 tables (current: invoices_2)").
    now, then = mask_volatile(after[1]), mask_volatile(before[1] or "")
    if now == then or _DIGITS.sub("#", now) != _DIGITS.sub("#", then):
        return True
    return _NUMBER.findall(now) == _NUMBER.findall(then)  # only a name's digits moved ("invoices_2")


def _newest_run(actions: Sequence[ActionView], skip: Collection[str]) -> tuple[_Link | None, int]:
    """The newest action's link (None when there is none) and how many actions, back from it, go on
    with its run; tools in ``skip`` are passed over, a long poll that found nothing yet ends it."""
    newest: _Link | None = None
    after: _Link | None = None
    run = 0
    for action in reversed(actions):
        if action.tool in skip:
            continue
        if idle_poll(action, action.output_len):
            break
        link = _link(action.tool, action.fingerprint, action.result, action.error)
        if after is not None and not _goes_on(link, after):
            break
        newest = newest or link
        after = link
        run += 1
    return newest, run


@dataclass(frozen=True)
class Repeat:
    """``repeat``: the last N actions are one call with one result (N per tool, or ``"off"``)."""

    threshold: int = 3
    tools: Mapping[str, ToolThreshold] = field(default_factory=dict)
    exempt: Collection[str] = frozenset()
    polling: Collection[str] = frozenset()
    kind: str = field(default="repeat", init=False, repr=False)
    _limits: dict[str, int] = field(init=False, repr=False, compare=False)
    _skip: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        need_int("repeat", "threshold", self.threshold)
        limits: dict[str, int] = {}
        off = set()
        for tool, value in dict(self.tools).items():
            if value == "off":
                off.add(tool)
            else:
                need_int("repeat", f"tools.{tool}", value)
                limits[tool] = int(value)
        object.__setattr__(self, "tools", dict(self.tools))
        object.__setattr__(self, "exempt", frozen_names(self.exempt))
        object.__setattr__(self, "polling", frozen_names(self.polling))
        object.__setattr__(self, "_limits", limits)
        object.__setattr__(self, "_skip", frozenset(self.exempt) | off)

    def __hash__(self) -> int:
        return hash((self.threshold, tuple(sorted(self.tools.items())), self.exempt, self.polling))

    @property
    def history_needed(self) -> int:
        """Past actions this detector needs to see."""
        return max([self.threshold + MALFORMED_EXTRA, *self._limits.values()])

    @property
    def stretch(self) -> int:
        """The newest actions a finding speaks for: its N calls (a run past a rise is judged again)."""
        return self.threshold

    def threshold_for(self, tool: str) -> int | None:
        """The threshold that applies to ``tool``; None when the tool is off or exempt."""
        if tool in self._skip:
            return None
        return self._limits.get(tool, self.threshold)

    def limit_for(self, action: ActionView) -> int | None:
        """The run that makes ``action`` a repeat: :meth:`threshold_for` its tool, N + 3 for a turn
        the harness rejected (unless its tool has a threshold of its own); None: never."""
        limit = self.threshold_for(action.tool)
        if limit is None or action.tool in self._limits or not attempted_nothing(action):
            return limit
        return limit + MALFORMED_EXTRA

    def check(self, history: History, now: datetime) -> Anomaly | None:
        """Whether the newest action completes a run of N identical calls with identical results."""
        last = history.last
        if last is None or (limit := self.limit_for(last)) is None:
            return None
        run = _newest_run(history.actions, self._skip)[1]
        return self._report(last, run, history.tick, now) if run >= limit or last.error == REFUSED else None

    def tracker(self, history: History) -> ActionTracker:
        """An incremental ``check`` seeded from ``history``."""
        return RepeatTracker(self, history)

    def _report(self, action: ActionView, run: int, tick: int, at: datetime) -> Anomaly:
        limit = self.limit_for(action)
        if action.error is not None:
            same = "the same arguments, failing each time"
        elif action.result is None:
            same = "the same arguments"
        elif speaks(action.tool):
            same = "the same message, whatever the answers"
        else:
            same = "the same arguments and the same result"
        if action.error == REFUSED:
            message = (
                f"{action.summary} was asked for again after the model was told not to call it "
                f"(refused before it ran; {times(run)} in a row)"
            )
        else:
            message = f"{action.summary} was called {times(run)} in a row with {same} (limit {limit})"
        return make_anomaly(
            "repeat",
            message,
            tick=tick,
            at=at,
            action=action,
            evidence={
                "count": run,
                "threshold": limit,
                "call": action.summary,
                "fingerprint": action.fingerprint,
                "avoid": action.summary,
            },
        )


class RepeatTracker(StepTracker):
    """Run length of the newest call+result key."""

    __slots__ = ("_det", "_floor", "_last", "_limits", "_run", "_skip", "_threshold")

    def __init__(self, det: Repeat, history: History) -> None:
        # The detector's settings copied into slots: push runs for every recorded action.
        self._det = det
        self._skip = det._skip
        self._limits = det._limits
        self._threshold = det.threshold
        # No run shorter than the lowest threshold trips: most pushes need no per-tool lookup.
        self._floor = min([det.threshold, *det._limits.values()])
        # Seeded from the newest end: only the current run matters, not the whole history.
        self._last, self._run = _newest_run(history.actions, self._skip)

    def step(
        self,
        action: ActionView,
        tool: str,
        fp: str,
        length: int | None,
        error: str | None,
        report: bool,
    ) -> Anomaly | None:
        """:meth:`push` with the action's fields already read (see :data:`BuiltinStep`)."""
        if tool in self._skip:
            return None
        # A poll's "nothing yet" is first an answer of nothing, which most answers are not: one call
        # to tell them, where idle_poll would make two.
        if is_empty_answer(length, action.result) and idle_poll(action, length):
            self._last = None
            self._run = 0
            return None
        link = _link(tool, fp, action.result, error)
        last, self._last = self._last, link
        if last is not None and _goes_on(last, link):
            run = self._run = self._run + 1
        else:
            self._run = 1
            if self._floor > 1 and error != REFUSED:
                return None
            run = 1
        if error == REFUSED:  # at once (see the module docstring)
            return self._det._report(action, run, action.tick, action.at) if report else None
        if not report or run < self._floor or run < self._limits.get(tool, self._threshold):
            return None
        if error is not None and run < (self._det.limit_for(action) or 0):  # a rejected turn: N + 3
            return None
        return self._det._report(action, run, action.tick, action.at)

    def slide(self, kept: Sequence[ActionView]) -> bool:
        """Become what a tracker seeded from ``kept``, the end of what it took, would be; False: it cannot.

        A run longer than ``kept`` covers all of it: seeded from it, the run
        would be that long. With skipped tools the run counts only some of them.
        """
        if self._skip:
            return False
        self._run = min(self._run, len(kept))
        return True
