"""``empty``: calls that ask for something get nothing back, N times in a row.

Two kinds of answer count:

* an *empty* one (``""``, whitespace, ``[]``, ``{}``, ``null``, ``None``,
  ``n/a``, "no results", "not found", ...) to a call that asks for
  something, whatever it answered before: a chat tool answering nothing, a
  listing tool answering ``[]`` (or an envelope around nothing,
  ``{"items": []}``) to filter after filter, a shell gone dark;
* a short one (at most C characters) from a call of a shape (see
  :mod:`.fingerprints`: the call with its digits left out) that has
  answered with more than C characters before in the kept history: a poll
  or a paged read that went quiet.

A run of calls whose arguments differ only in their numbers (each call a
new one: a flight search date after date, direct or with a stop, a page
after the last, a poll ``since=<timestamp>``) needs two more: "none that
day", "no page 7" and "nothing new" answer what was asked, and a working
agent tries a few; so does a run of searches finding nothing (``grep``,
``rg``, ``find``: their silence says "no match", and a working agent tries
a few names), and so does a tool named for searching (``search``,
``wiki_search``) asked about something else each time, no call rewording
what the run asked before (see :func:`~.words.reworded`): a research agent's
specific questions before a broader one that hits. Asking again (one call twice) or asking differently (other
words: another filter, another prompt, another command) keeps the run at
N. Answers of nothing from several tools (a wiki, the code, the chat
searched in turn) are a search going on until one tool has given N, unless
one of them was silence from a command that is no search: a dark shell's
commands go by many names. A long poll's "nothing yet" (see
:func:`.calls.waits`) is what it waited for, no empty answer.

Silent by design is normal and never counts: a call that writes or acts
(``sed -i``, a heredoc or ``>`` write, ``rm``, ``mv``, ``git checkout``, a
tool whose first verb is ``write``, ``save``, ``delete``, ``think``...,
``slack_post_message`` and ``queue_delete`` too; see :func:`.calls.silent_by_design`),
a calculator's ``300.0``, a flight status ``available``. Short outputs that
are neither are skipped (they neither count nor break a run); a failed
action is left to the error detectors.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ...core.models import Anomaly
from .calls import searches, searches_by_name, silent_by_design, source_named, waits
from .contract import ActionTracker, ActionView, History, StepTracker, frozen_names, make_anomaly, need_int
from .envelope import ENVELOPE_LONGEST, NO_ROWS, NOT_MODIFIED
from .fingerprints import NO_ROWS_RESULT, NOT_FOUND_RESULT, prints
from .said import NOTHING_NEW
from .words import reworded, words

__all__ = [
    "EMPTY_ANSWERS",
    "NUMBERED_EXTRA",
    "Empty",
    "EmptyTracker",
    "idle_poll",
    "is_empty_answer",
    "quiet_source",
]

EMPTY_ANSWERS = (
    "",
    "[]",
    "{}",
    "()",
    "null",
    "none",
    "nil",
    "(nil)",  # redis-cli's reply of nothing, and its empty list
    "(empty array)",
    "(empty list or set)",
    "n/a",
    "na",
    "-",
    "no results",
    "no results found",
    "no more results",
    "no result",
    "no matches",
    "no matches found",
    "no match",
    "not found",
    "nothing found",
    "no data",
    "empty",
    "no output",
    "total 0",  # ls -l of an empty folder
    NOTHING_NEW,  # an inbox, a queue or a feed that says so: "No new messages.", "0 new items"
    NOT_MODIFIED,  # HTTP's answer to a conditional request: nothing new since the version it named
    NO_ROWS,  # a SQL write that matched no row
)
"""What an empty answer looks like (any case, a trailing period allowed)."""


def _variants(text: str) -> set[str]:
    found = {text, text.upper(), text.capitalize(), text.title()}
    return found | {f"{t}." for t in found if t}


# A run of calls that differ only in their numbers needs this many more (see the module docstring).
NUMBERED_EXTRA = 2
_NO_DIGITS = str.maketrans("", "", "0123456789")

# The result keys of the empty answers: an action record keeps its output's key, not its
# text, so an empty answer is told by its key (the same live, in replay and after a save).
_EMPTY_RESULTS: frozenset[str | None] = frozenset(
    prints("t", None, text).result for answer in EMPTY_ANSWERS for text in _variants(answer)
)
# Every "304 Not Modified" answer's result key: a conditional request's "nothing new yet".
_NOT_MODIFIED_RESULT = prints("t", None, NOT_MODIFIED).result
# An empty envelope (``{"messages": []}``) has the result key of ``{}`` and may be this long.
_EMPTY_LONGEST = ENVELOPE_LONGEST


def is_empty_answer(length: int | None, result: str | None) -> bool:
    """Whether an output of ``length`` stripped characters and result key ``result`` is empty."""
    return (
        length is not None
        and result in _EMPTY_RESULTS
        and (length <= _EMPTY_LONGEST or result == NOT_FOUND_RESULT)  # suggestions may follow it
    )


def idle_poll(action: ActionView, length: int | None, waited: bool = False) -> bool:
    """Whether ``action`` is a poll that found nothing yet: a long poll (an idle queue worker's
    receive, see :func:`.calls.waits`), a call right after a wait (``waited``: an inbox looked at
    again after sleeping 15 minutes) answered nothing, or a conditional request answered "304 Not
    Modified" (a feed asked what changed since its ETag). It waits for work or for a reply: neither
    a repeat, nor the same result again, nor an empty answer."""
    return (
        is_empty_answer(length, action.result)
        and action.error is None
        and (waited or action.result == _NOT_MODIFIED_RESULT or waits(action.tool, action.summary))
    )


def quiet_source(action: ActionView) -> bool:
    """Whether ``action`` read a source that had nothing: an empty answer from a call naming where
    it reads (a digest's channel, a vendor's status page with no incident; see
    :func:`.calls.source_named`). Counted as a poll is: since any call answered something new."""
    return (
        action.result in _EMPTY_RESULTS  # the cheap test first: asked of every answer by recurring
        and action.error is None
        and is_empty_answer(action.output_len, action.result)
        and source_named(action.tool, action.summary) is not None
    )


def _asks_in_vain(action: ActionView, length: int | None) -> bool:
    """An empty answer to a call that asks for something (a rare case: the cheap test first); a
    poll's "nothing yet" (see :func:`idle_poll`) never gets here: :meth:`_Run.take` ends the run."""
    return (
        is_empty_answer(length, action.result)
        and action.error is None
        # A write answers nothing by design; one that says it matched no row says it did nothing.
        and (action.result == NO_ROWS_RESULT or not silent_by_design(action.tool, action.summary))
    )


