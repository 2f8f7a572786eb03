"""``repeat``: the same call with the same result, N times in a row."""

from __future__ import annotations

from typing import Any

import pytest

from heartbeat.base.errors import ConfigError
from heartbeat.config.file import DetectorsConfig, RepeatConfig
from heartbeat.core.models import REFUSED
from heartbeat.detect.detectors import Repeat, build_detectors

from .helpers import REJECTED_TURN, Call, actions, fired, trips


def test_third_identical_call_trips_repeat() -> None:
    """Two identical calls are fine; the third trips repeat and says which call and how often."""
    found = trips(Repeat(), actions([("search", {"q": "x"})] * 3))
    assert found[:2] == [None, None]
    anomaly = found[2]
    assert anomaly is not None and anomaly.kind == "repeat"
    assert anomaly.action == 3 and anomaly.tool == "search"
    assert 'search({"q":"x"})' in anomaly.message and "3 times in a row" in anomaly.message
    assert anomaly.evidence["count"] == 3 and anomaly.evidence["threshold"] == 3


def test_repeat_keeps_firing_while_the_run_goes_on() -> None:
    """Each further identical call is still a repeat, with the run's length."""
    found = trips(Repeat(), actions([("search", {"q": "x"})] * 5))
    counts = [a.evidence["count"] if a else None for a in found]
    assert counts == [None, None, 3, 4, 5]


def test_a_call_refused_before_it_ran_is_a_repeat_at_once() -> None:
    """A model asking again for the call it was told not to make (an adapter refused it, recorded
    with the refusal as its error): a repeat at once, going on with that call's run whatever it
    answered when it ran, and alone after other calls too; the message says it never ran."""
    ran: list[Call] = [{"tool": "search", "args": {"q": "x"}, "output": "3 hits"}] * 2
    refused: Call = {"tool": "search", "args": {"q": "x"}, "error": REFUSED}
    found = trips(Repeat(), actions([*ran, refused]))
    assert found[:2] == [None, None] and found[2] is not None
    assert found[2].evidence["count"] == 3 and found[2].evidence["avoid"] == 'search({"q":"x"})'
    assert "asked for again after the model was told not to call it" in found[2].message
    assert "refused before it ran" in found[2].message
    alone = trips(Repeat(), actions([{"tool": "read", "args": {"p": 1}, "output": "a page"}, refused]))
    assert alone[1] is not None and alone[1].evidence["count"] == 1


def test_per_tool_threshold_lets_a_polling_tool_poll() -> None:
    """A tool with its own threshold of 10 may repeat 9 times without a repeat."""
    detector = Repeat(3, tools={"get_status": 10})
    found = trips(detector, actions([("get_status", None)] * 10))
    assert found[:9] == [None] * 9
    assert found[9] is not None and found[9].evidence["threshold"] == 10


def test_polling_tool_with_own_threshold_stays_silent() -> None:
    """Polling get_status five times under its threshold of 10 trips nothing."""
    cfg = DetectorsConfig(repeat=RepeatConfig(tools={"get_status": 10}))
    records = actions([{"tool": "get_status", "output": "running"}] * 5)
    assert all(trips(d, records) == [None] * 5 for d in build_detectors(cfg) if d.kind == "repeat")


def test_polling_tool_trips_repeat_once_its_output_stops_changing() -> None:
    """With output in the fingerprint, changing results are silent and a frozen one repeats."""
    outputs = ["queued 5", "queued 4", "queued 3", "queued 2", "queued 2", "queued 2"]
    records = actions([{"tool": "get_status", "output": o} for o in outputs], polling=["get_status"])
    found = trips(Repeat(polling={"get_status"}), records)
    assert found[:5] == [None] * 5
    assert found[5] is not None and "same result" in found[5].message


def test_repeat_off_exempts_a_tool() -> None:
    """A tool set to "off" never trips repeat."""
    assert (
        trips(Repeat(tools={"heartbeat_ping": "off"}), actions([("heartbeat_ping", None)] * 9)) == [None] * 9
    )


def test_volatile_args_ignored_by_repeat() -> None:
    """Calls differing only in a volatile argument are one repeated call."""
    calls = [("search", {"q": "x", "request_id": i}) for i in range(3)]
    assert trips(Repeat(), actions(calls))[-1] is None
    assert trips(Repeat(), actions(calls, volatile=["request_id"]))[-1] is not None


def test_the_same_call_with_a_new_answer_each_time_is_no_repeat() -> None:
    """A status poll or a "scroll down" that moves on: no repeat; on and on with a new page each
    time, nothing (reading); back over pages already seen, a near_repeat."""
    polls: list[Call] = [
        {"tool": "get_status", "args": {"job": "job-7"}, "output": f"running, {p}% done"}
        for p in (10, 40, 70)
    ]
    assert trips(Repeat(), actions(polls)) == [None] * 3
    again: list[Call] = [{"tool": "get_status", "args": {"job": "job-7"}, "output": "running, 70% done"}] * 3
    hit = trips(Repeat(), actions(again))[-1]
    assert hit is not None and "the same arguments and the same result" in hit.message
    pages: list[Call] = [
        {"tool": "scroll_down", "args": None, "output": f"lines {i * 100} to {i * 100 + 99}: ..."}
        for i in range(16)
    ]
    assert fired(actions(pages)) == {}
    found = fired(actions(pages[:8] + pages[:8]))
    assert "repeat" not in found and found.get("near_repeat") == 12


