"""The text of ``state.json``, reusing the text of the records written by the last save.

A tick changes a few fields and appends an action and a progress sample; the
history (30 action records) and the progress samples (20), most of a state's
bytes, are otherwise written as they were. Dumping them costs pydantic about
three times what the rest of the state does, so a store that saves more than
once (an in-process ``heartbeat run``) keeps each item's text from its last
save and dumps only the new ones. The text is byte for byte what
``state.model_dump_json(indent=2)`` gives.

An item's text is reused only while the item is the same object with the
same field values (its fields hold immutable values, so comparing the field
dict with the one kept catches any assignment). A store makes its
:class:`StateText` at its second save, so a process that saves once
(``heartbeat tick`` from cron) never loads this module.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from .models import ActionRecord, AgentState, ProgressSample

__all__ = ["StateText"]

# The lists whose items' texts are kept, in the order AgentState declares them, each with the
# key that follows it. Inside the indent=2 text each item is an object at 4 spaces with its
# fields at 6, every value a scalar (no nested object or array), so the separators are exact.
_LISTS: tuple[tuple[str, type[BaseModel], str], ...] = (
    ("history", ActionRecord, "progress"),
    ("progress", ProgressSample, "anomalies"),
)
_SPLICED = {name for name, _, _ in _LISTS}
_AFTER = '\n  "anomalies": '  # the key the spliced lists go before, at the top level
# The splice needs the lists next to each other and followed by that key, as declared above:
# a model laid out otherwise is always dumped in full (the texts stay right, only slower).
_FIELD_ORDER = list(AgentState.model_fields)
_LAYOUT_OK = all(_FIELD_ORDER.index(follower) == _FIELD_ORDER.index(name) + 1 for name, _, follower in _LISTS)
_BETWEEN = ",\n    "
_MIN_ITEMS = 8  # below this many items in all a full dump is as cheap

Entry = tuple[BaseModel, dict[str, Any], str]


class StateText:
    """Dumps states as ``state.json`` text, reusing each list item's text from the last dump."""

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        self._kept: dict[int, Entry] = {}

    def dump(self, state: AgentState) -> str:
        """``state.model_dump_json(indent=2)``, reusing the text of items it dumped last time."""
        kept = self._kept
        lists: list[tuple[str, type[BaseModel], list[Any], list[str]]] = []
        fresh: dict[int, Entry] = {}
        missing: list[tuple[list[str], int, BaseModel, type[BaseModel]]] = []
        total = 0
        for name, kind, _ in _LISTS:
            values = getattr(state, name)
            parts: list[str] = []
            lists.append((name, kind, values, parts))
            total += len(values)
            if not kept:
                continue
            get, add = kept.get, parts.append  # the loop below runs for every item of every save
            for item in values:
                key = id(item)
                entry = get(key)
                # The same object, no field assigned since (its fields hold immutable values).
                if entry is not None and entry[0] is item and entry[1] == item.__dict__:
                    fresh[key] = entry
                    add(entry[2])
                else:
                    missing.append((parts, len(parts), item, kind))
                    add("")
        if total < _MIN_ITEMS or not kept or 2 * len(missing) > total or not _LAYOUT_OK:
            # Little to reuse: one full dump is cheaper than items one by one; the items'
            # texts are cut out of it for the next one.
            text = state.model_dump_json(indent=2)
            self._kept = _split(text, lists)
            return text
        for parts, at, item, kind in missing:
            if item.__class__ is not kind:  # not what the splice assumes
                self._kept = {}
                return state.model_dump_json(indent=2)
            text = kind.__pydantic_serializer__.to_json(item, indent=2).decode("utf-8")
            parts[at] = text.replace("\n", "\n    ")
            fresh[id(item)] = (item, dict(item.__dict__), parts[at])
        rest = state.model_dump_json(indent=2, exclude=_SPLICED)
        at = rest.index(_AFTER)  # top level: nested keys are indented deeper
        self._kept = fresh
        spliced = [
            f'\n  "{name}": [\n    {_BETWEEN.join(parts)}\n  ],' if parts else f'\n  "{name}": [],'
            for name, _, _, parts in lists
        ]
        return f"{rest[:at]}{''.join(spliced)}{rest[at:]}"

    def __len__(self) -> int:
        """How many item texts are kept for the next dump."""
        return len(self._kept)

    def forget(self) -> None:
        """Drop every kept text."""
        self._kept = {}


def _split(text: str, lists: list[tuple[str, type[BaseModel], list[Any], list[str]]]) -> dict[int, Entry]:
    """Each item's text cut out of a full dump (empty when the text is not shaped as expected)."""
    kept: dict[int, Entry] = {}
    for (name, kind, values, _), (_, _, follower) in zip(lists, _LISTS, strict=True):
        if not values:
            continue
        opening = f'\n  "{name}": [\n    '
        start = text.find(opening)
        end = text.find(f'\n  ],\n  "{follower}": ', start)
        if start < 0 or end < 0 or any(item.__class__ is not kind for item in values):
            return {}
        parts = text[start + len(opening) : end].split(_BETWEEN + "{")
        if len(parts) != len(values):
            return {}
        parts[1:] = ["{" + part for part in parts[1:]]
        kept.update(
            (id(item), (item, dict(item.__dict__), part)) for item, part in zip(values, parts, strict=True)
        )
    return kept
