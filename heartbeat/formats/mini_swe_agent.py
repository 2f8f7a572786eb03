"""mini-swe-agent trajectory JSON, 1.x and 2.x: one action per command, named after the program it runs.

Three ways a trajectory holds its commands, all read here:

* 1.x: each assistant message holds one ```` ```bash ```` block; the next
  message (``user``) is the observation, ``<returncode>`` and ``<output>``.
* 2.x text mode: the same with ```` ```mswea_bash_command ```` blocks; the
  message's ``extra.actions`` lists the parsed commands, and the
  observation's ``extra`` holds ``raw_output`` and ``returncode``.
* 2.x tool calling (its default): the assistant message calls the ``bash``
  tool (``tool_calls``, and ``extra.actions`` with each ``tool_call_id``);
  each ``tool`` message with that id is its observation.

Either way the action is the program the command runs (``pytest``,
``grep``, ``sed``: :func:`~heartbeat.formats.common.shell_action`), not
``bash``, failed with ``returncode N`` when it exited non-zero. An
assistant turn with no command (or several in text mode) that the agent
answered with a format error is a ``(no_command)`` action.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .common import Action, action, shell_action, text_of

NAME = "mini-swe-agent"

_BLOCK = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.S)
_RC = re.compile(r"<returncode>(-?\d+)</returncode>")
_OUTPUT = re.compile(r"<output>\n?(.*?)</output>", re.S)
_HEAD = re.compile(r"<output_head>\n?(.*?)</output_head>", re.S)
_TAIL = re.compile(r"<output_tail>\n?(.*?)</output_tail>", re.S)


def _extra(message: object) -> dict[str, Any]:
    extra = message.get("extra") if isinstance(message, dict) else None
    return extra if isinstance(extra, dict) else {}


def _bash_calls(message: dict[str, Any]) -> list[tuple[str, str | None]]:
    """The ``bash`` tool calls of an assistant message: (command, tool_call_id)."""
    found: list[tuple[str, str | None]] = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or function.get("name") != "bash":
            continue
        raw = function.get("arguments")
        try:
            args = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            args = None
        if isinstance(args, dict) and isinstance(args.get("command"), str):
            found.append((args["command"], str(call.get("id")) if call.get("id") is not None else None))
    return found


def sniff(data: Any) -> bool:
    """A JSON object with ``messages``: a mini-swe-agent ``trajectory_format``, or command blocks."""
    messages = data.get("messages") if isinstance(data, dict) else None
    if not isinstance(messages, list):
        return False
    if str(data.get("trajectory_format") or "").startswith("mini-swe-agent"):
        return True
    return any(
        isinstance(m, dict) and m.get("role") == "assistant" and _BLOCK.search(text_of(m.get("content")))
        for m in messages
    )


def _output(observation: str) -> str:
    if m := _OUTPUT.search(observation):
        return m.group(1)
    head, tail = _HEAD.search(observation), _TAIL.search(observation)
    if head or tail:
        return (head.group(1) if head else "") + " ...[elided]... " + (tail.group(1) if tail else "")
    return observation


def _result(observation: dict[str, Any] | None) -> tuple[str, str | None]:
    """An observation message as (output, error): 2.x's ``extra`` when it has one, else its text."""
    if observation is None:
        return "", None
    extra = _extra(observation)
    text = text_of(observation.get("content"))
    code = extra.get("returncode")
    if "raw_output" in extra and (code is None or isinstance(code, int)):
        output = str(extra.get("raw_output") or "")
        info = str(extra.get("exception_info") or "")
        if "timed out" in info or "timeout" in info.lower():
            return output, "timeout"
        return output, f"returncode {code}" if code not in (0, None) else None
    rc = _RC.search(text)
    if rc is None:
        return text, "timeout" if "timed out" in text else None
    return _output(text), f"returncode {rc.group(1)}" if rc.group(1) != "0" else None


def _observations(messages: list[Any], i: int) -> tuple[list[dict[str, Any]], int | None]:
    """What answered assistant message ``i``: its ``tool`` messages, and where the next ``user`` one is."""
    tools: list[dict[str, Any]] = []
    for j in range(i + 1, len(messages)):
        later = messages[j]
        if not isinstance(later, dict) or later.get("role") not in ("tool", "user"):
            break
        if later.get("role") == "user":
            return tools, j
        tools.append(later)
    return tools, None


def _format_error(message: object) -> bool:
    """A 2.x format-error message (its model reply, with no command, is not kept before it)."""
    return _extra(message).get("interrupt_type") == "FormatError"


def actions(data: Any) -> list[Action]:
    """One action per command an assistant message ran, with its observation as the result."""
    messages = data["messages"]
    found: list[Action] = []
    answered: set[int] = set()  # format-error messages already taken with the reply they answer
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        if message.get("role") == "user" and _format_error(message) and i not in answered:
            found.append(action("(no_command)", {}, text_of(message.get("content")), "format_error"))
            continue
        if message.get("role") != "assistant":
            continue
        tools, at = _observations(messages, i)
        calls = _bash_calls(message)
        if calls:  # 2.x tool calling: each call answered by the tool message with its id
            by_id = {str(t.get("tool_call_id")): t for t in tools}
            for k, (command, call_id) in enumerate(calls):
                answer = by_id.get(str(call_id)) if call_id is not None else None
                if answer is None and k < len(tools):
                    answer = tools[k]
                output, error = _result(answer)
                found.append(shell_action(command, output, error))
            continue
        listed = _extra(message).get("actions")
        commands = (
            [str(a["command"]) for a in listed if isinstance(a, dict) and "command" in a]
            if isinstance(listed, list)
            else _BLOCK.findall(text_of(message.get("content")))
        )
        after = messages[at] if at is not None else (tools[0] if tools else None)
        if len(commands) != 1:
            if after is None and not commands:
                continue  # the final answer: no command, nothing observed
            if at is not None and _format_error(after):
                answered.add(at)
            text = text_of(after.get("content")) if after is not None else ""
            found.append(action("(no_command)", {}, text, "format_error"))
            continue
        output, error = _result(after)
        found.append(shell_action(commands[0], output, error))
    return found
