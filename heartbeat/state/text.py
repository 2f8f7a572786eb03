"""The text of ``state.json``, reusing the text of the records written by the last save.

A tick changes a few fields and appends an action and a progress sample; the
history (30 action records) and the progress samples (20), most of a state's
bytes, are otherwise written as they were. Dumping them costs pydantic about
three times what the rest of the state does, so a store that saves more than
once (an in-process ``heartbeat run``) keeps each item's text from its last
save and dumps only the new ones. The text is byte for byte what
``state.model_dump_json(indent=2)`` gives.

An item's text is reused only while the list still holds the same objects, in
the same order, as the run of items kept from the last save (the oldest may
have dropped off the front, new ones been added at the end; a list
comparison that runs in C), and no field of any item was assigned since
(:func:`heartbeat.core.models.record_edits`, a count the items keep; their fields
hold immutable values, so an assignment is the only way to change one).
Anything else (an item replaced, moved or assigned to) gets a full dump,
which is cut into the texts for the next save. A store makes its
:class:`StateText` at its second save, so a process that saves once
(``heartbeat tick`` from cron) never loads this module.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ..core.models import ActionRecord, AgentState, ProgressSample, record_edits

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

# Per list, what the last dump kept: its items and each one's text.
Kept = tuple[list[Any], list[str]]
_Lists = list[tuple[str, type[BaseModel], list[Any]]]


class StateText:
    """Dumps states as ``state.json`` text, reusing each list item's text from the last dump."""

    __slots__ = ("_edits", "_kept")

    def __init__(self) -> None:
        self._kept: list[Kept] = []
        self._edits = -1  # record_edits() at the last dump

    def dump(self, state: AgentState) -> str:
        """``state.model_dump_json(indent=2)``, reusing the text of items it dumped last time."""
        lists: _Lists = [(name, kind, getattr(state, name)) for name, kind, _ in _LISTS]
        kept, edits = self._kept, record_edits()
        fresh = _reuse(lists, kept) if kept and _LAYOUT_OK and edits == self._edits else None
        self._edits = edits
        if fresh is None:
            # Little or nothing to reuse: one full dump is cheaper than items one by one; the
            # items' texts are cut out of it for the next one.
            text = state.model_dump_json(indent=2)
            self._kept = _split(text, lists)
            return text
        rest = state.model_dump_json(indent=2, exclude=_SPLICED)
        at = rest.index(_AFTER)  # top level: nested keys are indented deeper
        self._kept = fresh
        spliced = [
            f'\n  "{name}": [\n    {_BETWEEN.join(texts)}\n  ],' if texts else f'\n  "{name}": [],'
            for (name, _, _), (_, texts) in zip(lists, fresh, strict=True)
        ]
        return f"{rest[:at]}{''.join(spliced)}{rest[at:]}"

    def __len__(self) -> int:
        """How many item texts are kept for the next dump."""
        return sum(len(texts) for _, texts in self._kept)

    def forget(self) -> None:
        """Drop every kept text."""
        self._kept = []


def _reuse(lists: _Lists, kept: list[Kept]) -> list[Kept] | None:
    """What to keep after this dump, the kept texts reused and the new items dumped; None: dump it all.

    Each list must be a run of the items kept last time (the same objects; the
    oldest may be gone) followed by new items, at most half of all the items new.
    """
    fresh: list[Kept] = []
    total = added = 0
    for (_, kind, values), (items, texts) in zip(lists, kept, strict=True):
        total += len(values)
        start = 0
        if values:
            first = values[0]
            for item in items:  # where the kept run starts: the first, or one of the next few
                if item is first:
                    break
                start += 1
        stop = start + min(len(items) - start, len(values))
        count = stop - start
        old = values[:count]
        if old != items[start:stop]:  # in C: the same objects (or equal ones)
            return None
        new = values[count:]
        added += len(new)
        for item in new:
            if item.__class__ is not kind:  # not what the splice assumes
                return None
        fresh.append((list(values), texts[start:stop] + [_item_text(kind, item) for item in new]))
    if total < _MIN_ITEMS or 2 * added > total:
        return None
    return fresh


def _item_text(kind: type[BaseModel], item: BaseModel) -> str:
    """One item's text as it stands inside the state's indent=2 text."""
    return kind.__pydantic_serializer__.to_json(item, indent=2).decode("utf-8").replace("\n", "\n    ")


def _split(text: str, lists: _Lists) -> list[Kept]:
    """Each item's text cut out of a full dump (nothing kept when the text is not shaped as expected)."""
    kept: list[Kept] = []
    for (name, kind, values), (_, _, follower) in zip(lists, _LISTS, strict=True):
        if not values:
            kept.append(([], []))
            continue
        opening = f'\n  "{name}": [\n    '
        start = text.find(opening)
        end = text.find(f'\n  ],\n  "{follower}": ', start)
        if start < 0 or end < 0 or any(item.__class__ is not kind for item in values):
            return []
        parts = text[start + len(opening) : end].split(_BETWEEN + "{")
        if len(parts) != len(values):
            return []
        parts[1:] = ["{" + part for part in parts[1:]]
        kept.append((list(values), parts))
    return kept
