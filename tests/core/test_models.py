"""The state models' display helpers: what a person reads on a terminal."""

from __future__ import annotations

import pytest

from heartbeat.core.models import printable, printable_lines


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain", "plain"),
        ("", ""),
        ("one\ntwo", "one\n  two"),
        ("bell\x07\r\nnext", "bell\\x07\n  next"),
        ("\x1b[2Jwiped\n\nafter a gap", "\\x1b[2Jwiped\n  \n  after a gap"),
    ],
)
def test_printable_lines_keeps_line_breaks_and_escapes_the_rest(text: str, shown: str) -> None:
    """Each line is escaped as printable escapes it; later lines carry the indent."""
    assert printable_lines(text, "  ") == shown


def test_printable_escapes_a_line_break() -> None:
    """A name on one line stays on one line."""
    assert printable("a\nb\x1b") == "a\\nb\\x1b"
