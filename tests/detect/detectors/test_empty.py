"""``empty``: a call that answered at length before returns near-empty outputs, N in a row."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from heartbeat.base.errors import ConfigError
from heartbeat.config.file import DetectorsConfig
from heartbeat.detect.detectors import Empty
from heartbeat.detect.detectors.calls import acts_by_name
from heartbeat.detect.detectors.envelope import harness_only

from .helpers import Call, actions, first, trips


def test_three_near_empty_outputs_trip_empty() -> None:
    """From calls that answered before, outputs of at most 10 characters three times trip empty."""
    calls: list[Call] = [
        {"tool": "search", "args": {"q": q}, "output": "12 hits: a, b, c, ..."} for q in ("tax", "vat")
    ]
    calls += [{"tool": "search", "args": {"q": q}, "output": " [] "} for q in ("tax", "vat", "tax")]
    found = trips(Empty(), actions(calls))
    assert found[:4] == [None] * 4
    assert found[4] is not None and found[4].evidence["count"] == 3


def test_a_call_with_only_its_numbers_changed_answered_empty_needs_two_more() -> None:
    """A flight search date after date, or pages past the last one: "none that day" answers what was
    asked, and a working agent tries a few; five in a row is empty. Asked again, or differently, three is."""
    dates: list[Call] = [
        {"tool": "search_direct_flight", "args": {"origin": "SFO", "destination": "JFK", "date": d}}
        for d in ("2024-05-15", "2024-05-16", "2024-05-17", "2024-05-18", "2024-05-19")
    ]
    for call in dates:
        call["output"] = "[]"
    found = trips(Empty(), actions(dates))
    assert [a is not None for a in found] == [False] * 4 + [True]
    last = found[-1]
    assert last is not None and last.evidence["threshold"] == 5
    said = "answers of nothing (empty, at most 10 characters, or saying nothing was found)"
    assert f"5 outputs in a row were {said}, from calls with only their " in last.message
    # Direct or with a stop asks the same: the tool aside, only the date changes.
    both = [{**call, "tool": f"search_{kind}_flight"} for call in dates for kind in ("onestop", "direct")]
    assert [a is not None for a in trips(Empty(), actions(both[1:]))] == [False] * 4 + [True] * 5
    # The stuck twins: the same date asked again, or the run broken by another kind of call.
    again = [*dates[:2], dates[1]]
    assert [a is not None for a in trips(Empty(), actions(again))] == [False, False, True]
    other: list[Call] = [*dates[:2], {"tool": "search_direct_flight", "args": {"date": "x"}, "output": "[]"}]
    assert [a is not None for a in trips(Empty(), actions(other))] == [False, False, True]
    pages: list[Call] = [{"tool": "read_page", "args": {"cursor": 0}, "output": "row 1\nrow 2\nrow 3"}]
    pages += [{"tool": "read_page", "args": {"cursor": c}, "output": ""} for c in range(1, 6)]
    assert [a is not None for a in trips(Empty(), actions(pages))] == [False] * 5 + [True]


def test_silent_by_design_tools_are_never_empty() -> None:
    """sed -i, a heredoc write, think, a calculator's short answer and an MCP server's post are normal."""
    calls: list[Call] = [
        {"tool": "sed", "args": {"cmd": f"sed -i s/a{i}/b/ f.py"}, "output": ""} for i in range(4)
    ]
    calls += [{"tool": "think", "args": {"thought": f"step {i}"}, "output": ""} for i in range(4)]
    calls += [
        {"tool": "calculate", "args": {"expression": f"{i} * 3"}, "output": f"{i * 3}.0"} for i in range(4)
    ]
    calls += [{"tool": "status", "args": {"flight": f"HAT{i}"}, "output": "available"} for i in range(4)]
    # An MCP server's acts, told by the verb after the namespace.
    calls += [{"tool": "slack.post", "args": {"text": f"incident {i}"}, "output": ""} for i in range(4)]
    calls += [
        {"tool": "mcp__github__create_issue", "args": {"title": f"bug {i}"}, "output": ""} for i in range(4)
    ]
    assert trips(Empty(), actions(calls)) == [None] * 24


@pytest.mark.parametrize(
    ("tool", "acts"),
    [
        ("slack_post_message", True),  # a namespace joined by one underscore, then the verb
        ("queue_delete", True),  # a noun, then the verb
        ("sendMessage", True),  # camelCase
        ("gmail.modify_message", True),
        ("mark_all_read", True),  # the first verb decides: "read" is what it marks
        ("slack_get_channel_history", False),  # the first verb only reads
        ("get_post", False),
        ("vector_store_search", False),  # a verb as often a noun yields to the verb after it
        ("merge_request_get", False),
        ("log_search", False),
        ("book_flight", True),  # ... and is the verb when none follows
        ("blog_post_publish", True),
        ("ci.trigger_workflow", True),  # starting a job or a run is an act
        ("launch_instance", True),
        ("weather_forecast", False),  # no verb known here: asks
        ("say", True),  # a message to a person, which may answer nothing
        ("tell_user", True),
    ],
)
def test_a_tools_first_verb_says_whether_it_acts(tool: str, acts: bool) -> None:
    """Three empty answers from a tool that acts are what it always says; from one that asks, empty
    (asked again: a search asking about something else each time is a search going on, below)."""
    calls: list[Call] = [{"tool": tool, "args": {"id": name}, "output": ""} for name in ("ann", "ann", "ann")]
    found = trips(Empty(), actions(calls))
    assert (found[2] is None) is acts
    assert acts_by_name(tool) is acts


def test_empty_skips_actions_without_output_and_resets_on_real_output() -> None:
    """Actions that report no output do not count; a long output ends the run."""
    calls: list[Call] = [
        {"tool": "s", "args": {"q": "a"}, "output": ""},
        {"tool": "w", "args": {"q": "b"}},
        {"tool": "s", "args": {"q": "c"}, "output": ""},
        {"tool": "s", "args": {"q": "d"}, "output": "a real answer, long enough"},
        {"tool": "s", "args": {"q": "e"}, "output": ""},
        {"tool": "s", "args": {"q": "f"}, "output": ""},
        {"tool": "w", "args": {"q": "g"}},
        {"tool": "s", "args": {"q": "h"}, "output": "   "},
    ]
    found = trips(Empty(), actions(calls))
    assert [i for i, f in enumerate(found) if f] == [7]


def test_a_call_that_went_quiet_is_empty() -> None:
    """A status call that answered at length now gives a short answer, three times (asked
    again); a paged search that went quiet page after page, five times."""
    calls: list[Call] = [{"tool": "status", "args": {"job": "build"}, "output": "running: step 3 of 9 ..."}]
    calls += [{"tool": "status", "args": {"job": "build"}, "output": "?"} for _ in range(3)]
    hit = first(Empty(), actions(calls))
    assert hit is not None and hit[0] == 4 and "answered at length before" in hit[1].message
    paged: list[Call] = [
        {"tool": "search", "args": {"q": "pricing", "page": 1}, "output": "12 results: ..." * 3}
    ]
    paged += [
        {"tool": "search", "args": {"q": "pricing", "page": p}, "output": "0 results"} for p in range(2, 7)
    ]
    hit = first(Empty(), actions(paged))
    assert hit is not None and hit[0] == 6 and "only their numbers changed" in hit[1].message


def test_a_read_answering_says_nothing_about_an_edit() -> None:
    """sed -n answered; sed -i prints nothing by design, however often."""
    calls: list[Call] = [
        {"tool": "sed", "args": {"cmd": "sed -n '1,40p' src/app.py"}, "output": "def main():\n" * 9}
    ]
    calls += [
        {"tool": "sed", "args": {"cmd": f"sed -i 's/{old}/{new}/' src/app.py"}, "output": ""}
        for old, new in [("a", "b"), ("c", "d"), ("e", "f"), ("g", "h")]
    ]
    assert trips(Empty(), actions(calls)) == [None] * 5


def test_polling_tools_short_status_is_not_empty() -> None:
    """A tool listed in `polling` answering "running" each heartbeat trips neither empty nor repeat."""
    from heartbeat.detect.monitor import Monitor

    monitor = Monitor(DetectorsConfig(polling=["get_status"]))
    now = datetime(2026, 1, 1, tzinfo=UTC)
    hits = []
    for tick, status in enumerate(["queued", "running", "running 40%", "running 80%", "done"], start=1):
        monitor.start_tick(tick)
        hits.append(monitor.record("get_status", {"job": 7}, output=status, now=now))
    assert hits == [None] * 5


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: Empty(max_chars=-1), "max_chars"),
        (lambda: Empty(threshold=0), "threshold must be an integer between 1"),
        (lambda: Empty(max_chars=1.5), "max_chars"),  # type: ignore[arg-type]
    ],
)
def test_bad_parameters_are_config_errors(make: Any, words: str) -> None:
    """A detector refuses parameters that could never work, naming the parameter."""
    with pytest.raises(ConfigError, match=words):
        make()


def test_the_message_names_the_run_the_limit_and_the_last_call() -> None:
    """How many short outputs, how short, and which call came last; with max_chars 0, "empty" alone."""
    calls: list[Call] = [{"tool": "search", "args": {"q": q}, "output": ""} for q in ("a", "b", "c")]
    anomaly = trips(Empty(), actions(calls))[-1]
    assert anomaly is not None and anomaly.message == (
        "3 outputs in a row were answers of nothing (empty, at most 10 characters, or saying nothing was "
        'found), from calls that ask for something or answered at length before; last: search({"q":"c"})'
    )
    assert anomaly.evidence["last"] == 'search({"q":"c"})' and anomaly.evidence["max_chars"] == 10
    assert anomaly.evidence["threshold"] == 3
    strict = trips(Empty(max_chars=0), actions(calls))[-1]
    nothing = "3 outputs in a row were answers of nothing (empty, or saying nothing was found), from calls"
    assert strict is not None and strict.message.startswith(nothing)


def test_empty_exempt_tools_are_never_empty() -> None:
    """A tool exempt from empty goes quiet without a word."""
    calls: list[Call] = [{"tool": "search", "args": {"page": 0}, "output": "12 hits: a, b, c, ..."}]
    calls += [{"tool": "search", "args": {"page": i}, "output": ""} for i in range(1, 6)]
    assert trips(Empty(), actions(calls))[-1] is not None
    assert trips(Empty(exempt={"search"}), actions(calls)) == [None] * 6


def test_a_failed_action_neither_counts_nor_breaks_the_run() -> None:
    """Failures are the error detectors' business: an empty failure between two empty answers is skipped."""
    calls: list[Call] = [{"tool": "search", "args": {"q": "a"}, "output": "12 hits: a, b, c, ..."}]
    calls += [
        {"tool": "search", "args": {"q": "b"}, "output": ""},
        {"tool": "search", "args": {"q": "c"}, "output": "", "error": "timeout"},
        {"tool": "search", "args": {"q": "d"}, "output": ""},
        {"tool": "search", "args": {"q": "e"}, "output": ""},
    ]
    found = trips(Empty(), actions(calls))
    assert found[:4] == [None] * 4
    assert found[4] is not None and found[4].evidence["count"] == 3


