"""``near_repeat``: the same call with only its numbers, dates or ids changing."""

from __future__ import annotations

from typing import Any

import pytest

from heartbeat.base.errors import ConfigError
from heartbeat.detect.detectors import NearRepeat

from .helpers import Call, actions, fired, first, trips


def test_paging_back_and_forth_over_one_file_is_a_near_repeat_naming_the_call() -> None:
    """A sliding line range over one file, going back over pages already read, trips near_repeat."""
    hit = first(NearRepeat(), actions(_pages(16)))
    assert hit is not None and hit[0] == 12
    assert "only numbers, dates or ids changed" in hit[1].message and "big.py" in hit[1].message
    assert hit[1].evidence["count"] == 12


def test_reading_one_way_with_new_content_each_time_is_not_a_near_repeat() -> None:
    """Page after page, each answer new (a pager, a crawler, a queue worker): reading, not a repeat,
    with no metric to say so. Its twin whose pages stop changing is a near repeat."""
    forward = [_page(i, f"code {i}") for i in range(40)]
    assert trips(NearRepeat(), actions(forward)) == [None] * 40
    tickets: list[Call] = [
        {"tool": "process_ticket", "args": {"ticket_id": 40016 + i}, "output": f"ticket {40016 + i} closed"}
        for i in range(40)
    ]
    assert fired(actions(tickets)) == {}
    stalled = forward[:8] + [_page(i, "code 7") for i in range(8, 40)]  # past the end: the last page
    hit = first(NearRepeat(), actions(stalled))
    assert hit is not None and hit[0] == 12


def test_a_pager_whose_every_ninth_page_is_blank_is_reading_and_one_going_back_is_not() -> None:
    """A report read forward, every ninth page "This page intentionally left blank." (two in a row at
    a chapter's end): the same answer
    now and then from another page is no ground gone over (until 2026-12-06 it was, and a live pager
    was escalated after 25 pages). Pages visited back and forth under a cursor that carries a
    timestamp (every call new, its answers not) are, as is a cursor the server stopped following."""
    blank = "This page intentionally left blank."
    pages = range(40)  # blank: every ninth, and two in a row at the end of a chapter (25, 26)
    report = [
        _page(i, blank if i % 9 == 8 or i == 25 else f"section {i}: revenue, margin and churn") for i in pages
    ]
    assert fired(actions(report)) == {}
    back: list[Call] = [
        {
            "tool": "read_page",
            "args": {"page": p % 3, "at": 1_700_000_000 + i},
            "output": f"page {p % 3} body",
        }
        for i, p in enumerate(range(16))
    ]
    assert first(NearRepeat(), actions(back)) is not None
    ignored = report[:5] + [_page(i, "section 4: revenue, margin and churn") for i in range(5, 20)]
    assert first(NearRepeat(), actions(ignored)) is not None


def test_a_crawler_retrying_the_odd_failed_fetch_is_reading_not_going_over_old_ground() -> None:
    """Page after page with now and then a 503, the page fetched again and read: two equal
    failures are no page read twice. Its twin that fetches a page it already read is a near repeat."""

    def fetch(page: int, output: str) -> Call:
        url = f"https://shop.example/catalog?page={page}"
        return {"tool": "fetch", "args": {"url": url}, "output": output}

    crawl: list[Call] = []
    for page in range(1, 31):
        if page % 6 == 4:  # a transient failure, then the retry that reads the page
            crawl.append({**fetch(page, "HTTP 503 Service Unavailable"), "error": "http_error"})
        crawl.append(fetch(page, f"<html>catalog page {page}: items {page * 20}-{page * 20 + 19}</html>"))
    assert fired(actions(crawl)) == {}
    again = [*crawl[:14], fetch(3, "<html>catalog page 3: items 60-79</html>"), *crawl[14:]]
    hit = first(NearRepeat(), actions(again))
    assert hit is not None and hit[0] == 15


def test_old_ground_is_looked_for_over_twice_the_window() -> None:
    """A page read again 20 actions later is old ground for as long as both reads are within 2W."""
    calls = [_page(i, f"code {i}") for i in range(20)] + [_page(0, "code 0")]
    calls += [_page(i, f"code {i}") for i in range(20, 30)]
    found = trips(NearRepeat(), actions(calls))
    assert found[:20] == [None] * 20  # one way so far
    assert all(hit is not None for hit in found[20:30])  # both reads of page 0 within 30 actions
    assert found[30] is None  # the first read left the 30 actions: new pages only again


