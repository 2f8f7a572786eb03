"""Detection v2: the patterns real agents get stuck in, and the healthy work that must stay silent.

Each case is a small history shaped like the real runs in the corpus
(coding agents, customer-service agents, ReAct shopping and fact-checking).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from test_detectors import Call, actions, trips

from heartbeat.config import DetectorsConfig
from heartbeat.detectors import (
    Cycle,
    Detector,
    Empty,
    NearRepeat,
    Recurring,
    RecurringError,
    Repeat,
    build_detectors,
    mask,
    prints,
)
from heartbeat.models import ActionRecord, Anomaly

PYTEST_FAIL = (
    "============================= test session starts ==============================\n"
    "collected 12 items\n\ntests/test_x.py ....F.......\n\n"
    "FAILED tests/test_x.py::test_parse - AssertionError: assert 'a' == 'b'\n"
    "========================= 1 failed, 11 passed in {t}s =========================="
)


def fired(records: Sequence[ActionRecord], config: DetectorsConfig | None = None) -> dict[str, int]:
    """Each default detector kind that fires, with the 1-based action where it first does."""
    found: dict[str, int] = {}
    for detector in build_detectors(config or DetectorsConfig()):
        for i, hit in enumerate(trips(detector, records), 1):
            if hit is not None:
                found.setdefault(detector.kind, i)
                break
    return found


def first(detector: Detector, records: Sequence[ActionRecord]) -> tuple[int, Anomaly] | None:
    """The first (1-based action, anomaly) ``detector`` reports on ``records``."""
    for i, hit in enumerate(trips(detector, records), 1):
        if hit is not None:
            return i, hit
    return None


# -- fingerprints: shape and result ------------------------------------------------


def test_shape_leaves_out_numbers_dates_and_ids() -> None:
    """Calls that differ only in line ranges, timestamps or numbered ids share one shape."""
    one = prints("sed", {"cmd": "sed -n '1,20p' src/app.py"})
    two = prints("sed", {"cmd": "sed -n '559,650p' src/app.py"})
    other = prints("sed", {"cmd": "sed -n '1,20p' src/cli.py"})
    assert one.shape == two.shape != other.shape
    assert one.fingerprint != two.fingerprint
    poll = [prints("get_job", {"id": "job-7", "since": f"2024-05-0{d}T10:00:0{d}Z"}) for d in range(1, 4)]
    assert len({p.shape for p in poll}) == 1
    assert prints("flight", {"n": "HAT052"}).shape == prints("flight", {"n": "HAT030"}).shape


def test_result_masks_digits_of_long_outputs_only() -> None:
    """A test log's timings do not make a new result; a short answer's number does."""
    assert (
        prints("pytest", {}, PYTEST_FAIL.format(t="0.31")).result
        == prints("pytest", {}, PYTEST_FAIL.format(t="0.57")).result
    )
    assert (
        prints("status", {}, "running, 45% done").result != prints("status", {}, "running, 46% done").result
    )
    assert prints("think", {}, "").result is not None
    assert prints("write", {}, None).result is None
    assert prints("run", {}, None, "boom").result == prints("run", {"x": 1}, None, "boom").result


def test_mask_is_what_a_person_reads() -> None:
    """The masked shape shown in messages replaces each word holding a digit with #."""
    assert mask("sed -n '559,650p' src/app.py") == "sed -n '#,#' src/app.py"
    assert mask('{"since":"2024-05-01T10:00:00Z"}') == '{"since":"#"}'


# -- near_repeat -------------------------------------------------------------------------


def test_paging_through_one_file_is_a_near_repeat_naming_the_call() -> None:
    """A sliding line range over one file, action after action, trips near_repeat."""
    calls: list[Call] = [
        {
            "tool": "sed",
            "args": {"cmd": f"sed -n '{i * 40 + 1},{i * 40 + 40}p' big.py"},
            "output": f"code {i}",
        }
        for i in range(16)
    ]
    hit = first(NearRepeat(), actions(calls))
    assert hit is not None and hit[0] == 12
    assert "only numbers, dates or ids changed" in hit[1].message and "big.py" in hit[1].message
    assert hit[1].evidence["count"] == 12


