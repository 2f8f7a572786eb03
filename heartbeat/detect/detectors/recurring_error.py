"""``recurring_error``: the same error again and again, told apart from different errors.

An error's fingerprint is the error's text with its volatile values masked
(:func:`~.fingerprints.error_key`: the same live and in replay), and the
call's own argument values it quotes back (``invalid employee_id 'dkwon'``:
the same rejection of another try, see :func:`~.volatile.unechoed`), and the
action's result key (the end of its output, volatile values masked; see
:mod:`.fingerprints`), whatever the tool: a shell agent's failing test run
from a heredoc, a ``cd && ...`` or on its own is one failure. For an output
of at most 10 characters (a bare exit code) the exact call instead. Different errors
while debugging are progress (a script re-run after an edit that fails
differently); the same rejection coming back, whatever the arguments (a
different invalid option clicked each time, a rerun of the same failing
test), is not. Counted since the newest's tool last answered: a fetch
refused by one site and then another, pages read between, meets sites that
refuse, not one failure coming back (the same call failing again is a
re-run, below); and another tool's failure counts until that tool answers:
a household agent told "Nothing happens." by a take, a clean and a put,
each done right at the next try, overcame each (until 2026-12-06 it was
escalated at the put).

The same call retried right after a wait is backing off (a rate limit's
"retry after 2s", each sleep longer): N + 1 tries in a row within W actions
(its first N retries) count neither as the same error nor as a re-run (until
2026-12-06 a worker storing every record through a rate limit, three tries a
record, was escalated); retried more, it will not pass, and the retries count.

A failing call without arguments attempted nothing: a harness's complaint
about a malformed turn ("exactly one action, please"), answered by a good
turn and work, is not the same error recurring. Such complaints back to back
are ``repeat``'s; between the same calls, ``loop``'s.

The same call (with arguments) re-run and failing the same way counts
over twice the window: a script re-run after each edit, other steps
between the runs; but only since the call last passed: a test that passes
at one commit and fails at the next (a bisect) shows what changed between
the runs reaching it. Re-runs with nothing changed between them (no write,
no act, no wait: only reads, as an agent re-reading the code it will not
edit and re-running the failing test) count over three times the window,
each run after the one before it: nothing could have reached the failure.

Reworded retries count too: consecutive failing calls of one tool, each
rewording the calls before it (see :func:`~.words.reworded` and :func:`~.words.words`:
"Aunt May Parker", then "Aunt May Marvel") but not the same call, failing
alike, N of them within the window. A search asked again in other words, a
booking retried with reshuffled amounts: the numbers in the error may differ,
the attempt is the same. Failing alike: the failures share at least half of
their words (the error's and those that end the output, outside brackets: the
record's ``failure`` key), the call's own words aside (a message quoting the
query; a list of suggestions in brackets says which pages, not what
failed). A query fixed three times that fails on a missing column, then an
ambiguous name, then a misused aggregate is debugging: each fix got further;
so are ``python -c`` probes labelled ``returncode 1`` whose tracebacks end in
a different exception each time. Nor is the same probe run with other values,
whatever it fails with: code given inline to an interpreter (``python -c``,
``node -e``) that differs only in its literals asks the program something
else (a function under test fed ``'09c'``, then ``'#0g9'``). Calls that change one word, each failure
naming back its own ("No module named 'scipy'", then "'cftime'"), ask about
other things: which optional modules are installed.

A tool gone dark counts too: N + 3 of one tool's calls in the window fail
with nothing to show (no output, or a bare exit code: ``grep`` finding no
match), whatever they asked, since the tool last answered; so do N + 3
calls back to back to more than one tool, each failing with nothing to show
and the same error text (a shell agent's programs, its sandbox gone:
``ls``, ``cat``, ``pytest``, ``echo`` each "container ... is not running"). Each such
failure is told apart by its call alone (see :func:`failure_key`), so a
grep for one symbol after another finding none is no repeat of anything;
a working agent looks for a few things that are not there, then finds one,
while one grepping a file that holds none of what it seeks goes on. A tool
whose N + 3 calls in a row since it last answered each fail like the one
before, whatever they asked, has gone dark as well: a search answering
"Could not find [X]. Similar: [...]" to every title asked of it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from ...core.models import Anomaly, clip
from .calls import changes_something, waits
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
)
from .failures import DARK_EXTRA, Failure, as_failure, chain_length, dark_run, failure_key, rerun_key
from .window import NAMES_KEPT, SparseWindow, Successes, forget_before

__all__ = ["DARK_EXTRA", "RecurringError", "RecurringErrorTracker", "failure_key"]


# A call retried right after a wait, each wait longer or not, is backing off (a rate limit's "retry
# after 2s"): N + 1 tries in a row within W actions (its first N retries) do not count; more is a
# call that will not pass. Within W, so the reference check, which keeps 3W actions, sees them all.
BACKOFF_EXTRA = 1


@dataclass(frozen=True)
class RecurringError(Windowed):
    """``recurring_error``: the newest error's fingerprint occurs N times in the last W actions."""

    threshold: int = 3
    window: int = 10
    exempt: Collection[str] = frozenset()
    kind: str = field(default="recurring_error", init=False, repr=False)

    def __post_init__(self) -> None:
        need_int("recurring_error", "threshold", self.threshold)
        need_int("recurring_error", "window", self.window, self.threshold)
        object.__setattr__(self, "exempt", frozen_names(self.exempt))

    @property
    def history_needed(self) -> int:
        """Past actions this detector needs to see: the idle re-runs' window, three times its own."""
        return 3 * self.window

    def check(self, history: History, now: datetime) -> Anomaly | None:
        """Whether the newest action failed with an error seen N times in the window."""
        last = history.last
        if last is None or last.tool in self.exempt or last.error is None:
            return None
        key = failure_key(last)
        rerun = rerun_key(last, key)  # None: nothing was attempted, see the module's docstring
        longest = [a for a in history.actions if a.tool not in self.exempt][-3 * self.window :]
        start = len(longest) - self.window  # the window's first position in longest
        failures = []
        reruns = 0
        idle: list[int] = []  # the positions of the newest's call failing alike, nothing changed between
        idle_key: Hashable = None
        # Where each tool last answered and last failed, and the newest change, as the tracker keeps them.
        ok: dict[str, int] = {}
        failed: dict[str, int] = {}
        changed = -1
        backed: set[int] = set()  # the positions of calls retried right after a wait, backing off
        before: tuple[str, int] | None = None  # the newest failure's call and position
        series: list[int] = []  # that call's failures in a row, each after a wait, within W before
        for i, a in enumerate(longest):
            if a.error is None:
                ok[a.tool] = ok[a.fingerprint] = i
                if changes_something(a.tool, a.summary):
                    changed = i
                if a.fingerprint == last.fingerprint:
                    reruns = 0  # it passed since: what changed between the runs reached it
                continue
            answered = ok.get(a.tool, -1) > failed.get(a.tool, -1)
            failed[a.tool] = i
            waited = longest[i - 1] if i else a
            retried = (
                before == (a.fingerprint, i - 2) and not waited.error and waits(waited.tool, waited.summary)
            )
            series = [*(j for j in series if j > i - self.window), i] if retried else [i]
            if retried and len(series) <= self.threshold + BACKOFF_EXTRA:
                backed.add(i)
            before = (a.fingerprint, i)
            found = failure_key(a)
            if rerun is not None and a.tool == last.tool:
                again = rerun_key(a, found)  # the same call, its times moved on, counts as a re-run
                if again == rerun and i >= len(longest) - 2 * self.window and i not in backed:
                    reruns += 1
                if a.fingerprint == last.fingerprint:  # an idle run is the very call's
                    if again == idle_key and idle and idle[-1] > max(changed, ok.get(a.fingerprint, -1)):
                        idle.append(i)
                    else:
                        idle, idle_key = [i], again
            if i >= start:
                failures.append(as_failure(i, a, a.tool, a.fingerprint, a.error, answered, found))
        answered_at = ok.get(last.tool, -1)
        count = 0
        if len(longest) - 1 in backed:
            reruns = 0
        if rerun is not None:  # another tool's failure counts until that tool answers again
            count = sum(
                1
                for f in failures
                if f[6] == key and f[0] not in backed and f[0] > max(answered_at, ok.get(f[1], -1))
            )
        dark = (0, 1) if rerun is None else dark_run(failures, last.tool, answered_at)
        return self._report(last, count, reruns, chain_length(failures), dark, history.tick, now, len(idle))

    def tracker(self, history: History) -> ActionTracker:
        """An incremental ``check`` seeded from ``history``."""
        return RecurringErrorTracker(self, history)

    def _report(
        self,
        action: ActionView,
        count: int,
        reruns: int,
        chain: int,
        dark: tuple[int, int],
        tick: int,
        at: datetime,
        idle: int = 0,
    ) -> Anomaly | None:
        error = clip(action.error, 120)
        span = self.window
        if count >= self.threshold:
            message = (
                f"{action.tool} failed with an error seen {count} times in the last {span} actions "
                f"({error}); last: {action.summary}"
            )
            same = "error"
        elif reruns >= self.threshold:
            span = 2 * self.window
            message = (
                f"{action.summary} was run again and failed the same way {reruns} times in the last "
                f"{span} actions ({error}): what changed between the runs did not reach the failure"
            )
            count, same = reruns, "call and error"
        elif idle >= self.threshold:
            span = 3 * self.window
            message = (
                f"{action.summary} was run again and failed the same way {idle} times in the last "
                f"{span} actions with nothing written, done or waited for between the runs ({error}): "
                "running it again will not change the answer"
            )
            count, same = idle, "call and error"
        elif chain >= self.threshold:
            message = (
                f"{action.tool} failed {chain} times in a row within the last {span} actions, "
                f"each call a rewording of those before ({error}): the same attempt in other words; "
                f"last: {action.summary}"
            )
            count, same = chain, "reworded"
        elif dark[0] >= self.threshold + DARK_EXTRA and dark[1] > 1:
            message = (
                f"the last {dark[0]} calls, to {dark[1]} tools, failed alike with nothing to show "
                f"({error}), whatever they asked: what runs them has gone dark; last: {action.summary}"
            )
            count, same = dark[0], "silent"
        elif dark[0] >= self.threshold + DARK_EXTRA and not dark[1]:
            message = (
                f"{dark[0]} calls to {action.tool} in a row failed alike ({error}), whatever they "
                f"asked, since it last answered: the tool has gone dark; last: {action.summary}"
            )
            count, same = dark[0], "alike"
        elif dark[0] >= self.threshold + DARK_EXTRA:
            message = (
                f"{dark[0]} calls to {action.tool} in the last {span} actions failed with nothing to "
                f"show ({error}), whatever they asked, since it last answered: the tool has gone dark; "
                f"last: {action.summary}"
            )
            count, same = dark[0], "silent"
        else:
            return None
        return make_anomaly(
            "recurring_error",
            message,
            tick=tick,
            at=at,
            action=action,
            evidence={
                "count": count,
                "window": span,
                "threshold": self.threshold,
                "error": action.error,
                "same": same,
                "call": action.summary,
                "avoid": f"{action.tool} calls that keep failing",
            },
        )


