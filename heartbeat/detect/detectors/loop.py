"""``loop``: a cycle of 2+ distinct calls repeating back to back at the tail of the window.

A cycle one of whose calls answered something new in one of the passes it
needs (a CI run watched between sleeps whose jobs finish one by one, a
bisect's next commit benchmarked) watches something that moves: no loop. The answers
are compared as their result keys, volatile values masked, so a clock in
an answer does not make it new; an act's answer is no news (see
:func:`~.calls.acts_by_name`): a confirmation, or a customer's reply to the
same message sent again, in other words each time. A cycle every step of
which found nothing yet (feeds asked what changed since their ETags,
answered "304 Not Modified") is a reader waiting for news, no loop. A cycle
that waits (a ``sleep`` between its rounds) is a poll by design and needs
two passes more:
endpoints polled in rounds answer alike until one of them moves, and a job
queued or a rollout's replicas may stay as they are for a few rounds before
they do; a poller sleeping between rounds spends little while it waits.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice

from ...core.models import Anomaly, clip
from .calls import acts_by_name, keeps_record, pauses, waits
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
from .empty import idle_poll

__all__ = ["Loop", "LoopTracker"]

_CYCLE_SHOWN = 6  # steps of a cycle written into a message; the rest are counted
_CYCLE_KEPT = 20  # steps of a cycle kept in the evidence, so state.json stays small


WAIT_EXTRA = 2
"""How many more passes than R a cycle that waits needs (see :meth:`Loop.repeats_for`)."""


def moved_on(actions: Sequence[ActionView], period: int, passes: int = 2) -> bool:
    """Whether one of the newest ``passes`` passes of a ``period``-step cycle got an answer the
    pass before it did not, from a call that is no act (or one that waits: what it answers is what
    it waited for, ``wait_for_job``'s status).

    ``actions``: the newest actions, oldest first, at least ``passes`` passes' worth.
    """
    n = len(actions)
    for k in range(1, period * (passes - 1) + 1):
        newest = actions[n - k]
        if newest.result != actions[n - k - period].result and (
            not acts_by_name(newest.tool) or waits(newest.tool, newest.summary)
        ):
            return True
    return False


def polls_for_news(cycle: Iterable[ActionView]) -> bool:
    """Whether every step of ``cycle`` is a poll that found nothing yet (a feed asked what changed
    since its ETag, answered "304 Not Modified"; a long poll's empty answer; a look after the
    cycle's pause, an inbox answering "No new messages." after ``sleep 60``), the pause itself
    (whatever it says of itself: "slept 60s"), or the agent's own record of it (a log line, the
    poll's time touched), one poll at least: no loop, however often it goes round, but a reader
    waiting for news (see :func:`.empty.idle_poll`)."""
    steps = tuple(cycle)
    pause = [action.error is None and pauses(action.tool, action.summary) for action in steps]
    paused = any(pause)
    polled = False
    for action, paused_here in zip(steps, pause, strict=True):
        if paused_here:
            continue
        if idle_poll(action, action.output_len, paused):
            polled = True
        elif action.error is not None or not keeps_record(action.tool, action.summary):
            return False
    return polled


def _cycle_text(summaries: Sequence[str]) -> str:
    shown = [clip(s, 80) or "" for s in summaries[:_CYCLE_SHOWN]]
    more = len(summaries) - len(shown)
    return " -> ".join(shown) + (f" -> … ({more} more)" if more else "")


@dataclass(frozen=True)
class Loop(Windowed):
    """``loop``: a cycle of 2+ distinct fingerprints repeats back to back at the tail of the window."""

    window: int = 20
    repeats: int = 2
    exempt: Collection[str] = frozenset()
    kind: str = field(default="loop", init=False, repr=False)

    def __post_init__(self) -> None:
        need_int("loop", "window", self.window)
        need_int("loop", "repeats", self.repeats)
        object.__setattr__(self, "exempt", frozen_names(self.exempt))

    @property
    def history_needed(self) -> int:
        """Past actions this detector needs to see."""
        return self.window

    def check(self, history: History, now: datetime) -> Anomaly | None:
        """The shortest cycle the newest action completes, if any."""
        last = history.last
        if last is None or last.tool in self.exempt:
            return None
        seq = [a for a in history.actions if a.tool not in self.exempt][-self.window :]
        fps = [a.fingerprint for a in seq]
        n = len(fps)
        run = 1
        while run < n and fps[n - 1 - run] == fps[-1]:
            run += 1
        for period in range(run + 1, n // self.repeats + 1):
            cycle = seq[-period:]
            failing = any(a.error is not None for a in cycle)
            waiting = any(waits(a.tool, a.summary) for a in cycle)
            passes = self.repeats_for(period, failing, waiting)
            need = period * (passes - 1)
            matched = 0
            while matched < n - period and fps[n - 1 - matched] == fps[n - 1 - matched - period]:
                matched += 1
            if (
                matched >= need
                and not moved_on(seq[-passes * period :], period, passes)
                and not polls_for_news(cycle)
            ):
                return self._report(seq[-period:], matched, history.tick, now)
        return None

    def repeats_for(self, period: int, failing: bool = False, waiting: bool = False) -> int:
        """Back-to-back passes a cycle needs: one more for 2 steps of which one failed, two more
        for a cycle that waits.

        Twice "search q, read u" is redoing finished work; twice "a step
        that failed, then another" is a retry (a harness asking to confirm a
        submit after a malformed turn makes one by itself), which
        ``recurring_error`` judges: such a cycle is a loop at its third pass.
        Twice "poll a, poll b, sleep" is a poller that found nothing new yet,
        and so are three times "get the job, sleep 900" for a job still queued.
        """
        return self.repeats + (period == 2 and failing) + WAIT_EXTRA * waiting

    def tracker(self, history: History) -> ActionTracker:
        """An incremental ``check`` seeded from ``history``."""
        return LoopTracker(self, history)

    def _report(self, tail: Sequence[ActionView], matched: int, tick: int, at: datetime) -> Anomaly:
        period = len(tail)
        span = min(matched + period, self.window)
        repeats = span // period
        # Start the cycle where the repetition started, not wherever it stands now.
        shift = span % period
        cycle = [*tail[period - shift :], *tail[: period - shift]]
        summaries = [a.summary for a in cycle]
        text = _cycle_text(summaries)
        last = tail[-1]
        return make_anomaly(
            "loop",
            f"the cycle {text} repeated {repeats} times back to back "
            f"({period} steps, the last {span} actions)",
            tick=tick,
            at=at,
            action=last,
            evidence={
                "period": period,
                "repeats": repeats,
                "actions": span,
                "window": self.window,
                "cycle": summaries[:_CYCLE_KEPT],
                "avoid": text,
            },
        )


_NO_RUNS: dict[int, int] = {}  # shared and never written: no period has a match run


def _seed_runs(fps: Sequence[str], periods: Iterable[int]) -> dict[int, int]:
    """For each period p, how many newest positions i in a row have ``fps[i] == fps[i - p]``."""
    runs: dict[int, int] = {}
    last = len(fps) - 1
    for p in periods:
        m = 0
        while last - m - p >= 0 and fps[last - m] == fps[last - m - p]:
            m += 1
        runs[p] = m
    return runs


class LoopTracker(StepTracker):
    """Per-period match runs, kept only for periods where the new fingerprint sits.

    ``_runs[p]`` counts how many newest positions i in a row have
    ``fp[i] == fp[i - p]``. A new fingerprint extends the runs of exactly
    the periods p where it occurred p positions back, and ends every other
    run, so one push costs the number of its recent occurrences (found
    through ``_where``, so a window of 500 costs no scan). Periods not
    longer than the current run of identical fingerprints are never kept:
    they cannot form a cycle of distinct fingerprints, and the first
    different fingerprint ends them anyway.

    Seeding is lazy, since a tick re-seeds a tracker and often pushes no
    loop-relevant action: the positions, the current run and the seed's
    fingerprints are kept, and the match runs are counted from those at the
    first push, only for the periods where its fingerprint sits. Only the
    last ``window`` actions are seeded from: a reported loop spans at most
    the window (see :meth:`Loop._report`), so older ones change no answer.
    """

    __slots__ = (
        "_det",
        "_exempt",
        "_fp",
        "_max_period",
        "_n",
        "_need",
        "_passes",
        "_run",
        "_runs",
        "_seed",
        "_where",
        "_window",
    )

    def __init__(self, det: Loop, history: History) -> None:
        self._det = det
        self._exempt = det.exempt
        self._max_period = det.window // det.repeats
        self._need = det.repeats - 1
        self._window = det.window
        tail = tail_of(history.actions, det.window, det.exempt)
        n = self._n = len(tail)
        # The last window actions, oldest first: the newest pass of a cycle and the one before
        # (whether it moved on), and, as far back as the longest period, where each
        # fingerprint sits among them (global positions, oldest first).
        self._passes: deque[ActionView] = deque(tail, maxlen=det.window)
        recent = tail[max(0, n - self._max_period) :]
        where: dict[str, list[int]] = {}
        for i, action in enumerate(recent, n - len(recent)):
            where.setdefault(action.fingerprint, []).append(i)
        self._where = where
        self._runs: dict[int, int] = _NO_RUNS
        fps = [action.fingerprint for action in tail]
        self._seed: list[str] | None = fps or None
        self._fp = fps[-1] if fps else ""
        run = 0
        for fp in reversed(fps):
            if fp != self._fp:
                break
            run += 1
        self._run = run

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
        if tool in self._exempt:
            return None
        i = self._n
        self._n = i + 1
        if fp == self._fp:
            run = self._run = self._run + 1
        else:
            self._fp = fp
            run = self._run = 1
        best = 0
        passes = self._passes
        passes.append(action)
        positions_of = self._where
        where = positions_of.get(fp)
        if where is None:
            positions_of[fp] = [i]
            self._runs = _NO_RUNS
            self._seed = None  # no run goes on: the seed's are not needed any more
        else:
            runs = self._runs
            seed = self._seed
            if seed is not None:  # the first push after seeding: count the seed's runs now
                runs = _seed_runs(seed, [i - j for j in where])
                self._seed = None
            new: dict[int, int] = {}
            need = self._need
            window = self._window  # locals: a window of 500 can hold many positions of one call
            count = runs.get
            # Oldest first, so periods fall and the last match is the shortest; the newest
            # run-1 positions are the current run itself (periods <= run) and are skipped.
            for j in where if run == 1 else where[: max(0, len(where) - run + 1)]:
                p = i - j
                m = new[p] = count(p, 0) + 1
                # A 2-step cycle with a failed step needs one more pass, one that waits two
                # (Loop.repeats_for): the latter looked at only for a cycle already found.
                extra = int(p == 2 and (error is not None or passes[-2].error is not None))
                if m >= p * (need + extra) and p * (need + 1 + extra) <= window:
                    if any(waits(a.tool, a.summary) for a in islice(passes, len(passes) - p, None)):
                        extra += WAIT_EXTRA
                        if m < p * (need + extra) or p * (need + 1 + extra) > window:
                            continue
                    if not moved_on(passes, p, need + 1 + extra) and not polls_for_news(
                        islice(passes, len(passes) - p, None)
                    ):
                        best = p
            where.append(i)
            self._runs = new
        if len(passes) > self._max_period:  # the action a longest period back leaves the positions
            old = passes[-1 - self._max_period].fingerprint
            positions = positions_of[old]
            if len(positions) == 1:
                del positions_of[old]
            else:
                del positions[0]
        if not best or not report:
            return None
        tail = list(islice(passes, len(passes) - best, None))
        return self._det._report(tail, self._runs[best], action.tick, action.at)