def test_fetching_ten_items_by_number_is_not_a_near_repeat() -> None:
    """Enumerating items by numeric id, each answering something new, is work."""
    calls: list[Call] = [
        {"tool": "get_item", "args": {"id": 1000 + i}, "output": f"item {1000 + i}: " + "w" * (i + 12)}
        for i in range(10)
    ]
    assert fired(actions(calls)) == {}


def test_a_timestamped_poll_that_sees_nothing_new_is_caught() -> None:
    """A poll whose arguments carry a timestamp and whose answer never changes."""
    status = '{"job": "job-7", "state": "pending", "eta": null}'
    calls: list[Call] = [
        {"tool": "get_job", "args": {"id": "job-7", "since": f"2024-05-01T10:{m:02d}:00Z"}, "output": status}
        for m in range(14)
    ]
    found = fired(actions(calls))
    assert found.get("recurring") == 5
    assert found.get("near_repeat") == 12
    assert "repeat" not in found  # no two calls are equal
    # A bare "pending" says too little to match on shape alone: near_repeat still sees it.
    short = [{**call, "output": "pending"} for call in calls]
    assert fired(actions(short)) == {"near_repeat": 12}


def test_healthy_polling_that_sees_new_results_stays_silent() -> None:
    """A status poll whose answer moves on is work, with or without ``polling`` configured."""
    calls: list[Call] = [
        {"tool": "get_status", "args": {"job": "job-7"}, "output": f"running, {p}% done"}
        for p in range(5, 95, 9)
    ]
    assert fired(actions(calls, polling=["get_status"]), DetectorsConfig(polling=["get_status"])) == {}
    assert "recurring" not in fired(actions(calls))


# -- recurring ---------------------------------------------------------------------------


def test_the_same_test_failing_after_each_edit_is_recurring() -> None:
    """edit -> the same test -> the same failure, with a different edit each time."""
    calls: list[Call] = []
    for i in range(6):
        calls.append(
            {"tool": "sed", "args": {"cmd": f"sed -i 's/old{i}/new{i}/' src/parse.py"}, "output": ""}
        )
        calls.append(
            {
                "tool": "pytest",
                "args": {"cmd": "pytest tests/test_x.py"},
                "output": PYTEST_FAIL.format(t=f"0.{i}1"),
            }
        )
    hit = first(Recurring(), actions(calls))
    assert hit is not None and hit[0] == 10
    assert "pytest tests/test_x.py" in hit[1].message and "5 times" in hit[1].message


def test_edit_undo_cycles_are_recurring() -> None:
    """Revert, re-apply the same patch, run the same failing check: the same results come back."""
    cycle: list[Call] = [
        {
            "tool": "git",
            "args": {"cmd": "git checkout src/parse.py"},
            "output": "Updated 1 path from the index",
        },
        {"tool": "patch", "args": {"cmd": "patch -p1 < fix.diff"}, "output": "patching file src/parse.py"},
        {"tool": "pytest", "args": {"cmd": "pytest -x"}, "output": PYTEST_FAIL.format(t="0.2")},
    ]
    found = fired(actions(cycle * 5))
    assert found.get("loop") == 6  # the three steps twice, back to back
    assert found.get("recurring") == 13  # the same failing run, the fifth time


def test_the_same_output_from_varying_arguments_is_recurring() -> None:
    """Paraphrased searches landing on the same page."""
    page = "Could not find the page. Similar: ['Aunt May', 'May Parker', 'Spider-Man (comics)']"
    calls: list[Call] = [
        {"tool": "search", "args": {"q": q}, "output": page}
        for q in ["Aunt May", "Aunt May Parker", "Aunt May Marvel", "Aunt May comics", "May Parker"]
    ]
    hit = first(Recurring(), actions(calls))
    assert hit is not None and hit[0] == 5 and "returned the same output" in hit[1].message


