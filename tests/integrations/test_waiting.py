"""Waiting: what a Session knows of its agent waiting, ``state.json`` read again only once written.

A real state folder: heartbeats of the agent, and a person's ``heartbeat pause``
as a real process (another process writing ``state.json``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from _integrations import pause_by_hand
from conftest import wait_until

from heartbeat.integrations.filestops import state_mark
from heartbeat.integrations.session import Session
from heartbeat.integrations.waiting import Waiting
from heartbeat.testing import make_heartbeat
from heartbeat.tick.runner import Heartbeat


def step(ctx: Any) -> None:
    ctx.record("search", {"q": "heartbeats"}, output="three results found")


def agent(folder: Path) -> Heartbeat:
    return make_heartbeat(step, folder)


def test_the_status_a_heartbeat_ended_with_is_known_until_state_json_is_written_again(tmp_path: Path) -> None:
    """A pause the last heartbeat ended on is known without reading the file; a resume writes the
    file, and it is forgotten (the next heartbeat reads the file afresh)."""
    hb = agent(tmp_path)
    waiting = Waiting(hb)
    hb.pause("lunch")
    result = hb.tick()
    assert result.outcome == "paused"
    waiting.learn(result)
    mark = state_mark(hb)
    stop = waiting.known(mark)
    assert stop is not None and stop.kind == "paused" and not waiting.written_since(mark)
    assert waiting.still() == stop
    hb.resume()
    assert waiting.known(state_mark(hb)) is None and waiting.written_since(state_mark(hb))
    assert waiting.still() is None
    assert waiting.known(mark) is None  # forgotten, not only hidden by the new mark


def test_a_status_another_process_wrote_is_read_once_and_remembered(tmp_path: Path) -> None:
    hb = agent(tmp_path)
    waiting = Waiting(hb)
    waiting.learn(hb.tick())  # a heartbeat that ran: nothing to wait for
    assert waiting.known(state_mark(hb)) is None and not waiting.written_since(state_mark(hb))
    pause_by_hand(tmp_path, "--state-dir", "state")
    mark = state_mark(hb)
    assert waiting.written_since(mark)
    stop = waiting.read(mark)
    assert stop is not None and stop.kind == "paused" and "lunch" in stop.message
    assert waiting.known(mark) == stop  # remembered: the next call reads no file


def test_a_state_that_cannot_be_read_fails_closed_and_is_read_again(tmp_path: Path) -> None:
    hb = agent(tmp_path)
    waiting = Waiting(hb)
    waiting.learn(hb.tick())
    saved = (tmp_path / "state" / "state.json").read_text()
    (tmp_path / "state" / "state.json").write_text('{"schema_version": 1, "ticks": ')
    mark = state_mark(hb)
    stop = waiting.read(mark)
    assert stop is not None and stop.kind == "error" and stop.exit_code == 2
    assert waiting.known(mark) is None and waiting.written_since(mark)  # not remembered
    (tmp_path / "state" / "state.json").write_text(saved)
    assert waiting.read(state_mark(hb)) is None
    assert not waiting.written_since(state_mark(hb))


def test_a_pause_is_seen_before_the_next_call_without_opening_a_heartbeat(tmp_path: Path) -> None:
    """What an adapter asks before a model call: a person's pause must stop it, as KILL does."""
    hb = agent(tmp_path)
    session = Session(hb.config, idle=0.05)
    assert session.record("search", {"q": "a"}, output="three results found") is None
    wait_until(lambda: not session.is_open, what="the heartbeat to idle out")
    assert session.stopped is None
    request = tmp_path / "state" / ".pause-request"
    request.write_text("lunch")  # a `heartbeat pause` waiting for the lock
    stop = session.stopped
    assert stop is not None and stop.kind == "paused" and "lunch" in stop.message
    request.unlink()
    pause_by_hand(tmp_path, "--state-dir", "state")
    ticks = hb.read_state().ticks
    stop = session.stopped  # the pause is saved: read from state.json, no heartbeat opened
    assert stop is not None and stop.kind == "paused" and "lunch" in stop.message
    assert hb.read_state().ticks == ticks and not session.is_open
    session.heartbeat.resume()
    assert session.stopped is None
    assert session.check() is None
    session.close()
