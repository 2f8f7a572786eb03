"""What every import format produces, and the shell-command helpers the coding-agent formats share."""

from __future__ import annotations

import json
import os
import re
import shlex
from typing import Any, TypedDict

__all__ = ["Action", "action", "as_args", "shell_action", "text_of"]


class Action(TypedDict):
    """One recorded action, as a trace line's action holds it."""

    tool: str
    args: dict[str, Any]
    output: str | None
    error: str | None


_CD = re.compile(r"^\s*cd\s+[^&;|\n]+?\s*(&&|;)\s*")
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")


def action(tool: str, args: dict[str, Any], output: object, error: str | None) -> Action:
    """An Action with ``output`` as text (None stays None)."""
    return {
        "tool": tool or "(unknown)",
        "args": args,
        "output": None if output is None else str(output),
        "error": error,
    }


def text_of(content: object) -> str:
    """A message's text: a string as is, a list of parts joined by their ``text``."""
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def as_args(raw: object) -> dict[str, Any]:
    """Tool-call arguments as a dict: a JSON text is parsed, anything else wrapped."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return {"raw": raw}
        return value if isinstance(value, dict) else {"value": value}
    return {} if raw is None else {"value": raw}


def _strip_cd(cmd: str) -> str:
    s = cmd.strip()
    while m := _CD.match(s):
        s = s[m.end() :].lstrip()
    return s


def shell_action(cmd: str, output: object, error: str | None) -> Action:
    """A shell command as an action: tool = the program it runs, args = ``{"cmd": command}``."""
    s = _strip_cd(cmd)
    tool = "(empty)"
    if s:
        first = s.splitlines()[0]
        try:
            words = shlex.split(first, posix=True)
        except ValueError:
            words = first.split()
        for word in words:
            if not _ENV.match(word):
                tool = os.path.basename(word) or word
                break
    return action(tool, {"cmd": s}, output, error)