def test_a_status_failing_each_time_while_the_numbers_in_its_error_move_on_is_no_repeat() -> None:
    """A rollout's status timing out at 1, then 2, then 3 of 8 replicas, all of it in its error
    (live round 48: a repeat at the fourth wake-up, escalated at the fifth). The same error again,
    or the same words with only a timestamp moved, or other words, go on with the run."""
    cmd = {"args": "-n shop rollout status deployment/web --timeout=20s"}
    status = 'Waiting for deployment "web" rollout to finish: {} of 8 updated replicas are available...\n'
    timed_out = "error: timed out waiting for the condition"
    moving: list[Call] = [
        {"tool": "kubectl", "args": cmd, "error": status.format(n) + timed_out} for n in (1, 2, 3, 4)
    ]
    assert trips(Repeat(), actions(moving)) == [None] * 4
    vacuum = "timed out after 20s waiting for vacuum: {} of 12 tables done (current: billing.invoices_{})"
    tables: list[Call] = [
        {"tool": "pg", "args": {"sql": "vacuum"}, "error": vacuum.format(n, n)} for n in (2, 5, 7, 10)
    ]
    assert trips(Repeat(), actions(tables)) == [None] * 4  # live round 49: a name's digits moved too
    frozen: list[Call] = [{"tool": "kubectl", "args": cmd, "error": status.format(3) + timed_out}] * 3
    assert trips(Repeat(), actions(frozen))[-1] is not None
    stamped: list[Call] = [
        {"tool": "kubectl", "args": cmd, "error": f"2026-12-04T06:0{n}:00Z {timed_out}"} for n in (1, 2, 3)
    ]
    assert trips(Repeat(), actions(stamped))[-1] is not None
    reworded: list[Call] = [
        {"tool": "lookup", "args": {"id": 7}, "error": error}
        for error in ("not found: 7", "not found: 7", "Invalid action! Repeated lookup.")
    ]
    assert trips(Repeat(), actions(reworded))[-1] is not None


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: Repeat(threshold=1), "threshold"),
        (lambda: Repeat(tools={"x": 1}), "tools.x"),
        (lambda: Repeat(threshold=True), "threshold must be an integer"),
        (lambda: Repeat(threshold=10_001), "between 2 and 10000"),
        (lambda: Repeat(tools={"get_status": "sometimes"}), "tools.get_status"),  # type: ignore[dict-item]
        (lambda: Repeat(tools={"get_status": 2.5}), "tools.get_status"),  # type: ignore[dict-item]
    ],
)
def test_bad_parameters_are_config_errors(make: Any, words: str) -> None:
    """A detector refuses parameters that could never work, naming the parameter."""
    with pytest.raises(ConfigError, match=words):
        make()


def test_exempt_tools_neither_trip_nor_break_a_repeat() -> None:
    """A tool the detector is told to ignore is invisible: the calls around it still form a run."""
    calls: list[Call] = [("search", {"q": "x"}), ("log", None)] * 3
    assert trips(Repeat(), actions(calls)) == [None] * 6
    found = trips(Repeat(exempt={"log"}), actions(calls))
    assert found[:4] == [None] * 4 and found[5] is None  # the log calls themselves never trip
    assert found[4] is not None and found[4].tool == "search" and found[4].evidence["count"] == 3
    assert trips(Repeat(exempt={"log"}), actions([("log", None)] * 5)) == [None] * 5


def test_a_per_tool_threshold_may_be_lower_than_the_default() -> None:
    """A tool given a threshold of 2 repeats at its second call; others still need three."""
    detector = Repeat(3, tools={"charge_card": 2})
    assert trips(detector, actions([("charge_card", {"amount": 5})] * 2))[-1] is not None
    assert trips(detector, actions([("search", {"q": "x"})] * 2))[-1] is None
    assert detector.threshold_for("charge_card") == 2 and detector.threshold_for("search") == 3


