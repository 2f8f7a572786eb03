"""SWE-agent ``.traj`` files: one action per trajectory step.

SWE-agent stores no exit code, so the error label is read from the
observation text (a traceback, a failed edit, a missing file, ...).
"""

from __future__ import annotations

import re
from typing import Any

from .common import Action, action, shell_action

NAME = "swe-agent"

_ERRORS = [
    ("edit_no_match", re.compile(r"^No replacement was performed")),
    ("edit_file_exists", re.compile(r"^File already exists at")),
    ("editor_invalid", re.compile(r"^(Invalid `|The path \S+ does not exist|The `view_range` parameter)")),
    ("usage", re.compile(r"^usage: |: error: (argument|unrecognized|the following)", re.M)),
    ("timeout", re.compile(r"(timed out|took (too long|more than \d+ seconds)|was cancelled)", re.I)),
    ("syntax_error", re.compile(r"^\s*(SyntaxError|IndentationError):", re.M)),
    ("python_exception", re.compile(r"Traceback \(most recent call last\)")),
    ("command_not_found", re.compile(r"command not found")),
    ("no_such_file", re.compile(r"No such file or directory")),
    ("tests_failed", re.compile(r"(=+ .*\b\d+ (failed|errors?)\b.* =+$|^FAILED \()", re.M)),
]
_EXIT = re.compile(r"EXITCODESTART-?\d+EXITCODEEND")


def sniff(data: Any) -> bool:
    """A JSON object with a ``trajectory`` list of steps that have an ``action``."""
    steps = data.get("trajectory") if isinstance(data, dict) else None
    return isinstance(steps, list) and all(isinstance(s, dict) and "action" in s for s in steps[:3])


def error_label(observation: str) -> str | None:
    """The failure an observation shows, else None."""
    for label, pattern in _ERRORS:
        if pattern.search(observation):
            return label
    return None


def actions(data: Any) -> list[Action]:
    """One action per step; the harness's closing "Exit due to ..." step is dropped."""
    found: list[Action] = []
    for step in data["trajectory"]:
        cmd = str(step.get("action") or "")
        obs = _EXIT.sub("", str(step.get("observation") or ""))
        if not cmd.strip():
            if str(step.get("thought", "")).startswith("Exit due to"):
                continue
            found.append(action("(no_command)", {}, obs, "format_error"))
            continue
        found.append(shell_action(cmd, obs, error_label(obs)))
    return found
