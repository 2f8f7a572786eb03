"""Tests of heartbeat.cli.tickoutput: what ``tick`` and ``run`` print of a result, and where."""

from __future__ import annotations

import io
import json
import sys

import pytest

from heartbeat.cli.tickoutput import clean_stdout, print_result
from heartbeat.core.models import Decision
from heartbeat.core.result import TickResult


def test_a_plain_tick_prints_its_message_and_the_next_instructions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """stdout gets the message, then the instructions the next step will see; stderr stays empty."""
    result = TickResult("agent", "ran", 0, "tick 3: 1 action")
    result.decision = Decision(
        action="try_alternative", stuck_streak=1, instructions="try a new query\nthen stop"
    )
    out = io.StringIO()
    print_result(result, out)
    assert out.getvalue() == (
        "tick 3: 1 action\n  instructions for the next step:\n    try a new query\n    then stop\n"
    )
    assert capsys.readouterr().err == ""


def test_a_fleet_agents_lines_carry_its_name(capsys: pytest.CaptureFixture[str]) -> None:
    """In a fleet every line, stdout or stderr, starts with ``[name]``."""
    result = TickResult("crawler", "ran", 0, "tick 1\nsecond line", undelivered=["hook: HTTP 500"])
    out = io.StringIO()
    print_result(result, out)
    assert out.getvalue() == "[crawler] tick 1\n[crawler] second line\n"
    assert capsys.readouterr().err == (
        "heartbeat: [crawler] warning: notification not delivered (kept in outbox/): hook: HTTP 500\n"
    )


def test_json_is_one_line_on_stdout() -> None:
    """--json: the result's stable dict, one line, whatever the outcome."""
    result = TickResult("agent", "error", 2, "state.json is corrupt")
    out = io.StringIO()
    print_result(result, out, as_json=True)
    assert json.loads(out.getvalue()) == result.to_json()
    assert out.getvalue().count("\n") == 1


def test_quiet_says_only_what_needs_a_human(capsys: pytest.CaptureFixture[str]) -> None:
    """--quiet (cron): nothing for a clean tick or a busy lock; an escalation and errors on stderr."""
    out = io.StringIO()
    print_result(TickResult("agent", "ran", 0, "tick 1"), out, quiet=True)
    print_result(TickResult("agent", "locked", 5, "the lock is busy"), out, quiet=True)
    assert out.getvalue() == "" and capsys.readouterr().err == ""
    print_result(TickResult("agent", "needs_human", 1, "escalated"), out, quiet=True)
    print_result(TickResult("agent", "error", 2, "disk full"), out, quiet=True)
    assert out.getvalue() == ""
    assert capsys.readouterr().err == "heartbeat: escalated\nheartbeat: error: disk full\n"


def test_waiting_notifications_are_mentioned_when_none_failed(capsys: pytest.CaptureFixture[str]) -> None:
    """Entries still waiting for their back-off are said once, as a warning."""
    print_result(TickResult("agent", "ran", 0, "tick 2", waiting=2), io.StringIO())
    assert "2 notification(s) waiting in outbox/: not delivered yet" in capsys.readouterr().err


def test_clean_stdout_sends_the_steps_prints_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    """Under --json a step's print() lands on stderr; the stream handed back is where the JSON goes."""
    out = io.StringIO()
    with clean_stdout(out, True) as stream:
        print("from the step")
        stream.write("{}\n")
    assert out.getvalue() == "{}\n"
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == "from the step\n"
    with clean_stdout(out, False) as stream:
        assert stream is out and sys.stdout is not sys.stderr
