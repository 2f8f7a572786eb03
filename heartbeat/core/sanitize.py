"""Turning a state that cannot be saved into one that can, saying what was changed.

A tick whose state cannot be written (an object or a cycle left in
``ctx.data``, a lone surrogate from a non-UTF-8 file name in recorded
arguments, an integer too long to read back) must not leave the agent
running unmonitored. :func:`make_savable` rewrites only the values that are
in the way, in place, and returns one note per change for the journal:

* a string with lone surrogates keeps them as ``\\udcff`` escapes;
* an integer longer than Python reads back (4,300 digits) becomes its hex text;
* a float that is not finite becomes ``null`` (as pydantic writes it);
* a mapping key that is not a string becomes its ``str()``;
* a cycle becomes ``"<cycle>"``, nesting past :data:`MAX_DEPTH` ``"<nested too deeply>"``;
* any other object becomes its ``repr()``, cut to 200 characters.

Pure: no I/O, no clock.
"""

from __future__ import annotations

import math
import sys
from datetime import date, datetime, time, timedelta
from enum import Enum
from typing import Any

from pydantic import BaseModel

from .models import clip

__all__ = ["MAX_DEPTH", "make_savable"]

MAX_DEPTH = 200
"""Nesting deeper than this is cut: pydantic and json stop well before the recursion limit."""

_NOTES_KEPT = 20  # a state with thousands of bad values gets a summary, not thousands of notes
_LEAVES = (bool, str, int, float, type(None), datetime, date, time, timedelta, Enum)


class _Cleaner:
    """One walk over a state: rewrites what cannot be saved, counts and describes the changes."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.changes = 0
        self._open: set[int] = set()  # ids of the containers on the current path

    def note(self, path: str, what: str) -> None:
        self.changes += 1
        if len(self.notes) < _NOTES_KEPT:
            self.notes.append(f"{path}: {what}")

    def model(self, model: BaseModel, path: str, depth: int) -> None:
        """Clean a pydantic model's fields in place (nested models and lists of them too)."""
        fields = model.__dict__
        for name, value in list(fields.items()):
            where = f"{path}.{name}" if path else name
            if isinstance(value, BaseModel):
                self.model(value, where, depth + 1)
            elif isinstance(value, list) and value and isinstance(value[0], BaseModel):
                for i, item in enumerate(value):
                    if isinstance(item, BaseModel):
                        self.model(item, f"{where}[{i}]", depth + 1)
            else:
                cleaned = self.value(value, where, depth + 1)
                if cleaned is not value:
                    fields[name] = cleaned

    def value(self, value: Any, path: str, depth: int) -> Any:
        """``value`` if it can be saved as it is, else a savable replacement (noted)."""
        kind = value.__class__
        if kind is str:
            return value if value.isascii() or _encodes(value) else self._text(value, path)
        if kind is int:
            return value if _short(value) else self._int(value, path)
        if kind is float:
            if math.isfinite(value):
                return value
            self.note(path, f"{value!r} is not JSON; saved as null")
            return None
        if kind is dict or kind is list:
            return self.container(value, path, depth)
        if isinstance(value, _LEAVES):
            if isinstance(value, str) and not _encodes(value):
                return self._text(str(value), path)
            if isinstance(value, int) and not isinstance(value, bool | Enum) and not _short(value):
                return self._int(value, path)
            return value
        if isinstance(value, tuple):
            return self.container(list(value), path, depth)
        if isinstance(value, BaseModel):
            self.model(value, path, depth)
            return value
        text = clip(_repr(value)) or ""
        self.note(path, f"{type(value).__name__} object is not JSON; saved as its repr {text!r}")
        return text

    def container(self, value: dict[Any, Any] | list[Any], path: str, depth: int) -> Any:
        if depth > MAX_DEPTH:
            self.note(path, f"nested deeper than {MAX_DEPTH} levels; cut")
            return "<nested too deeply>"
        ident = id(value)
        if ident in self._open:
            self.note(path, "a cycle (a container inside itself); cut")
            return "<cycle>"
        self._open.add(ident)
        try:
            if isinstance(value, list):
                for i, item in enumerate(value):
                    cleaned = self.value(item, f"{path}[{i}]", depth + 1)
                    if cleaned is not item:
                        value[i] = cleaned
                return value
            for key in list(value):
                item = value[key]
                new_key = key if key.__class__ is str and _encodes(key) else _key_text(key)
                if new_key is not key:
                    self.note(f"{path}[{new_key!r}]", "a key that is not UTF-8 text; saved as text")
                cleaned = self.value(item, f"{path}[{new_key!r}]", depth + 1)
                if new_key is not key:
                    del value[key]
                    value[new_key] = cleaned
                elif cleaned is not item:
                    value[key] = cleaned
            return value
        finally:
            self._open.discard(ident)

    def _text(self, value: str, path: str) -> str:
        self.note(path, "text with lone surrogates (not UTF-8); kept as \\u escapes")
        return _escape(value)

    def _int(self, value: int, path: str) -> str:
        self.note(
            path, f"an integer of {value.bit_length()} bits is too long to read back; saved as hex text"
        )
        return hex(value)


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _escape(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _short(value: int) -> bool:
    """Whether ``value`` has few enough digits for Python (and pydantic) to read it back."""
    limit = sys.get_int_max_str_digits() or 4300
    # bit_length * log10(2) digits, give or take one: exact enough, and never str() a huge int.
    return value.bit_length() * 0.30103 < limit - 1


def _key_text(key: object) -> str:
    """A mapping key as the text JSON needs."""
    if isinstance(key, str):
        return _escape(key)
    if isinstance(key, bool | float | type(None)) or (isinstance(key, int) and _short(key)):
        return str(key)
    return _repr(key)


def _repr(value: object) -> str:
    try:
        return _escape(repr(value))
    except Exception as exc:  # a broken __repr__ of the agent's object: still say what it was
        return f"<{type(value).__name__} whose repr failed: {type(exc).__name__}>"


def make_savable(state: BaseModel) -> list[str]:
    """Rewrite, in place, every value of ``state`` that cannot be saved; return notes of the changes.

    The notes name the field (``data['x'][0]``) and what was done; past 20
    changes the last note says how many more there were.
    """
    cleaner = _Cleaner()
    cleaner.model(state, "", 0)
    notes = cleaner.notes
    if cleaner.changes > len(notes):
        notes.append(f"... and {cleaner.changes - len(notes)} more change(s)")
    return notes