def test_a_threshold_of_one_fires_at_the_first_short_answer() -> None:
    """With threshold 1 the first short answer from a call that answered before is enough; once
    it is a series of one call with only its numbers changed, a run needs two more."""
    calls: list[Call] = [
        {"tool": "search", "args": {"page": 0}, "output": "12 hits: a, b, c, ..."},
        {"tool": "search", "args": {"page": 0}, "output": "[]"},
    ]
    assert trips(Empty(threshold=1), actions(calls))[1] is not None
    assert trips(Empty(threshold=2), actions(calls))[1] is None
    paged: list[Call] = [{**calls[0], "args": {"page": p}, "output": "[]"} for p in range(1, 4)]
    found = trips(Empty(threshold=1), actions(calls[:1] + paged))
    assert [a is not None for a in found] == [False, True, False, True]


def test_three_empty_chat_answers_in_a_row_are_empty_whatever_came_before() -> None:
    """The first release's regression: a chat tool answering "", whitespace and n/a."""
    calls: list[Call] = [
        {"tool": "chat", "args": {"prompt": p}, "output": out}
        for p, out in (("summarise the report", ""), ("and the appendix?", "   "), ("anything?", "n/a"))
    ]
    assert [a is not None for a in trips(Empty(), actions(calls))] == [False, False, True]


