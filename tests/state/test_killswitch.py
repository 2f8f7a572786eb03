"""The KILL file: read fresh every time, its text the reason, failing closed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from heartbeat.state.killswitch import KillSwitch


def test_absent_file_is_no_kill(tmp_path: Path) -> None:
    """No KILL file means the agent may act."""
    assert KillSwitch(tmp_path / "KILL").reason() is None


def test_text_is_the_reason(tmp_path: Path) -> None:
    """The file's text, whitespace folded, is the reason."""
    (tmp_path / "KILL").write_text("  burning tokens\n on a dead API \n")
    assert KillSwitch(tmp_path / "KILL").reason() == "burning tokens on a dead API"


def test_empty_file_still_kills(tmp_path: Path) -> None:
    """`touch KILL` stops the agent with a default reason."""
    (tmp_path / "KILL").touch()
    assert "KILL file present" in (KillSwitch(tmp_path / "KILL").reason() or "")


def test_never_cached(tmp_path: Path) -> None:
    """Creating and removing the file is seen at once by the same object."""
    kill = KillSwitch(tmp_path / "KILL")
    assert kill.reason() is None
    (tmp_path / "KILL").write_text("stop")
    assert kill.reason() == "stop"
    os.unlink(tmp_path / "KILL")
    assert kill.reason() is None


@pytest.mark.parametrize("kind", ["directory", "symlink", "dangling symlink", "unreadable"])
def test_fails_closed(tmp_path: Path, kind: str) -> None:
    """A KILL that is a directory, a symlink or unreadable still counts."""
    path = tmp_path / "KILL"
    if kind == "directory":
        path.mkdir()
    elif kind == "symlink":
        (tmp_path / "elsewhere").write_text("secret content")
        path.symlink_to(tmp_path / "elsewhere")
    elif kind == "dangling symlink":
        path.symlink_to(tmp_path / "nothing")
    else:
        path.write_text("x")
        path.chmod(0)
        if os.access(path, os.R_OK):  # root reads anything: make it unreadable another way
            path.unlink()
            os.mkfifo(path)  # opening a FIFO would block, so it must never be read as text
            reason = KillSwitch(path).reason()
            assert reason is not None
            return
    reason = KillSwitch(path).reason()
    assert reason is not None and "secret content" not in reason


def test_engage_and_release(tmp_path: Path) -> None:
    """engage() writes the reason; release() removes it and says whether it was there."""
    kill = KillSwitch(tmp_path / "KILL")
    kill.engage("rotating keys")
    assert kill.reason() == "rotating keys"
    assert kill.release() is True
    assert kill.release() is False
    assert kill.reason() is None


ESCAPES = "stop \x1b[2J\x1b]0;owned\x07 now\u009b31m\u202e"


def test_a_reason_holding_escape_codes_reaches_no_terminal_raw(tmp_path: Path) -> None:
    """An agent can write its KILL file: its text is shown escaped, as a tool name is (no escape code)."""
    import subprocess
    import sys

    (tmp_path / "KILL").write_text(ESCAPES)
    reason = KillSwitch(tmp_path / "KILL").reason() or ""
    assert reason.isprintable() and reason.startswith("stop \\x1b[2J") and reason.endswith("31m\\u202e")
    (tmp_path / "agent.py").write_text("def step(ctx):\n    pass\n")
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "agent:step"\n')
    for command in ("tick", "status", "log"):
        shown = subprocess.run(
            [sys.executable, "-m", "heartbeat", command],
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert "stop \\x1b[2J" in shown.stdout + shown.stderr, command
        assert "\x1b" not in shown.stdout + shown.stderr and "\x07" not in shown.stdout, command


def test_a_reason_giving_a_credential_away_is_shown_masked(tmp_path: Path) -> None:
    """A KILL file's text is shown to people and in notifications: a token pasted into it is masked."""
    (tmp_path / "KILL").write_text("leaked: export OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234 rotate it\n")
    assert KillSwitch(tmp_path / "KILL").reason() == "leaked: export OPENAI_API_KEY=*** rotate it"


def test_engage_makes_the_folder_its_kill_file_is_in(tmp_path: Path) -> None:
    """An agent's own KILL file in a folder no tick made yet (``kill/a.KILL``): the operator's stop
    lands all the same (live round 43: ``heartbeat kill --agent a`` exited 2 and the agent ran on)."""
    kill = KillSwitch(tmp_path / "kill" / "a.KILL")
    with pytest.raises(FileNotFoundError):
        kill.engage("runaway")  # a path typed by hand: no folder is made where no agent reads
    assert kill.engage("runaway", make_folder=True) == "runaway"
    assert kill.reason() == "runaway"
