"""``near_repeat``: the same call with only its numbers, dates or ids changing, going over old ground.

Paging through one file with a sliding line range, a poll whose arguments
carry a timestamp, a counter or a request id: no two calls are equal, but
their masked shape (see :mod:`.fingerprints`) is. Fires when the newest
action's shape occurs N times in the last W actions and those calls went
over old ground: among the shape's calls of the last 2W actions, a call
answered as it was before (paging back and forth over pages already seen),
three answers in a row the same (a poll whose answer stopped moving), or
answers already seen making up more than half of them. One-way reading
that sees new content each time is reading, not a repeat, and so is one
whose every ninth page is blank, two at a chapter's end, or a queue whose
tickets are two in five the same complaint: a pager, a crawler, a queue
worker closing ticket after ticket (each act confirmed alike is its own
ground), a feed bringing new items. All one call
with one result is a ``repeat``.

Only answers count as ground covered, not failures nor answers of nothing
(but the same call answered nothing again within one heartbeat): a crawler
whose fetches now and then meet the same ``503`` and are retried has read no
page twice, nor has a log tailed from its offset at each wake-up that
answers "no new lines". Failures are the error detectors' to judge, answers
of nothing ``empty``'s.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from ...config.file import ToolThreshold
from ...core.models import Anomaly
from .calls import CONFIRMATION_LONGEST, acts_by_name
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
from .empty import is_empty_answer
from .fingerprints import mask
from .said import all_clear_result

__all__ = ["NearRepeat", "NearRepeatTracker"]


@dataclass(frozen=True)
class NearRepeat(Windowed):
    """``near_repeat``: the newest masked shape occurs N times in the last W actions, over old ground."""

    threshold: int = 12
    window: int = 15
    exempt: Collection[str] = frozenset()
    tools: Mapping[str, ToolThreshold] = field(default_factory=dict)
    kind: str = field(default="near_repeat", init=False, repr=False)
    _limits: dict[str, int | None] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        need_int("near_repeat", "threshold", self.threshold)
        need_int("near_repeat", "window", self.window, self.threshold)
        object.__setattr__(self, "exempt", frozen_names(self.exempt))
        object.__setattr__(self, "tools", dict(self.tools))
        object.__setattr__(self, "_limits", tool_limits("near_repeat", self.threshold, self.tools))

    def __hash__(self) -> int:
        return hash((self.threshold, self.window, self.exempt, tuple(sorted(self.tools.items()))))

    def trips(self, tool: str, count: int) -> bool:
        """Whether ``count`` same-shape calls reach the threshold that applies to ``tool``."""
        limit = self._limits.get(tool, self.threshold)
        return limit is not None and count >= limit

    @property
    def history_needed(self) -> int:
        """Past actions this detector needs to see: twice its window, where old ground is looked for."""
        return 2 * self.window

    def check(self, history: History, now: datetime) -> Anomaly | None:
        """Whether the newest action's shape reaches N in the window with varying calls, over old ground."""
        last = history.last
        if last is None or last.tool in self.exempt:
            return None
        longer = [a for a in history.actions if a.tool not in self.exempt][-2 * self.window :]
        same = [a for a in longer[-self.window :] if a.shape == last.shape]
        exact = sum(1 for a in same if (a.fingerprint, a.result) == (last.fingerprint, last.result))
        if not self.trips(last.tool, len(same)) or exact == len(same):
            return None
        if not _old_ground([a for a in longer if a.shape == last.shape and a.error is None]):
            return None  # reading, not going over old ground
        return self._report(last, len(same), history.tick, now)

    def tracker(self, history: History) -> ActionTracker:
        """An incremental ``check`` seeded from ``history``."""
        return NearRepeatTracker(self, history)

    def _report(self, action: ActionView, count: int, tick: int, at: datetime) -> Anomaly:
        return make_anomaly(
            "near_repeat",
            f"{count} of the last {self.window} actions were the same call with only numbers, dates "
            f"or ids changed ({mask(action.summary)}), some answering what others already had; "
            f"last: {action.summary}",
            tick=tick,
            at=at,
            action=action,
            evidence={
                "count": count,
                "window": self.window,
                # The threshold that applied: a tool's own from [detectors.repeat] tools, if higher.
                "threshold": self._limits.get(action.tool) or self.threshold,
                "call": action.summary,
                "shape": mask(action.summary),
                # The masked shape, not the call: the same for every call of the run, so the
                # policy sees the agent keep at it after it was told to stop.
                "avoid": f"more calls like {mask(action.summary)} with other numbers",
            },
        )