def test_productive_alternation_stays_silent() -> None:
    """edit -> run -> edit -> run where each run shows something new is progress."""
    calls: list[Call] = []
    for i in range(10):
        calls.append(
            {"tool": "sed", "args": {"cmd": f"sed -i 's/v{i}/v{i + 1}/' src/parse.py"}, "output": ""}
        )
        calls.append(
            {"tool": "python", "args": {"cmd": "python repro.py"}, "output": f"step {i}: " + "ok " * (i + 1)}
        )
    assert fired(actions(calls)) == {}


# -- recurring_error ---------------------------------------------------------------------


def test_a_different_invalid_action_each_time_is_a_recurring_error() -> None:
    """Clicking size after size, each rejected with the same message."""
    calls: list[Call] = []
    for size in ["11 women", "12 women", "12.5 women", "13.5 women"]:
        calls.append({"tool": "think", "args": {"cmd": f"think[no size {size}]"}, "output": "OK."})
        calls.append(
            {
                "tool": "click",
                "args": {"cmd": f"click[{size}]"},
                "output": "Invalid action!",
                "error": "invalid_action",
            }
        )
    hit = first(RecurringError(), actions(calls))
    assert hit is not None and hit[0] == 6
    assert "click failed with the same error 3 times" in hit[1].message and "invalid_action" in hit[1].message


def test_different_errors_while_debugging_are_not_recurring() -> None:
    """A reproduction script crashing differently after each edit is progress."""
    calls: list[Call] = []
    for i, exc in enumerate(
        ["KeyError: 'a'", "TypeError: bad operand", "ValueError: empty", "IndexError: 3"]
    ):
        calls.append({"tool": "sed", "args": {"cmd": f"sed -i 's/x{i}/y/' m.py"}, "output": ""})
        calls.append(
            {
                "tool": "python",
                "args": {"cmd": "python repro.py"},
                "output": f"Traceback ...\n{exc}",
                "error": "returncode 1",
            }
        )
    assert fired(actions(calls)) == {}


def test_retries_separated_by_a_changing_think_step_are_caught() -> None:
    """A failing call, a thought whose text changes, the same failing call again."""
    calls: list[Call] = []
    for i in range(4):
        calls.append(
            {"tool": "think", "args": {"thought": f"maybe the amount is wrong, try #{i}"}, "output": ""}
        )
        calls.append(
            {
                "tool": "book_reservation",
                "args": {"amount": 900 + i, "card": "visa"},
                "output": "Error: payment amount does not add up to total price",
                "error": "tool_error",
            }
        )
    assert fired(actions(calls)).get("recurring_error") == 6


# -- cycle -------------------------------------------------------------------------------


def test_a_noisy_three_step_cycle_is_a_cycle() -> None:
    """search -> read -> note(thought N) over and over: the notes differ, the rest returns."""
    calls: list[Call] = []
    for i in range(8):
        calls.append({"tool": "search", "args": {"q": "pricing"}, "output": "3 hits: a, b, c and more text"})
        calls.append(
            {"tool": "read", "args": {"url": "https://x.org/a"}, "output": "the page about pricing ..."}
        )
        calls.append({"tool": "note", "args": {"text": f"thought {i}: still unclear"}, "output": "saved"})
    found = fired(actions(calls))
    assert "cycle" in found and "loop" not in found


def test_a_long_cycle_is_a_cycle() -> None:
    """Twelve different steps, done twice: no strict loop fits, the revisits do."""
    steps: list[Call] = [
        {"tool": f"t{k % 4}", "args": {"arg": f"value-{chr(97 + k)}"}, "output": f"answer {chr(97 + k)} " * 3}
        for k in range(12)
    ]
    hit = first(Cycle(), actions(steps * 2))
    assert hit is not None and hit[0] == 22
    assert "went back to a call and result already seen" in hit[1].message


# -- empty and short answers ---------------------------------------------------------------


