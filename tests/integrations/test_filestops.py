"""What an agent's files say about going on, read without opening a heartbeat: real files, a real pause."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import wait_until

from heartbeat.config.file import load_config
from heartbeat.core.models import Status
from heartbeat.integrations.filestops import kill_found, pause_stop, saved_stop, standing_stop, state_mark
from heartbeat.integrations.stops import Stop
from heartbeat.tick.runner import Heartbeat


def agent(folder: Path, extra: str = "") -> Heartbeat:
    """An agent whose state folder is ``folder/state`` and KILL file ``folder/KILL``."""
    config = folder / "heartbeat.toml"
    config.write_text(f'[agent]\nstate_dir = "state"\nkill_file = "KILL"\n{extra}')
    return Heartbeat(load_config(config))


def test_nothing_stops_a_fresh_agent(tmp_path: Path) -> None:
    """No KILL, no pause, no state.json yet: nothing says to stop, and the mark is all zeros."""
    hb = agent(tmp_path)
    assert kill_found(hb) is None and standing_stop(hb) is None and state_mark(hb) == (0, 0, 0)


def test_kill_found_names_the_kill_file_before_the_fleet_stop(tmp_path: Path) -> None:
    """The fleet stop is named as such; a KILL file present as well wins, with its own path."""
    (tmp_path / "fleet").mkdir()
    hb = agent(tmp_path, '[stop]\npath = "fleet/STOP"\n')
    (tmp_path / "fleet" / "STOP").write_text("all hands\n")
    wait_until(lambda: kill_found(hb) is not None, what="the fleet stop to be read")
    fleet = f"stopped by the fleet stop {tmp_path / 'fleet' / 'STOP'}: all hands"
    assert kill_found(hb) == Stop("killed", fleet, 3)
    (tmp_path / "KILL").write_text("this one\n")
    assert kill_found(hb) == Stop("killed", f"stopped by the KILL file {tmp_path / 'KILL'}: this one", 3)


def test_a_pause_is_seen_while_it_waits_then_from_the_saved_state(tmp_path: Path) -> None:
    """A real `heartbeat pause` waiting for a held lock is a pause under way; once saved, the status."""
    hb = agent(tmp_path)
    hb.store.save(hb.store.load())  # the folder and a state.json, as after a first heartbeat
    before = state_mark(hb)
    with hb.store.lock():  # a heartbeat is open: the pause has to wait for it
        pause = subprocess.Popen(
            [sys.executable, "-m", "heartbeat", "pause", "--config", "heartbeat.toml", "--reason", "lunch"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_until(lambda: pause_stop(hb) is not None, what="the pause request", proc=pause)
        asked = standing_stop(hb)
        assert asked is not None and asked.kind == "paused" and "pausing" in asked.message
        assert saved_stop(hb) is None  # not saved yet
    _, err = pause.communicate(timeout=60)
    assert pause.returncode == 0, err
    assert pause_stop(hb) is None and state_mark(hb) != before
    saved = standing_stop(hb)
    assert saved is not None and (saved.kind, saved.message, saved.exit_code) == (
        "paused",
        "paused: lunch",
        0,
    )


def test_a_human_awaited_and_an_unreadable_state_stop_calls(tmp_path: Path) -> None:
    """needs_human names ESCALATION.md; a corrupt state.json fails closed (an error stop, exit 2)."""
    hb = agent(tmp_path)
    state = hb.store.load()
    state.status = Status.NEEDS_HUMAN
    hb.store.save(state)
    waiting = saved_stop(hb)
    assert waiting is not None and waiting.kind == "needs_human" and waiting.exit_code == 4
    assert str(hb.store.escalation_path) in waiting.message
    hb.store.state_path.write_text('{"schema_version": 1, "ticks": ')
    broken = saved_stop(hb)
    assert broken is not None and broken.kind == "error" and broken.exit_code == 2
    assert "not valid JSON" in broken.message


ESCAPES = "lunch\x1b[2J\x1b]0;owned\x07\nforged line api_key=sk-live-1234567890abcdef "


def test_a_pause_request_the_agent_wrote_is_said_as_a_kill_reason(tmp_path: Path) -> None:
    """The agent can write `.pause-request` itself: its reason reaches people as a KILL file's does
    (one line, escaped, credentials masked, cut to the same limit), never raw."""
    hb = agent(tmp_path)
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / ".pause-request").write_text(ESCAPES + "x" * 5000)
    asked = pause_stop(hb)
    assert asked is not None and asked.kind == "paused"
    assert asked.message.isprintable() and "\\x1b[2J" in asked.message and "forged line" in asked.message
    assert "sk-live-1234567890abcdef" not in asked.message and "api_key=***" in asked.message
    (tmp_path / "KILL").write_text(ESCAPES + "x" * 5000)  # the same bytes as a KILL file: the same reason
    assert asked.message.endswith(hb.kill.reason() or "")


def test_a_reason_typed_to_heartbeat_pause_is_saved_and_shown_escaped_and_masked(tmp_path: Path) -> None:
    """`heartbeat pause --reason` keeps the reason as the request says it: status and log show it escaped."""
    hb = agent(tmp_path)
    hb.store.save(hb.store.load())  # a folder that has run
    shown = ""
    for command in (["pause", "--reason", ESCAPES], ["status"], ["log"]):
        done = subprocess.run(
            [sys.executable, "-m", "heartbeat", *command, "--config", "heartbeat.toml"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert "lunch\\x1b[2J" in done.stdout, command
        shown += done.stdout + done.stderr
    assert "\x1b" not in shown and "\x07" not in shown and "sk-live-1234567890abcdef" not in shown
    assert "\nforged line" not in shown