def test_a_listing_tool_answering_nothing_to_different_filters_is_empty() -> None:
    """The other regression: `[]` to ten different filters trips at the third, every one after too."""
    calls: list[Call] = [
        {"tool": "list_items", "args": {"filter": {"state": s}}, "output": "[]"}
        for s in ("open", "closed", "stale", "blocked", "new", "old", "mine", "theirs", "urgent", "later")
    ]
    found = trips(Empty(), actions(calls))
    assert [a is not None for a in found] == [False, False] + [True] * 8


def test_a_heartbeat_s_round_over_its_sources_finds_most_of_them_quiet() -> None:
    """A digest bot reading its 8 channels, 6 of them ``{"ok": true, "messages": []}``, reads each
    once: a quiet channel is an answer (until 2026-12-06 it was told `empty` at its first
    wake-up). A channel read again in the heartbeat counts, and a filter is no source."""
    quiet = '{"ok": true, "messages": []}'
    busy = '{"ok": true, "messages": [{"ts": "1764000.1", "text": "deploy 41 done by alice"}]}'
    channels = [f"C04{name}" for name in ("ENG", "OPS", "SUP", "RND", "SAL", "MKT", "HRS", "FIN")]
    round_: list[Call] = [
        {"tool": "slack.conversations_history", "args": {"channel": c, "limit": 50}, "output": quiet}
        for c in channels[:6]
    ]
    round_ += [
        {"tool": "slack.conversations_history", "args": {"channel": c, "limit": 50}, "output": busy}
        for c in channels[6:]
    ]
    assert trips(Empty(), actions(round_)) == [None] * 8
    # the next wake-up reads them again: a new round
    assert trips(Empty(), [*actions(round_), *actions(round_, tick=2)]) == [None] * 16
    # a second round in the same heartbeat (a poller going round its quiet channels again) reads
    # the same channels again; one channel read again and again, or two in turn, is asked in vain
    assert trips(Empty(), actions(round_[:6] * 2)) == [None] * 12
    again = actions([round_[0]] * 4)
    assert [a is not None for a in trips(Empty(), again)] == [False, False, False, True]
    in_turn = actions(round_[:2] * 3)
    assert [a is not None for a in trips(Empty(), in_turn)] == [False] * 4 + [True] * 2
    # the same calls keyed by what they look for (a filter, a status) are a listing in vain
    filtered: list[Call] = [
        {**call, "args": {"status": c, "limit": 50}} for call, c in zip(round_, channels, strict=True)
    ]
    assert [a is not None for a in trips(Empty(), actions(filtered[:6]))] == [False, False] + [True] * 4


