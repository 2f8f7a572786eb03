"""A page naming itself as the next to read: a listing that goes nowhere.

A call told where to read from (``cursor="c_1250"``, ``page_token``, ``after``) whose answer holds
something and names that very place as where to read next (250 messages and ``"nextCursor":
"c_1250"``) says that reading it again is all there is to do, for ever. Its result key is marked
(:data:`.said.REREAD_MARK`, see :mod:`.fingerprints`): a heartbeat that heard it did more than
look (see :mod:`..idle`). An empty page pointing back (a feed polled while nothing came) is a quiet
poll, not this.
"""

from __future__ import annotations

from typing import Any

from .envelope import around_nothing, json_object

__all__ = ["points_at_itself"]

# A listing call's argument naming where to read from, and its answer's field naming where to read
# next (lower case, no ``_`` or ``-``): Slack's ``cursor`` and ``next_cursor``, Google's
# ``pageToken`` and ``nextPageToken``, GraphQL's ``after`` and ``endCursor``, S3's ``marker`` and
# ``NextMarker``. An answer's ``cursor`` is left out: some APIs echo there the cursor they were given.
_FROM = frozenset(
    ["cursor", "pagetoken", "pagecursor", "continuation", "continuationtoken", "marker", "after",
     "starttoken", "startcursor", "startafter", "nexttoken", "nextpagetoken", "nextcursor", "offset", "page"]
)  # fmt: skip
_NEXT = frozenset(
    ["next", "nextcursor", "nextpagetoken", "nexttoken", "nextpage", "nextmarker", "nextoffset",
     "continuation", "continuationtoken", "nextcontinuationtoken", "endcursor", "nextpagecursor"]
)  # fmt: skip
_PAGED_LONGEST = 20_000  # characters: a longer answer is not parsed for its next cursor


def points_at_itself(args: object, stripped: str) -> bool:
    """Whether ``stripped``, the JSON answer of a call given where to read from (``cursor``,
    ``page_token``, ``after``...), names that very place as where to read next while holding
    something: the page says to read it again. An empty page pointing back (a feed polled while
    nothing came, ``{"items": [], "next_cursor": "c_9"}``) is a quiet poll, not this."""
    # The cheap tests first: this runs for every answer, and few are JSON objects.
    if args.__class__ is not dict or stripped[:1] != "{" or len(stripped) > _PAGED_LONGEST:
        return False
    sent = {
        str(value)
        for name, value in args.items()
        if name.__class__ is str and _place(name) and value.__class__ in (str, int) and value
    }
    if not sent:
        return False
    if not any(place in stripped for place in sent):  # a cheap test before parsing
        return False
    data = json_object(stripped)
    if data is None:
        return False
    rest, pointed = _without_next(data, sent)
    return pointed and bool(rest) and not around_nothing(rest)


def _place(name: str) -> bool:
    """Whether a field's ``name`` says where a listing is read from (see :data:`_FROM`)."""
    return _plain(name) in _FROM


def _plain(name: str) -> str:
    """A field's ``name`` as :data:`_FROM` and :data:`_NEXT` spell it (``next_Page-token``)."""
    return name.lower().replace("_", "").replace("-", "")


def _without_next(data: dict[Any, Any], sent: set[str], depth: int = 0) -> tuple[dict[Any, Any], bool]:
    """``data`` without its fields naming where to read next (at its top and in the objects it holds,
    Slack's ``response_metadata``, GraphQL's ``pageInfo``), and whether one names a place of ``sent``."""
    rest: dict[Any, Any] = {}
    pointed = False
    for key, value in data.items():
        if isinstance(key, str) and _plain(key) in _NEXT:
            if isinstance(value, dict):  # HubSpot's ``"paging": {"next": {"after": "600", "link": ...}}``
                value = next((v for k, v in value.items() if isinstance(k, str) and _place(k)), None)
            pointed = pointed or (value.__class__ in (str, int) and str(value) in sent)
        elif isinstance(value, dict) and depth < 2:
            rest[key], inner = _without_next(value, sent, depth + 1)
            pointed = pointed or inner
        else:
            rest[key] = value
    return rest, pointed
