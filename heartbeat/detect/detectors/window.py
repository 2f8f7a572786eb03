"""Sliding windows of keys with their counts, and the last successes: the windowed detectors' core."""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Hashable, Iterable, Mapping
from itertools import islice
from typing import Any, Generic, TypeVar

from .calls import changes_something, waits

__all__ = [
    "NAMES_KEPT",
    "ErrorsOnly",
    "KeyWindow",
    "SparseWindow",
    "Successes",
    "count_revisits",
    "forget_before",
]

K = TypeVar("K", bound=Hashable)

NAMES_KEPT = 1024
"""How many names (tools) an index of last sightings holds before the old ones are forgotten."""


def forget_before(last_seen: dict[str, int], horizon: int) -> None:
    """Drop the names last seen before action ``horizon`` from ``last_seen`` (name -> action index).

    Called once it holds more than :data:`NAMES_KEPT`: an agent naming a new
    tool at every call must not grow it for as long as the process lives.
    Only sightings within the detectors' history are ever compared.
    """
    for name in [name for name, index in last_seen.items() if index < horizon]:
        del last_seen[name]


def count_revisits(keys: Iterable[Hashable]) -> tuple[dict[Hashable, int], int, int]:
    """The count of each key among ``keys`` (None: a position without one), how many are revisits
    of a key seen before them, and how many keys come more than once."""
    counts: dict[Hashable, int] = {}
    seen = 0
    for key in keys:
        if key is not None:
            counts[key] = counts.get(key, 0) + 1
            seen += 1
    return counts, seen - len(counts), sum(1 for n in counts.values() if n > 1)


class KeyWindow:
    """The last ``size`` keys (None for a position that holds no key) and how often each occurs.

    ``revisits`` is how many positions hold a key seen earlier in the window;
    ``repeated`` how many distinct keys occur more than once.
    """

    __slots__ = ("_counts", "_keys", "_size", "repeated", "revisits")

    def __init__(self, size: int) -> None:
        self._size = size
        self._keys: deque[Hashable] = deque()
        self._counts: dict[Hashable, int] = {}
        self.revisits = 0
        self.repeated = 0

    def push(self, key: Hashable) -> int:
        """Add ``key`` (None: a position without a key); its count in the window afterwards."""
        keys = self._keys
        counts = self._counts
        if len(keys) == self._size:
            # drop_oldest inline: a full window drops one at every push (cycle pushes three windows
            # per action), and the call cost as much as the dropping.
            old = keys.popleft()
            if old is not None:
                left = counts[old] - 1
                if left:
                    counts[old] = left
                    self.revisits -= 1
                    if left == 1:
                        self.repeated -= 1
                else:
                    del counts[old]
        keys.append(key)
        if key is None:
            return 0
        n = counts.get(key, 0) + 1
        counts[key] = n
        if n > 1:
            self.revisits += 1
            if n == 2:
                self.repeated += 1
        return n

    def drop_oldest(self) -> None:
        """Let the oldest position go (the window is full, or it fell out of a wider one)."""
        old = self._keys.popleft()
        if old is None:
            return
        left = self._counts[old] - 1
        if left:
            self._counts[old] = left
            self.revisits -= 1
            if left == 1:
                self.repeated -= 1
        else:
            del self._counts[old]

    def count(self, key: Hashable) -> int:
        """How often ``key`` occurs in the window."""
        return self._counts.get(key, 0)

    def newest(self, n: int | None = None) -> list[Hashable]:
        """The keys of the newest ``n`` positions (default: all), oldest first."""
        keys = self._keys
        return list(keys if n is None else islice(keys, max(0, len(keys) - n), None))

    def __len__(self) -> int:
        return len(self._keys)


