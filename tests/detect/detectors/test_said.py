"""What an answer says of itself: nothing new, all clear, a passing run, a state on its way."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heartbeat.detect.detectors import said
from heartbeat.detect.detectors.fingerprints import action_keys
from heartbeat.detect.detectors.said import (
    ALL_CLEAR_MARK,
    NOTHING_NEW,
    PASSED_MARK,
    QUEUED_MARK,
    UNDERWAY_LONGEST,
    UNDERWAY_MARK,
    queued_result,
    said_of,
    underway_result,
)

_LONG = "x" * UNDERWAY_LONGEST  # longer than a status: its JSON field says it (Livy's batch, its URLs after)


@pytest.mark.parametrize(
    ("answer", "mark"),
    [
        ('{"id": "exp_41", "state": "RUNNING", "progress": 40, "stage": "write shards 4/10"}', UNDERWAY_MARK),
        ("failover in progress (step 2 of 4)", UNDERWAY_MARK),
        ("Deployment api-7f9c: pending", UNDERWAY_MARK),
        ('{"status": "in_progress", "conclusion": null}', UNDERWAY_MARK),
        ("build #4411 is still building", UNDERWAY_MARK),
        ('{"id": 4127, "state": "running", "appInfo": {"sparkUiUrl": "' + _LONG + '"}}', UNDERWAY_MARK),
        # a job waiting its turn (blind batch 66's queued eval, four hourly looks, was escalated as
        # a wait that froze): marked apart, heard unchanged for a while (see heartbeat.detect.idle)
        ("eval queued: waiting for a free slot in eval-pool", QUEUED_MARK),
        ('{"status": "QUEUED", "position": 7, "queue": "a100-80g"}', QUEUED_MARK),
        ('{"job": "ft-7b", "state": "eval_queued", "step": 120000}', QUEUED_MARK),
        ('{"id": 4127, "state": "queued", "appInfo": {"ui": "' + _LONG + '"}}', QUEUED_MARK),
    ],
)
def test_an_answer_naming_a_state_on_its_way_is_marked(answer: str, mark: str) -> None:
    """A job's status that says it is on its way has its result key marked: the same status heard
    at wake-up after wake-up is a wait that froze, no watcher's quiet round; one waiting its turn
    (queued) is marked apart: it stays as it is until the turn comes."""
    assert said_of(answer) == mark
    result = action_keys("jobs.get", {"id": 41}, answer, None, (), False)[2]
    assert result is not None and result[0] == mark
    assert underway_result(result) is (mark == UNDERWAY_MARK) and queued_result(result) is (
        mark == QUEUED_MARK
    )


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("api 61 days, www 61 days, status 14 days", None),
        ("lag 0.4 s", None),
        ("All systems operational", ALL_CLEAR_MARK),
        # a health check's HTTP verdict, its timing after (blind batch 54's endpoint sweeper)
        ("200 OK 126ms", ALL_CLEAR_MARK),
        ("HTTP/1.1 200 OK (43 ms)", ALL_CLEAR_MARK),
        ("200 OK: 2 failed checks", None),
        ("No new messages.", NOTHING_NEW),
        ("nothing running", None),  # none on its way
        ("export exp_41 is no longer running", None),
        ("running " + "x" * UNDERWAY_LONGEST, None),  # longer than a status: a log or a page
        ('{"status": "success", "log": "' + "running " * 60 + '"}', None),
    ],
)
def test_data_an_all_clear_or_a_long_page_is_no_state_on_its_way(answer: str, said: str | None) -> None:
    """Data (days left, a lag), what says nothing needs doing and a page longer than a status are
    not marked as on their way."""
    assert said_of(answer) == said
    result = action_keys("check", {}, answer, None, (), False)[2]
    assert not underway_result(result)


@pytest.mark.parametrize(
    ("answer", "passed"),
    [
        ("212 passed in 4.1s", True),  # a short summary, as `pytest -q` ends
        ("==== 3 passed, 1 deselected in 0.12s ====", True),
        ("1 failed, 211 passed in 4.1s", False),
        ("212 passed in 4.1s\nFAILED tests/test_x.py::test_y", False),
        ("all 212 checks passed", None),
    ],
)
def test_a_test_run_where_every_test_passed_is_marked_however_short(answer: str, passed: bool | None) -> None:
    """A passing run's summary alone ("212 passed in 4.1s") is a passing run as a whole report
    is: until 2026-12-06 only answers longer than 120 characters were read for it, and a suite
    passing after each dependency bumped was escalated as the same result again (live round 46)."""
    assert (said_of(answer) == PASSED_MARK) is bool(passed)


_BITS = ("running", "RUNNING", "Pending", "in progress", "IN_PROGRESS", "queued", "timed out", "time-out")
_BITS += ("TimeOut", "stuck", "nothing ", "no ", "0 ", "state", ":", '"', " ", "x", "-", "_", "\n", "ing")


@settings(max_examples=500, deadline=None, print_blob=True)
@given(bits=st.lists(st.sampled_from(_BITS), max_size=8))
def test_the_quick_test_before_the_underway_regex_changes_no_answer(bits: list[str]) -> None:
    """The substring test only saves time: whatever the regex finds holds one of its pieces."""
    text = "".join(bits)
    found = said._UNDERWAY.search(text) is not None
    assert not found or any(piece in text.lower() for piece in said._UNDERWAY_PIECES)
