"""OpenAI-style chat messages with ``tool_calls``: what most agent frameworks can dump.

A JSON list of messages, or an object with a ``messages`` list. Each tool
call of an assistant message is one action, its result the ``tool``
message with the same ``tool_call_id`` (else the next one in order); a
result starting with "Error" or flagged ``is_error`` counts as an error.
An assistant message without tool calls, followed by a user message, is a
``respond`` action whose output is what the user answered. An assistant
message that keeps its completion's ``usage`` (and ``model``, or the
object's) adds its tokens to the heartbeat's spend.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from .common import (
    Action,
    ModelUsage,
    action,
    as_args,
    attach_usage,
    message_list,
    respond,
    text_of,
    usage_of,
)

NAME = "openai"


def sniff(data: Any) -> bool:
    """Messages with roles, at least one assistant message carrying ``tool_calls`` (not mini-swe-agent's)."""
    if isinstance(data, dict) and str(data.get("trajectory_format") or "").startswith("mini-swe-agent"):
        return False  # its tool calls run ``bash``: the mini-swe-agent format reads the programs
    messages = message_list(data)
    return bool(messages) and any(
        isinstance(m, dict) and m.get("role") == "assistant" and m.get("tool_calls") for m in messages or []
    )


def actions(data: Any) -> list[Action]:
    """One action per tool call and per message to the user (linear in the calls and messages)."""
    messages = message_list(data)
    if messages is None:
        raise ValueError("no list of messages")
    found: list[Action] = []
    count = len(messages)
    marks: list[tuple[int, ModelUsage]] = []
    model = data.get("model") if isinstance(data, dict) else None
    for i, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        spent = usage_of(message.get("usage"), message.get("model") or model)
        if spent is not None:
            marks.append((len(found), spent))
        calls = message.get("tool_calls") or []
        if not calls:
            after = messages[i + 1] if i + 1 < count else None
            if after is not None and after.get("role") == "user":
                found.append(respond(text_of(message.get("content")), text_of(after.get("content"))))
            continue
        end = i + 1
        while end < count and messages[end].get("role") == "tool":
            end += 1
        results = messages[i + 1 : end]
        found += _matched(calls, results)
    return attach_usage(found, marks)


def _matched(calls: list[Any], results: list[Any]) -> list[Action]:
    """Each call with its result: the first unused one with its id, else the one at its position."""
    by_id: dict[object, deque[int]] = {}
    for j, result in enumerate(results):
        by_id.setdefault(_key(result.get("tool_call_id")), deque()).append(j)
    used = [False] * len(results)
    found: list[Action] = []
    for k, call in enumerate(calls):
        hit: int | None = None
        waiting = by_id.get(_key(call.get("id")))
        while waiting:
            j = waiting.popleft()
            if not used[j]:
                hit = j
                break
        if hit is None and k < len(results) and not used[k]:
            hit = k
        result = results[hit] if hit is not None else None
        if hit is not None:
            used[hit] = True
        function = call.get("function") or {}
        output = text_of(result.get("content")) if result is not None else None
        failed = result is not None and (bool(result.get("is_error")) or (output or "").startswith("Error"))
        found.append(
            action(
                str(function.get("name") or "(unknown)"),
                as_args(function.get("arguments")),
                output,
                "tool_error" if failed else None,
            )
        )
    return found


def _key(value: object) -> object:
    """An id as a dict key: JSON ids are text or numbers; anything else by its canonical JSON."""
    if value is None or isinstance(value, str | int | float):
        return value
    try:
        return ("json", json.dumps(value, sort_keys=True))
    except (TypeError, ValueError, RecursionError):
        return ("repr", repr(value))