def test_a_shell_gone_dark_is_empty_and_silent_commands_never_are() -> None:
    """Commands that ask (ls, cat, grep, python) answering nothing in a row are empty; writes,
    sed -i, rm, a heredoc, a redirect or a write_* tool answering nothing are silent by design."""
    dark: list[Call] = [
        {"tool": tool, "args": {"cmd": cmd}, "output": ""}
        for tool, cmd in (("ls", "ls src"), ("cat", "cat setup.py"), ("python", "python -V"))
    ]
    assert trips(Empty(), actions(dark))[-1] is not None
    # The same behind `cd` (mini-swe-agent's `cd /workspace/x && ls -la`): its commands are the
    # asks they were (a cd before each made every one a write, and a dark shell was never found).
    behind_cd = [{**call, "args": {"cmd": f"cd /w/x && {call['args']['cmd']}"}} for call in dark]
    assert trips(Empty(), actions(behind_cd))[-1] is not None
    silent: list[Call] = [
        {"tool": tool, "args": args, "output": out}
        for tool, args, out in (
            ("sed", {"cmd": "sed -i 's/a/b/' f.py"}, ""),
            ("rm", {"cmd": "rm -f build.log"}, ""),
            ("cat", {"cmd": "cat <<'EOF' > f.py\nx = 1\nEOF"}, ""),
            ("python", {"cmd": "python gen.py > out.txt"}, ""),
            ("write_section", {"number": 3, "text": "..."}, ""),
            ("think", {"thought": "next"}, ""),
            ("git", {"cmd": "git checkout src/a.py"}, ""),
        )
    ]
    assert trips(Empty(), actions(silent)) == [None] * len(silent)
    assert trips(Empty(), actions(silent + silent)) == [None] * 2 * len(silent)


