"""A reference consulted before each new item: the same lookup, answered as before, with new work between.

A writer reads its style guide before each section it writes, its outline at each wake-up; a
bookkeeper looks up the vendor before each invoice it reconciles. The lookup answers the same by
nature, and between each two askings the agent wrote or acted on something it had not before: work
done with the reference at hand, not a page it keeps landing on. The same lookup with nothing new
done between is one. ``recurring`` counts no such lookup again (:func:`consulted`), and ``cycle``
no such revisit (:func:`unconsulted`).
Pure.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from .calls import is_note, looks_up, silent_by_design, speaks
from .contract import ActionView
from .words import bare_name

__all__ = ["consulted", "unconsulted"]


def _done(action: ActionView) -> bool:
    """Whether ``action`` wrote or acted and went through; a message to a person is no work done
    (a customer asked again in other words is not), nor is the agent's own note (``think``,
    ``note(text=...)``: a thought worded anew between two readings of one page); a note kept on
    a thing the agent works on (``orders.add_note``) is work."""
    tool = action.tool
    if action.error is not None or speaks(tool) or is_note(tool) or bare_name(tool).lower() in _OWN_NOTES:
        return False
    return silent_by_design(tool, action.summary)


_OWN_NOTES = frozenset(["note", "notes", "take_note", "save_note", "add_note", "write_note"])


def _lookup(action: ActionView) -> bool:
    """Whether ``action`` is a lookup (see :func:`~.calls.looks_up`): no write or act."""
    return looks_up(action.tool) and not silent_by_design(action.tool, action.summary)


def consulted(action: ActionView, actions: Sequence[ActionView]) -> bool:
    """Whether ``action``, a lookup answered as before by its tool, is a reference consulted
    before each new item: between each two of those answers in ``actions`` (the window,
    ``action`` last) the agent wrote or acted on something it had not before (a section written,
    an item labelled, an invoice reconciled), and it was asked more than twice."""
    if not _lookup(action):
        return False
    done: set[str] = set()
    fresh = False  # a new write or act since the lookup's last asking
    asked = 0
    for other in actions:
        if other.result == action.result and other.tool == action.tool:
            if asked and not fresh:
                return False
            asked, fresh = asked + 1, False
        elif _done(other):
            fresh = fresh or other.fingerprint not in done
            done.add(other.fingerprint)
    return asked > 2


def unconsulted(keys: Sequence[Hashable], actions: Sequence[ActionView]) -> list[Hashable]:
    """``keys`` (``cycle``'s, one for each of ``actions``, oldest first) with each lookup's key
    None where it revisits a key the agent consulted before each new item: since the key's last
    asking among them the agent wrote or acted on something it had not before among them."""
    found = list(keys)
    done: set[str] = set()
    works = 0  # the new writes and acts so far
    asked: dict[Hashable, int] = {}  # each lookup's key, and the new works before its last asking
    for i, (key, action) in enumerate(zip(keys, actions, strict=True)):
        if _done(action):
            if action.fingerprint not in done:
                works += 1
                done.add(action.fingerprint)
        elif key is not None and _lookup(action):
            if asked.get(key, works) < works:
                found[i] = None
            asked[key] = works
    return found
