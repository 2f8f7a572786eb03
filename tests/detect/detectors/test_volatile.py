"""Values volatile by nature: the cheap tests before the regex only save time."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from heartbeat.detect.detectors.volatile import (
    has_volatile,
    mask_ages,
    mask_clock,
    mask_deliveries,
    mask_elapsed,
    mask_request_ids,
    mask_scores,
    mask_times,
    mask_volatile,
    may_hold_volatile,
    unechoed,
    unranked,
    unstamped,
)

_OLD_HINTS = (b"9:99", b"9s", b"9ms", b"9x9", b"9-9", b"9999999")


@settings(max_examples=500, deadline=None, print_blob=True)
@given(data=st.binary(max_size=40) | st.text("0123456789:msx- a", max_size=40).map(str.encode))
def test_the_volatile_test_in_two_steps_fires_as_the_six_pieces_do(data: bytes) -> None:
    """The quick test of long outputs (two steps) finds exactly the six pieces of its definition."""
    nines = data.translate(bytes.maketrans(b"0123456789", b"9999999999"))
    assert has_volatile(data) is any(hint in nines for hint in _OLD_HINTS)


_PIECES = ("5", "12", "2024-05-01", "T", " ", "\t", "\x1c", ":", "-", "x", "0x", "ff", "ab", "s", "ms", "µs")
_PIECES += ("us", "ns", "sec", ".", "3f2a9c1e", "a1b2c3d4e5f6", "123456789012", "z", "_", "٣", "é")


@settings(max_examples=1500, deadline=None, print_blob=True)
@given(
    text=st.lists(st.sampled_from(_PIECES), max_size=8).map("".join)
    | st.text("0123456789abcdefABFxXmunsµMS-:. \t\n\x1c\x1fTz_٣", max_size=30)
)
@example(text="took 5 ms")
@example(text="took 5\x1cs")
@example(text="took 3.2s")
@example(text="at 12:30:05")
@example(text="at 2024-05-01T10:00")
@example(text="ptr 0xff")
@example(text="id 3f2a9c1e-1234-4abc-8def-0123456789ab")
@example(text="id abcdefab-abcd-abcd-abcd-abcdefabcdef")
@example(text="sha a1b2c3d4e5f6 n 123456789012")
def test_a_text_the_quick_look_clears_holds_nothing_the_volatile_regex_masks(text: str) -> None:
    """The substring test before masking a short output only saves time: what it clears has no match."""
    data = text.encode("utf-8", "surrogatepass")
    if not may_hold_volatile(text, data):
        assert mask_volatile(text) == text


_HITS = [
    "Estadio Municipal de Tarrazu - Wikipedia\n    https://es.wikipedia.org/wiki/Tarrazu",
    "Historia | AD Municipal Tarrazu\n    https://adtarrazu.example.cr/historia",
    "San Marcos de Tarrazu travel guide\n    https://visit.example/tarrazu",
]


def _results(hits: list[str], bracketed: bool = True) -> str:
    marks = [f"[{n}] " if bracketed else f"{n}. " for n in range(1, len(hits) + 1)]
    return "Search results:\n" + "\n".join(mark + hit for mark, hit in zip(marks, hits, strict=True))


def test_the_same_hits_ranked_anew_read_alike_and_a_new_hit_reads_anew() -> None:
    """A search asked in other words ranks the same hits anew: the same content; one hit more or
    another hit is new content, and so is a number within a hit."""
    first = unranked(_results(_HITS))
    assert first is not None and "[1]" not in first
    assert unranked(_results(_HITS[::-1])) == first
    assert unranked(_results([_HITS[1], _HITS[0], _HITS[2]], bracketed=False)) == unranked(
        _results(_HITS, bracketed=False)
    )
    assert unranked(_results([*_HITS[:2], "Liga de Ascenso fixtures\n    https://liga.example"])) != first
    assert unranked(_results([_HITS[0].replace("Wikipedia", "Wikipedia 2"), *_HITS[1:]])) != first


def test_a_text_with_fewer_than_two_ranked_lines_is_no_ranked_list() -> None:
    assert unranked("1 failed, 2 passed in 0.3s") is None
    assert unranked("[2] only one rank here") is None
    assert unranked("see step\n2. and that is all") is None


def test_a_job_s_elapsed_counter_is_masked_and_a_call_s_own_timing_kept() -> None:
    """A job's elapsed time grows on its own; the time a call took is a health check's only change,
    kept (see the README's Troubleshooting); text that is no JSON object is left as it is."""
    status = '{"state": "RUNNING", "percent": 11, "elapsed_seconds": 955, "elapsedMs": 3.5, "latency_ms": 41}'
    assert (
        mask_elapsed(status)
        == '{"state": "RUNNING", "percent": 11, "elapsed_seconds": #, "elapsedMs": #, "latency_ms": 41}'
    )
    assert mask_elapsed('"elapsed_seconds": 955') == '"elapsed_seconds": 955'
    assert mask_elapsed('{"took": 37, "timeout": 30}') == '{"took": 37, "timeout": 30}'


def test_what_a_running_job_has_used_so_far_is_masked() -> None:
    """YARN's report of a Tez job frozen at 67% grows its resource seconds every poll (blind batch
    57's poller was a wait that moved, never judged); a count of seconds or hours of anything else
    is content."""
    report = "Progress : 67%\n\tAggregate Resource Allocation : 1061000000 MB-seconds, 256100 vcore-seconds"
    assert (
        mask_elapsed(report)
        == "Progress : 67%\n\tAggregate Resource Allocation : # MB-seconds, # vcore-seconds"
    )
    assert mask_elapsed("trained 412.5 GPU-hours") == "trained # GPU-hours"
    assert mask_elapsed("3 man-hours left, 20 re-seconds") == "3 man-hours left, 20 re-seconds"


def test_a_failure_quoting_the_calls_own_value_back_says_the_same_of_another_try() -> None:
    """A quoted span that is one of the call's argument values (case aside) is masked; a quoted
    argument name, a file a traceback quotes out of a command, or a value of no argument stays."""
    said = "400 Bad Request: invalid employee_id 'Dana Kwon': expected format E followed by 6 digits"
    assert unechoed(said, '{"employee_id":"dana kwon"}') == (
        "400 Bad Request: invalid employee_id '#': expected format E followed by 6 digits"
    )
    assert unechoed('No matches found for "Hydrogen start".', '{"text":"Hydrogen start"}') == (
        "No matches found for '#'."
    )
    assert unechoed("unknown parameter 'by'", '{"by":"email","employee_id":"x"}') == "unknown parameter 'by'"
    traceback = 'File "/testbed/repro.py", line 3, in <module>'
    assert unechoed(traceback, '{"cmd":"python /testbed/repro.py"}') == traceback
    assert unechoed("order 'W123' not found", '{"order_id":"W124"}') == "order 'W123' not found"
    assert unechoed("item 'ß' unknown", '{"items":["x","ß"]}') == "item 'ß' unknown"  # one letter
    assert unechoed("items 'café' unknown", '{"items":["x","café"]}') == "items '#' unknown"


def test_a_time_given_relative_to_now_is_masked() -> None:
    """gh's "Triggered via push about 7 minutes ago" and kubectl's "3h ago" grow as a clock does;
    "agon" and a count of days are no such time."""
    assert mask_ages("Triggered via push about 7 minutes ago") == "Triggered via push #"
    assert (
        mask_ages("web-7d9f  Running  3h ago\napi  Running  an hour ago")
        == "web-7d9f  Running  #\napi  Running  #"
    )
    assert mask_ages("the agon of 12 days") == "the agon of 12 days"


def test_a_tables_age_cells_are_masked() -> None:
    """kubectl's ``AGE`` column grows on its own between two polls of the same pods: masked, and the
    pod still ``Pending`` reads as before (blind batch 56's frozen rollout); counts stay."""
    pods = (
        "NAME          READY   STATUS    RESTARTS   AGE\n"
        "api-7d9f-x2k  1/1     Running   0          {a}\n"
        "api-7d9f-h4d  0/1     Pending   0          {b}"
    )
    assert mask_ages(pods.format(a="7m", b="5m")) == mask_ages(pods.format(a="23m", b="2d3h"))
    assert "0/1     Pending   0          #" in mask_ages(pods.format(a="7m", b="5m"))
    assert mask_ages("NAME  AGE  PODS\nweb   7m   3") != mask_ages("NAME  AGE  PODS\nweb   7m   4")
    assert mask_ages("sizes: 5m 7m") == "sizes: 5m 7m"  # no table with an age column


def test_a_requests_own_id_is_masked_by_its_name() -> None:
    """A field or header named for a request's id comes anew with every answer: masked; other
    fields, and a count of requests, stay."""
    assert mask_request_ids('{"state": "running", "request_id": "req_7FTDaFcy867e"}') == (
        '{"state": "running", "request_id": "#"}'
    )
    assert mask_request_ids('{"traceId":"4bf92f","spanId":"00f067"}') == '{"traceId":"#","spanId":"#"}'
    assert (
        mask_request_ids("HTTP/1.1 200 OK\nX-Request-Id: 4f1c9a\nServer: x")
        == "HTTP/1.1 200 OK\nX-Request-Id: #\nServer: x"
    )
    assert mask_request_ids('{"requests": 5, "span": 3}') == '{"requests": 5, "span": 3}'


_EMPTY_SITEMAP = "<urlset> 0 <url> entries </urlset>"


def _sitemap_page(edge: int, age: int, etag: str = "7aab5a", body: str = _EMPTY_SITEMAP) -> str:
    head = f"HTTP/2 200\ncontent-type: application/xml\nx-cache: HIT from edge-{edge}\nage: {age}"
    head += f"\netag: {etag}\ncf-ray: 8f1{edge}a2-FRA\nX-RateLimit-Remaining: {4999 - age}"
    return f"{head}\n\n{body}\nage: {age}"


def test_what_an_http_answers_headers_say_of_its_delivery_is_masked() -> None:
    """Blind batch 66's sitemap page, empty and naming itself as the next, was heard anew at every
    look: its cache's node and age ("x-cache: HIT from edge-12", "age: 2683") moved, so the same
    page read as a watcher's round that saw something move. Those headers, a CDN's ray id and a
    rate limit's count of calls left are masked; what names the content (the ETag, the body, a
    line of the body that looks like a header) stays."""
    first = mask_request_ids(_sitemap_page(12, 2683))
    assert first == mask_request_ids(_sitemap_page(35, 2538))[:-4] + "2683"
    assert "age: #\netag: 7aab5a\ncf-ray: #\nX-RateLimit-Remaining: #\n\n" in first
    assert mask_request_ids(_sitemap_page(12, 1, etag="9c01")) != mask_request_ids(_sitemap_page(12, 1))
    assert mask_request_ids(_sitemap_page(12, 1, body="3 entries")) != mask_request_ids(_sitemap_page(12, 1))
    assert mask_request_ids("age: 41\nname: Ada") == "age: 41\nname: Ada"  # no HTTP answer: data


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("replica-1 lag=14.2s state=streaming", "replica-1 lag=14.2s state=streaming"),
        ("replication delay: 3 s", "replication delay: 3 s"),
        ("p99 latency 820ms", "p99 latency 820ms"),
        ("12s behind primary", "12s behind primary"),
        ("took 41s", "took #"),
        ("Elapsed time: 4.3s", "Elapsed time: #"),
    ],
)
def test_a_duration_named_for_what_is_measured_is_content(text: str, masked: str) -> None:
    """A replica's lag is what its watcher reads (a live newcomer's watcher paged on "lag=14.2s"
    and was told the next wake-up it saw the same as at "lag=0.4s"); the time a call took is not."""
    assert mask_volatile(text) == masked


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ('{"id": "18c2f0a1b2c3d4e5", "threadId": "18c2f0a1b2c3d4e5"}', None),
        ('{"jobs": [{"id": "3b1f9a2c-1d2e-4f3a-a1b2-0123456789ab"}]}', None),
        ("job_id=18c2f0a1b2c3d4e5 claimed", None),
        ('{"message_id": "18c2f0a1b2c3d4e5"}', None),
        ('{"request_id": "18c2f0a1b2c3d4e5"}', '{"request_id": "#"}'),
        ('{"traceId": "18c2f0a1b2c3d4e5"}', '{"traceId": "#"}'),
        ("etag: 18c2f0a1b2c3d4e5", "etag: #"),
        ('{"paid": "18c2f0a1b2c3d4e5"}', '{"paid": "#"}'),
    ],
)
def test_a_things_own_id_is_content_and_a_requests_or_a_digest_is_not(text: str, masked: str | None) -> None:
    """A hex or UUID value in a field named for a thing's identity names what was listed or acted
    on (a Gmail message's 16 hex digits, a queued job's UUID: live round 48's inbox bot and render
    worker, escalated as if each listing were the last); a request's or a trace's id, an ETag, any
    other digest is masked."""
    assert mask_volatile(text) == (text if masked is None else masked)


