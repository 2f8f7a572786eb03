"""``recurring``: the same call keeps giving the same result, or many calls the same output.

Output-aware and not back to back: edit -> run the same test -> the same
failure, over and over with a different edit each time, never repeats
consecutively, yet the run's result says nothing moved. Two keys count,
over the last W actions:

* the call's masked shape plus its result (a poll whose arguments carry a
  timestamp, a test rerun after each edit); for a result of at most
  ``min_chars`` characters the exact call instead of its shape (a short
  answer says nothing about which page it was) or a tool named for an act
  (its numbers name what it acts on: closing ticket 40017 and then 40018,
  each "Ticket closed.", is two acts), and never for a short answer to a
  call that writes or acts (see :func:`~.calls.silent_by_design`): a feed
  marked read after each new batch answers "ok" every time, as a write does;
* the tool plus its output, whatever the arguments, for outputs longer than
  a line (120 characters): paraphrased searches landing on the same page.
  An all-clear report ("All checks passed!", "0 broken links": see
  :func:`~.said.all_clear`) counts by the exact call, as a short answer
  does: a linter passing file after file finds nothing wrong in each.
  Another test's "1 passed", another message's "deleted" is a status each
  call gave, as is a test runner's whole report of a run where every test
  passed (see :func:`~.said.passing_run`), and a tool named for an act (``finish``, ``submit``, ``send``:
  see :func:`~.calls.acts_by_name`) answers its confirmation ("Episode
  finished, reward = 1", "Message sent") whatever it did: no page landed on
  again.

Either counts only since its call (or its tool) last answered something
new: a feed polled with ``since=<timestamp>`` answers "nothing new" again
and again between the batches it brings, and that is a poll that moves, not
one that stopped (the same answer five times with nothing new between is).
A call right after a wait (a ``sleep`` between rounds) or a source read and found quiet (see
:func:`~.empty.quiet_source`: a digest's channel with nothing new) is a poll, and an act
confirmed in a line is an act: each counts since any call answered
something new. A poller going round its feeds, one of which never has news,
works while the others bring some; a job's status polled as "queued" while
its events say the queue moves is waiting on a job that moves. The same
batch insert confirmed after each new page fetched is work, the same answer
submitted again and again with nothing new between is not (an act answered
with a page, a click in a web shop, counts as the page).

A page read again as a heartbeat's first call, when most of the looks and
writes since its last reading were new, is what the work goes by (a
sitemap, an outline, a plan read at each wake-up): see :func:`since_news`.

Failed actions are left to ``recurring_error``; actions without an output
are not counted.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ...config.file import ToolThreshold
from ...core.models import Anomaly
from .calls import (
    CONFIRMATION_LONGEST,
    acts_by_name,
    is_note,
    silent_by_design,
    speaks,
    waits,
)
from .commands import steps_bisect, writes_sql
from .consulted import consulted
from .contract import (
    ActionTracker,
    ActionView,
    History,
    StepTracker,
    Windowed,
    frozen_names,
    make_anomaly,
    need_int,
    tail_of,
    tool_limits,
)
from .empty import idle_poll, quiet_source
from .fingerprints import NOT_FOUND_RESULT, pattern
from .memory import reads_back
from .said import PASSED_MARK, all_clear_result

__all__ = ["Recurring", "RecurringTracker"]


_RESULT_HEX = 8  # a key ends with its result key (8 hex digits); what comes before names the call or tool
_ACT = "\x01"  # starts the call key of an act's confirmation (see _keys): anything new seen is news


def since_news(keys: Iterable[str | None], call: str, looked: Sequence[int] = ()) -> int:
    """How many of ``keys`` (call+result or output keys, oldest first; None for actions without
    one) are ``call`` since its call's (or tool's) last new answer: a key of the same call first
    seen among them. For an act confirmed in a line, since any call's new answer: an act repeated
    while new pages come in between is work (a batch inserted after each page fetched). An act
    answered with a page (a click in a web shop) counts as the page it lands on. A poll counts
    since any news in either key (see :func:`since_any_news`).

    ``looked`` (one per key, see :func:`looks`) also starts the count again at a wake-up when most
    of the looks and writes since the call's last time were new to the window, two at least: a
    sitemap, an outline or a plan read again at each heartbeat before new pages are fetched or new
    sections written is what the work goes by, not a page the agent keeps landing on. Not before
    its third time in the window: between its first two, a cycle's first round in the window
    looks new (what it had seen before the window began is cut off)."""
    group = None if call[0] == _ACT else call[:-_RESULT_HEX]
    seen: set[str] = set()
    count = gap = new = times = 0
    for i, key in enumerate(keys):
        mark = looked[i] if looked else 0
        if key == call:
            if mark & _WAKE and times > 1 and new > 1 and 2 * new > gap:
                count = 0  # read again at a wake-up after new work: the count starts again
            count += 1
            times += 1
            gap = new = 0
            continue
        if mark & _ANSWERED:
            gap += 1
            new += mark & _NEW == _NEW
        if key is None or (group is not None and key[:-_RESULT_HEX] != group):
            continue
        if key not in seen:
            count = 0  # something new was answered: the count starts again
            seen.add(key)
    return count


# See looks: a look or a write as before, anew (either: answered); a heartbeat's first action.
_OLD, _NEW, _WAKE = 1, 2, 4
_ANSWERED = _OLD | _NEW


def looks(actions: Sequence[ActionView]) -> list[int]:
    """For each of ``actions``: whether it opens a heartbeat after one that did more than one
    thing (_WAKE), and for a look that answered or a write that went through (neither a failure,
    a wait, a message nor a note), whether that was new to those before it (_NEW: a result not
    seen, a write not made) or not (_OLD). See :func:`since_news`."""
    seen: set[str] = set()
    found = [0] * len(actions)
    for i, action in enumerate(actions):
        if i > 1 and action.tick != actions[i - 1].tick == actions[i - 2].tick:
            found[i] = _WAKE
        tool = action.tool
        if action.error is not None or speaks(tool) or is_note(tool) or waits(tool, action.summary):
            continue
        key = action.fingerprint if silent_by_design(tool, action.summary) else action.result
        if key is None:
            continue
        found[i] |= _OLD if key in seen else _NEW
        seen.add(key)
    return found


def _looked(action: ActionView, actions: Sequence[ActionView]) -> list[int]:
    """:func:`looks` of ``actions`` when ``action`` answered a page (a sitemap, an outline: what
    work goes by), else none: a short answer again (a label, a status) between new pages is no
    document read again (an auto-reply classified "billing" once more)."""
    return looks(actions) if (action.output_len or 0) > CONFIRMATION_LONGEST else []


def since_any_news(
    pairs: Iterable[tuple[str | None, str | None]], key: str, output: bool, acts: bool = True
) -> int:
    """How many of ``pairs`` (call+result and output keys, oldest first) hold ``key`` (as their
    output key if ``output``, else as their call key) since any call last answered something new,
    in either key: a poll's count (a call right after a wait). A job polled while its events bring
    news is waiting on a job that moves (the status says "queued" while the queue position falls),
    and so is a job queue's listing, the same each time, polled between sleeps while each job's
    log tail moves on (a short answer has no output key: its news is in its call key). Without
    ``acts``, an act's confirmation is no news: a digest posted is the agent's own doing, not a
    source that moved."""
    seen: set[str] = set()
    count = 0
    for call, out in pairs:
        if (out if output else call) == key:
            count += 1
        elif (call is not None and call not in seen and (acts or call[0] != _ACT)) or (
            out is not None and out not in seen
        ):
            count = 0
        if call is not None:
            seen.add(call)
        if out is not None:
            seen.add(out)
    return count


def _count(
    pairs: Sequence[tuple[str | None, str | None]],
    key: str,
    output: bool,
    poll: bool,
    looked: Sequence[int] = (),
    quiet: bool = False,
) -> int:
    """How many of ``pairs`` (call+result and output keys, oldest first) hold ``key`` (their output
    key if ``output``, else their call key) since the news a ``poll`` (a call right after a wait)
    or a ``quiet`` source (see :func:`~.empty.quiet_source`: news from a look, not an act), or
    another call counts from (see :func:`since_any_news` and :func:`since_news`)."""
    if poll or quiet:
        return since_any_news(pairs, key, output, acts=not quiet)
    return since_news((pair[1] if output else pair[0] for pair in pairs), key, looked)


def _reads_memory(action: ActionView, actions: Iterable[ActionView]) -> bool:
    """Whether ``action``, a look answered in a line, reads back what one of ``actions`` (a write
    that went through) wrote (see :func:`~.memory.reads_back`): a poller's cursor read at each
    wake-up (``state.get(key="issues_since")``, a timestamp, masked: the same line while the
    cursor moves) is its own memory, not the world answering the same again."""
    if (action.output_len or 0) > CONFIRMATION_LONGEST or silent_by_design(action.tool, action.summary):
        return False
    writes = (
        (other.tool, other.summary)
        for other in actions
        if other.error is None and other is not action and silent_by_design(other.tool, other.summary)
    )
    return reads_back((action.tool, action.summary), writes)


def _spared(
    calls: int, outputs: int, limit: int, action: ActionView, actions: Sequence[ActionView]
) -> tuple[int, int]:
    """The two counts with what is no recurrence taken out, once a count reaches ``limit``: a call
    reading back the agent's memory (:func:`_reads_memory`), a reference consulted before each new
    item (:func:`~.consulted.consulted`, asked at most once), each thing's own (:func:`_each_its_own`)."""
    found: bool | None = None
    if calls >= limit and (
        _reads_memory(action, actions)
        or (found := consulted(action, actions))
        or _each_its_own(action, actions, limit)
    ):
        calls = 0
    own = outputs >= limit and _each_its_own(action, actions, limit, True)
    if own or (outputs >= limit and (found if found is not None else consulted(action, actions))):
        outputs = 0
    return calls, outputs