def test_a_lookup_with_no_more_results_is_empty() -> None:
    """ReAct's Wikipedia ``Lookup`` answering "No more results." for one keyword after another."""
    calls: list[Call] = [
        {"tool": "lookup", "args": {"cmd": f"Lookup[{k}]"}, "output": "No more results."}
        for k in ("gross", "worldwide box office", "US$", "revenue")
    ]
    assert [a is not None for a in trips(Empty(), actions(calls))] == [False, False, True, True]


def test_a_search_not_finding_what_it_is_asked_in_other_words_is_empty() -> None:
    """A wiki search answering "Could not find [X]. Similar: [...]" to the same question asked
    again and again in other words: each answer echoes its own question and other suggestions,
    yet says the same nothing; the third in a row is empty. A title not found, then one of the
    suggestions found, is a search that worked."""
    asked = ["Ang Lee birthplace", "Ang Lee place of birth", "birthplace of Ang Lee", "Ang Lee hometown"]
    calls: list[Call] = [
        {
            "tool": "search",
            "args": {"entity": q},
            "output": f"Could not find [{q}]. Similar: ['Ang Lee', '{q} (film)'].",
        }
        for q in asked
    ]
    assert [a is not None for a in trips(Empty(), actions(calls))] == [False, False, True, True]
    found: Call = {
        "tool": "search",
        "args": {"entity": "Ang Lee"},
        "output": "Ang Lee (born 23 October 1954) is a ...",
    }
    assert trips(Empty(), actions([calls[0], found, calls[1], found])) == [None] * 4


def test_nothing_from_several_sources_is_a_search_going_on() -> None:
    """A wiki, the code and the chat each answering "No results found." is a search going on; one
    tool's third in the run is empty, and so is silence from commands of any name (a dark shell)."""
    sources: list[Call] = [
        {"tool": tool, "args": {"q": q}, "output": "No results found."}
        for tool, q in (("wiki_search", "ids"), ("wiki_search", "uuid"), ("code_search", "uuid7"))
    ]
    sources += [
        {"tool": tool, "args": {"q": "ids"}, "output": "No results found."}
        for tool in ("adr_search", "slack")
    ]
    assert trips(Empty(), actions(sources)) == [None] * 5
    again: Call = {"tool": "wiki_search", "args": {"q": "ledger ids"}, "output": "No results found."}
    assert trips(Empty(), actions([*sources, again]))[-1] is not None


