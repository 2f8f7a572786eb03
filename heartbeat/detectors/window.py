"""Sliding windows of keys with their counts: the shared core of the windowed detectors."""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["KeyWindow", "SparseWindow"]

K = TypeVar("K", bound=Hashable)


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

    def count(self, key: Hashable) -> int:
        """How often ``key`` occurs in the window."""
        return self._counts.get(key, 0)

    def __len__(self) -> int:
        return len(self._keys)


class SparseWindow(Generic[K]):
    """Keys held by some of the last ``size`` positions (the errors among the actions), counted per key.

    Only positions that hold a key are stored: :meth:`advance` moves the window
    on and, at most, lets the oldest key leave, so a step without a key does
    almost nothing.
    """

    __slots__ = ("_entries", "_size", "counts", "position")

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: deque[tuple[int, K]] = deque()
        self.counts: dict[K, int] = {}
        self.position = 0  # positions seen: that of the newest

    def advance(self) -> None:
        """Move on by one position, letting a key that falls out of the window go."""
        n = self.position = self.position + 1
        entries = self._entries
        # Positions rise by one per advance, so at most one entry leaves.
        if entries and entries[0][0] <= n - self._size:
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

    def __len__(self) -> int:
        return len(self._entries)
