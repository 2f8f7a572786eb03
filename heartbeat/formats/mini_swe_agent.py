"""mini-swe-agent trajectory JSON: one action per assistant message and its bash block."""

from __future__ import annotations

import re
from typing import Any

from .common import Action, action, shell_action, text_of

NAME = "mini-swe-agent"

_BASH = re.compile(r"```bash\s*\n(.*?)\n```", re.S)
_RC = re.compile(r"<returncode>(-?\d+)</returncode>")
_OUTPUT = re.compile(r"<output>\n?(.*?)</output>", re.S)
_HEAD = re.compile(r"<output_head>\n?(.*?)</output_head>", re.S)
_TAIL = re.compile(r"<output_tail>\n?(.*?)</output_tail>", re.S)


def sniff(data: Any) -> bool:
    """A JSON object with ``messages`` whose assistant turns hold ```` ```bash ```` blocks."""
    messages = data.get("messages") if isinstance(data, dict) else None
    if not isinstance(messages, list):
        return False
    return any(
        isinstance(m, dict) and m.get("role") == "assistant" and "```bash" in text_of(m.get("content"))
        for m in messages
    )


def _output(observation: str) -> str:
    if m := _OUTPUT.search(observation):
        return m.group(1)
    head, tail = _HEAD.search(observation), _TAIL.search(observation)
    if head or tail:
        return (head.group(1) if head else "") + " ...[elided]... " + (tail.group(1) if tail else "")
    return observation


def actions(data: Any) -> list[Action]:
    """One action per assistant message: its one bash block, with the next message as the result."""
    messages = data["messages"]
    found: list[Action] = []
    for i, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        after = messages[i + 1] if i + 1 < len(messages) else None
        obs = (
            text_of(after.get("content"))
            if after is not None and after.get("role") in ("user", "tool")
            else ""
        )
        blocks = _BASH.findall(text_of(message.get("content")))
        if len(blocks) != 1:
            if after is None and not blocks:
                continue  # the final answer: no command, nothing observed
            found.append(action("(no_command)", {}, obs, "format_error"))
            continue
        rc = _RC.search(obs)
        if rc is None and "timed out" in obs:
            error: str | None = "timeout"
        elif rc is not None and rc.group(1) != "0":
            error = f"returncode {rc.group(1)}"
        else:
            error = None
        found.append(shell_action(blocks[0], _output(obs) if rc is not None else obs, error))
    return found
