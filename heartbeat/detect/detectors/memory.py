"""The agent's own memory: what a write stored and a read reads back, where the agent keeps its place.

A poller keeps a cursor (``state.set(key="issues_since", ...)``) and reads it at each wake-up;
what it reads there is the value it stored, not the world answering the same again. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from .calls import call_arguments, named_things, stores_by_name

__all__ = ["keeps_place", "reads_back", "written_back"]


def reads_back(read: tuple[str, str], writes: Iterable[tuple[str, str]]) -> bool:
    """Whether the call ``read`` (tool, summary) reads back what one of ``writes`` (the same, each a
    write) wrote: the two name the same thing (a word of their tools' names that is no verb:
    ``state.get`` and ``state.set``, ``get_cursor`` and ``save_cursor``) and each argument of the
    read is the write's (``{"key": "issues_since"}`` of ``{"key": "issues_since", "value": "..."}``).
    A poller's cursor read at each wake-up is its own memory, the value it stored last, not the
    world answering the same again. The read is parsed once, each write only when it names the
    same thing."""
    asked = call_arguments(read)
    if not asked:
        return False
    named = named_things(read[0])
    return any(_stores(named, asked, write) is not None for write in writes)


def _stores(
    named: frozenset[str], asked: dict[str, object], write: tuple[str, str]
) -> dict[str, object] | None:
    """The arguments of ``write`` (tool, summary) when it writes the thing a read of the words
    ``named`` and the arguments ``asked`` reads (see :func:`reads_back`), else None; the write is
    parsed only when its tool names the same thing."""
    if named.isdisjoint(named_things(write[0])):
        return None
    given = call_arguments(write)
    if given is not None and all(key in given and given[key] == value for key, value in asked.items()):
        return given
    return None


def written_back(read: tuple[str, str], write: tuple[str, str]) -> str | None:
    """What ``write`` (tool, summary) stores of the thing ``read`` (the same) reads (see
    :func:`reads_back`): its one argument beyond the read's, when it is a text (``"value"`` of
    ``redis.set(key="cursor", value="evt_9")`` after ``redis.get(key="cursor")``); else None."""
    asked = call_arguments(read)
    if not asked:
        return None
    given = _stores(named_things(read[0]), asked, write)
    if given is None:
        return None
    left = [value for key, value in given.items() if key not in asked]
    return left[0] if len(left) == 1 and isinstance(left[0], str) else None


# Where the agent keeps its place; not its ``memory``, where a note saved again is a thought again.
_PLACE_WORDS = frozenset(["state", "cursor", "checkpoint", "watermark", "bookmark", "offset"])


@lru_cache(maxsize=1024)
def keeps_place(tool: str) -> bool:
    """Whether ``tool``'s name says it stores where the agent is (``state.set``, ``save_cursor``)."""
    return stores_by_name(tool) and not _PLACE_WORDS.isdisjoint(named_things(tool))
