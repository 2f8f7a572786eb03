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
dict with the one kept catches any assignment). A process that saves once
(``heartbeat tick`` from cron) never fills the cache: it pays nothing extra.
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
_BETWEEN = ",\n    "
_MIN_ITEMS = 8  # below this many items in all a full dump is as cheap

Entry = tuple[BaseModel, dict[str, Any], str]


class StateText:
    """Dumps states as ``state.json`` text, reusing each list item's text from the last dump."""

    __slots__ = ("_dumps", "_kept")

    def __init__(self) -> None:
        self._kept: dict[int, Entry] = {}
        self._dumps = 0

    def dump(self, state: AgentState) -> str:
        """``state.model_dump_json(indent=2)``, reusing the text of items it dumped last time."""
        self._dumps += 1
        lists = [(name, kind, getattr(state, name)) for name, kind, _ in _LISTS]
        items = [item for _, _, values in lists for item in values]
        kept = self._kept
        found = [_valid(kept.get(id(item)), item) for item in items] if kept else []
        if len(items) < _MIN_ITEMS or 2 * (len(found) - found.count(None)) < len(items):
            # Little to reuse: one full dump is cheaper than items one by one. From a
            # store's second save on, keep the items' texts for the next one.
            text = state.model_dump_json(indent=2)
            self._kept = _split(text, lists) if self._dumps > 1 else {}
            return text
        fresh: dict[int, Entry] = {}
        spliced: list[str] = []
        entries = iter(found)
        for name, kind, values in lists:
            parts = []
            serializer = kind.__pydantic_serializer__
            for item in values:
                entry = next(entries)
                if item.__class__ is not kind:  # not what the splice assumes
                    self._kept = {}
                    return state.model_dump_json(indent=2)
                if entry is None:
                    part = serializer.to_json(item, indent=2).decode("utf-8").replace("\n", "\n    ")
                    entry = (item, dict(item.__dict__), part)
                fresh[id(item)] = entry
                parts.append(entry[2])
            body = f"[\n    {_BETWEEN.join(parts)}\n  ]" if parts else "[]"
            spliced.append(f'\n  "{name}": {body},')
        rest = state.model_dump_json(indent=2, exclude=_SPLICED)
        at = rest.index(_AFTER)  # top level: nested keys are indented deeper
        self._kept = fresh
        return f"{rest[:at]}{''.join(spliced)}{rest[at:]}"

    def __len__(self) -> int:
        """How many item texts are kept for the next dump."""
        return len(self._kept)

    def forget(self) -> None:
        """Drop every kept text."""
        self._kept = {}


def _valid(entry: Entry | None, item: BaseModel) -> Entry | None:
    """``entry`` if it is still ``item``'s text: the same object, no field assigned since."""
    if entry is None or entry[0] is not item or entry[1] != item.__dict__:
        return None
    return entry


def _split(text: str, lists: list[tuple[str, type[BaseModel], list[Any]]]) -> dict[int, Entry]:
    """Each item's text cut out of a full dump (empty when the text is not shaped as expected)."""
    kept: dict[int, Entry] = {}
    for (name, kind, values), (_, _, follower) in zip(lists, _LISTS, strict=True):
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
