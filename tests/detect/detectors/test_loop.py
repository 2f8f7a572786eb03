"""``loop``: a cycle of 2+ distinct calls repeating back to back at the tail of the window."""

from __future__ import annotations

from typing import Any

import pytest

from heartbeat.base.errors import ConfigError
from heartbeat.detect.detectors import Loop

from .helpers import Call, actions, trips


def test_search_read_with_new_arguments_is_not_a_loop() -> None:
    """search(q1) read(u1) search(q2) read(u2) ... moves on: no loop."""
    calls: list[Call] = []
    for i in range(10):
        calls += [("search", {"q": f"q{i}"}), ("read", {"u": f"u{i}"})]
    assert trips(Loop(), actions(calls)) == [None] * 20


def test_search_read_with_fixed_arguments_is_a_loop() -> None:
    """search(q) read(u) search(q) read(u) is a loop at the fourth action, named by its cycle."""
    found = trips(Loop(), actions([("search", {"q": "x"}), ("read", {"u": "y"})] * 3))
    assert found[:3] == [None] * 3
    first, last = found[3], found[5]
    assert first is not None and last is not None
    assert first.action == 4 and first.evidence["period"] == 2 and first.evidence["repeats"] == 2
    assert 'search({"q":"x"}) -> read({"u":"y"})' in last.message
    assert last.evidence["repeats"] == 3 and "3 times" in last.message


def _watch(statuses: list[str]) -> list[Call]:
    """A CI run watched between sleeps: ``gh run view`` answering each status in turn."""
    calls: list[Call] = []
    for status in statuses:
        calls.append({"tool": "gh", "args": {"cmd": "gh run view 11187402951"}, "output": status})
        calls.append({"tool": "sleep", "args": {"cmd": "sleep 40"}, "output": ""})
    return calls


def test_a_cycle_whose_answers_move_on_watches_something_that_moves() -> None:
    """A CI run watched between sleeps, a job finishing at each look, is no loop; frozen, it is."""
    moving = [f"lint: done, tests: {done} of 6 jobs done, started 2024-10-02T15:11:42Z" for done in range(6)]
    assert trips(Loop(), actions(_watch(moving))) == [None] * 12
    # Frozen: four passes alike, between sleeps, with nothing new in any of them.
    frozen = trips(Loop(), actions(_watch(moving[:2] + [moving[2]] * 4)))
    assert frozen[:10] == [None] * 10 and all(f is not None for f in frozen[10:])
    # A clock in the answer is no news: the same status at another time is the same answer; a
    # cycle that waits is a loop at its fourth pass (below).
    clock = [f"tests: 2 of 6 jobs done, checked 2024-10-02T15:{m:02}:42Z" for m in range(6)]
    found = trips(Loop(), actions(_watch(clock)))
    assert found[:7] == [None] * 7 and found[7] is not None


def _rounds(answers: list[list[str]], pause: Call) -> list[Call]:
    """Three feeds polled in rounds, ``pause`` between the rounds."""
    calls: list[Call] = []
    for answer in answers:
        calls += [
            {"tool": "fetch_feed", "args": {"url": f"https://f{i}.example/atom"}, "output": a}
            for i, a in enumerate(answer)
        ]
        calls.append(pause)
    return calls


@pytest.mark.parametrize(
    "pause",
    [
        {"tool": "sleep", "args": {"seconds": 300}, "output": ""},
        {"tool": "bash", "args": {"cmd": "sleep 300"}, "output": ""},
        {"tool": "mcp__timer__wait_for", "args": {"seconds": 300}, "output": "waited"},
    ],
    ids=["sleep tool", "sleep command", "wait tool after a namespace"],
)
def test_a_cycle_that_waits_is_a_loop_at_its_fourth_pass(pause: Call) -> None:
    """Feeds polled in rounds between sleeps, the same old entry three times, is a poller waiting
    for news (a job queued, a rollout's replicas: what it waits for may take a few rounds); the
    fourth round alike is a loop. Without the sleep, two rounds alike are. (Feeds answering "304
    Not Modified" say there is no news: no loop at all, see below.)"""
    quiet = ["<feed><entry>v2.3.1 released</entry></feed>"] * 3
    found = trips(Loop(), actions(_rounds([quiet] * 4, pause)))
    assert found[:15] == [None] * 15 and found[15] is not None and found[15].evidence["repeats"] == 4
    busy = trips(Loop(), actions(_rounds([quiet] * 2, {"tool": "count_items", "args": {}, "output": "12"})))
    assert busy[7] is not None


