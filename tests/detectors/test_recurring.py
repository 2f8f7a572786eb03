"""``recurring``: the same call keeps giving the same result, or many calls the same output."""

from __future__ import annotations

from heartbeat.detectors import Recurring

from .helpers import PYTEST_FAIL, Call, actions, first


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


def test_the_same_output_from_varying_arguments_is_recurring() -> None:
    """Paraphrased searches landing on the same page."""
    page = "Could not find the page. Similar: ['Aunt May', 'May Parker', 'Spider-Man (comics)']"
    calls: list[Call] = [
        {"tool": "search", "args": {"q": q}, "output": page}
        for q in ["Aunt May", "Aunt May Parker", "Aunt May Marvel", "Aunt May comics", "May Parker"]
    ]
    hit = first(Recurring(), actions(calls))
    assert hit is not None and hit[0] == 5 and "returned the same output" in hit[1].message