class SparseWindow(Generic[K]):
    """Keys held by some of the last ``size`` positions (the errors among the actions), counted per key.

    Only positions that hold a key are stored: :meth:`advance` moves the window
    on and lets the keys that fall out of it go, so a step without a key does
    almost nothing. After :meth:`follow` the positions are action indices, and
    a caller handed only the actions that hold a key (the failed ones) moves
    the window past the skipped ones in one step.
    """

    __slots__ = ("_entries", "_index", "_size", "counts", "position")

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: deque[tuple[int, K]] = deque()
        self.counts: dict[K, int] = {}
        self.position = 0  # positions seen: that of the newest
        self._index: int | None = None  # the newest action's index, once following indices

    def follow(self, index: int) -> None:
        """From now on move by action index; ``index`` is that of the newest position already seen.

        Only for a caller whose every action counts as a position and gets the
        next index (the Monitor without exempt tools): it may then skip the
        actions that hold no key.
        """
        self._index = index

    def advance(self, index: int = 0) -> None:
        """Move on to the next position (when following indices: to action ``index``'s)."""
        last = self._index
        if last is None:
            n = self.position = self.position + 1
        else:
            n = self.position = self.position + index - last
            self._index = index
        entries = self._entries
        floor = n - self._size
        while entries and entries[0][0] <= floor:
            gone = entries.popleft()[1]
            left = self.counts[gone] - 1
            if left:
                self.counts[gone] = left
            else:
                del self.counts[gone]

    def add(self, key: K) -> int:
        """Put ``key`` at the newest position; its count in the window afterwards."""
        self._entries.append((self.position, key))
        count = self.counts[key] = self.counts.get(key, 0) + 1
        return count

    def count_since(self, key: K, position: int) -> int:
        """How often ``key`` occurs in the window after ``position``."""
        return sum(1 for at, held in self._entries if held == key and at > position)

    def __len__(self) -> int:
        return len(self._entries)


class ErrorsOnly:
    """Stepping on failures only, for a tracker that keeps its errors in a :class:`SparseWindow`.

    The tracker sets ``_errors`` (that window) and ``_exempt`` (its own exempt tools).
    """

    __slots__ = ()
    _errors: SparseWindow[Any]
    _exempt: Collection[str]

    def errors_only(self, index: int, successes: Mapping[str, int] | None = None) -> bool:
        """Whether it can be stepped for failed actions only from now on (``index``: the newest so far).

        Yes unless it has exempt tools of its own: the actions between two
        failures are then counted from their indices (see SparseWindow.follow).
        ``successes`` (the index of each tool's and call's last success) is for trackers
        that need it.
        """
        if self._exempt:
            return False
        self._errors.follow(index)
        return True


class Successes(dict[str, int]):
    """The index of each tool's and each call's (fingerprint's) last success, as the error trackers
    read them once stepped on failures only, and the newest of the last ``keep`` successes that
    wrote, acted or waited (:func:`~.calls.changes_something`), found only when asked: the
    question is rare (a failing call run again), reading every command is not."""

    __slots__ = ("_changed", "_checked", "_keep", "_recent")

    def __init__(self, keep: int) -> None:
        super().__init__()
        self._keep = keep
        self._recent: deque[tuple[str, str, int]] = deque(maxlen=keep)
        self._checked = self._changed = 0  # the newest success looked at, the newest that changed

    def note(self, tool: str, fp: str, summary: str, index: int) -> None:
        """Action ``index``, a call ``fp`` (``summary``) of ``tool``, succeeded."""
        self[tool] = self[fp] = index
        self._recent.append((tool, summary, index))
        if len(self) > self._keep + NAMES_KEPT:  # an agent naming a new call at every action
            forget_before(self, index - self._keep)

    def waited_at(self, index: int) -> bool:
        """Whether action ``index`` was the newest success kept and waited (``sleep``)."""
        recent = self._recent
        if not recent or recent[-1][2] != index:
            return False
        tool, summary, _ = recent[-1]
        return waits(tool, summary)

    def changed(self) -> int:
        """The index of the newest kept success that wrote, acted or waited (0: none)."""
        for tool, summary, index in reversed(self._recent):
            if index <= self._checked:
                break
            if changes_something(tool, summary):
                self._changed = index
                break
        if self._recent:
            self._checked = self._recent[-1][2]
        return self._changed