def test_the_same_messages_answered_in_other_words_are_a_loop() -> None:
    """A support agent sending a customer the same two instructions again and again loops, though
    the customer words each reply differently: a reply to a message (an act) is no news."""
    replies = ["Done, still failing.", "Same error again.", "Nope, it failed.", "Tried it: fails."]
    calls: list[Call] = []
    for reply in replies:
        calls.append({"tool": "respond", "args": {"content": "Please toggle mobile data."}, "output": reply})
        calls.append(
            {"tool": "respond", "args": {"content": "Please send an MMS now."}, "output": reply[::-1]}
        )
    found = trips(Loop(), actions(calls))
    assert found[:3] == [None] * 3 and all(f is not None for f in found[3:])


def test_feeds_asked_what_changed_since_their_etags_wait_for_news() -> None:
    """Three feeds asked round after round with their ETags, each answering "304 Not Modified":
    a reader waiting for news, no loop in ten rounds. The same rounds answering the same full
    page each time are a loop at the second."""
    found: dict[bool, list[object]] = {}
    for not_modified in (True, False):
        calls: list[Call] = []
        for _ in range(10):
            for feed in ("status", "changelog", "cve"):
                answer = (
                    "HTTP/1.1 304 Not Modified"
                    if not_modified
                    else f"<rss><item>{feed}: old news</item></rss>"
                )
                calls.append(
                    {
                        "tool": "http.get",
                        "args": {"url": f"https://example.com/{feed}.rss", "etag": feed},
                        "output": answer,
                    }
                )
        found[not_modified] = trips(Loop(), actions(calls))
    assert found[True] == [None] * 30
    assert found[False][5] is not None


def test_a_poll_for_news_that_logs_its_rounds_waits_for_news() -> None:
    """A feed asked with its ETag, answering 304 (as its tool prints it, in JSON), then the agent's
    own record of it (a log line, the poll's time touched): no loop in ten rounds. A round that
    also acts (a message sent each time) is a loop at its second pass."""
    found: dict[bool, list[object]] = {}
    for acts in (False, True):
        calls: list[Call] = []
        for n in range(10):
            calls += [
                {"tool": "feed.fetch", "args": {"etag": "e2"}, "output": f'{{"status": 304, "at": "{n}"}}'},
                {"tool": "state.touch", "args": {"key": "last_poll"}, "output": '{"ok": true}'},
                {"tool": "log.info", "args": {"msg": "no new entries"}, "output": "logged"},
            ]
            if acts:
                calls.append({"tool": "slack.post", "args": {"text": "nothing new"}, "output": "ok"})
        found[acts] = trips(Loop(), actions(calls))
    assert found[False] == [None] * 30
    assert found[True][7] is not None


@pytest.mark.parametrize(
    "pause",
    [
        {"tool": "sleep", "args": {"seconds": 60}, "output": "slept 60s"},
        {"tool": "bash", "args": {"cmd": "sleep 60"}, "output": "ok"},
        {"tool": "wait", "args": {"seconds": 60}, "output": "waited 60 seconds"},
    ],
    ids=["sleep tool", "sleep command", "wait tool"],
)
def test_an_inbox_looked_at_after_each_pause_waits_for_news(pause: Call) -> None:
    """An inbox answering "No new messages." after each pause, whatever the pause says of itself
    ("slept 60s"), is a poller waiting for news: no loop in ten rounds (live round 51's poller in one
    model run was told it looked stuck at its fourth look). The same message answered after each
    pause is a loop at the fourth pass, as a wait's cycle is; a look that does not wait for news
    (a job's status) is one too."""
    found: dict[str, list[object]] = {}
    for answer in ("No new messages.", "1 new message from bob: 'send the Q3 numbers'"):
        calls: list[Call] = []
        for _ in range(10):
            calls += [{"tool": "check_inbox", "args": {}, "output": answer}, pause]
        found[answer] = trips(Loop(), actions(calls))
    assert found["No new messages."] == [None] * 20
    assert found["1 new message from bob: 'send the Q3 numbers'"][7] is not None


def test_a_two_step_retry_with_a_failure_needs_a_third_pass() -> None:
    """A malformed turn, then submit, twice (a harness's confirmation) is not yet a loop."""
    steps: list[Call] = [
        {
            "tool": "(no_command)",
            "args": None,
            "output": "Please give exactly one action",
            "error": "format_error",
        },
        {"tool": "submit", "args": {"cmd": "submit"}, "output": "Review your changes, then submit again"},
    ]
    found = trips(Loop(), actions(steps * 3))
    assert found[:5] == [None] * 5 and found[5] is not None and found[5].evidence["repeats"] == 3


def test_identical_calls_are_repeat_never_loop() -> None:
    """A A A A has one distinct fingerprint: never a loop."""
    assert trips(Loop(), actions([("search", {"q": "x"})] * 8)) == [None] * 8


