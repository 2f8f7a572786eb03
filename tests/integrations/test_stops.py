"""One ``Stopped``: the session's and the adapters' are one class with one meaning."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from _integrations import folder_session
from conftest import wait_until

import heartbeat.integrations
import heartbeat.integrations.session
from heartbeat.detect.monitor import Monitor
from heartbeat.integrations import Guard
from heartbeat.integrations.session import Session
from heartbeat.integrations.stops import Stop, Stopped
from heartbeat.testing import make_heartbeat


def test_one_stopped_for_sessions_and_adapters() -> None:
    """``heartbeat.integrations.session.Stopped`` and ``heartbeat.integrations.Stopped`` are one class."""
    assert heartbeat.integrations.session.Stopped is Stopped
    assert heartbeat.integrations.Stopped is Stopped


def test_stopped_from_a_stop_and_from_a_cause_say_the_same() -> None:
    """Built from a Session's Stop or from an adapter's cause: cause, reason, exit code and stop agree."""
    waiting = Stopped(Stop("needs_human", "see ESCALATION.md", 4))
    assert (waiting.cause, waiting.reason, waiting.exit_code) == ("needs_human", "see ESCALATION.md", 4)
    spent = Stopped("budget", "budget: 1200 tokens today, limit 1000")
    assert spent.stop == Stop("budget", "budget: 1200 tokens today, limit 1000", 0)  # paused, as `tick`
    assert spent.cause == "budget" and "(budget)" in str(spent)
    assert Stopped("killed", "KILL file present").exit_code == 3


# -- KILL is said one way, by every path that tells a person or a model


def test_every_path_says_a_kill_the_same_way(tmp_path: Path) -> None:
    """Regression: a tick and a Session said "stopped by <path>: why", an adapter bound to a step's
    ctx "stopped by the KILL file <path>: why", one bound to a Monitor "KILL file present: why", and
    the proxy "the agent was stopped (its KILL file or the fleet stop)". One owner now."""
    from heartbeat.integrations.mcp_texts import after_stop_note, cancelled_text, refusal_text

    kill = tmp_path / "KILL"
    said = f"stopped by the KILL file {kill}: pull the plug"
    kill.write_text("pull the plug\n")
    tick = make_heartbeat(lambda ctx: None, tmp_path).tick()
    session = folder_session(tmp_path)
    try:
        stop = session.check()
        assert stop is not None
        by_session = Guard(session).check().reason
    finally:
        session.close()
    by_monitor = Guard(Monitor(), kill_file=kill).check().reason
    second = tmp_path / "second"
    in_step: list[str] = []

    def step(ctx: Any) -> None:  # KILL comes while the step runs: its adapter's guard says so
        (second / "KILL").write_text("pull the plug\n")
        in_step.append(Guard(ctx).check().reason)

    make_heartbeat(step, second).tick()
    assert [tick.message, stop.message, by_session, by_monitor] == [said] * 4
    assert in_step == [f"stopped by the KILL file {second / 'KILL'}: pull the plug"]
    # What the proxy tells the model quotes the same words, and adds nothing vaguer.
    for text in (refusal_text(stop), cancelled_text(stop), after_stop_note(stop)):
        assert f"this agent was {said}" in text and "KILL file or the fleet stop" not in text


def test_a_step_abandoned_on_kill_is_said_as_every_kill_is(tmp_path: Path) -> None:
    """The abandoned step's message: the same words, with when it came and what became of the step."""
    kill = tmp_path / "KILL"
    left = threading.Event()

    def step(ctx: Any) -> None:  # never looks at ctx.killed: the watchdog gives up on it
        kill.write_text("pull the plug\n")
        left.wait(30)

    result_box: list[Any] = []
    ticking = threading.Thread(target=lambda: result_box.append(make_heartbeat(step, tmp_path).tick()))
    ticking.start()
    try:
        wait_until(lambda: (tmp_path / "state" / "journal.jsonl").exists(), what="the abandonment")
    finally:
        left.set()
        ticking.join()
    [result] = result_box
    assert result.message.startswith(f"stopped by the KILL file {kill} during the step: pull the plug; ")
    assert "abandoned" in result.message


def test_the_fleet_stop_is_said_the_same_way_too(tmp_path: Path) -> None:
    """The fleet stop, named as such, in the same words: a tick, a Session and a step's adapter."""
    (tmp_path / "fleet").mkdir()
    where = tmp_path / "fleet" / "STOP"
    config = {"stop": {"path": str(where)}}
    said = f"stopped by the fleet stop {where}: all hands"
    where.write_text("all hands\n")
    tick = make_heartbeat(lambda ctx: None, tmp_path, **config).tick()
    (tmp_path / "heartbeat.toml").write_text(f'[agent]\nstate_dir = "live"\n\n[stop]\npath = "{where}"\n')
    session = Session.from_files(tmp_path / "heartbeat.toml")
    try:
        wait_until(lambda: session.check() is not None, what="the fleet stop to be read")
        stop = session.check()
    finally:
        session.close()
    assert stop is not None
    assert [tick.message, stop.message] == [said] * 2
