"""How output looks on this stream: colour and symbols on a terminal, plain ASCII otherwise.

Colour only on a TTY and never when ``NO_COLOR`` is set (https://no-color.org)
or ``TERM=dumb``; Unicode symbols only when the stream's encoding can write
them, so an ASCII or Latin-1 terminal gets ASCII instead of a crash.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

__all__ = ["Style"]

_SPARKS = "▁▂▃▄▅▆▇█"
_ASCII_SPARKS = "_.-=+*#"
_COLOURS = {"red": "31", "green": "32", "yellow": "33", "blue": "34", "dim": "2", "bold": "1"}
_SYMBOLS = {"ok": ("✓", "ok"), "warn": ("!", "!"), "bad": ("✗", "x"), "arrow": ("→", "->")}


@dataclass(frozen=True)
class Style:
    """Colour and symbol choices for one output stream."""

    colour: bool = False
    unicode: bool = False

    @classmethod
    def for_stream(cls, stream: TextIO) -> Style:
        """The style that ``stream`` can show (plain ASCII when it is not a terminal)."""
        try:
            tty = stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        if not tty:
            return cls()
        colour = "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"
        encoding = getattr(stream, "encoding", None) or "ascii"
        try:
            (_SPARKS + "".join(u for u, _ in _SYMBOLS.values())).encode(encoding)
            unicode = True
        except (UnicodeEncodeError, LookupError):
            unicode = False
        return cls(colour=colour, unicode=unicode)

    def paint(self, text: str, colour: str) -> str:
        """``text`` in ``colour`` (red, green, yellow, blue, dim, bold) when colour is on."""
        return f"\033[{_COLOURS[colour]}m{text}\033[0m" if self.colour else text

    def symbol(self, name: str) -> str:
        """A symbol (ok, warn, bad, arrow) in Unicode or ASCII."""
        fancy, plain = _SYMBOLS[name]
        return fancy if self.unicode else plain

    def sparkline(self, values: Sequence[float]) -> str:
        """Recent values as ``▁▂▅█`` (or ``_.=#`` in ASCII)."""
        if not values:
            return ""
        sparks = _SPARKS if self.unicode else _ASCII_SPARKS
        low, high = min(values), max(values)
        span = high - low
        return "".join(
            sparks[0 if span == 0 else round((v - low) / span * (len(sparks) - 1))] for v in values
        )
