"""``near_repeat``: the same call with only its numbers, dates or ids changing."""

from __future__ import annotations

from heartbeat.detectors import NearRepeat

from .helpers import Call, actions, fired, first


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