def _each_its_own(action: ActionView, actions: Sequence[ActionView], limit: int, alone: bool = False) -> bool:
    """Whether ``action``'s answer, the same as its shape's before (numbers masked), is each call's
    own: every call of that shape in the window asked of a thing not asked before (another PR's
    checks, another tenant's schema version), and fewer than ``limit`` of them came since a look
    last answered something new (the next PR's diff): each thing is in the same state. A pager
    whose page number moves while the page does not, nothing else new between, stays counted, and
    so does a call asked again of the same thing; with ``alone`` (the output counted: each new PR's
    plan "No changes."), so does an answer a call of another shape gave too (a shell gone dark)."""
    asked: list[str] = []
    seen: set[str] = set()
    count = 0
    news = False
    for other in actions:
        result = other.result
        if result is None or other.error is not None:
            continue
        if result == action.result and other.shape != action.shape and alone:
            return False
        if result == action.result and other.shape == action.shape:
            asked.append(other.fingerprint)
            count = 1 if news else count + 1
            news = False
        elif not news and result not in seen and not silent_by_design(other.tool, other.summary):
            news = True  # (once news came, what else came before the next is not read)
        seen.add(result)
    return count < limit and len(set(asked)) == len(asked)


def _moves_on(action: ActionView) -> bool:
    """Whether the call after ``action`` looks at something that moved: ``action`` waited, or
    stepped a ``git bisect`` to the next commit (a test run there is that commit's answer)."""
    summary = action.summary  # the substring test first: almost no call is a bisect's step
    return waits(action.tool, summary) or ("bisect" in summary and steps_bisect(action.tool, summary))


