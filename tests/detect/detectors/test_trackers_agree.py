"""The incremental trackers answer every push exactly as the reference ``check`` does."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heartbeat.core.models import REFUSED, ActionRecord
from heartbeat.detect.detectors import (
    BUILT_IN,
    LAZY_TRACKERS,
    SPARSE_TRACKERS,
    STEP_TRACKERS,
    Cycle,
    Empty,
    ErrorRate,
    History,
    Loop,
    NearRepeat,
    NoProgress,
    Recurring,
    RecurringError,
    Repeat,
)
from heartbeat.detect.detectors.window import Successes

from .helpers import actions, samples

_TOOLS = ["search", "read", "get_status", "log", "think", "respond", "sleep", "edit"]


_call = st.fixed_dictionaries(
    {
        "tool": st.sampled_from(_TOOLS),
        # Two of them share most of their words: one rewords the other (recurring_error).
        "args": st.sampled_from(
            [
                None,
                {"q": 1},
                {"q": 2},
                {"q": 12},
                {"page": "p3"},
                *({"q": "red shoes"}, {"q": "cheap red shoes"}),
                *({"channel": "eng"}, {"channel": "ops"}),  # a round over sources (empty)
                # one call, its time moved on (a re-run: recurring_error)
                *({"since": "2026-12-03T21:00:00Z"}, {"since": "2026-12-03T22:00:00Z"}),
            ]
        ),
        "output": st.sampled_from(
            [
                *(
                    None,
                    "",
                    "ok",
                    "a long enough output",
                    "All checks passed!",
                ),  # an all-clear: see recurring
                *("same " * 30 + "1", "same " * 30 + "2", "other " * 30),
            ]
        ),
        "error": st.sampled_from([None, "boom", "timeout", REFUSED]),
        "tick": st.integers(1, 3),
    }
)


# Short patterns repeated a few times, so loops and runs actually occur.
_calls = st.lists(
    st.tuples(st.lists(_call, min_size=1, max_size=3), st.integers(1, 4)).map(lambda t: t[0] * t[1]),
    max_size=8,
).map(lambda parts: [call for part in parts for call in part])


_EXEMPT = st.sampled_from([frozenset(), frozenset({"log"})])
# Per-tool thresholds as ``[detectors.repeat] tools`` passes them on: raised, lowered, off.
_TOOL_LIMITS = st.sampled_from([{}, {"read": 2}, {"search": 5}, {"get_status": "off"}])

# One strategy per built-in action detector, every parameter its tracker reads drawn.
# test_every_built_in_tracker_is_checked_here keeps this list complete.
ACTION_DETECTORS: dict[type, st.SearchStrategy[Any]] = {
    Repeat: st.builds(
        Repeat,
        threshold=st.integers(2, 4),
        tools=st.sampled_from([{}, {"read": 2}, {"get_status": "off"}]),
        exempt=_EXEMPT,
    ),
    Loop: st.builds(
        Loop,
        window=st.integers(4, 14),
        repeats=st.integers(2, 3),
        exempt=_EXEMPT,
    ),
    Empty: st.builds(
        Empty,
        threshold=st.integers(1, 3),
        max_chars=st.sampled_from([0, 2, 10]),
        exempt=st.sampled_from([frozenset(), frozenset({"read"})]),
    ),
    ErrorRate: st.builds(
        ErrorRate,
        window=st.integers(1, 6),
        threshold=st.sampled_from([0.3, 0.5, 2 / 3, 1.0]),
        exempt=_EXEMPT,
    ),
    NearRepeat: st.integers(2, 5).flatmap(
        lambda n: st.builds(
            NearRepeat,
            threshold=st.just(n),
            window=st.integers(n, 8),
            exempt=_EXEMPT,
            tools=_TOOL_LIMITS,
        )
    ),
    Recurring: st.integers(2, 4).flatmap(
        lambda n: st.builds(
            Recurring,
            threshold=st.just(n),
            window=st.integers(n, 10),
            min_chars=st.sampled_from([0, 10]),
            exempt=_EXEMPT,
            tools=_TOOL_LIMITS,
        )
    ),
    RecurringError: st.integers(2, 4).flatmap(
        lambda n: st.builds(
            RecurringError,
            threshold=st.just(n),
            window=st.integers(n, 10),
            exempt=_EXEMPT,
        )
    ),
    Cycle: st.integers(2, 5).flatmap(
        lambda n: st.builds(
            Cycle,
            threshold=st.just(n),
            window=st.integers(n + 1, 12),
            exempt=_EXEMPT,
        )
    ),
}
_detector = st.one_of(*ACTION_DETECTORS.values())


def _assert_agrees(detector: Any, records: list[ActionRecord], seed: int) -> None:
    """Seeded from the first ``seed`` records, the tracker answers every later push as check does
    on the whole history."""
    split = min(seed, len(records))
    tracker = detector.tracker(History(records[:split]))
    for i in range(split, len(records)):
        expected = detector.check(History(records[: i + 1], tick=records[i].tick), records[i].at)
        got = tracker.push(records[i])
        assert (got and got.model_dump()) == (expected and expected.model_dump())


@settings(max_examples=600, deadline=None, print_blob=True)  # a failure prints how to replay it
@given(
    detector=_detector,
    calls=_calls,
    seed=st.integers(0, 40),
    polling=st.booleans(),
)
def test_action_trackers_agree_with_check(
    detector: Repeat | Loop | Empty | ErrorRate | NearRepeat | Recurring | RecurringError | Cycle,
    calls: list[dict[str, Any]],
    seed: int,
    polling: bool,
) -> None:
    """Seeded from any prefix, a tracker answers every push exactly as check on the whole history."""
    records = actions(calls, polling=["get_status"] if polling else [])
    _assert_agrees(detector, records, seed)


def _silenced(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every failure with nothing to show (``grep`` finding no match): a tool may go dark."""
    return [{**call, "output": ""} if call["error"] else call for call in calls]