def test_short_legitimate_answers_stay_silent() -> None:
    """A flight status, a calculator, an empty think, an empty search the user asked for."""
    calls: list[Call] = [
        {"tool": "get_flight_status", "args": {"flight": "HAT052"}, "output": "available"},
        {"tool": "calculate", "args": {"expression": "100 * 3"}, "output": "300.0"},
        {"tool": "think", "args": {"thought": "the user wants the cheapest"}, "output": ""},
        {"tool": "search_direct_flight", "args": {"origin": "LAX", "destination": "ORD"}, "output": "[]"},
        {"tool": "get_flight_status", "args": {"flight": "HAT030"}, "output": "delayed"},
        {"tool": "calculate", "args": {"expression": "2499 - 1327"}, "output": "1172.0"},
        {"tool": "think", "args": {"thought": "now book it"}, "output": ""},
    ]
    assert fired(actions(calls)) == {}


def test_a_call_that_went_quiet_is_empty() -> None:
    """A paged search that answered at length now returns nothing, three times."""
    calls: list[Call] = [
        {"tool": "search", "args": {"q": "pricing", "page": 1}, "output": "12 results: ..." * 3}
    ]
    calls += [{"tool": "search", "args": {"q": "pricing", "page": p}, "output": ""} for p in range(2, 5)]
    hit = first(Empty(), actions(calls))
    assert hit is not None and hit[0] == 4 and "answered at length before" in hit[1].message


def test_a_read_answering_says_nothing_about_an_edit() -> None:
    """sed -n answered; sed -i prints nothing by design, however often."""
    calls: list[Call] = [
        {"tool": "sed", "args": {"cmd": "sed -n '1,40p' src/app.py"}, "output": "def main():\n" * 9}
    ]
    calls += [
        {"tool": "sed", "args": {"cmd": f"sed -i 's/{old}/{new}/' src/app.py"}, "output": ""}
        for old, new in [("a", "b"), ("c", "d"), ("e", "f"), ("g", "h")]
    ]
    assert trips(Empty(), actions(calls)) == [None] * 5


def test_every_message_names_its_evidence() -> None:
    """Each v2 anomaly says which call, how many times, and over how many actions."""
    calls: list[Call] = [
        {
            "tool": "lookup",
            "args": {"cmd": f"Lookup[Aunt May {i}]"},
            "output": "No more results.",
            "error": "not_found",
        }
        for i in range(3)
    ]
    hit = first(RecurringError(), actions(calls))
    assert hit is not None
    anomaly = hit[1]
    evidence: dict[str, Any] = anomaly.evidence
    assert evidence["count"] == 3 and evidence["window"] == 10 and "Lookup[Aunt May 2]" in evidence["call"]
    assert "3 times in the last 10 actions" in anomaly.message and "not_found" in anomaly.message


def test_the_same_call_with_a_new_answer_each_time_is_no_repeat() -> None:
    """A status poll or a "scroll down" that moves on: no repeat; on and on, a near_repeat."""
    polls: list[Call] = [
        {"tool": "get_status", "args": {"job": "job-7"}, "output": f"running, {p}% done"}
        for p in (10, 40, 70)
    ]
    assert trips(Repeat(), actions(polls)) == [None] * 3
    again: list[Call] = [{"tool": "get_status", "args": {"job": "job-7"}, "output": "running, 70% done"}] * 3
    hit = trips(Repeat(), actions(again))[-1]
    assert hit is not None and "the same arguments and the same result" in hit.message
    pages: list[Call] = [
        {"tool": "scroll_down", "args": None, "output": f"lines {i * 100} to {i * 100 + 99}: ..."}
        for i in range(16)
    ]
    found = fired(actions(pages))
    assert "repeat" not in found and found.get("near_repeat") == 12


def test_a_noisy_two_step_cycle_is_caught() -> None:
    """search -> read, over and over, with an odd step (a note whose text changes) now and then."""
    calls: list[Call] = []
    for i in range(10):
        calls.append({"tool": "search", "args": {"q": "grid storage"}, "output": "3 hits: a, b, c and more"})
        if i % 3 == 1:
            calls.append({"tool": "note", "args": {"text": f"idea {chr(97 + i)}"}, "output": "saved"})
        calls.append(
            {"tool": "read", "args": {"url": "https://x.org/grid"}, "output": "the grid article ..."}
        )
    found = fired(actions(calls))
    assert "cycle" in found or "loop" in found
    assert min(found.values()) <= 8  # caught within four passes