def _polled(actions: Sequence[ActionView]) -> list[bool]:
    """For each of ``actions``, whether it is a poll (a call right after a wait)."""
    found = [False] * len(actions)
    for i in range(1, len(actions)):
        before = actions[i - 1]
        found[i] = _moves_on(before)
    return found


def _keys(action: ActionView, min_chars: int, waited: bool = False) -> tuple[str | None, str | None]:
    """(call+result key, output key) of an action (``waited``: it came right after a wait); None
    where it has none."""
    result = action.result
    length = action.output_len
    if result is None or action.error is not None or length is None or idle_poll(action, length, waited):
        return None, None  # a poll that found nothing yet waits for work or a reply: nothing to count
    # An answer of nothing, however long ("Could not find [X]. Similar: [...]"; a quiet source's
    # ``{"messages": []}``, channel #c3 then #c4: see quiet_source), is a short answer; a test run
    # where every test passed is an all-clear (see below).
    passed = result[0] == PASSED_MARK
    if (
        length > min_chars
        and result != NOT_FOUND_RESULT
        and not passed
        and not all_clear_result(result)
        and not quiet_source(action)
    ):
        if acts_by_name(action.tool) or writes_sql(action.summary):
            # An act confirms as it always does ("Episode finished, reward = 1"): no page it
            # landed on again. The same act again still counts, the exact call: its numbers
            # name what it acts on (ticket 40017, then 40018: two tickets closed, each
            # "Ticket closed."); a confirmation (a line, not a page) since anything new was
            # seen (see since_news). (Told by the tool's name: a command's text is read only
            # for short answers, where it is cheap and needed.)
            return f"{_ACT if length <= CONFIRMATION_LONGEST else ''}{action.fingerprint}{result}", None
        # Another call landing on the same page is a paraphrase; the same line from other calls
        # is a status each gave (another test "1 passed", another message "deleted").
        page = length > CONFIRMATION_LONGEST
        return f"{action.shape}{result}", f"\x00{action.tool}\x00{result}" if page else None
    if silent_by_design(action.tool, action.summary):
        # A write or an act answered "ok": the answer it always gives, whatever it did.
        return None, None
    # A short or empty answer says nothing about which page this was, nor an all-clear report
    # which file or site it cleared (``ruff check`` of one file after another, "All checks
    # passed!", a test runner's whole report of a run that passed: another selection's "1
    # passed"): only the exact call counts as the same again (a poll unchanged, a lookup answered
    # "no"). An all-clear again after a change (an edit, then the linter or the suite passing) is
    # a check of that change: it counts with those since the last change only (_since_change).
    if passed or all_clear_result(result):
        return _ALL_CLEAR + action.fingerprint + result, None
    return action.fingerprint + result, None