def test_seconds_since_1970_with_a_fraction_are_a_time_and_ids_stay_for_a_clock() -> None:
    """Slack's ``oldest: "1796328000.000000"`` is a cursor moved on (until 2026-12-06 a digest's
    quiet wake-ups asked "another" channel each hour); :func:`mask_clock` masks times alone."""
    call = 'slack.conversations_history({"channel":"C01","oldest":"1796328000.000000"})'
    assert mask_times(call) == 'slack.conversations_history({"channel":"C01","oldest":"#"})'
    assert mask_times("version 1796328000.1.2") == "version 1796328000.1.2"  # no time: a dotted name
    job = 'fetch({"id":"0f8fad5b-d9cb-469f-a165-70867728950e","since":"2026-12-03T21:00:00Z"})'
    assert mask_clock(job) == 'fetch({"id":"0f8fad5b-d9cb-469f-a165-70867728950e","since":"#"})'
    assert mask_clock('read({"page":3})') == 'read({"page":3})'


def test_the_scores_of_a_searchs_hits_are_masked_and_nothing_else() -> None:
    """Each hit's score and the time the search took, in an answer of scored hits (Tavily's
    ``score``, Elasticsearch's ``_score``); an answer without scored hits stays as it is."""
    hits = '{"took": 5, "hits": {"max_score": 1.2, "hits": [{"_id": "a1", "_score": 1.2e-1, "price": 3}]}}'
    assert (
        mask_scores(hits)
        == '{"took": #, "hits": {"max_score": #, "hits": [{"_id": "a1", "_score": #, "price": 3}]}}'
    )
    assert mask_scores('{"took": 5, "count": 2}') == '{"took": 5, "count": 2}'
    assert mask_scores("score: 0.8, took: 5") == "score: 0.8, took: 5"  # no JSON answer


