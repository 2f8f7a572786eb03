"""What ``cycle`` reads of the actions since the agent last changed anything: re-checks.

An agent whose work is done, or that has given up on it, checks it again and
again: the suite rerun, the diff shown, the command tried once more, the
same two files read, each answered as it was since the last edit. Nothing it
does in between can change an answer (it writes, acts and waits for nothing),
so a call and result seen again since then is a re-check, and
:data:`RECHECKS` of them over two calls or more is going round, long before
``cycle``'s share of the whole window is reached. An edit, an act or a wait
starts the count again: a debugging agent reruns the same test after every
edit, a poller looks again after every ``sleep``. A note (``think``) is no
change: it is the agent talking to itself.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Sequence

from .calls import changes_something, is_note
from .contract import ActionView
from .window import count_revisits

__all__ = ["RECHECKS", "RecheckWindow", "changes", "rechecks"]

RECHECKS = 6
"""Re-checks since the last change, over two calls or more, that trip ``cycle``."""


def changes(action: ActionView) -> bool:
    """Whether ``action`` writes, acts or waits (a note aside): a call after it may answer anew."""
    return changes_something(action.tool, action.summary) and not is_note(action.tool)


def rechecks(actions: Sequence[ActionView], keys: Sequence[Hashable]) -> tuple[int, int, int] | None:
    """For the window ``actions`` and their ``cycle`` keys (None: none), the re-checks since the
    last change, how many calls they went back to, and how many actions that is, when the newest
    is a re-check and they reach :data:`RECHECKS` over two calls or more; else None."""
    start = next((i + 1 for i in range(len(actions) - 1, -1, -1) if changes(actions[i])), 0)
    return _tripped(keys[start:], keys[-1] if keys else None)


def _tripped(since: Sequence[Hashable], newest: Hashable) -> tuple[int, int, int] | None:
    """:func:`rechecks`'s answer for the keys ``since`` the last change, the newest's ``newest``."""
    counts, found, repeated = count_revisits(since)
    if counts.get(newest, 0) < 2 or found < RECHECKS or repeated < 2:
        return None
    return found, repeated, len(since)


class RecheckWindow:
    """:func:`rechecks` kept step by step: the window's actions and keys, and whether each changed
    something, asked only when a re-check could trip (the window holds :data:`RECHECKS` revisits
    and the newest is one): most actions are never asked, and a call's text is read for writes,
    acts and waits only then."""

    __slots__ = ("_changed", "_entries", "_size")

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: deque[tuple[ActionView, Hashable]] = deque(maxlen=size)
        self._changed: deque[bool | None] = deque(maxlen=size)  # None: not asked yet

    def push(self, action: ActionView, key: Hashable) -> None:
        """Take the newest action and its key."""
        self._entries.append((action, key))
        self._changed.append(None)

    def found(self, key: Hashable, revisits: int) -> tuple[int, int, int] | None:
        """:func:`rechecks` for the newest action, whose key is ``key``, in a window holding
        ``revisits`` revisits (the re-checks since a change are among them)."""
        if revisits < RECHECKS or key is None:
            return None
        changed = self._changed
        since: list[Hashable] = []  # newest first: the order does not count
        for i in range(len(changed) - 1, -1, -1):
            action, at = self._entries[i]
            flag = changed[i]
            if flag is None:
                flag = changed[i] = changes(action)
            if flag:
                break
            since.append(at)
        return _tripped(since, key)