def test_an_envelope_around_nothing_is_empty_and_a_long_polls_nothing_yet_is_not() -> None:
    """A listing API answering ``{"items": []}`` to filter after filter is empty; a queue worker's long
    poll (``WaitTimeSeconds``) answering ``{"Messages": []}`` waits for work."""
    listing: list[Call] = [
        {"tool": "list_orders", "args": {"status": s}, "output": '{"items": [], "next": null}'}
        for s in ("open", "held", "late")
    ]
    assert trips(Empty(), actions(listing))[-1] is not None
    receive: Call = {
        "tool": "sqs.receive_message",
        "args": {"QueueUrl": "https://sqs.example.com/1/orders", "WaitTimeSeconds": 20},
        "output": '{"Messages": []}',
    }
    assert trips(Empty(), actions([receive] * 6)) == [None] * 6
    # an exempt tool's long poll is not looked at: it neither counts nor ends the listing's run
    exempt = Empty(exempt=frozenset({"sqs.receive_message"}))
    assert trips(exempt, actions([*listing[:2], receive, listing[2]]))[-1] is not None


def test_a_look_right_after_a_wait_that_finds_nothing_waits_for_a_reply() -> None:
    """An inbox looked at again after each 15-minute wait, answered ``{"messages": []}``, waits for
    a reply as a long poll waits for work; looked at three times with no wait between, it is empty."""
    look: Call = {
        "tool": "gmail.list_messages",
        "args": {"q": "in:inbox subject:review"},
        "output": '{"messages": [], "resultSizeEstimate": 0}',
    }
    wait: Call = {"tool": "wait", "args": {"minutes": 15}, "output": "waited 15m"}
    assert trips(Empty(), actions([look, wait] * 5)) == [None] * 10
    assert trips(Empty(), actions([look] * 3))[-1] is not None


def test_searches_finding_nothing_are_answers_and_a_working_agent_tries_a_few() -> None:
    """``grep`` and ``find`` answer "no match" with silence: four greps and a find for other names,
    each finding nothing, are a search going on; five greps finding nothing are empty, and so is
    silence from commands that always print (a dark shell), at three."""
    names = ("def _print_interval", "_print_Interval", "def __str__", "Interval.open")
    greps: list[Call] = [
        {"tool": "grep", "args": {"cmd": f'grep -rn "{n}" sympy/'}, "output": ""} for n in names
    ]
    find: Call = {"tool": "find", "args": {"cmd": 'find sympy -name "*interval*"'}, "output": ""}
    assert trips(Empty(), actions([*greps, find])) == [None] * 5
    another: Call = {"tool": "grep", "args": {"cmd": 'grep -rn "Lopen" sympy/'}, "output": ""}
    found = trips(Empty(), actions([*greps, another]))
    assert found[:4] == [None] * 4
    last = found[4]
    assert last is not None and "searches that found nothing" in last.message
    assert last.evidence["threshold"] == 5
    in_bash: list[Call] = [
        {"tool": "bash", "args": {"command": f'grep -rn "{n}" src'}, "output": ""} for n in names
    ]
    assert trips(Empty(), actions(in_bash))[2] is None
    mixed: list[Call] = [greps[0], {"tool": "ls", "args": {"cmd": "ls src"}, "output": ""}, greps[1]]
    assert trips(Empty(), actions(mixed))[2] is not None