def test_the_same_call_failing_again_is_a_repeat_unless_what_it_reports_moves_on() -> None:
    """Three failures of one call repeat, whatever each error says (the harness answering a third
    identical lookup "Invalid action" instead of "No more results."); the message says it failed.
    A status poll that times out each time while what it reports moves on is no repeat."""
    calls: list[Call] = [
        {"tool": "deploy", "args": {"env": "prod"}, "error": f"timeout after {n}s", "output": f"attempt {n}"}
        for n in (30, 60, 90)
    ]
    lookups: list[Call] = [
        {"tool": "lookup", "args": {"cmd": "Lookup[West Virginia]"}, "output": out, "error": err}
        for out, err in [("No more results.", "not_found")] * 2
        + [("Invalid action: Lookup[West Virginia]", "invalid_action")]
    ]
    assert trips(Repeat(), actions(lookups))[-1] is not None
    moving: list[Call] = [
        {
            "tool": "kubectl_rollout_status",
            "args": {"deployment": "api", "timeout": "30s"},
            "output": f"Waiting for rollout to finish: {n} of 8 replicas available...\nerror: timed out",
            "error": "timeout",
        }
        for n in (0, 1, 2)
    ]
    assert trips(Repeat(), actions(moving)) == [None] * 3
    stalled = trips(Repeat(), actions([*moving, moving[-1], moving[-1]]))
    assert stalled[3] is None and stalled[4] is not None  # 2 of 8, three times in a row
    anomaly = trips(Repeat(), actions(calls))[-1]
    assert anomaly is not None
    assert anomaly.message == (
        'deploy({"env":"prod"}) was called 3 times in a row '
        "with the same arguments, failing each time (limit 3)"
    )
    assert (
        anomaly.evidence["call"] == 'deploy({"env":"prod"})'
        and anomaly.evidence["avoid"] == anomaly.evidence["call"]
    )


def test_a_failure_between_two_successes_breaks_the_run() -> None:
    """The same call answered, failed, answered: the failure is a different result, so no run of three."""
    calls: list[Call] = [
        {"tool": "fetch", "args": {"u": 1}, "output": "page"},
        {"tool": "fetch", "args": {"u": 1}, "output": "page"},
        {"tool": "fetch", "args": {"u": 1}, "error": "503"},
        {"tool": "fetch", "args": {"u": 1}, "output": "page"},
        {"tool": "fetch", "args": {"u": 1}, "output": "page"},
    ]
    assert trips(Repeat(), actions(calls)) == [None] * 5


def test_turns_the_harness_rejected_need_n_plus_three_in_a_row() -> None:
    """A few empty replies the harness rejects, then work: a slip. Six in a row: the model spins.
    The same tool failing with arguments is a repeat at N, as before."""
    work: Call = {"tool": "python", "args": {"cmd": "python repro.py"}, "output": "ok, 3 passed"}
    slip = [*([REJECTED_TURN] * 5), work]
    assert trips(Repeat(), actions(slip)) == [None] * 6
    found = trips(Repeat(), actions([REJECTED_TURN] * 6))
    assert found[:5] == [None] * 5
    hit = found[5]
    assert hit is not None and hit.evidence["threshold"] == 6 and "(limit 6)" in hit.message
    failing: Call = {"tool": "python", "args": {"cmd": "python repro.py"}, "error": "returncode 1"}
    assert trips(Repeat(), actions([failing] * 3))[2] is not None


def test_a_tool_threshold_of_its_own_applies_to_rejected_turns_too() -> None:
    """Configured for the rejected turns' tool, its threshold is the user's, not N + 3."""
    found = trips(Repeat(tools={"(no_command)": 3}), actions([REJECTED_TURN] * 3))
    assert found[2] is not None and found[2].evidence["threshold"] == 3


def test_the_same_message_to_a_person_is_a_repeat_whatever_they_answer() -> None:
    """A support agent sending the customer the same instructions three times in a row repeats
    itself, though the customer words each reply differently; other messages are no repeat."""
    text = {"content": "Please turn Airplane Mode on, wait 10 seconds, then off again."}
    replies = ["Done, still No Service.", "I did that already.", "Seriously? Same answer."]
    for tool in ("respond", "slack.post_message", "send_email"):
        same = trips(Repeat(), actions([{"tool": tool, "args": text, "output": r} for r in replies]))
        assert same[:2] == [None, None] and same[2] is not None
        assert "the same message, whatever the answers" in same[2].message
        other = [
            {"tool": tool, "args": {"content": f"Step {n}: check the SIM."}, "output": r}
            for n, r in enumerate(replies)
        ]
        assert trips(Repeat(), actions(other)) == [None] * 3
    # A read answering something new each time is still no repeat (a poll that moves).
    reads = [{"tool": "read_inbox", "args": {}, "output": r} for r in replies]
    assert trips(Repeat(), actions(reads)) == [None] * 3


def test_a_long_poll_finding_nothing_yet_is_waiting_for_work_not_a_repeat() -> None:
    """An idle queue worker's receive (``wait_s``: a long poll) answered ``{"messages": []}`` again
    and again waits for work; the same receive without a wait, or answering the same message, repeats."""
    idle: Call = {
        "tool": "sqs_receive",
        "args": {"queue": "inbound", "wait_s": 20},
        "output": '{"messages": []}',
    }
    assert trips(Repeat(), actions([idle] * 6)) == [None] * 6
    quick: Call = {**idle, "args": {"queue": "inbound"}}
    assert trips(Repeat(), actions([quick] * 3))[2] is not None
    stuck: Call = {**idle, "output": '{"messages": [{"id": "m-1", "receive_count": 1}]}'}
    assert trips(Repeat(), actions([stuck] * 3))[2] is not None