def test_loop_reports_the_shortest_period() -> None:
    """A B A B A B A B loops with period 2, not 4."""
    found = trips(Loop(window=20, repeats=2), actions([("a", None), ("b", None)] * 4))
    assert all(f is not None and f.evidence["period"] == 2 for f in found[3:])


def test_loop_cycle_may_repeat_a_fingerprint() -> None:
    """A A B A A B is a 3-step cycle of two distinct fingerprints."""
    found = trips(Loop(), actions([("a", None), ("a", None), ("b", None)] * 2))
    assert found[-1] is not None and found[-1].evidence["period"] == 3


def test_loop_must_sit_at_the_tail_of_the_window() -> None:
    """A cycle longer than the window allows, or broken by a new call, is not reported."""
    assert trips(Loop(window=5), actions([("a", None), ("b", None), ("c", None)] * 2))[-1] is None
    broken = actions([("a", None), ("b", None), ("a", None), ("b", None), ("c", None)])
    assert trips(Loop(), broken)[-1] is None


def test_loop_needs_the_configured_repeats() -> None:
    """With repeats=3 a cycle seen twice is not yet a loop; the third time it is."""
    found = trips(Loop(repeats=3), actions([("a", None), ("b", None)] * 3))
    assert found[3] is None and found[5] is not None


def test_loop_exempt_tools_are_invisible() -> None:
    """A tool left out of loops neither forms nor breaks one."""
    calls = [("a", None), ("log", {"n": 1}), ("b", None), ("a", None), ("log", {"n": 2}), ("b", None)]
    calls += [("a", None), ("log", {"n": 3}), ("b", None)]
    assert trips(Loop(), actions(calls))[-1] is None
    assert trips(Loop(exempt={"log"}), actions(calls))[-1] is not None


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: Loop(repeats=1), "repeats"),
        (lambda: Loop(window=3), "window must be an integer between 4"),
        (lambda: Loop(window=True), "window"),
        (lambda: Loop(repeats=1_001), "repeats"),
    ],
)
def test_bad_parameters_are_config_errors(make: Any, words: str) -> None:
    """A detector refuses parameters that could never work, naming the parameter."""
    with pytest.raises(ConfigError, match=words):
        make()


def test_a_long_cycle_is_named_by_its_first_steps_and_counted() -> None:
    """An 8-step cycle done twice: the message shows six steps and counts the rest; the evidence keeps all."""
    steps: list[Call] = []
    for k in range(8):
        steps.append((f"step{k}", None))
    found = trips(Loop(), actions(steps * 2))
    assert found[:15] == [None] * 15
    anomaly = found[15]
    assert anomaly is not None and anomaly.action == 16
    assert anomaly.message == (
        "the cycle step0() -> step1() -> step2() -> step3() -> step4() -> step5() -> … (2 more) "
        "repeated 2 times back to back (8 steps, the last 16 actions)"
    )
    assert anomaly.evidence["cycle"] == [f"step{k}()" for k in range(8)]
    assert anomaly.evidence["actions"] == 16 and anomaly.evidence["window"] == 20


def test_the_cycle_is_named_from_where_the_repetition_started() -> None:
    """b c a b c a b: the cycle is reported as it began (b -> c -> a), not as it stands at the tail."""
    calls: list[Call] = [("b", None), ("c", None), ("a", None), ("b", None), ("c", None), ("a", None)]
    calls.append(("b", None))
    anomaly = trips(Loop(), actions(calls))[-1]
    assert anomaly is not None
    assert anomaly.evidence["cycle"] == ["b()", "c()", "a()"] and anomaly.evidence["actions"] == 7


def test_a_wait_answers_what_it_waited_for() -> None:
    """``wait_for_job`` between sleeps, the job's tasks done going 0, 14, 31, 58, 58, 87...: a wait
    is named for an act, but what it answers is the job's status, news while it moves. Stalled for
    four looks in a row, it is a loop."""
    done = [0, 14, 31, 58, 58, 87, 120]
    calls: list[Call] = []
    for n in done:
        status = f'{{"job_id": "bj-8acc", "status": "running", "tasks": {{"done": {n}, "total": 240}}}}'
        calls.append({"tool": "wait_for_job", "args": {"job_id": "bj-8acc"}, "output": status})
        calls.append({"tool": "sleep", "args": {"seconds": 90}, "output": "slept 90s"})
    assert trips(Loop(), actions(calls)) == [None] * 14
    stalled = trips(Loop(), actions(calls[:8] + calls[6:8] * 3))
    assert stalled[:12] == [None] * 12 and stalled[12] is not None