def test_a_search_tool_asked_about_other_things_tries_a_few_and_in_other_words_does_not() -> None:
    """A research agent's search tool asked three specific questions that find nothing ("No results
    for '...'."), then a broader one that finds sources, heartbeat after heartbeat: each asks about
    something else, a search going on, as greps for other names are: empty at five, not three
    (until 2026-12-06 empty at three, escalated at the second heartbeat). Asked again in other
    words ("tidal energy UK", "UK tidal energy cost"), it is empty at three as before."""

    def search(q: str, hit: bool = False) -> Call:
        return {
            "tool": "search",
            "args": {"q": q},
            "output": "[1] a\n[2] b" * 9 if hit else f"No results for '{q}'.",
        }

    topics = ("Swansea lagoon cost overrun", "Severn barrage study", "Orkney stream output")
    session = [*(search(q) for q in topics), search("tidal energy UK", hit=True)] * 2
    assert trips(Empty(), actions(session)) == [None] * 8
    more = ("Minesto kite yield", "Faroe grid link")
    found = trips(Empty(), actions([search(q) for q in (*topics, *more)]))
    assert [f is not None for f in found] == [False] * 4 + [True]
    reworded = ("tidal energy UK", "UK tidal energy cost", "tidal energy cost Britain")
    assert [f is not None for f in trips(Empty(), actions([search(q) for q in reworded]))] == [
        False,
        False,
        True,
    ]


def test_a_conditional_request_answered_not_modified_waits_for_news() -> None:
    """Feeds asked what changed since their ETag answer "304 Not Modified" one after another: a
    poll's "nothing new yet", neither counted nor a run's part (it ends one). The same feeds
    answering an empty list are empty answers, three in a row."""
    feeds = [f"https://example.com/feed/{name}" for name in ("a", "b", "c", "d")]
    modified: list[Call] = [
        {
            "tool": "http.get",
            "args": {"url": url, "headers": {"If-None-Match": f'"{n}"'}},
            "output": f'HTTP/1.1 304 Not Modified\netag: "{n}"\ndate: Tue, 14 May 2024 06:00:{n:02d} GMT',
        }
        for n, url in enumerate(feeds)
    ]
    assert trips(Empty(), actions(modified)) == [None] * 4
    listed: list[Call] = [{**call, "output": "[]"} for call in modified]
    assert [a is not None for a in trips(Empty(), actions(listed))] == [False, False, True, True]
    mixed = [listed[0], listed[1], modified[2], listed[3]]  # the 304 ends the run
    assert trips(Empty(), actions(mixed)) == [None] * 4


def test_a_sql_write_matching_no_row_again_and_again_is_empty_and_a_backfill_ending_on_one_is_not() -> None:
    """``UPDATE 0`` (with psql's transaction lines or timing, or MySQL's ``0 rows affected``) is an
    update asked of rows that are not there: three in a row, the WHERE reworded each time, trip;
    a backfill whose batches update rows and whose last finds none is done, not stuck."""
    said = [
        "UPDATE 0",
        "BEGIN\nUPDATE 0\nCOMMIT",
        "UPDATE 0\n\nTime: 40.580 ms",
        "Query OK, 0 rows affected (0.00 sec)",
    ]
    where = [
        "order_number = '10293'",
        "TRIM(order_number) = '10293'",
        "order_number LIKE '10293'",
        "id = 10293",
    ]
    misses: list[Call] = [
        {"tool": "query", "args": {"sql": f"UPDATE orders SET status = 'refunded' WHERE {w};"}, "output": out}
        for w, out in zip(where, said, strict=True)
    ]
    hit = first(Empty(), actions(misses))
    assert hit is not None and hit[0] == 3
    batches: list[Call] = [
        {
            "tool": "query",
            "args": {"sql": f"UPDATE orders SET minor = 2 WHERE id IN (batch {n})"},
            "output": out,
        }
        for n, out in enumerate(["UPDATE 5000", "UPDATE 5000", "UPDATE 1187", "UPDATE 0"])
    ]
    assert trips(Empty(), actions(batches)) == [None] * 4


_STILL_RUNNING = (
    "[Below is the output of the previous command.]\n"
    "[The command has no new output after 30 seconds. You may wait longer to see additional output by "
    "sending empty command '', send other commands to interact with the current process, send keys "
    '("C-c", "C-z", "C-d") to interrupt/kill the previous command before sending your new command, or use '
    "the timeout parameter in execute_bash for future commands.]"
)