_ALL_CLEAR = "\x02"  # starts the call key of an all-clear answer: counted since the last change


def _since_change(actions: Sequence[ActionView]) -> int:
    """Where the actions after the last one that wrote or acted begin in ``actions`` (the newest's
    own not counted): an all-clear report counts among those only. Read only when a key reaches N."""
    for i in range(len(actions) - 2, -1, -1):
        action = actions[i]
        if silent_by_design(action.tool, action.summary):
            return i + 1
    return 0


@dataclass(frozen=True)
class Recurring(Windowed):
    """``recurring``: the newest call+result (or long output) occurs N times in the last W actions."""

    threshold: int = 5
    window: int = 30
    min_chars: int = 10
    exempt: Collection[str] = frozenset()
    tools: Mapping[str, ToolThreshold] = field(default_factory=dict)
    kind: str = field(default="recurring", init=False, repr=False)
    _limits: dict[str, int | None] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        need_int("recurring", "threshold", self.threshold)
        need_int("recurring", "window", self.window, self.threshold)
        need_int("recurring", "min_chars", self.min_chars)
        object.__setattr__(self, "exempt", frozen_names(self.exempt))
        object.__setattr__(self, "tools", dict(self.tools))
        object.__setattr__(self, "_limits", tool_limits("recurring", self.threshold, self.tools))

    def __hash__(self) -> int:
        return hash(
            (self.threshold, self.window, self.min_chars, self.exempt, tuple(sorted(self.tools.items())))
        )

    @property
    def history_needed(self) -> int:
        """Past actions this detector needs to see: the window and the one before it (a wait?)."""
        return self.window + 1

    def check(self, history: History, now: datetime) -> Anomaly | None:
        """Whether the newest action's result brings its key to N in the window."""
        last = history.last
        if last is None or last.tool in self.exempt:
            return None
        seq = [a for a in history.actions if a.tool not in self.exempt][-self.window - 1 :]
        polled = _polled(seq)[-self.window :]
        seq = seq[-self.window :]
        poll = polled[-1]
        call, output = _keys(last, self.min_chars, poll)
        if call is None:
            return None
        keys = [_keys(a, self.min_chars, p) for a, p in zip(seq, polled, strict=True)]
        if call[0] == _ALL_CLEAR:
            keys = keys[_since_change(seq) :]
        looked = _looked(last, seq)
        quiet = not poll and quiet_source(last)
        calls = _count(keys, call, False, poll, looked[len(looked) - len(keys) :], quiet)
        outputs = _count(keys, output, True, poll, looked, quiet) if output is not None else 0
        calls, outputs = _spared(calls, outputs, self.threshold, last, seq)
        return self._report(last, calls, outputs, history.tick, now)

    def tracker(self, history: History) -> ActionTracker:
        """An incremental ``check`` seeded from ``history``."""
        return RecurringTracker(self, history)

    def _report(
        self, action: ActionView, calls: int, outputs: int, tick: int, at: datetime
    ) -> Anomaly | None:
        limit = self._limits.get(action.tool, self.threshold)
        if limit is None:
            return None
        # Matched on the shape (numbers masked) when the output is long enough: name that pattern.
        length = action.output_len
        paged = length and length > self.min_chars and action.result != NOT_FOUND_RESULT
        shaped = pattern(action.summary) if paged else None
        if calls >= limit:
            message = (
                f"{shaped or action.summary} gave the same result {calls} times in the last "
                f"{self.window} actions (numbers, dates and ids masked): what was done between the calls "
                "changed nothing it shows"
            )
            evidence = {"count": calls, "call": action.summary, "same": "call and result"}
        elif outputs >= limit:
            message = (
                f"{outputs} calls to {action.tool} in the last {self.window} actions returned "
                f"the same output; last: {action.summary}"
            )
            evidence = {"count": outputs, "call": action.summary, "same": "output"}
        else:
            return None
        evidence.update(window=self.window, threshold=limit, avoid=shaped or action.summary)
        return make_anomaly("recurring", message, tick=tick, at=at, action=action, evidence=evidence)