@dataclass(frozen=True)
class Empty:
    """``empty``: N empty answers to calls that ask, or short ones from calls that answered at length
    before, in a row."""

    threshold: int = 3
    max_chars: int = 10
    exempt: Collection[str] = frozenset()
    kind: str = field(default="empty", init=False, repr=False)

    def __post_init__(self) -> None:
        need_int("empty", "threshold", self.threshold)
        need_int("empty", "max_chars", self.max_chars)
        object.__setattr__(self, "exempt", frozen_names(self.exempt))

    @property
    def history_needed(self) -> int:
        """Past actions this detector needs to see."""
        return self.threshold + NUMBERED_EXTRA

    @property
    def stretch(self) -> int:
        """The newest actions a finding speaks for: its longest run, all it looks back over."""
        return self.history_needed

    def check(self, history: History, now: datetime) -> Anomaly | None:
        """Whether the newest action's short output completes a run of N."""
        last = history.last
        if last is None:
            return None
        state = _Run(self)
        for action in history.actions[:-1]:
            state.take(action, action.output_len)
        if not state.take(last, last.output_len):
            return None
        return self._report(last, state, history.tick, now)

    def tracker(self, history: History) -> ActionTracker:
        """An incremental ``check`` seeded from ``history``."""
        return EmptyTracker(self, history.actions)

    def _report(self, action: ActionView, state: _Run, tick: int, at: datetime) -> Anomaly | None:
        """The anomaly of a run that reached its threshold, None for a shorter one."""
        run = state.run
        numbered = state.numbered and run > 1  # one call alone is no series
        searching = state.searching and run > 1
        threshold = self.threshold + NUMBERED_EXTRA if numbered or searching else self.threshold
        # Answers of nothing from several tools (a wiki, the code, the chat searched in turn) are
        # a search going on; one tool's N, or silence from any (a shell gone dark), is empty.
        if run < threshold or (state.most < threshold and not numbered and not state.silence):
            return None
        # What counted: empty, short, or an answer of nothing at any length ("No results for '...'").
        short = "" if self.max_chars == 0 else f", at most {self.max_chars} characters"
        what = f"answers of nothing (empty{short}, or saying nothing was found)"
        if numbered:
            calls = "calls with only their numbers changed"
        elif searching:
            calls = "searches that found nothing"
        else:
            calls = "calls that ask for something or answered at length before"
        return make_anomaly(
            "empty",
            f"{run} outputs in a row were {what}, from {calls}; last: {action.summary}",
            tick=tick,
            at=at,
            action=action,
            evidence={
                "count": run,
                "threshold": threshold,
                "max_chars": self.max_chars,
                "last": action.summary,
                "avoid": action.summary,
            },
        )


