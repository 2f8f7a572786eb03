"""The text of ``state.json``, reusing the text of the action records written by the last save.

A tick changes a few fields and appends an action or two; the history of 30
records, most of a state's bytes, is otherwise written as it was. Dumping a
record costs pydantic about as much as the rest of the state together, so a
store that saves more than once (an in-process ``heartbeat run``) keeps each
record's text from its last save and dumps only the new records. The text is
byte for byte what ``state.model_dump_json(indent=2)`` gives.

A record's text is reused only while the record is the same object with the
same field values (its fields are immutable values, so comparing the field
dict with the one kept catches any assignment). A process that saves once
(``heartbeat tick`` from cron) never fills the cache: it pays nothing extra.
"""

from __future__ import annotations

from typing import Any

from .models import ActionRecord, AgentState

__all__ = ["StateText"]

_NO_HISTORY = {"history"}
# The history array inside the indent=2 text: each record an object at 4 spaces, its fields at
# 6, every value a scalar (no nested object or array), so the separators below are exact.
_OPEN = '\n  "history": [\n    '
_CLOSE = "\n  ],"
_BETWEEN = ",\n    "
_BEFORE = '\n  "progress": '
_MIN_KEPT = 4  # below this many records a full dump is as cheap


class StateText:
    """Dumps states as ``state.json`` text, reusing each action record's text from the last dump."""

    __slots__ = ("_dumps", "_kept")

    def __init__(self) -> None:
        self._kept: dict[int, tuple[ActionRecord, dict[str, Any], str]] = {}
        self._dumps = 0

    def dump(self, state: AgentState) -> str:
        """``state.model_dump_json(indent=2)``, reusing the text of records it dumped last time."""
        history = state.history
        self._dumps += 1
        kept = self._kept
        found = [_valid(kept.get(id(record)), record) for record in history] if kept else []
        if len(history) < _MIN_KEPT or 2 * (len(found) - found.count(None)) < len(history):
            # Little to reuse: one full dump is cheaper than records one by one. From a
            # store's second save on, keep the records' texts for the next one.
            text = state.model_dump_json(indent=2)
            self._kept = _split(text, history) if self._dumps > 1 else {}
            return text
        parts: list[str] = []
        fresh: dict[int, tuple[ActionRecord, dict[str, Any], str]] = {}
        serializer = ActionRecord.__pydantic_serializer__
        for record, entry in zip(history, found, strict=True):
            if record.__class__ is not ActionRecord:  # not what the indent=2 splice assumes
                self._kept = {}
                return state.model_dump_json(indent=2)
            if entry is None:
                part = serializer.to_json(record, indent=2).decode("utf-8").replace("\n", "\n    ")
                entry = (record, dict(record.__dict__), part)
            fresh[id(record)] = entry
            parts.append(entry[2])
        rest = state.model_dump_json(indent=2, exclude=_NO_HISTORY)
        at = rest.index(_BEFORE)  # top level: nested keys are indented deeper
        self._kept = fresh
        return f"{rest[:at]}{_OPEN}{_BETWEEN.join(parts)}{_CLOSE}{rest[at:]}"

    def __len__(self) -> int:
        """How many record texts are kept for the next dump."""
        return len(self._kept)

    def forget(self) -> None:
        """Drop every kept text."""
        self._kept = {}


def _valid(
    entry: tuple[ActionRecord, dict[str, Any], str] | None, record: ActionRecord
) -> tuple[ActionRecord, dict[str, Any], str] | None:
    """``entry`` if it is still ``record``'s text: the same object, no field assigned since."""
    if entry is None or entry[0] is not record or entry[1] != record.__dict__:
        return None
    return entry


def _split(text: str, history: list[ActionRecord]) -> dict[int, tuple[ActionRecord, dict[str, Any], str]]:
    """Each record's text cut out of a full dump (empty when the text is not shaped as expected)."""
    start = text.find(_OPEN)
    end = text.find(_CLOSE + _BEFORE, start)
    if start < 0 or end < 0 or any(r.__class__ is not ActionRecord for r in history):
        return {}
    parts = text[start + len(_OPEN) : end].split(_BETWEEN + "{")
    if len(parts) != len(history):
        return {}
    parts[1:] = ["{" + part for part in parts[1:]]
    return {id(r): (r, dict(r.__dict__), part) for r, part in zip(history, parts, strict=True)}
