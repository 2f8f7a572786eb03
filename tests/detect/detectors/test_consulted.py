"""A reference consulted before each new item: the same lookup, answered as before, with new work between."""

from __future__ import annotations

from heartbeat.detect.detectors import Cycle
from heartbeat.detect.detectors.consulted import consulted, unconsulted

from .helpers import Call, actions, trips

OUTLINE: Call = {
    "tool": "get_outline",
    "args": {"doc": "report"},
    "output": "Outline: 1 Intro; 2 Method; 3 Results",
}
STYLE: Call = {
    "tool": "style_guide_get",
    "args": {"doc": "report"},
    "output": "Style: active voice, short sentences.",
}


def _section(n: int, text: str = "") -> Call:
    return {"tool": "write_section", "args": {"section": n, "text": text or f"section {n}"}, "output": "ok"}


def _writer(wakes: int, *, same: bool = False) -> list[Call]:
    """Live round 52's writer: each wake-up reads its outline, then the style guide before each of
    two sections (``same``: the very same section written again each time)."""
    calls: list[Call] = []
    for wake in range(wakes):
        calls.append(OUTLINE)
        for n in (2 * wake + 1, 2 * wake + 2):
            calls += [STYLE, _section(1 if same else n)]
    return calls


def test_a_writer_consulting_its_outline_and_style_guide_is_no_cycle() -> None:
    """Before, ``cycle`` counted every reading of the outline and the style guide as a revisit:
    10 of the last 20 actions at the fourth wake-up, escalated at the fifth (live round 52)."""
    assert trips(Cycle(), actions(_writer(8))) == [None] * 40


def test_the_same_lookups_around_the_same_section_again_are_a_cycle() -> None:
    """Writing the very same section each time is no new work: the readings between count."""
    assert any(trips(Cycle(), actions(_writer(8, same=True))))


def test_unconsulted_keeps_a_lookup_asked_again_with_nothing_new_done_between() -> None:
    """A key stays where nothing new was written since its last asking, in the window given."""
    records = actions([OUTLINE, STYLE, _section(1), STYLE, STYLE, _section(1), STYLE, OUTLINE])
    keys = ["o", "s", "w1", "s", "s", "w1", "s", "o"]
    assert unconsulted(keys, records) == ["o", "s", "w1", None, "s", "w1", "s", None]


def test_consulted_needs_new_work_between_every_two_askings() -> None:
    """recurring's view of the same: asked three times or more, new work between each two."""
    records = actions(_writer(3))
    assert consulted(records[-2], records[:-1])  # the style guide before the sixth section
    again = actions([STYLE, _section(1), STYLE, STYLE, _section(2), STYLE])
    assert not consulted(again[-1], again)


def test_the_agents_own_note_between_readings_is_no_new_work() -> None:
    """search -> read -> note(thought N), again and again: the notes differ, yet the agent only
    talks to itself between two readings of one page (a cycle, as test_scenarios pins)."""
    calls: list[Call] = []
    for i in range(8):
        calls.append({"tool": "search", "args": {"q": "pricing"}, "output": "3 hits: a, b, c and more text"})
        calls.append({"tool": "read", "args": {"url": "https://x.org/a"}, "output": "the page about pricing"})
        calls.append({"tool": "note", "args": {"text": f"thought {i}: still unclear"}, "output": "saved"})
    records = actions(calls)
    assert unconsulted([r.fingerprint for r in records], records) == [r.fingerprint for r in records]
    assert any(trips(Cycle(), records))
