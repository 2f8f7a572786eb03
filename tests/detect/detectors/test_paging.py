"""A page naming itself as the next to read: the cursor sent, named as the next, beside something."""

from __future__ import annotations

import pytest

from heartbeat.detect.detectors.paging import points_at_itself


@pytest.mark.parametrize(
    ("args", "output"),
    [
        ({"cursor": "c_1250"}, '{"messages": 250, "nextCursor": "c_1250"}'),
        ({"page_token": "tk9"}, '{"files": [{"id": 1}], "nextPageToken": "tk9"}'),
        ({"cursor": "d3"}, '{"ok": true, "messages": [1], "response_metadata": {"next_cursor": "d3"}}'),
        ({"after": "600"}, '{"results": [{"id": "8"}], "paging": {"next": {"after": "600", "link": "u"}}}'),
        ({"page": 4}, '{"rows": [1, 2], "next_page": 4}'),
    ],
)
def test_a_page_naming_itself_as_the_next_points_at_itself(args: dict[str, object], output: str) -> None:
    """Blind batches 64 and 65: a GDPR export's chat pager and a CRM dedup worker were told, page
    after page, to go on from the very cursor they had sent (Slack's, Google's, HubSpot's shapes)."""
    assert points_at_itself(args, output)


@pytest.mark.parametrize(
    ("args", "output"),
    [
        ({"cursor": "c_1250"}, '{"messages": 250, "nextCursor": "c_1500"}'),  # moved on
        ({"cursor": "c_9"}, '{"items": [], "next_cursor": "c_9"}'),  # a feed polled while nothing came
        ({"cursor": "c_9"}, '{"next_cursor": "c_9"}'),  # nothing but where to go on
        ({"cursor": "c_9"}, '{"items": [1], "cursor": "c_9", "next_cursor": "c_10"}'),  # its echo
        ({"q": "c_9"}, '{"items": [1], "next": "c_9"}'),  # no place to read from was sent
        ({"cursor": "c_9"}, "items: 1, next: c_9"),  # no JSON object
        ({"cursor": 0}, '{"items": [1], "next_offset": 0}'),  # a first page's 0 names no place
    ],
)
def test_a_page_that_moves_on_or_holds_nothing_does_not(args: dict[str, object], output: str) -> None:
    """A cursor that moved, an empty page pointing back, an echo of the cursor sent: no page read again."""
    assert not points_at_itself(args, output)