class RecurringErrorTracker(StepTracker):
    """The errors among the last 2W actions (position and key), with counts per key, and the runs
    of each failing call since nothing changed between them, over 3W.

    Only errors are kept: a success moves the position on and notes that its
    tool answered (a reworded retry is a failure after a failure of the same
    tool, no success between), so the common push does almost nothing. After
    :meth:`errors_only` it is not pushed successes at all: positions come from
    the action indices, and whether a tool answered from the index of its last
    success, which the caller keeps.
    """

    __slots__ = (
        "_backed",
        "_before",
        "_det",
        "_exempt",
        "_failed",
        "_failures",
        "_idle",
        "_offset",
        "_ok",
        "_position",
        "_reruns",
        "_seed_end",
        "_series",
        "_since",
        "_successes",
    )

    def __init__(self, det: RecurringError, history: History) -> None:
        self._det = det
        self._exempt = det.exempt
        # Positions are the actions seen (exempt ones left out), counted here: the windows
        # move on only at a failure, by the positions since the last one.
        self._position = 0
        # The same call failing the same way, over twice the window.
        self._reruns: SparseWindow[Hashable] = SparseWindow(2 * det.window)
        self._reruns.follow(0)
        # Per call, its newest failure's rerun key and the positions of the runs failing so since
        # nothing changed between them (within 3W).
        self._idle: dict[str, tuple[Hashable, deque[int]]] = {}
        # The failures in the window (see chain_length), and the position of each tool's last success
        # and last failure.
        self._failures: deque[Failure] = deque()
        # The positions in the window of calls retried right after a wait, the newest failure's call
        # and position, and the positions of that call's failures in a row, each right after a wait,
        # within the window before it (see BACKOFF_EXTRA).
        self._backed: deque[int] = deque()
        self._before: tuple[str, int] | None = None
        self._series: deque[int] = deque()
        self._ok = Successes(3 * det.window)
        self._failed: dict[str, int] = {}
        # Once stepped on failures only (errors_only): the index of each tool's last success
        # (the caller's), and the index from which those count (before it, _ok's positions).
        self._successes: Successes | None = None
        self._since = self._offset = self._seed_end = 0
        self.seed(tail_of(history.actions, 3 * det.window, det.exempt))

    def seed(self, actions: Iterable[ActionView]) -> None:
        """Take ``actions`` without reporting. A failure that will have left the window by their
        end is kept without its words: they are read for a chain only within the window (a
        tracker is seeded at every heartbeat, from three windows of history)."""
        actions = list(actions)
        self._seed_end = self._position + len(actions)  # tail_of left the exempt tools out
        try:
            super().seed(actions)
        finally:
            self._seed_end = 0

    def errors_only(self, index: int, successes: Mapping[str, int] | None = None) -> bool:
        """Whether it can be stepped for failed actions only from now on (``index``: the newest so far).

        Only with ``successes``, a :class:`Successes` the caller keeps up to date
        (each tool's and call's last successful action, and which changed
        something), and no exempt tools of its own (see :meth:`ErrorsOnly.errors_only`).
        """
        if self._exempt or not isinstance(successes, Successes):
            return False
        self._successes = successes
        self._offset = index - self._position  # from action index to position
        self._since = index
        return True

    def step(
        self, action: ActionView, tool: str, fp: str, length: int | None, error: str | None, report: bool
    ) -> Anomaly | None:
        """:meth:`push` with the action's fields already read (see ``BuiltinStep``)."""
        if tool in self._exempt:
            return None
        if self._successes is None:
            position = self._position = self._position + 1
            if error is None:
                self._ok.note(tool, fp, action.summary, position)
                return None
        else:
            if error is None:  # the caller keeps the successes
                return None
            position = self._position = action.index - self._offset
        last_success = self._last_success
        answered_at, passed_at = last_success(tool), last_success(fp)
        failed = self._failed
        answered = answered_at > failed.get(tool, 0)  # it succeeded since its last failure
        failed[tool] = position
        if len(failed) > NAMES_KEPT:
            forget_before(failed, position - 2 * self._det.window)
        reruns = self._reruns
        reruns.advance(position)
        key = failure_key(action)
        failures = self._failures
        floor = position - self._det.window
        while failures and failures[0][0] <= floor:
            failures.popleft()
        backed = self._backed
        while backed and backed[0] <= floor:
            backed.popleft()
        retried = self._before == (fp, position - 2) and self._waited_at(action.index - 1, position - 1)
        self._before = (fp, position)
        series = self._series
        if not retried:
            series.clear()
        series.append(position)
        while series[0] <= floor:
            series.popleft()
        retried = retried and len(series) <= self._det.threshold + BACKOFF_EXTRA
        if retried:
            backed.append(position)
        if position > self._seed_end - self._det.window:  # see seed()
            failures.append(as_failure(position, action, tool, fp, error, answered, key))
        rerun = rerun_key(action, key)  # None: nothing was attempted, see the module's docstring
        idle = again = count = 0
        if rerun is not None:
            idle = self._idle_run(fp, rerun, position, passed_at)
            again = 0 if retried else reruns.add(rerun)
        if not report:
            return None
        threshold = self._det.threshold
        if rerun is not None:
            if again >= threshold and passed_at:  # only the runs since it last passed count
                again = reruns.count_since(rerun, passed_at)
            # The same error whatever the call, since the tool last answered, and another tool's
            # failure until that tool answers (see the docstring).
            count = sum(
                1
                for f in failures
                if f[6] == key and f[0] not in backed and f[0] > max(answered_at, last_success(f[1]))
            )
        chain, dark = 0, (0, 1)
        if count < threshold and again < threshold and idle < threshold:
            chain = chain_length(failures)
            if chain < threshold:
                if rerun is None:
                    return None
                dark = dark_run(failures, tool, answered_at)
                if dark[0] < threshold + DARK_EXTRA:
                    return None
        return self._det._report(action, count, again, chain, dark, action.tick, action.at, idle)

    def _last_success(self, key: str) -> int:
        """The position of the last success of a tool or a call (``key``: its name or fingerprint;
        0: none kept), from the caller's successes once stepped on failures only."""
        successes = self._successes
        if successes is None:
            return self._ok.get(key, 0)
        index = successes.get(key, 0)
        return index - self._offset if index > self._since else self._ok.get(key, 0)

    def _waited_at(self, index: int, position: int) -> bool:
        """Whether the action at ``index`` (``position``) succeeded and waited."""
        successes = self._successes
        if successes is None or index <= self._since:
            return self._ok.waited_at(position)
        return successes.waited_at(index)

    def _changed_at(self) -> int:
        """The position of the newest success that wrote, acted or waited (0: none kept)."""
        successes = self._successes
        if successes is None:
            return self._ok.changed()
        index = successes.changed()
        return index - self._offset if index > self._since else self._ok.changed()

    def _idle_run(self, fp: str, rerun: Hashable, position: int, passed_at: int) -> int:
        """How many runs of call ``fp`` in the last 3W positions, this one at ``position``, failed as
        ``rerun`` says, nothing changed (written, done, waited for, passed) after the one before."""
        found = self._idle.get(fp)
        if (
            found is not None
            and found[0] == rerun
            and found[1]
            and found[1][-1] > passed_at
            and found[1][-1] > self._changed_at()  # read only when it decides: see Successes
        ):
            runs = found[1]
            runs.append(position)
        else:
            runs = deque([position])
            self._idle[fp] = (rerun, runs)
            if len(self._idle) > NAMES_KEPT:  # a new failing call at every action: forget the old
                floor = position - 3 * self._det.window
                for old in [k for k, (_, r) in self._idle.items() if r[-1] <= floor]:
                    del self._idle[old]
        floor = position - 3 * self._det.window
        while runs[0] <= floor:
            runs.popleft()
        return len(runs)
