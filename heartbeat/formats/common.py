"""What every import format produces, and the helpers formats share.

Shell commands for the coding-agent formats; for the tool-calling formats
(calls and results matched by id), :class:`Calls`, :func:`result_text`
and :func:`failed_text`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from typing import Any, NotRequired, TypedDict

__all__ = [
    "Action",
    "Calls",
    "ModelUsage",
    "action",
    "as_args",
    "attach_usage",
    "failed_text",
    "message_list",
    "objects",
    "respond",
    "result_text",
    "shell_action",
    "text_of",
    "usage_of",
]


class ModelUsage(TypedDict):
    """One model call's tokens, as a trace line's ``usage`` holds it (input includes cached)."""

    model: str
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    cost: NotRequired[float | None]
    """Dollars, when the history says (else priced as a live tick prices it)."""
    calls: NotRequired[int]
    """How many calls the tokens add up (one when absent)."""


class Action(TypedDict):
    """One recorded action, as a trace line's action holds it."""

    tool: str
    args: dict[str, Any]
    output: str | None
    error: str | None
    usage: NotRequired[list[ModelUsage]]
    """The model calls that led to this action (moved to the heartbeat that holds it)."""


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def usage_of(raw: object, model: object = None) -> ModelUsage | None:
    """A provider's usage object as a :class:`ModelUsage`, else None (no tokens in it).

    Knows OpenAI chat (``prompt_tokens``, ``completion_tokens``,
    ``prompt_tokens_details.cached_tokens``), OpenAI Responses and the Agents
    SDK (``input_tokens``, ``output_tokens``, ``input_tokens_details``),
    PydanticAI (``cache_read_tokens``), Codex (``cached_input_tokens``) and
    Anthropic, whose ``input_tokens`` leave out the cache reads and writes
    (``cache_read_input_tokens``, ``cache_creation_input_tokens``): they are
    added back, so the input always includes the cached tokens.
    """
    if not isinstance(raw, dict):
        return None
    given = _count(raw.get("input_tokens")) or _count(raw.get("prompt_tokens"))
    made = _count(raw.get("output_tokens")) or _count(raw.get("completion_tokens"))
    cached = _count(raw.get("cache_read_tokens")) or _count(raw.get("cached_input_tokens"))
    for details in ("prompt_tokens_details", "input_tokens_details"):
        inner = raw.get(details)
        if isinstance(inner, dict):
            cached = cached or _count(inner.get("cached_tokens"))
    if "cache_read_input_tokens" in raw or "cache_creation_input_tokens" in raw:  # Anthropic's split
        cached = _count(raw.get("cache_read_input_tokens"))
        given += cached + _count(raw.get("cache_creation_input_tokens"))
    if not given and not made:
        return None
    name = model if isinstance(model, str) and model else "unknown"
    return {"model": name, "input_tokens": given, "output_tokens": made, "cached_tokens": min(cached, given)}


def attach_usage(found: list[Action], marks: list[tuple[int, ModelUsage]]) -> list[Action]:
    """Hang each model call on the action it led to: ``marks`` holds (actions found before it, usage).

    A call after the last action (the final answer) goes with the last action.
    """
    if not found:
        return found
    for index, usage in marks:
        found[min(index, len(found) - 1)].setdefault("usage", []).append(usage)
    return found


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


def respond(reply: str, answer: str) -> Action:
    """An agent's message that the user answered: a ``respond`` action, the answer its output."""
    return action("respond", {"content": reply}, answer, None)


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


# What a tool result starts with when it reports a failure: the openai chat
# convention, and the OpenAI Agents SDK's default text for a tool that raised.
_FAILED = ("Error", "An error occurred while running the tool")


def failed_text(text: str | None) -> bool:
    """Whether a tool result's text reports a failure ("Error...", the Agents SDK's error text)."""
    return text is not None and text.startswith(_FAILED)


def result_text(content: object) -> str:
    """A tool result as text: a string as is, text parts joined, anything else as compact JSON."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list) and any(isinstance(p, dict) and "text" in p for p in content):
        return text_of(content)
    return json.dumps(content, sort_keys=True, separators=(",", ":"), default=str)


def message_list(data: Any) -> list[Any] | None:
    """A transcript's messages: the JSON list itself, or an object's ``messages`` list; None if neither."""
    messages = data.get("messages") if isinstance(data, dict) else data
    return messages if isinstance(messages, list) else None


def objects(value: object, what: str) -> list[dict[str, Any]]:
    """``value`` as a list of JSON objects; ValueError naming the first that is not one."""
    if not isinstance(value, list):
        raise ValueError(f"no list of {what}s")
    for number, item in enumerate(value, 1):
        if not isinstance(item, dict):
            raise ValueError(f"{what} {number} is not a JSON object")
    return value


class Calls:
    """Tool calls in the order they were made, each result matched to its call by id.

    A result goes to the oldest call with its id that has none yet (some
    frameworks reuse ids across turns); a call never answered keeps
    ``output`` None (not reported), a result without a call is dropped.
    """

    def __init__(self) -> None:
        self.actions: list[Action] = []
        self._open: dict[str, list[int]] = {}
        self.marks: list[tuple[int, ModelUsage]] = []

    def usage(self, raw: object, model: object = None) -> None:
        """A model call's usage (see :func:`usage_of`), for the next action found (or the last)."""
        found = usage_of(raw, model)
        if found is not None:
            self.marks.append((len(self.actions), found))

    def finished(self) -> list[Action]:
        """The actions, each model call's usage hung on the action it led to."""
        return attach_usage(self.actions, self.marks)

    def call(self, call_id: object, tool: str, args: dict[str, Any]) -> None:
        """A call made; its action waits for the result with the same id."""
        self._open.setdefault(str(call_id), []).append(len(self.actions))
        self.actions.append(action(tool, args, None, None))

    def result(self, call_id: object, output: object, error: str | None) -> bool:
        """The result of the oldest open call with this id; False when no call waits for it."""
        waiting = self._open.get(str(call_id))
        if not waiting:
            return False
        done = self.actions[waiting.pop(0)]
        done["output"] = None if output is None else str(output)
        done["error"] = error
        return True

    def add(self, done: Action) -> None:
        """An action complete in itself: a hosted tool call with its result, a reply to the user."""
        self.actions.append(done)