def test_what_a_queue_gives_each_delivery_is_masked() -> None:
    """SQS's receipt handle and receive count, Pub/Sub's ack id and delivery attempt: new with each
    delivery of the same message, masked; the message's id and body stay."""
    sqs = (
        '{"Messages": [{"MessageId": "5f0c", "ReceiptHandle": "AQEBde4e",'
        ' "Attributes": {"ApproximateReceiveCount": "%d"}, "Body": "x"}]}'
    )
    assert mask_deliveries(sqs % 2) == mask_deliveries(sqs % 3)
    assert '"MessageId": "5f0c"' in mask_deliveries(sqs % 2) and '"Body": "x"' in mask_deliveries(sqs % 2)
    pubsub = '[{"ackId": "Uk9PRw", "deliveryAttempt": %d, "message": {"messageId": "77", "data": "e30="}}]'
    assert (
        mask_deliveries(pubsub % 1)
        == mask_deliveries(pubsub % 5)
        != mask_deliveries(pubsub.replace("77", "78") % 5)
    )
    assert mask_deliveries("ReceiptHandle: AQEB") == "ReceiptHandle: AQEB"  # no JSON answer


@pytest.mark.parametrize(
    ("output", "unstamped_output"),
    [
        ("[2026-03-04T05:06:14.123Z] No new messages.", "No new messages."),
        ("[2026-03-04T05:06:14.123Z] ", ""),
        ("2026-03-04 05:06:14,123 INFO ok\n2026-03-04 05:06:15,001 INFO done", "INFO ok\nINFO done"),
        ("05:06:14 | 0 broken links", "0 broken links"),
        ("[05:06:14]: Error: quota exceeded", "Error: quota exceeded"),
        ("  [2026-03-04 05:06:14] a\n b\n[2026-03-04 05:06:15] c", "a\n b\nc"),
        ('[05:06:14] {\n[05:06:14]     "id": 7\n[05:06:14] }', '{\n    "id": 7\n}'),  # indentation kept
        # A time alone is the answer (a clock asked the time), and a stamp after words is content.
        ("12:30:00", "12:30:00"),
        ("2026-03-04T05:06:14Z", "2026-03-04T05:06:14Z"),
        ("built at [2026-03-04T05:06:14Z]", "built at [2026-03-04T05:06:14Z]"),
        # No seconds: a calendar's slot, not a logger's stamp.
        ("09:00 standup\n10:00 review", "09:00 standup\n10:00 review"),
    ],
)
def test_a_loggers_stamps_at_the_lines_starts_are_left_out(output: str, unstamped_output: str) -> None:
    """When a line was written is no part of what it says: an answer read from its start (an
    all-clear, "Error: ...") opens after the stamp."""
    assert unstamped(output) == unstamped_output
