"""An API's answers of nothing: an envelope around no answer, ``{"messages": []}``, and HTTP's 304.

An envelope around nothing is the same result as ``{}`` (see
:mod:`.fingerprints`), and an empty answer (see :mod:`.empty`): a queue with
nothing in it, a search with no hit, a page past the last, whatever the API
wraps around it. A conditional request's "304 Not Modified", however a tool
prints it ("HTTP/1.1 304 Not Modified" and its headers, "HTTP 304 Not
Modified (etag ...)"), is one result whatever its headers say, an empty
answer too, and a poll's "nothing new yet" (see :func:`.empty.idle_poll`).
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["ENVELOPE_LONGEST", "NOT_MODIFIED", "empty_envelope", "not_modified"]

# A JSON object around no answer (``{"messages": []}``, ``{"total": 0, "results": [], "took_ms": 37}``,
# ``{"Messages": [], "ResponseMetadata": {...}}``): a list in it, every list in it empty, the rest
# counts, timings, texts and metadata. It is the same result as ``{}``. A ``true`` is an answer
# (``{"valid": true, "errors": []}``), and so is any item in a list.
ENVELOPE_LONGEST = 300
"""The longest output read as an empty envelope (characters, stripped)."""


NOT_MODIFIED = "304 Not Modified"
"""The text every "not modified" answer is read as (one result)."""
_NOT_MODIFIED = re.compile(r"HTTPS?(?:/[\d.]+)?\s+304\b|304\s+Not\s+Modified\b", re.IGNORECASE)
_STATUS_STARTS = frozenset(["HTT", "htt", "Htt", "304"])  # a cheap test before the regex


def not_modified(stripped: str) -> bool:
    """Whether ``stripped`` (an output) is HTTP's 304, "Not Modified"."""
    return stripped[:3] in _STATUS_STARTS and _NOT_MODIFIED.match(stripped) is not None


def empty_envelope(stripped: str) -> bool:
    """Whether ``stripped`` (a JSON object, by its first character) is an envelope around no answer."""
    try:
        data = json.loads(stripped)
    except ValueError:
        return False
    return isinstance(data, dict) and _holds_nothing(data, top=True)


def _holds_nothing(data: dict[Any, Any], top: bool) -> bool:
    """No item in any list of ``data`` and no ``true``; at the top, one list at least."""
    lists = 0
    for value in data.values():
        if value is True or (isinstance(value, list) and value):
            return False
        if isinstance(value, list):
            lists += 1
        elif isinstance(value, dict) and not _holds_nothing(value, top=False):
            return False
    return lists > 0 or not top