def _not_run(command: str) -> str:
    return (
        f'[Your command "{command}" is NOT executed. The previous command is still running - You CANNOT '
        "send new commands until the previous command is completed. By setting `is_input` to `true`, you "
        "can interact with the current process: You may wait longer to see additional output of the "
        "previous command by sending empty command '', send other commands to interact with the current "
        'process, or send keys ("C-c", "C-z", "C-d") to interrupt/kill the previous command before sending '
        "your new command.]"
    )


def test_a_shell_harness_answering_only_its_notices_is_a_shell_gone_dark() -> None:
    """OpenHands's notices with nothing from the shell (no new output, the command not run because a
    dev server still runs) are answers of nothing, whatever was sent: three in a row trip; the same
    harness's lines around what a command printed are an answer."""
    dark: list[Call] = [
        {"tool": "execute_bash", "args": {"command": "C-c", "is_input": "true"}, "output": _STILL_RUNNING},
        {
            "tool": "execute_bash",
            "args": {"command": "curl -s localhost:5173"},
            "output": _not_run("curl -s localhost:5173"),
        },
        {"tool": "execute_bash", "args": {"command": "q", "is_input": "true"}, "output": _STILL_RUNNING},
    ]
    hit = first(Empty(), actions(dark))
    assert hit is not None and hit[0] == 3
    done = "\n[The command completed with exit code 0.]\n[Current working directory: /workspace/webapp]"
    answered: list[Call] = [
        {"tool": "execute_bash", "args": {"command": cmd}, "output": f"{out}{done}"}
        for cmd, out in [("ls", "README.md  src"), ("cat VERSION", "0.3.2"), ("git branch", "* main")]
    ]
    assert trips(Empty(), actions(answered)) == [None] * 3
    assert [a is not None for a in trips(Empty(), actions([answered[0], *dark]))] == [
        False,
        False,
        False,
        True,
    ]


@pytest.mark.parametrize(
    ("output", "silent"),
    [
        ("[The command completed with exit code 0.]\n[Current working directory: /w]", True),
        ("[Command finished with exit code 1]", True),
        ("[Below is the output of the previous command.]\n\n[Python interpreter: /usr/bin/python]", True),
        ("[1, 2, 3]", False),  # a list: an answer
        (
            "[Below is the output of the previous command.]\n⠸ building\n[Command finished with exit code 0]",
            False,
        ),
        ("[INFO] build ok]", False),
    ],
)
def test_what_a_shell_harness_says_alone(output: str, silent: bool) -> None:
    """Only the harness's own lines (and blank ones) are its notices; anything else is the shell's."""
    assert harness_only(output) is silent


def test_an_empty_folder_listed_long_is_an_answer_of_nothing() -> None:
    """``ls -l`` of an empty folder says ``total 0``: nothing there, as ``[]`` says it."""
    looks: list[Call] = [
        {"tool": "shell", "args": {"cmd": f"ls -l ~/Downloads/{d}"}, "output": "total 0"} for d in "abc"
    ]
    hit = first(Empty(), actions(looks))
    assert hit is not None and hit[0] == 3


@pytest.mark.parametrize("reply", ["(nil)", "(empty array)", "(empty list or set)"])
def test_redis_cli_replies_of_nothing_are_answers_of_nothing(reply: str) -> None:
    """redis-cli prints a missing key or an empty list as ``(nil)`` or ``(empty array)``: a worker
    popping an idle queue hears nothing, not a result it keeps getting (blind batch 55's worker,
    ``brpop`` answering ``(nil)`` between bursts, was a recurring result)."""
    looks: list[Call] = [
        {"tool": "redis.get", "args": {"key": f"session:{k}"}, "output": reply} for k in ("a1", "b2", "c3")
    ]
    hit = first(Empty(), actions(looks))
    assert hit is not None and hit[0] == 3