class RecurringTracker(StepTracker):
    """Counts of call+result and output keys over the window, one deque of both per position."""

    __slots__ = (
        "_acts",
        "_counts",
        "_det",
        "_exempt",
        "_min",
        "_min_chars",
        "_recent",
        "_waited",
        "_window",
    )

    def __init__(self, det: Recurring, history: History) -> None:
        self._det = det
        self._exempt = det.exempt
        self._min_chars = det.min_chars
        self._min = det.threshold  # no tool's threshold is below it
        self._window = det.window
        # Each position's call+result and output keys.
        self._recent: deque[tuple[str | None, str | None]] = deque()
        # Both kinds of key in one dict: a call key starts with a shape or fingerprint
        # (hex), an output key with "\x00", so they never meet.
        self._counts: dict[str, int] = {}
        # Whether the last action taken waits: the next call is a poll.
        self._waited = False  # seeded from the action before the window: it tells the first's
        self._acts: deque[ActionView] = deque()  # the window's actions: see _since_change, looks
        self.seed(tail_of(history.actions, det.window + 1, det.exempt))

    def step(
        self, action: ActionView, tool: str, fp: str, length: int | None, error: str | None, report: bool
    ) -> Anomaly | None:
        """:meth:`push` with the action's fields already read (see ``BuiltinStep``)."""
        if tool in self._exempt:
            return None
        poll = self._waited
        self._waited = _moves_on(action)
        call, output = _keys(action, self._min_chars, poll)
        recent = self._recent
        counts = self._counts
        acts = self._acts
        acts.append(action)
        if len(acts) > self._window:
            acts.popleft()
        if len(recent) == self._window:
            for old in recent.popleft():
                if old is not None:
                    left = counts[old] - 1
                    if left:
                        counts[old] = left
                    else:
                        del counts[old]
        recent.append((call, output))
        calls = outputs = 0
        if call is not None:
            calls = counts[call] = counts.get(call, 0) + 1
        if output is not None:
            outputs = counts[output] = counts.get(output, 0) + 1
        if not report or (calls < self._min and outputs < self._min):
            return None
        looked = _looked(action, acts)
        quiet = not poll and quiet_source(action)
        if call is not None and calls >= self._min:
            pairs: Sequence[tuple[str | None, str | None]] = recent
            if call[0] == _ALL_CLEAR:  # rare: an all-clear counts since the last change only
                pairs = list(recent)[_since_change(acts) :]
            calls = _count(pairs, call, False, poll, looked[len(looked) - len(pairs) :], quiet)
        if output is not None and outputs >= self._min:
            outputs = _count(recent, output, True, poll, looked, quiet)
        calls, outputs = _spared(calls, outputs, self._min, action, acts)
        return self._det._report(action, calls, outputs, action.tick, action.at)
