"""What a command a call carries does: a bisect's step."""

from __future__ import annotations

import pytest

from heartbeat.detect.detectors import summarize
from heartbeat.detect.detectors.commands import steps_bisect


@pytest.mark.parametrize(
    ("tool", "args", "steps"),
    [
        ("bash", {"command": "git bisect good"}, True),
        ("bash", {"command": "cd /src/linux && git bisect bad 4f2a9c1"}, True),
        ("execute_bash", {"command": "git bisect skip"}, True),
        ("git", {"cmd": "git bisect new"}, True),
        ("git_bisect", {"cmd": "good"}, True),  # the program and the tool's name: git bisect good
        ("run_git", {"args": "bisect bad"}, True),
        ("git_bisect", {"cmd": "start v2.1.0 v2.0.0"}, True),  # between two: the middle checked out
        ("bash", {"command": "git bisect start"}, False),  # nothing checked out yet
        # What only reads the bisect, or no bisect at all.
        ("bash", {"command": "git bisect log"}, False),
        ("bash", {"command": "git bisect visualize --oneline"}, False),
        ("git_bisect", {"cmd": "log"}, False),
        ("python", {"cmd": "python -c 'import bisect; print(bisect.bisect_left([1, 2], 2))'"}, False),
        ("search", {"q": "git bisect good bad"}, False),
    ],
)
def test_a_bisect_step_is_read_where_a_call_carries_it(
    tool: str, args: dict[str, object], steps: bool
) -> None:
    """``steps_bisect`` reads ``git bisect good|bad|skip`` in a command, a shell's call or a tool
    named for git: each checks out the next commit. Its log, or a search's words, check out none."""
    assert steps_bisect(tool, summarize(tool, args)) is steps
