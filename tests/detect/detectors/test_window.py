"""Sliding windows of keys with their counts: checked against a plain list of the window's contents."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from heartbeat.detect.detectors.window import ErrorsOnly, KeyWindow, SparseWindow

_KEYS = st.sampled_from([None, "a", "b", "c", "d"])


@settings(max_examples=300, deadline=None, print_blob=True)  # a failure prints how to replay it
@given(size=st.integers(1, 6), keys=st.lists(_KEYS, max_size=40))
def test_key_window_counts_what_a_list_of_the_last_keys_holds(size: int, keys: list[str | None]) -> None:
    """After each push: the key's count, revisits, keys seen more than once, and the length."""
    window = KeyWindow(size)
    for i, key in enumerate(keys):
        got = window.push(key)
        last = keys[max(0, i + 1 - size) : i + 1]
        counts = Counter(k for k in last if k is not None)
        assert got == (counts[key] if key is not None else 0)
        assert window.count(key) == (counts[key] if key is not None else 0)
        assert window.revisits == sum(counts.values()) - len(counts)
        assert window.repeated == sum(1 for n in counts.values() if n > 1)
        assert len(window) == len(last)


def test_key_window_forgets_what_slid_out() -> None:
    """a b a with room for two: the first a has left, so the second is no revisit."""
    window = KeyWindow(2)
    assert [window.push(k) for k in ("a", "b", "a")] == [1, 1, 1]
    assert window.revisits == 0 and window.repeated == 0
    assert window.push("a") == 2 and window.revisits == 1 and window.repeated == 1


@settings(max_examples=300, deadline=None, print_blob=True)  # a failure prints how to replay it
@given(
    size=st.integers(1, 6),
    steps=st.lists(st.tuples(st.integers(1, 4), _KEYS), max_size=40),
    follow=st.booleans(),
)
def test_sparse_window_counts_the_keys_of_the_last_positions(
    size: int, steps: list[tuple[int, str | None]], follow: bool
) -> None:
    """Stepped position by position, or by action index with gaps, it counts the keys of the last ``size``."""
    window: SparseWindow[str] = SparseWindow(size)
    if follow:
        window.follow(0)  # positions are action indices from here on: gaps skip actions without a key
    position = 0
    held: list[tuple[int, str]] = []
    for gap, key in steps:
        position += gap if follow else 1
        window.advance(position)
        if key is not None:
            held.append((position, key))
            assert window.add(key) == sum(1 for p, k in held if k == key and p > position - size)
        inside = Counter(k for p, k in held if p > position - size)
        assert window.counts == dict(inside)
        assert len(window) == sum(inside.values())
        assert window.position == position


class _Errors(ErrorsOnly):
    """The least a tracker sets for :class:`ErrorsOnly`: its window and its exempt tools."""

    def __init__(self, exempt: frozenset[str]) -> None:
        self._errors: SparseWindow[str] = SparseWindow(3)
        self._exempt = exempt


def test_errors_only_is_refused_with_exempt_tools_and_moves_by_index_without() -> None:
    """With exempt tools the actions between failures cannot be counted from indices: it says no."""
    assert _Errors(frozenset({"log"})).errors_only(5) is False
    tracker = _Errors(frozenset())
    assert tracker.errors_only(5) is True
    tracker._errors.advance(9)  # actions 6 to 8 were skipped: the window moved past them
    assert tracker._errors.position == 4


def test_a_key_window_lets_its_oldest_go_before_it_is_full() -> None:
    """drop_oldest undoes the oldest push: counts, revisits and repeated keys as if it never came."""
    window = KeyWindow(5)
    for key in ("a", "b", "a", None, "a"):
        window.push(key)
    assert (window.count("a"), window.revisits, window.repeated, len(window)) == (3, 2, 1, 5)
    window.drop_oldest()
    assert (window.count("a"), window.revisits, window.repeated, len(window)) == (2, 1, 1, 4)
    window.drop_oldest()  # "b"
    window.drop_oldest()  # "a"
    assert (window.count("a"), window.revisits, window.repeated, len(window)) == (1, 0, 0, 2)
    window.drop_oldest()  # None: a position without a key
    assert (window.count("a"), len(window)) == (1, 1)
