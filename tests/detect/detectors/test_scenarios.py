"""Detection v2 (issue 12) across all default detectors: stuck patterns caught, healthy work silent.

Each case is a small history shaped like the real runs in the corpus
(coding agents, customer-service agents, ReAct shopping and fact-checking).
"""

from __future__ import annotations

from typing import Any

from heartbeat.config.file import DetectorsConfig
from heartbeat.detect.detectors import build_detectors

from .helpers import PYTEST_FAIL, Call, actions, fired, trips


def test_a_timestamped_poll_that_sees_nothing_new_is_caught() -> None:
    """A poll whose arguments carry a timestamp and whose answer never changes."""
    status = '{"job": "job-7", "state": "pending", "eta": null}'
    calls: list[dict[str, Any]] = [
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


def test_advancing_cursor_of_a_polling_tool_stays_silent() -> None:
    """A paging tool declared in ``polling``, its cursor moving on, trips no detector."""
    calls = [{"tool": "list_items", "args": {"cursor": i}, "output": f"page {i} " * 5} for i in range(30)]
    records = actions(calls, polling=["list_items"])
    for detector in build_detectors(DetectorsConfig(polling=["list_items"])):
        assert trips(detector, records) == [None] * 30, detector


def test_reading_one_file_in_a_few_pages_stays_silent() -> None:
    """Four pages of one file among other work are normal reading."""
    calls: list[Call] = []
    for page in range(4):
        calls.append(("sed", {"cmd": f"sed -n '{page * 50 + 1},{page * 50 + 50}p' src/app.py"}))
        calls.append(("grep", {"cmd": f"grep -n name{page} src/app.py"}))
    words = ["def", "class", "return", "import", "self", "value", "parse", "error"]
    records = actions(
        [
            {"tool": t, "args": a, "output": " ".join(words[(i + k) % 8] for k in range(i + 20))}
            for i, (t, a) in enumerate(calls)
        ]
    )
    for detector in build_detectors(DetectorsConfig()):
        assert trips(detector, records) == [None] * len(records), detector


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