class _Run:
    """The call shapes that answered at length, and the current run of short answers from them."""

    __slots__ = (
        *("answering", "calls", "exempt", "max_chars", "numbered", "run", "seen", "since", "start"),
        *("asked", "by_tool", "most", "searching", "silence", "waited", "swept", "sweep"),
    )

    def __init__(self, det: Empty) -> None:
        self.exempt = det.exempt
        self.max_chars = det.max_chars
        # Each shape that answered at length, by the position of its last such answer, oldest first.
        self.answering: dict[str, int] = {}
        self.run = 0
        self.seen = 0  # actions taken: the position of the newest
        self.since = 0  # the oldest of the long answers the run's short ones count on
        self.start = 0  # the position of the run's first answer
        # Whether the run's calls are new ones whose arguments differ only in their numbers:
        # the arguments with their digits left out, and the calls' fingerprints.
        self.numbered = False
        self.calls: tuple[str, set[str]] = ("", set())
        # The run's short answers by tool, the most any one tool gave, whether all were searches
        # finding nothing, and whether one was silence (from a command that is no search).
        self.by_tool: dict[str, int] = {}
        self.most = 0
        self.searching = False
        self.silence = False
        self.asked: frozenset[str] = frozenset()  # the words the run's searches by name asked
        self.waited = False  # whether the newest action waits: the next call is a poll
        # The round over sources the run is in (see :meth:`_swept`): its tick, the position of its
        # first quiet source and that source; and each quiet source it read (tool, argument, value).
        self.sweep: tuple[int, int, tuple[str, str, str] | None] = (0, 0, None)
        self.swept: set[tuple[str, str, str]] = set()

    def take(self, action: ActionView, length: int | None) -> bool:
        """:meth:`step` for a recorded action; True when it extended the run."""
        waited = self.poll(action)
        # Both tests of an answer of nothing (a poll's, a vain ask's) begin with this one, which
        # most answers fail: asked once, and the two only for such an answer.
        empty = is_empty_answer(length, action.result)
        if empty and idle_poll(action, length, waited) and action.tool not in self.exempt:
            self.seen += 1  # waiting: the run ends
            self.run = 0
            return False
        empty = empty and _asks_in_vain(action, length)
        if empty and action.tool not in self.exempt and self._swept(action):
            self.seen += 1  # a quiet source in a round over several: an answer, neither counted nor a break
            return False
        return self.step(
            action.tool,
            action.shape,
            action.fingerprint,
            action.summary,
            length,
            action.error,
            empty,
        )

    def _swept(self, action: ActionView) -> bool:
        """Whether ``action``, an empty answer, read a source its round had not read yet (see
        :func:`.calls.source_named`): a digest's round over its channels, most of them quiet. A round
        is a heartbeat's, or ends where the round's first quiet source comes again after two
        others (the same channels read again); a source read again sooner counts, as any call
        asked again does."""
        source = source_named(action.tool, action.summary)
        if source is None:
            return False
        read = (action.tool, *source)
        tick, _, first = self.sweep
        if tick != action.tick or (read == first and len(self.swept) > 2):
            self.sweep = (action.tick, self.seen + 1, read)
            self.swept = {read}
            return True
        if read in self.swept:
            return False
        self.swept.add(read)
        return True

    def poll(self, action: ActionView) -> bool:
        """Whether ``action``, the next one taken, comes right after a wait (and note if it waits)."""
        if action.tool in self.exempt:
            return False
        waited, self.waited = self.waited, waits(action.tool, action.summary)
        return waited

    def step(
        self,
        tool: str,
        shape: str | None,
        fp: str,
        summary: str,
        length: int | None,
        error: str | None,
        empty: bool = False,
    ) -> bool:
        """Take one action (``empty``: an empty answer to a call that asks); True when it extended the run."""
        seen = self.seen = self.seen + 1
        if length is None or error is not None or tool in self.exempt:
            return False
        key = shape if shape is not None else tool  # a state saved before shapes: by tool
        if empty:  # counts whatever answered before: no long answer to rely on
            if not self.run:
                self.since = seen + 1
                self.start = seen
            self._extend(tool, fp, summary, length)
            return True
        if length > self.max_chars:
            answering = self.answering
            answering.pop(key, None)  # to the end: the order stays that of the last long answers
            answering[key] = seen
            self.run = 0
            return False
        answered = self.answering.get(key)
        if answered is None:
            return False  # silent by design, as far as we know
        if not self.run or answered < self.since:
            self.since = answered
        if not self.run:
            self.start = seen
        self._extend(tool, fp, summary, length)
        return True

    def _extend(self, tool: str, fp: str, summary: str, length: int) -> None:
        """Count one more short answer (``length`` characters), from the call ``summary`` of ``tool``
        (fingerprint ``fp``)."""
        search = searches(tool, summary)
        if not self.run:
            self.by_tool = {}
            self.most = 0
            self.searching = True
            self.silence = False
            self.asked = frozenset()
        if not search and searches_by_name(tool):
            # A search tool asked about something else each time is a search going on, as greps
            # for other names are; asked again in other words, it is not (see words.reworded).
            said = words(tool, summary)
            search = bool(said) and not (self.asked and reworded(self.asked, said, self.asked))
            self.asked |= said
        self.searching = self.searching and search
        if not length and not search:
            self.silence = True
        count = self.by_tool[tool] = self.by_tool.get(tool, 0) + 1
        if count > self.most:
            self.most = count
        if not self.run or self.numbered:
            # The tool aside (a search direct or with a stop asks the same), without its numbers.
            asked = summary[len(tool) :].translate(_NO_DIGITS)
            if not self.run:
                self.numbered = True
                self.calls = (asked, {fp})
            else:
                run_asked, fps = self.calls
                if asked != run_asked or fp in fps:
                    self.numbered = False  # asked again, or asked something else
                else:
                    fps.add(fp)
        self.run += 1

    def slide(self, kept: int) -> bool:
        """Forget all but the last ``kept`` actions, as if seeded from those; False when it cannot.

        Shapes whose last long answer is older are dropped. A run that counts
        on one of them, or began before the kept actions, would not have been
        counted so from the kept actions alone.
        """
        oldest = self.seen - kept + 1
        if self.run and (self.since < oldest or self.start < oldest):
            return False
        if self.swept and self.sweep[1] < oldest:
            return False  # the round's first sources are no longer kept
        answering = self.answering
        while answering:
            key = next(iter(answering))  # the oldest long answer
            if answering[key] >= oldest:
                break
            del answering[key]
        return True


class EmptyTracker(StepTracker):
    """:class:`_Run` fed action by action."""

    __slots__ = ("_det", "_run")

    def __init__(self, det: Empty, actions: Iterable[ActionView]) -> None:
        self._det = det
        self._run = _Run(det)
        for action in actions:
            self._run.take(action, action.output_len)

    def step(
        self, action: ActionView, tool: str, fp: str, length: int | None, error: str | None, report: bool
    ) -> Anomaly | None:
        """:meth:`push` with the action's fields already read (see ``BuiltinStep``)."""
        state = self._run
        if not state.take(action, length):  # no output or a failure: nothing to count or break
            return None
        if not report or state.run < self._det.threshold:
            return None
        return self._det._report(action, state, action.tick, action.at)

    def slide(self, kept: Sequence[ActionView]) -> bool:
        """Become what a tracker seeded from ``kept``, the end of what it took, would be; False: it cannot."""
        return self._run.slide(len(kept))