def test_fetching_ten_items_by_number_is_not_a_near_repeat() -> None:
    """Enumerating items by numeric id, each answering something new, is work."""
    calls: list[Call] = [
        {"tool": "get_item", "args": {"id": 1000 + i}, "output": f"item {1000 + i}: " + "w" * (i + 12)}
        for i in range(10)
    ]
    assert fired(actions(calls)) == {}


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: NearRepeat(threshold=1), "near_repeat: threshold must be an integer between 2"),
        (lambda: NearRepeat(threshold=5, window=4), "near_repeat: window must be an integer between 5"),
        (lambda: NearRepeat(window=10_001), "window"),
        (lambda: NearRepeat(tools={"sed": 1}), "tools.sed"),
        (lambda: NearRepeat(tools={"sed": "never"}), "tools.sed"),  # type: ignore[dict-item]
    ],
)
def test_bad_parameters_are_config_errors(make: Any, words: str) -> None:
    """A detector refuses parameters that could never work, naming the parameter."""
    with pytest.raises(ConfigError, match=words):
        make()


def _page(i: int, output: str, tool: str = "sed") -> Call:
    """A call reading the ``i``-th 40-line page of one file."""
    return {"tool": tool, "args": {"cmd": f"sed -n '{i * 40 + 1},{i * 40 + 40}p' big.py"}, "output": output}


def _pages(n: int, tool: str = "sed") -> list[Call]:
    """``n`` calls reading one file's first six pages again and again (going back over them)."""
    return [_page(i % 6, f"code {i % 6}", tool) for i in range(n)]


def test_the_message_shows_the_masked_shape_and_the_count() -> None:
    """The person reading it sees the call with its numbers masked, how many, and the last call."""
    hit = first(NearRepeat(), actions(_pages(16)))
    assert hit is not None
    anomaly = hit[1]
    shape = """sed({"cmd":"sed -n '#,#' big.py"})"""
    assert anomaly.message == (
        "12 of the last 15 actions were the same call with only numbers, dates or ids changed "
        f"({shape}), some answering what others already had; "
        f"""last: sed({{"cmd":"sed -n '201,240p' big.py"}})"""
    )
    assert anomaly.evidence["shape"] == shape and anomaly.evidence["window"] == 15
    assert anomaly.evidence["avoid"] == f"more calls like {shape} with other numbers"


def test_one_call_with_one_result_is_a_repeat_not_a_near_repeat() -> None:
    """The same call answered the same way fifteen times has one shape, but that is repeat's business."""
    calls: list[Call] = [{"tool": "scroll", "args": {"by": 10}, "output": "the same lines"}] * 15
    assert trips(NearRepeat(), actions(calls)) == [None] * 15
    calls[0] = {"tool": "scroll", "args": {"by": 20}, "output": "the same lines"}
    assert trips(NearRepeat(), actions(calls))[11] is not None  # one call differs: a near repeat


def test_a_tool_with_its_own_repeat_threshold_gets_as_much_room_here() -> None:
    """``[detectors.repeat] tools``: a higher threshold applies, "off" silences, a lower one is raised."""
    records = actions(_pages(20))
    higher = first(NearRepeat(window=20, tools={"sed": 16}), records)
    assert higher is not None and higher[0] == 16 and higher[1].evidence["count"] == 16
    assert higher[1].evidence["threshold"] == 16  # the one that applied, as repeat and recurring say
    assert trips(NearRepeat(tools={"sed": "off"}), records) == [None] * 20
    lower = first(NearRepeat(tools={"sed": 2}), records)
    assert lower is not None and lower[0] == 12  # never below near_repeat's own threshold
    other = first(NearRepeat(tools={"grep": 16}), records)
    assert other is not None and other[0] == 12  # another tool's threshold changes nothing here