@settings(max_examples=300, deadline=None, print_blob=True)  # a failure prints how to replay it
@given(
    calls=_calls.map(_silenced),
    threshold=st.integers(2, 3),
    window=st.integers(4, 10),
    seed=st.integers(0, 40),
    exempt=_EXEMPT,
)
def test_recurring_error_tracker_agrees_with_check_when_tools_go_dark(
    calls: list[dict[str, Any]], threshold: int, window: int, seed: int, exempt: frozenset[str]
) -> None:
    """Silent failures whatever the call, the tool gone dark as often as not: it agrees too."""
    detector = RecurringError(threshold=threshold, window=window, exempt=exempt)
    records = actions(calls)
    _assert_agrees(detector, records, seed)


def _notes_worded_anew(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every ``think`` a new note, as an agent's notes are: no revisit, and no observation either."""
    return [
        {**call, "args": {"thought": i}} if call["tool"] == "think" else call for i, call in enumerate(calls)
    ]


@settings(max_examples=300, deadline=None, print_blob=True)  # a failure prints how to replay it
@given(
    calls=_calls.map(_notes_worded_anew),
    threshold=st.integers(6, 12),
    extra=st.integers(1, 20),
    seed=st.integers(0, 40),
    exempt=_EXEMPT,
)
def test_cycle_tracker_agrees_with_check_when_notes_are_set_aside(
    calls: list[dict[str, Any]], threshold: int, extra: int, seed: int, exempt: frozenset[str]
) -> None:
    """Windows wide enough for the share of revisits without notes to trip before N: it agrees too."""
    detector = Cycle(threshold=threshold, window=threshold + extra, exempt=exempt)
    records = actions(calls)
    _assert_agrees(detector, records, seed)


@settings(max_examples=200, deadline=None, print_blob=True)  # a failure prints how to replay it
@given(
    values=st.lists(st.sampled_from([None, 0.0, 0.004, 0.01, 1.0]), max_size=25),
    n=st.integers(2, 6),
    delta=st.sampled_from([0.0, 0.005, 0.01, 0.5]),
    seed=st.integers(0, 25),
)
def test_progress_tracker_agrees_with_check(
    values: list[float | None], n: int, delta: float, seed: int
) -> None:
    """The no_progress tracker answers every sample exactly as check does."""
    detector = NoProgress(samples=n, min_delta=delta)
    progress = samples(values)
    split = min(seed, len(progress))
    tracker = detector.tracker(History(progress=progress[:split]))
    for i in range(split, len(progress)):
        expected = detector.check(History(progress=progress[: i + 1], tick=i + 1), progress[i].at)
        got = tracker.push(progress[i])
        assert (got and got.model_dump()) == (expected and expected.model_dump())


def test_every_built_in_tracker_is_checked_here() -> None:
    """Each built-in detector has a strategy above (no_progress: its own test): every tracker is checked."""
    assert set(ACTION_DETECTORS) | {NoProgress} == set(BUILT_IN)
    trackers = {type(cls().tracker(History())) for cls in ACTION_DETECTORS}
    assert trackers == set(STEP_TRACKERS)
    assert trackers | {type(NoProgress().tracker(History()))} == set(LAZY_TRACKERS)


@pytest.mark.parametrize("cls", list(ACTION_DETECTORS), ids=lambda cls: cls.__name__)
@settings(max_examples=300, deadline=None, print_blob=True)  # a failure prints how to replay it
@given(
    data=st.data(),
    calls=_calls,
    seed=st.integers(0, 40),
    reports=st.lists(st.booleans(), max_size=40),
)
def test_trackers_told_not_to_report_move_on_all_the_same(
    cls: type, data: st.DataObject, calls: list[dict[str, Any]], seed: int, reports: list[bool]
) -> None:
    """``push(action, report=False)`` builds no anomaly, yet every later push answers as check does.

    The Monitor pushes so once a kind was reported in the tick.
    """
    detector = data.draw(ACTION_DETECTORS[cls], label="detector")
    records = actions(calls)
    split = min(seed, len(records))
    tracker = detector.tracker(History(records[:split]))
    for i in range(split, len(records)):
        report = reports[i] if i < len(reports) else True
        got = tracker.push(records[i], report=report)
        if not report:
            assert got is None
            continue
        expected = detector.check(History(records[: i + 1], tick=records[i].tick), records[i].at)
        assert (got and got.model_dump()) == (expected and expected.model_dump())


@pytest.mark.parametrize("cls", [ErrorRate, RecurringError], ids=lambda cls: cls.__name__)
@settings(max_examples=150, deadline=None, print_blob=True)  # a failure prints how to replay it
@given(data=st.data(), calls=_calls, seed=st.integers(0, 40))
def test_error_trackers_fed_only_failures_agree_with_check(
    cls: type, data: st.DataObject, calls: list[dict[str, Any]], seed: int
) -> None:
    """After ``errors_only``, an error tracker handed the failed actions alone answers each as check does.

    The Monitor skips the successes for these trackers when none of their tools is exempt; the
    actions in between are counted from the indices, and the index of each tool's and each
    call's last success is kept for them (here as the Monitor does).
    """
    detector = data.draw(ACTION_DETECTORS[cls], label="detector")
    records = actions(calls)
    if not _fed_failures_agree(detector, records, min(seed, len(records))):
        assert detector.exempt  # it may refuse only when it has exempt tools of its own


def _fed_failures_agree(detector: Any, records: list[Any], split: int) -> bool:
    """Seeded from ``records[:split]``, then ``errors_only`` and handed the failures alone, the
    tracker answers each as check does (False: it refused errors_only)."""
    tracker = detector.tracker(History(records[:split]))
    assert type(tracker) in SPARSE_TRACKERS
    successes = Successes(50)  # as the Monitor keeps it
    if not tracker.errors_only(split, successes):  # the newest index seen: records are numbered from 1
        return False
    for i in range(split, len(records)):
        if records[i].error is None:
            successes.note(records[i].tool, records[i].fingerprint, records[i].summary, records[i].index)
            continue
        expected = detector.check(History(records[: i + 1], tick=records[i].tick), records[i].at)
        got = tracker.push(records[i])
        assert (got and got.model_dump()) == (expected and expected.model_dump())
    return True


@pytest.mark.parametrize("between", [None, "search", "read"])
def test_recurring_error_fed_only_failures_tells_an_answered_tool_from_the_successes(
    between: str | None,
) -> None:
    """A reworded retry is one only if its tool did not answer in between: told from the
    successes the caller kept, before errors_only (in the seed) or after."""
    # Each failure its own error text, alike but for the query it quotes: only the rewording
    # can make them one.
    calls: list[dict[str, Any]] = [{"tool": "search", "args": {"q": "shoes"}, "error": "no shoes"}]
    if between is not None:
        calls.append({"tool": between, "args": {"q": 1}, "output": "a long enough output"})
    calls += [
        {"tool": "search", "args": {"q": "red shoes"}, "error": "no red shoes"},
        {"tool": "search", "args": {"q": "cheap red shoes"}, "error": "no cheap red shoes"},
    ]
    records = actions(calls)
    detector = RecurringError(threshold=3)
    for split in range(len(records)):
        assert _fed_failures_agree(detector, records, split)
    last = detector.check(History(records), records[-1].at)
    assert (last is None) == (between == "search")  # the answer in between breaks the chain


def test_recurring_error_fed_only_failures_needs_the_successes() -> None:
    """Without the successes kept as :class:`Successes` (each tool's last success, and which
    changed something) it cannot tell a reworded retry or a run after an edit: it says no."""
    tracker = RecurringError().tracker(History())
    assert tracker.errors_only(0) is False  # type: ignore[attr-defined]
    assert tracker.errors_only(0, {}) is False  # type: ignore[attr-defined]
    assert tracker.errors_only(0, Successes(30)) is True  # type: ignore[attr-defined]


def test_recurring_error_agrees_on_retries_backing_off_past_the_reference_history() -> None:
    """A call retried after each of four sleeps, then at once three times: the reference ``check``
    keeps 3W actions, so a run of retries longer than that was counted from a later first try there
    than in the tracker (hypothesis found it at W = 4). Retries count within W of each other."""
    boom = {"tool": "read", "args": {"q": 1}, "output": "", "error": "boom"}
    log = {"tool": "log", "args": None, "output": None}
    sleep = {"tool": "sleep", "args": None, "output": None}
    search = {"tool": "search", "args": None, "output": None}
    calls = [boom, log, sleep] * 4 + [boom, search] * 3
    detector = RecurringError(threshold=3, window=4, exempt=frozenset({"log"}))
    _assert_agrees(detector, actions([{"error": None, **c} for c in calls]), 0)