class NearRepeatTracker(StepTracker):
    """Shape counts over the window; the calls of twice the window are looked at only when a shape
    reaches N."""

    __slots__ = ("_counts", "_det", "_exempt", "_memory", "_min", "_recent", "_window")

    def __init__(self, det: NearRepeat, history: History) -> None:
        self._det = det
        self._exempt = det.exempt
        self._window = det.window
        self._memory = 2 * det.window
        # No tool's threshold is below the detector's: fewer same shapes never trip.
        self._min = det.threshold
        # (shape, action) per position over twice the window, counted over the newest W: the
        # action's call and result are read only when its shape reaches N, so most steps build
        # no key but the shape.
        self._recent: deque[tuple[str | None, ActionView]] = deque()
        self._counts: dict[str | None, int] = {}
        self.seed(tail_of(history.actions, 2 * det.window, det.exempt))

    def step(
        self, action: ActionView, tool: str, fp: str, length: int | None, error: str | None, report: bool
    ) -> Anomaly | None:
        """:meth:`push` with the action's fields already read (see ``BuiltinStep``)."""
        if tool in self._exempt:
            return None
        shape = action.shape
        recent = self._recent
        counts = self._counts
        recent.append((shape, action))
        if len(recent) > self._window:
            old = recent[-self._window - 1][0]  # it has just left the window
            left = counts[old] - 1
            if left:
                counts[old] = left
            else:
                del counts[old]
            if len(recent) > self._memory:
                recent.popleft()
        count = counts[shape] = counts.get(shape, 0) + 1
        if not report or count < self._min or not self._det.trips(tool, count):
            return None
        # Rare: is there more than one call+result among this shape's? (one is a repeat)
        result = action.result
        window = list(recent)[-self._window :]
        if all(a.fingerprint == fp and a.result == result for s, a in window if s == shape):
            return None
        if not _old_ground([a for s, a in recent if s == shape and a.error is None]):
            return None  # reading, not going over old ground
        return self._det._report(action, count, action.tick, action.at)


def _old_ground(answered: list[ActionView]) -> bool:
    """Whether a shape's calls that did not fail (oldest first) went over old ground: a call
    answered as it was before (paging back), three answers in a row the same (a poll that stopped
    moving), or answers already seen making up more than half of them. A pager's blank page every
    ninth, two at a chapter's end ("This page intentionally left blank."), is reading on (until
    2026-12-06 any answer seen before was old ground), and so is a helpdesk queue whose tickets
    are two in five the same complaint (until 2026-12-06 a quarter was old ground). An answer of
    nothing read no page: it is old ground only as the same call answered so again within its
    heartbeat (a log tailed from its offset, "no new lines" at each wake-up, is a tailer's quiet).
    An all-clear report is each call's own verdict ("OK: checksum matches", file after file), and
    an act's confirmation in a line its own act (``close_ticket`` on ticket after ticket, each
    "Ticket closed."): old ground only as the same call answered so again."""
    seen: set[tuple[str, str | None]] = set()
    asked: set[tuple[str, int]] = set()  # the calls answered nothing, and in which heartbeat
    results: set[str | None] = set()
    again = alike = read = 0
    before: object = None
    for action in answered:
        call = (action.fingerprint, result := action.result)
        if is_empty_answer(action.output_len, result):
            if (call[0], action.tick) in asked:
                return True
            asked.add((call[0], action.tick))
            continue
        read += 1
        if all_clear_result(result) or _confirmed(action):  # ground of its own, unless this very call
            if call in seen:
                return True
            seen.add(call)
            before = None
            continue
        alike = alike + 1 if result == before else 1
        if call in seen or alike >= _STALLED:
            return True
        again += result in results
        seen.add(call)
        results.add(result)
        before = result
    return again * _SHARE_DENOMINATOR > read


def _confirmed(action: ActionView) -> bool:
    """Whether ``action`` is an act (a tool named for one) confirmed in a line, as acts confirm."""
    return (action.output_len or 0) <= CONFIRMATION_LONGEST and acts_by_name(action.tool)


_STALLED = 3  # the same answer this many times in a row: a poll that stopped moving
_SHARE_DENOMINATOR = 2  # answers seen before, more than a half of them, are ground gone over