def test_exempt_tools_are_invisible_to_near_repeat() -> None:
    """An exempt tool never trips it, and its calls take no place in the window."""
    assert trips(NearRepeat(exempt={"sed"}), actions(_pages(16))) == [None] * 16
    interleaved: list[Call] = []
    for page in _pages(16):
        interleaved += [page, {"tool": "log", "args": {"text": "reading on"}, "output": "ok"}]
    assert trips(NearRepeat(), actions(interleaved)) == [None] * 32  # 8 pages at most in 15 actions
    hit = first(NearRepeat(exempt={"log"}), actions(interleaved))
    assert hit is not None and hit[0] == 23 and hit[1].tool == "sed"


def _tickets(answers: list[str]) -> list[Call]:
    return [
        {"tool": "get_ticket", "args": {"ticket": f"T{n}"}, "output": a} for n, a in enumerate(answers, 1)
    ]


def test_a_queue_whose_tickets_are_often_the_same_complaint_is_read_not_gone_over() -> None:
    """Tickets read one by one, two in five the same complaint word for word: no ticket read twice,
    most answers new (live round 46: through the MCP proxy the fourteenth ticket was withheld, with
    a quarter of the answers seen before counted as old ground). Pages cycling two answers under
    ever new numbers, most of them seen before, are old ground."""
    jam = "Subject: printer jam\nThe printer on floor 3 jams on every job. Please send someone."
    queue = [
        jam if n % 5 in (0, 4) else f"Subject: issue {n}\nUser u{n} reports {'abcdefghij'[n % 10]}"
        for n in range(30)
    ]
    assert first(NearRepeat(), actions(_tickets(queue))) is None
    cycling = ["page A: " + "alpha " * 20, "page B: " + "beta " * 20] * 15
    assert first(NearRepeat(), actions(_tickets(cycling))) is not None


def test_a_log_tailed_from_its_offset_answering_nothing_new_has_read_nothing_twice() -> None:
    """A tailer reads from its saved offset at each wake-up, "no new lines" most times; after a
    burst its offset moves on and the next quiet wake-up asks a new number (live round 46: flagged
    there). An answer of nothing is no ground covered, but as the same call answered so again in
    one heartbeat."""
    calls: list[Call] = []
    for tick in range(1, 15):
        offset = 48210 if tick < 11 else 48330
        output = "2026-12-07T11:10:00Z ERROR payment-svc timeout" if tick == 11 else "no new lines"
        args = {"path": "/var/log/app.log", "offset": offset}
        calls.append({"tool": "tail", "args": args, "output": output, "tick": tick})
    assert first(NearRepeat(), actions(calls)) is None
    # The same call answered nothing again within one heartbeat is asked again: old ground.
    assert first(NearRepeat(), actions([{**call, "tick": 1} for call in calls])) is not None


def test_files_verified_one_by_one_each_ok_are_ground_of_their_own() -> None:
    """A backup verifier checking file after file, each "OK: checksum matches" (an all-clear, each
    call's own verdict), and now and then a mismatch re-copied, was near_repeat through the MCP
    proxy (live round 47): all-clears were answers already seen. The same file verified again is
    old ground."""
    calls: list[Call] = []
    for day in range(1, 4):
        for i in range(8):
            out = (
                "OK: checksum matches"
                if (day + i) % 11
                else "MISMATCH: re-copied from primary, checksum now matches"
            )
            calls.append(
                {
                    "tool": "verify",
                    "args": {"path": f"/backups/2026-12-0{day}/db-{i:02d}.tar.gz"},
                    "output": out,
                }
            )
    assert first(NearRepeat(), actions(calls)) is None
    again: list[Call] = [calls[0], calls[1]] * 8
    assert first(NearRepeat(), actions(again)) is not None


def test_acts_on_new_ids_each_confirmed_alike_are_ground_of_their_own() -> None:
    """A janitor closing stale tickets, each ``close_ticket`` answered "Ticket closed.", was
    escalated by near_repeat at its second turn (live round 53): the same confirmation read as an
    answer already seen. An act's confirmation is its own act; the same ticket closed again is
    old ground."""
    calls: list[Call] = [
        {"tool": "close_ticket", "args": {"ticket_id": 40017 + 3 * i}, "output": "Ticket closed."}
        for i in range(30)
    ]
    assert first(NearRepeat(), actions(calls)) is None
    again: list[Call] = [calls[0], calls[1], calls[2]] * 6
    assert first(NearRepeat(), actions(again)) is not None
