"""Fingerprints, shapes, result keys and summaries: what makes two actions the same."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heartbeat.detect.detectors import canonical_args, fingerprint, mask, prints, summarize
from heartbeat.detect.detectors.empty import is_empty_answer
from heartbeat.detect.detectors.envelope import NOT_FOUND, NOT_MODIFIED
from heartbeat.detect.detectors.fingerprints import action_keys, error_key
from heartbeat.detect.detectors.said import NOTHING_NEW, PASSED_MARK, all_clear_result

from .helpers import PYTEST_FAIL, T0


def test_absent_and_none_args_fingerprint_as_empty_object() -> None:
    """No arguments, None and {} are one fingerprint."""
    assert fingerprint("get_status", None) == fingerprint("get_status", {})
    assert canonical_args(None) == canonical_args({}) == "{}"


def test_fingerprint_ignores_key_order_but_not_values() -> None:
    """Key order is canonicalised away; a changed value is a different call."""
    assert fingerprint("s", {"a": 1, "b": [1, {"y": 2, "x": 1}]}) == fingerprint(
        "s", {"b": [1, {"x": 1, "y": 2}], "a": 1}
    )
    assert fingerprint("s", {"a": 1}) != fingerprint("s", {"a": 2})
    assert fingerprint("s", {"a": 1}) != fingerprint("t", {"a": 1})


def test_canonical_args_is_compact_sorted_json() -> None:
    """Canonical JSON has sorted keys, no spaces and keeps non-ASCII text."""
    assert canonical_args({"q": "café", "a": [1, 2]}) == '{"a":[1,2],"q":"café"}'


def test_volatile_args_are_left_out_of_fingerprint_and_summary() -> None:
    """A volatile argument changing does not make a new call."""
    one = fingerprint("search", {"q": "x", "request_id": 1}, volatile=["request_id"])
    two = fingerprint("search", {"q": "x", "request_id": 2}, volatile=["request_id"])
    assert one == two
    assert summarize("search", {"q": "x", "request_id": 2}, ["request_id"]) == 'search({"q":"x"})'


def test_an_argument_named_for_a_key_each_call_carries_anew_is_left_out() -> None:
    """The same charge retried under a fresh idempotency key, or a call carrying its trace's ids,
    is the same call again, and reads so; a ``request_id`` names the request worked on (an
    approvals queue's), so two of them are two calls."""
    one = {"payment_intent": "pi_3Q61", "idempotency_key": "cap-64a447-0", "traceparent": "00-ab-01-01"}
    two = {"payment_intent": "pi_3Q61", "idempotency_key": "cap-64a447-1", "traceparent": "00-cd-02-01"}
    assert prints("capture", one).fingerprint == prints("capture", two).fingerprint
    assert fingerprint("capture", one) == fingerprint("capture", {"payment_intent": "pi_3Q61"})
    assert summarize("capture", two) == 'capture({"payment_intent":"pi_3Q61"})'
    assert canonical_args(one) == '{"payment_intent":"pi_3Q61"}'
    assert fingerprint("approve", {"request_id": "REQ-1"}) != fingerprint("approve", {"request_id": "REQ-2"})


def test_output_is_part_of_fingerprint_only_when_given() -> None:
    """A polling tool's result changes its fingerprint."""
    assert fingerprint("get_status", {}, output="busy") != fingerprint("get_status", {}, output="done")
    assert fingerprint("get_status", {}, output="busy") != fingerprint("get_status", {})


def test_fingerprint_survives_values_json_cannot_hold() -> None:
    """Dates, mixed key types and self-references still fingerprint, deterministically."""
    loop: dict[str, Any] = {}
    loop["self"] = loop
    assert fingerprint("t", {"when": T0}) == fingerprint("t", {"when": T0})
    assert fingerprint("t", {1: "a", "b": 2}) == fingerprint("t", {"b": 2, 1: "a"})
    assert len(fingerprint("t", loop)) == 16


def test_summary_reads_like_a_call_and_is_cut() -> None:
    """A summary is tool(args), tool() without args, at most 200 characters."""
    assert summarize("search", {"q": "x"}) == 'search({"q":"x"})'
    assert summarize("get_status", None) == "get_status()"
    long = summarize("write", {"text": "x" * 500})
    assert len(long) == 200 and long.endswith("…")


def test_shape_leaves_out_numbers_dates_and_ids() -> None:
    """Calls that differ only in line ranges, timestamps or numbered ids share one shape."""
    one = prints("sed", {"cmd": "sed -n '1,20p' src/app.py"})
    two = prints("sed", {"cmd": "sed -n '559,650p' src/app.py"})
    other = prints("sed", {"cmd": "sed -n '1,20p' src/cli.py"})
    assert one.shape == two.shape != other.shape
    assert one.fingerprint != two.fingerprint
    poll = [prints("get_job", {"id": "job-7", "since": f"2024-05-0{d}T10:00:0{d}Z"}) for d in range(1, 4)]
    assert len({p.shape for p in poll}) == 1
    assert prints("flight", {"n": "HAT052"}).shape == prints("flight", {"n": "HAT030"}).shape


def test_result_masks_digits_of_long_outputs_only() -> None:
    """A test log's timings do not make a new result; a short answer's number does."""
    assert (
        prints("pytest", {}, PYTEST_FAIL.format(t="0.31")).result
        == prints("pytest", {}, PYTEST_FAIL.format(t="0.57")).result
    )
    assert (
        prints("status", {}, "running, 45% done").result != prints("status", {}, "running, 46% done").result
    )
    assert prints("think", {}, "").result is not None
    assert prints("write", {}, None).result is None
    assert prints("run", {}, None, "boom").result == prints("run", {"x": 1}, None, "boom").result


def test_mask_is_what_a_person_reads() -> None:
    """The masked shape shown in messages replaces each word holding a digit with #."""
    assert mask("sed -n '559,650p' src/app.py") == "sed -n '#,#' src/app.py"
    assert mask('{"since":"2024-05-01T10:00:00Z"}') == '{"since":"#"}'
    # a number right after a colon keeps the colon: the shape reads as the call it stands for
    assert mask('read_page({"cursor":12})') == 'read_page({"cursor":#})'
    assert mask('fetch({"id":40017,"at":"10:00:01"})') == 'fetch({"id":#,"at":"#"})'


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
_ARGS = st.none() | st.dictionaries(st.sampled_from(["q", "page", "id", "ts", "é"]), _VALUES, max_size=4)


@settings(max_examples=300, deadline=None, print_blob=True)  # a failure prints how to replay it
@given(
    tool=st.sampled_from(["search", "read", "é"]),
    args=_ARGS,
    volatile=st.lists(st.sampled_from(["id", "ts", "nope"]), max_size=2),
    output=st.none() | st.text(max_size=12),
)
def test_prints_fast_path_agrees_with_the_public_functions(
    tool: str, args: dict[str, Any] | None, volatile: list[str], output: str | None
) -> None:
    """The per-action fast path gives the fingerprint and summary the readable functions give.

    It must not change the caller's arguments either (volatile names are dropped from a copy).
    """
    before = repr(args)
    keys = prints(tool, args, output, volatile=volatile)
    assert keys.fingerprint == fingerprint(tool, args, volatile=volatile)
    assert keys.summary == summarize(tool, args, volatile)
    if output is not None:
        polled = prints(tool, args, output, volatile=volatile, polling=True)
        assert polled.fingerprint == fingerprint(tool, args, volatile=volatile, output=output)
    assert repr(args) == before


def test_a_polling_tools_failure_is_part_of_its_fingerprint() -> None:
    """A polling tool failing differently is a different call; a tool that is not polling is not."""
    one = prints("get_status", {"job": 7}, None, "timeout", polling=True)
    two = prints("get_status", {"job": 7}, None, "refused", polling=True)
    assert one.fingerprint != two.fingerprint
    assert prints("get_status", {"job": 7}, None, "timeout").fingerprint == (
        prints("get_status", {"job": 7}, None, "refused").fingerprint
    )


def test_a_failure_is_told_by_how_it_ends_with_its_volatile_values_masked() -> None:
    """Logs that differ early on, or in a duration, address or line number, end in one failure;
    a failure whose numbers differ (957 where it was 958) failed differently: debugging."""
    tail = (
        'File "/src/pay.py", line 41, in total\n'
        "E   AssertionError: amount 957 does not match 1002 (obj at 0x7f3a2b10c0)\n"
        "FAILED tests/test_pay.py::test_total - 1 failed in 0.53s"
    )
    log = "\n".join(f"tests/test_pay.py::test_{n} PASSED" for n in range(12)) + "\n"
    early = prints("pytest", {}, "edit one: parse()\n" + log + tail, "exit 1")
    later = prints("pytest", {}, "edit two: a longer change to render()\n" + log + tail, "exit 1")
    volatile = (
        tail.replace("0.53s", "1.2s").replace("0x7f3a2b10c0", "0x7f99aa01d8").replace("line 41", "line 44")
    )
    moved = prints("pytest", {}, log + volatile, "exit 1")
    numbers = prints("pytest", {}, log + tail.replace("957", "958"), "exit 1")
    other = prints("pytest", {}, log + tail.replace("test_total", "test_tax"), "exit 1")
    assert early.result == later.result == moved.result
    assert len({early.result, numbers.result, other.result}) == 3


def test_the_same_result_means_the_same_content() -> None:
    """Pages, bodies and flight lists that differ only in their numbers are different results;
    outputs that differ only in timestamps, ids, durations or addresses are the same."""
    page = [
        prints("read_page", {"cursor": n}, f"Page {n} of 40: revenue rose {n * 3}% in region {n}").result
        for n in range(1, 6)
    ]
    assert len(set(page)) == 5
    flights = [
        prints("search", {"date": d}, f'[{{"flight": "HAT0{i}2", "date": "{d}", "price": {100 + i}}}]').result
        for i, d in enumerate(["2024-05-16", "2024-05-17", "2024-05-18"])
    ]
    assert len(set(flights)) == 3
    stamped = [
        prints(
            "status", {}, f"job done at 2026-12-01T21:{m:02d}:16.{m}Z in {m}.2s, request {u} at 0x7f{m}ab00"
        ).result
        for m, u in (
            (10, "3f2a9c1e-1234-4abc-8def-0123456789ab"),
            (11, "9e8d7c6b-5a49-4838-a271-605f4e3d2c1b"),
        )
    ]
    assert stamped[0] == stamped[1]
    digests = [
        prints("build", {}, f"built image sha256 {h} ok").result
        for h in ("8fccee5c2c1234ab9f", "1a2b3c4d5e6f7a8b9c")
    ]
    assert digests[0] == digests[1]


def test_an_envelope_around_nothing_is_the_empty_result() -> None:
    """``{"messages": []}`` and ``{"total": 0, "results": []}`` are ``{}``: lists all empty, counts and
    metadata around them, or no list and a count of things found at 0 (an API that leaves the empty
    list out); a ``true``, an item in a list or a count above 0 is an answer."""
    empty = prints("t", None, "{}").result
    for text in (
        '{"messages": []}',
        '{"Messages":[]}',
        '{"items": [], "next": null, "cursor": ""}',
        '{"total": 0, "results": [], "took_ms": 37}',  # counts and timings around no answer
        '{"Messages": [], "ResponseMetadata": {"RequestId": "5bd21b6a", "HTTPStatusCode": 200}}',
        '{"has_more": false, "data": []}',
        '{"resultSizeEstimate": 0}',  # Gmail leaves the empty list out
        '{"meta": {"result_count": 0}}',  # so does X, and says so one level down
        '{"KeyCount": 0, "IsTruncated": false, "Name": "landing", "MaxKeys": 1000}',  # and S3
        # JSON-LD's own keys are metadata: the weather service's quiet alerts (live round 37).
        '{"@context": ["https://geojson.org/geojson-ld/geojson-context.jsonld"], "features": []}',
        # Every value nothing (a newcomer's queue worker, escalated at its fourth quiet wake-up,
        # live round 41): no list and no count, but no answer either.
        '{"job": null}',
        '{"job": null, "queue_depth": 0}',
        '{"job": {}}',
        '{"meta": {}}',
        '{"data": null, "errors": null}',
        # An envelope's own status is no answer: Slack's quiet channel (blind batch 40).
        '{"ok": true, "messages": [], "has_more": false, "pin_count": 3}',
    ):
        assert prints("t", None, text).result == empty, text
    for text in (
        '{"deleted": 0}',
        '{"ok": false}',
        '{"ok": true, "errors": []}',  # a true is an answer
        '{"items": [1]}',
        '{"records": [], "assignment": [{"partition": 0}]}',  # an item in any list is
        '{"resultSizeEstimate": 3}',  # three found
        '{"count": 0, "total": 12}',  # twelve found, none on this page's count
        '{"error_count": 0}',  # no errors is an answer: a count of failures, not of things found
        '{"error": null}',  # nothing failed: an answer, as an empty list of errors is
        '{"user": "bob", "manager": null}',  # a record with a field not set
        # A status reporting no host failed (a newcomer's rollout, frozen at 4 of 5, read as nothing
        # at every poll and never flagged, live round 37), and a lint with no warnings.
        '{"rollout_id": "ro-1", "state": "in_progress", "hosts_patched": 4, "hosts_failed": []}',
        '{"warnings": [], "broken_links": 0}',
        # A link checker's report, no link broken (a newcomer's, flagged `empty` at once, live round 38).
        '{"broken": 0, "broken_links": []}',
    ):
        assert prints("t", None, text).result != empty, text
    status = '{{"state": "in_progress", "hosts_patched": {n}, "hosts_failed": []}}'
    assert prints("t", None, status.format(n=2)).result != prints("t", None, status.format(n=4)).result


def test_an_error_is_one_error_live_and_in_replay_whatever_its_volatile_values() -> None:
    """The error's own text is masked the same way: a timestamp, port, duration or id never
    makes the same failure a new one; a different message is a different error."""
    first = error_key(
        "ConnectionError: localhost:54321 refused after 3.2s at 2026-12-01 21:22:16 (req 8f3a2b1c9d4e5f60)"
    )
    again = error_key(
        "ConnectionError: localhost:40112 refused after 0.4s at 2026-12-01 21:25:02 (req 0a1b2c3d4e5f6a7b)"
    )
    other = error_key("ConnectionError: localhost:40112 timed out after 0.4s")
    assert first == again != other


def test_a_short_hex_id_in_an_error_is_no_part_of_what_failed() -> None:
    """A refusal with a fresh 8-character transaction id each night is one error (live round 60's
    DNS watcher: with the id, recurring_error never fired and the watcher was not escalated in 14
    nights). A word holding hex letters alone, digits alone or a name's hex suffix stays."""
    refused = "REFUSED: zone acme.dev is signed; update rejected (transaction {})"
    assert error_key(refused.format("3fa9c2b1")) == error_key(refused.format("0d41e97a"))
    assert error_key("cannot lock ref: is at 4b825dc but expected 9fceb02") == error_key(
        "cannot lock ref: is at 1a2b3c4 but expected 5d6e7f8"
    )
    assert error_key("pod api-7d9f8c6b5-x2k4p not ready") != error_key("pod api-5c8e7a9b1-x2k4p not ready")
    assert error_key("KeyError: 'deadbeef'") != error_key("KeyError: 'cafebabe'")
    assert error_key("order 40017 not found") != error_key("order 40018 not found")


def test_a_failure_that_names_an_exception_is_told_by_it_whatever_prints_it() -> None:
    """The same exception and message, printed by two scripts in their own way, is one failure;
    another message is another failure."""
    printed = "setup\nError: OperationalError: no such table: book"
    raised = "x\ndjango.db.utils.OperationalError: no such table: book"
    one = prints("python", {"cmd": "python repro.py"}, printed, "1")
    two = prints("python", {"cmd": "python t.py"}, raised, "1")
    other = prints("python", {"cmd": "python t.py"}, raised.replace("table: book", "column: id"), "1")
    assert one.result == two.result != other.result


_MAKE = "make: *** [Makefile:31: build/loader.o] Error 1"


def test_a_runners_closing_lines_say_nothing_about_what_failed() -> None:
    """A build tool's closing lines (that the step failed, its exit code) end every failure alike:
    three different compile and link errors behind ``make`` are three failures, the same compile
    error twice is one, and an output that is nothing but such a line keeps it."""
    implicit = (
        "cc -std=c11 -Wall -Werror -c src/loader.c -o build/loader.o\n"
        "src/loader.c:48:5: error: implicit declaration of function 'yaml_parser_set_encoding'\n"
        "cc1: all warnings being treated as errors\n" + _MAKE
    )
    undeclared = "src/loader.c:121:13: error: 'err' undeclared (first use in this function)\n" + _MAKE
    link = (
        "loader.c:(.text+0x6d): undefined reference to `yaml_parser_set_input_file'\n"
        "collect2: error: ld returned 1 exit status\n" + _MAKE.replace("build/loader.o", "build/cfgtool")
    )
    keys = [prints("make", {"cmd": "make"}, out, "returncode 2") for out in (implicit, undeclared, link)]
    assert len({k.result for k in keys}) == 3 and len({k.failure for k in keys}) == 3
    again = prints("make", {"cmd": "make 2>&1 | tail -n 5"}, "mkdir -p build\n" + implicit, "returncode 2")
    assert again.result == keys[0].result and again.failure == keys[0].failure
    npm = "Error: Cannot find module 'left-pad'\n" + "\n".join(f"npm ERR! line {n}" for n in range(12))
    assert (
        prints("npm", {}, npm, "exit 1").result
        == prints("npm", {}, "Error: Cannot find module 'left-pad'", "exit 1").result
    )
    go = "--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 1, want 2\nFAIL\nexit status 1\n"
    go += "FAIL\tgithub.com/x/y\t0.004s"
    assert (
        prints("go", {}, go, "exit 1").result
        != prints("go", {}, go.replace("got 1", "got 7"), "exit 1").result
    )
    assert (
        prints("go", {}, go, "exit 1").failure
        != prints("go", {}, go.replace("Parse", "Render"), "exit 1").failure
    )
    assert prints("make", {}, _MAKE, "returncode 2").result is not None  # nothing else to go by


@pytest.mark.parametrize(
    ("output", "not_modified"),
    [
        (
            'HTTP/1.1 304 Not Modified\netag: W/"6e3a"\ncf-ray: 42d9c29151e9186a\ndate: 2026-11-29T12:00:00Z',
            True,
        ),
        ('HTTP 304 Not Modified (09:00:01 UTC, etag W/"6641f2-1b7")', True),
        ("http/2 304\ncache-control: max-age=300", True),
        ("304 Not Modified", True),
        ("304 items processed", False),  # a count, no status
        ("HTTP/1.1 200 OK\n\n<rss>...</rss>", False),
        # a JSON answer's own status: a feed tool's
        ('{"status": 304, "not_modified": true, "fetched_at": "2024-05-06T00:30:00Z"}', True),
        ('{"statusCode": "304", "etag": "W/\\"e0002\\""}', True),
        ('{"ok": true, "not_modified": true}', True),
        ('{"status": 200, "etag": "W/\\"e0304\\"", "entries": 23}', False),
        ('{"feeds": [{"url": "a", "status": 304}], "items": [{"id": 1}]}', False),  # a feed's, not its own
        ('{"status": true, "count": 304}', False),
    ],
)
def test_a_not_modified_answer_is_one_answer_of_nothing(output: str, not_modified: bool) -> None:
    """HTTP's 304, however a tool prints it and whatever its headers say, is one result: a
    conditional request's "nothing new since the version you named", an answer of nothing."""
    keys = prints("http.get", {"url": "https://example.com/feed"}, output)
    assert (keys.result == prints("t", None, NOT_MODIFIED).result) is not_modified
    assert is_empty_answer(len(output.strip()), keys.result) is not_modified


@pytest.mark.parametrize(
    ("output", "reading"),
    [
        ("No new messages.", "nothing new"),
        ("0 new items", "nothing new"),
        ("There are no new tickets.", "nothing new"),
        ("No new entries since 2026-11-20T03:00:00Z", "nothing new"),
        ("nothing to process", "nothing new"),
        ("Inbox empty", "nothing new"),
        ("no new items (checked 3 feeds)", "nothing new"),
        # None of what was asked for, in a few words (live round 41's queue worker).
        ("No jobs.", "nothing new"),
        ("0 jobs", "nothing new"),
        ("There are no tickets to process.", "nothing new"),
        ("no messages right now", "nothing new"),
        ("0 tasks in the queue", "nothing new"),
        ("0 messages available (queue=notifications.email, consumers=1)", "nothing new"),
        # A read that took in none of what it reads (blind batch 54's log shipper at EOF).
        ("read 0 lines (0 bytes) from /var/log/nginx/access.log offset 89060274, EOF", "nothing new"),
        ("fetched 0 rows", "nothing new"),
        ("read 12 lines (5120 bytes) from /var/log/nginx/access.log, EOF", None),
        ("processed 0 records", None),  # a verb of doing: what was done
        ("read 0 lines. 2 errors", None),
        ("0 broken anchors of 214 links", "all clear"),
        ("All 37 packages are up to date.", "all clear"),
        ("No issues found.", "all clear"),
        ("0 errors, 0 warnings", "all clear"),
        ("All systems operational", "all clear"),
        ("status: ok", "all clear"),
        # A verdict, then what was found fine (live round 47's backup verifier, file after file).
        ("OK: checksum matches", "all clear"),
        ("OK - 200 in 12ms", "all clear"),
        ("OK: 2 mismatches", None),  # what went wrong named
        ("OK: not found", None),
        ("spend within budget: $41.20 of $100.00", "all clear"),
        ("certificate valid for 47 days", "all clear"),
        ("No changes detected", "all clear"),
        ("no SLA breaches", "all clear"),  # live round 56's hourly SLA check
        ("0 crashes in the last hour", "all clear"),
        ("1 SLA breach: TCK-40210 first response after 4h12m", None),
        ("Crawled 58 pages. 0 broken anchors of 214, 0 redirected. Duration 41s", "all clear"),
        ('{"pages": 10, "links_checked": 120, "broken": 0, "broken_links": []}', "all clear"),
        ('{"took": 220, "errors": false, "items": 500}', None),  # a bulk write's confirmation
        ('{"ok": false, "errors": []}', None),
        ('{"state": "running", "errors": 0}', None),
        ("System check identified no issues (0 silenced).\nRan 629 tests in 0.6s\n\nOK", None),
        # not what a watcher finds when nothing needs doing
        ("No new tickets. 3 in progress", None),  # a second sentence says more
        ("0 failed, 3 errors", None),  # a count above 0 of what went wrong
        ("No errors found, 2 warnings", None),
        ("backup not ok", None),
        ("running 42%", None),  # a state on its way
        ("Order #W123 status: pending", None),
        ("28 passed in 0.56s", None),  # a test run's result is judged as one
        ("price up 5%", None),
        ("nothing to commit, working tree clean", None),
        ("You are not carrying anything.", None),
        ("No access.", None),  # a lone word ending in s is no plural
        ("No such file or directory", None),
        ("no jobs processed", None),  # says what was done
    ],
)
def test_an_answer_saying_nothing_came_or_nothing_needs_doing_is_read_so(
    output: str, reading: str | None
) -> None:
    """A short answer saying nothing new came is "nothing new", an empty answer (an inbox polled
    and found quiet); one saying nothing needs doing is an all-clear report, its key marked and
    still its own ("0 broken of 214" is not "0 broken of 215"), and no empty answer: a linter
    passing file after file asks in no vain."""
    keys = prints("check", {"source": "support"}, output)
    assert (keys.result == prints("t", None, NOTHING_NEW).result) is (reading == "nothing new")
    assert is_empty_answer(len(output), keys.result) is (reading == "nothing new")
    assert all_clear_result(keys.result) is (reading == "all clear")
    if reading == "all clear":
        assert keys.result != prints("check", {"source": "support"}, f"{output} (2)").result


_HEADER = "============================= test session starts ==============================\n" + "x" * 120


@pytest.mark.parametrize(
    ("end", "passed"),
    [
        ("==================== 1 passed, 120 deselected in 0.11s ====================", True),
        ("121 passed in 0.92s", True),
        ("=== 40 passed, 2 skipped, 3 warnings in 1.20s (0:00:01) ===", True),
        ("Ran 629 tests in 0.612s\n\nOK (skipped=2)", True),
        ("test result: ok. 12 passed; 0 failed; 0 ignored; 0 measured; finished in 0.00s", True),
        ("Tests:       12 passed, 12 total\nSnapshots:   0 total\nTime:        1.2 s", True),
        ("ok 1 selftests: mm: hugepage-mmap\n# Totals: pass:12 fail:0 xfail:0 xpass:0 skip:1 error:0", True),
        ("not ok 1 selftests: mm: hugepage-mmap\n# Totals: pass:11 fail:1 skip:1", False),
        ("===== 1 failed, 11 passed in 0.30s =====", False),
        ("FAILED tests/test_x.py::test_a - assert 1 == 2\n===== 11 passed in 0.30s =====", False),
        ("Ran 4 tests in 0.012s\n\nFAILED (failures=1)", False),
        ("Tests:       1 failed, 11 passed, 12 total", False),
        ("11 passed in 0.30s\nTraceback (most recent call last):\n  ValueError: bad", False),
    ],
)
def test_a_test_runner_s_report_of_a_run_that_passed_has_its_key_marked(end: str, passed: bool) -> None:
    """A report ending with a test runner's summary of a run where every test passed keeps its own
    result key, marked (``recurring`` counts it by its call alone); a run with a failure does not."""
    keys = prints("bash", {"command": "pytest -q"}, f"{_HEADER}\n{end}")
    assert (keys.result[:1] == PASSED_MARK) is passed


_SUGGESTED = (
    "Similar: ['Ang Lee', 'Ang Lee filmography', 'List of awards and nominations received by Ang Lee']."
)


@pytest.mark.parametrize(
    ("args", "output", "nothing"),
    [
        ({"entity": "Ang Lee birthplace"}, f"Could not find [Ang Lee birthplace]. {_SUGGESTED}", True),
        (
            {"entity": "where was Ang Lee born"},
            f"Could not find [where was Ang Lee born]. {_SUGGESTED}",
            True,
        ),
        ({"cmd": "Search[Ang Lee hometown]"}, f"Could not find [Ang Lee hometown]. {_SUGGESTED * 8}", True),
        ({"q": "heat pumps", "page": 2}, "No results for 'heat pumps'.", True),
        ({"q": "HEAT PUMPS"}, "No matches found for heat pumps.", True),
        ({"q": "heat pumps"}, "Found 3 results for heat pumps: ...", False),
        ({"page": 3}, "Page 3 not found; the report has 2 pages", False),  # says how many there are
        ({"user": "alice"}, "User alice not found", False),  # which kind of thing: more than nothing
        ({"q": "heat pumps"}, "I could not find heat pumps, but here is a related article: Heat pump", False),
    ],
)
def test_a_not_found_echoing_its_request_is_one_answer_of_nothing(
    args: dict[str, object], output: str, nothing: bool
) -> None:
    """A search's "not found" that echoes what it was asked, and its suggestions, is one result
    whatever it echoes, an answer of nothing; one that says anything more is an answer. Its length
    is its own (until 2026-12-06 it was kept as 9, "not found"'s, and the journal, ESCALATION.md
    and the report said "9 chars" of a 40-character "No results for ..."), and it is empty all
    the same."""
    keys = prints("search", args, output)
    assert (keys.result == prints("t", None, NOT_FOUND).result) is nothing
    length = action_keys("search", args, output, None, (), False)[4]
    assert length == len(output.strip())
    assert is_empty_answer(length, keys.result) is nothing


@pytest.mark.parametrize(
    "end",
    [
        "FAILED tests/test_x.py::test_parse - ValueError: bad\n1 failed, 835 deselected in 1.97s",
        "===== 1 passed, 2 warnings, 1 error in 0.42s =====",
        "Ran 12 tests in 0.031s\n\nFAILED (failures=1)",
        "Tests:       1 failed, 4 passed, 5 total\nSnapshots:   0 total\nTime:        1.2 s",
        "failures:\n    tests::parse\n\ntest result: FAILED. 3 passed; 1 failed; 0 ignored",
        "--- FAIL: TestParse (0.00s)\nFAIL\nFAIL\tgithub.com/x/y\t0.004s",
        "  3 passing (12ms)\n  1 failing",
    ],
)
def test_a_failing_test_run_is_told_by_its_end_whatever_the_harness_reports(end: str) -> None:
    """An output ending as a failing test run does, with no error reported (a shell without an
    exit status), is keyed by how it ends, as a failure is: the same failure after an edit that
    moved the traceback's lines is the same result. A passing run's output stays whole."""
    before = f"Traceback shows line 41:\n    x = parse(s)  # first try\n{'-' * 150}\n{end}"
    after = f"Traceback shows line 42:\n    x = parse(s.strip())  # tidied\n{'-' * 150}\n{end}"
    assert prints("bash", {"cmd": "pytest"}, before).result == prints("bash", {"cmd": "pytest"}, after).result
    passed = "\n5 passed in 0.31s"
    assert (
        prints("bash", {}, before.replace(end, passed)).result
        != prints("bash", {}, after.replace(end, passed)).result
    )


def test_a_search_ranking_the_same_hits_anew_gives_the_same_result() -> None:
    """Two searches in other words, the same four hits in another order and another time taken:
    one result; a list whose hits differ is another."""
    hits = ["Kate Bush - Wikipedia", "Hounds of Love - Wikipedia", "Kate Bush discography", "Babooshka"]

    def output(order: list[int], took: str) -> str:
        return f"Search results ({took}):\n" + "\n".join(f"[{n}] {hits[i]}" for n, i in enumerate(order, 1))

    a = prints("search", {"q": "kate bush debut"}, output([0, 1, 2, 3], "0.32s"))
    b = prints("search", {"q": "first album of kate bush"}, output([1, 0, 3, 2], "0.88s"))
    c = prints("search", {"q": "kate bush"}, output([0, 1, 2], "0.32s"))
    assert a.result == b.result != c.result


def test_a_status_whose_only_change_is_its_elapsed_counter_is_the_same_result() -> None:
    """A job frozen at 11%, polled every five minutes: one result however long it has run; a job
    that moves on is another."""

    def status(percent: int, elapsed: int) -> str:
        return (
            f'{{"job_id": "job-17", "state": "RUNNING", "percent": {percent}, "elapsed_seconds": {elapsed}}}'
        )

    a, b, c = (
        prints("export_status", {"job_id": "job-17"}, status(p, e))
        for p, e in [(11, 636), (11, 955), (19, 1274)]
    )
    assert a.result == b.result != c.result


def test_hits_scored_for_the_words_asked_are_the_same_hits_whatever_their_scores() -> None:
    """Tavily's hits come scored for the words asked, with the time the search took: asked in other
    words, the same three hits are the same result (blind batch 56's researcher rewording one question
    eight times); another hit is another; an evaluation's score, no search asked, is its content."""

    def tavily(
        query: str, scores: tuple[float, float], took: float, url: str = "https://novap.no/2024"
    ) -> str:
        hits = [
            {"title": "Varmepumpesalget 2024", "url": url, "content": "81,000 sold", "score": scores[0]},
            {"title": "Heat pump", "url": "https://en.wikipedia.org/wiki/Heat_pump", "score": scores[1]},
        ]
        return json.dumps({"query": query, "answer": None, "results": hits, "response_time": took})

    def search(query: str, output: str) -> str | None:
        return prints("tavily_search", {"query": query, "max_results": 5}, output).result

    a = search("Norway heat pump sales 2025", tavily("Norway heat pump sales 2025", (0.589, 0.757), 1.0))
    b = search("NOVAP salg 2025", tavily("NOVAP salg 2025", (0.718, 0.62), 1.19))
    c = search("NOVAP salg 2025", tavily("NOVAP salg 2025", (0.718, 0.62), 1.19, url="https://ssb.no/varme"))
    assert a == b != c
    evals = [
        prints("run_eval", {"suite": "qa"}, f'{{"score": {s}, "cases": 40}}').result for s in (0.81, 0.84)
    ]
    assert evals[0] != evals[1]


def test_a_search_answer_quoting_its_query_back_is_the_same_hits_whatever_words_asked() -> None:
    """A search API echoing what it was asked (Confluence's ``cqlQuery``, Tavily's ``query``) lands
    on the same page for two rewordings; other hits are another result; a record looked up by its
    id or by its guest's name, each quoted back, is not unechoed (not an argument named for a query)."""

    def wiki(query: str, hits: str = '{"id": "231907", "title": "VPN troubleshooting FAQ"}') -> str:
        return json.dumps({"results": [json.loads(hits)], "cqlQuery": f'space = IT AND text ~ "{query}"'})

    a = prints("wiki_search", {"query": "renew VPN certificate"}, wiki("renew VPN certificate"))
    b = prints("wiki_search", {"query": "VPN cert renewal"}, wiki("VPN cert renewal"))
    c = prints(
        "wiki_search", {"query": "VPN cert renewal"}, wiki("VPN cert renewal", '{"id": "1", "title": "x"}')
    )
    assert a.result == b.result != c.result
    by_id = prints(
        "lookup", {"confirmation": "QX7-44810"}, '{"confirmation": "QX7-44810", "guest": "Okafor"}'
    )
    by_name = prints("lookup", {"last_name": "Okafor"}, '{"confirmation": "QX7-44810", "guest": "Okafor"}')
    assert by_id.result == by_name.result
    empty = prints(
        "kb_search", {"query": "Okta SSO setup"}, '{"query": "Okta SSO setup", "results": [], "total": 0}'
    )
    assert empty.result == prints("kb_search", {"query": "x"}, "{}").result  # still an envelope of nothing


def test_a_page_fetched_through_the_mcp_fetch_server_is_its_body() -> None:
    """The MCP fetch server writes "Contents of <url>:" (for JSON, after a line saying it kept the
    raw content) before the body: the body is the answer, a job's JSON status with its request id
    masked as any JSON answer's (blind batch 56's export frozen at 62% was new at every poll); an
    empty page is an answer of nothing."""
    url = "https://exports.example.com/v1/jobs/exp_01JDX7M2"
    head = (
        "Content type application/json cannot be simplified to markdown, but here is the raw content:\n"
        f"Contents of {url}:\n"
    )

    def job(request_id: str, progress: float = 0.62) -> str:
        return json.dumps(
            {"id": "exp_01JDX7M2", "status": "running", "progress": progress, "request_id": request_id}
        )

    def fetched(output: str) -> tuple[str | None, int | None]:
        _, _, result, _, length, _ = action_keys("fetch", {"url": url, "raw": True}, output, None, (), False)
        return result, length

    a, b = fetched(head + job("req_8de33cb1e4e3"))[0], fetched(head + job("req_851d439e4f48"))[0]
    assert a == b == fetched(job("req_0"))[0] != fetched(head + job("req_1", 0.7))[0]
    assert fetched(f"Contents of {url}:\n")[1] == 0


def test_a_raw_http_response_around_nothing_is_an_answer_of_nothing() -> None:
    """``curl -i`` and HTTP tools answer with a status line and headers before the body: a
    success whose body is an empty JSON envelope is the answer of nothing, whatever request id and
    rate limit left its headers carry (blind batch 59's feed poller, "nothing new" at each quiet
    wake-up, was new at each for its ``x-ratelimit-remaining``). A page is kept whole, its headers
    part of the document read (a crawler's robots.txt, a short body, is still a page), and so are a
    failure and a redirect: a 301's Location is what it says."""

    def got(output: str) -> tuple[str | None, int | None]:
        args = {"url": "https://x.test/events"}
        _, _, result, _, length, _ = action_keys("http.get", args, output, None, (), False)
        return result, length

    def response(status: str, body: str, request_id: str, left: int, **headers: str) -> str:
        lines = [f"HTTP/1.1 {status}", "content-type: application/json", f"x-request-id: {request_id}"]
        lines += [f"x-ratelimit-remaining: {left}", *(f"{k}: {v}" for k, v in headers.items())]
        return "\n".join(lines) + "\n\n" + body

    quiet = '{"data": [], "has_more": false}'
    a, b = (
        got(response("200 OK", quiet, "db6e562f-5d16", 962)),
        got(response("200 OK", quiet, "9b2f57b2", 880)),
    )
    assert a == b == got(quiet)
    assert is_empty_answer(a[1], a[0])
    page = response("200 OK", "User-agent: *\nDisallow: /search", "r1", 9)
    assert got(page)[1] == len(page)
    moved = [got(response("301 Moved Permanently", "", "r1", 9, location=f"/page/{n}"))[0] for n in (1, 2)]
    assert moved[0] != moved[1]


@pytest.mark.parametrize(
    "command",
    [
        "flake8 src/app/mod01.py",
        "cd app && flake8 x.py",
        "gofmt -l .",
        "git diff --check",
        "git status --short",
    ],
)
def test_a_checker_s_silence_is_its_verdict(command: str) -> None:
    """flake8 prints nothing for a clean file: an all-clear, not an answer of nothing nor a shell gone
    dark (live round 53: ``empty`` escalated an agent linting after each edit at its sixth turn).
    Silence from any other command stays silence."""
    _, _, result, _, length, _ = action_keys("bash", {"command": command}, "", None, (), False)
    assert all_clear_result(result) and not is_empty_answer(length, result)
    _, _, result, _, length, _ = action_keys("bash", {"command": "python run.py"}, "", None, (), False)
    assert not all_clear_result(result) and length == 0


def test_an_empty_page_of_a_scan_that_goes_on_is_no_answer_of_nothing() -> None:
    """A filtered DynamoDB scan's page that matched nothing still names where the scan goes on
    (live round 53: three such pages were ``empty``, escalated at the second turn); the last page,
    with nothing further, is nothing."""
    args = {"TableName": "orders", "FilterExpression": "#s = :failed"}
    page = '{"Items": [], "Count": 0, "ScannedCount": 1000, "LastEvaluatedKey": {"pk": {"S": "order#9"}}}'
    _, _, result, _, length, _ = action_keys("dynamodb.scan", args, page, None, (), False)
    assert not is_empty_answer(length, result)
    last = '{"Items": [], "Count": 0, "ScannedCount": 412}'
    _, _, result, _, length, _ = action_keys("dynamodb.scan", args, last, None, (), False)
    assert is_empty_answer(length, result)


def test_the_same_message_received_again_from_a_queue_is_the_same_result() -> None:
    """A poison message redelivered comes with a new receipt handle and a higher receive count:
    the same work left undone (blind batch 56's worker, the same three messages at every wake-up)."""

    def receive(handle: str, count: int, message: str = "5f0c2a1e") -> str | None:
        body = {
            "Messages": [
                {
                    "MessageId": message,
                    "ReceiptHandle": handle,
                    "Attributes": {"ApproximateReceiveCount": str(count)},
                }
            ]
        }
        return prints("sqs.receive_message", {"queue": "webhooks-dlq"}, json.dumps(body, indent=1)).result

    assert (
        receive("AQEBde4eb074d3a7", 2) == receive("AQEB7b3b386113a5", 3) != receive("AQEB7b3b", 3, "a93e7b20")
    )


@pytest.mark.parametrize(
    ("output", "empty"), [("Messages: []", True), ("results: {}", True), ("Messages: 3", False)]
)
def test_an_envelope_around_nothing_printed_as_text_is_an_answer_of_nothing(output: str, empty: bool) -> None:
    """A tool printing its envelope as text, ``Messages: []``, answers nothing as ``{"Messages": []}``
    does (blind batch 55's thumbnail worker, idle between bursts)."""
    _, _, result, _, length, _ = action_keys("sqs.receive_message", {"max": 10}, output, None, (), False)
    assert is_empty_answer(length, result) is empty
