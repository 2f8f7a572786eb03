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
    """Messages with roles, at least one assistant message carrying ``tool_calls``."""
    messages = message_list(data)
    return bool(messages) and any(
        isinstance(m, dict) and m.get("role") == "assistant" and m.get("tool_calls") for m in messages or []
    )


def actions(data: Any) -> list[Action]:
    """One action per tool call and per message to the user."""
    messages = message_list(data)
    if messages is None:
        raise ValueError("no list of messages")
    found: list[Action] = []
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
            after = messages[i + 1] if i + 1 < len(messages) else None
            if after is not None and after.get("role") == "user":
                found.append(respond(text_of(message.get("content")), text_of(after.get("content"))))
            continue
        results = []
        for later in messages[i + 1 :]:
            if later.get("role") != "tool":
                break
            results.append(later)
        used: set[int] = set()
        for k, call in enumerate(calls):
            hit = next(
                (
                    j
                    for j, r in enumerate(results)
                    if j not in used and r.get("tool_call_id") == call.get("id")
                ),
                None,
            )
            if hit is None and k < len(results) and k not in used:
                hit = k
            result = results[hit] if hit is not None else None
            if hit is not None:
                used.add(hit)
            function = call.get("function") or {}
            output = text_of(result.get("content")) if result is not None else None
            failed = result is not None and (
                bool(result.get("is_error")) or (output or "").startswith("Error")
            )
            found.append(
                action(
                    str(function.get("name") or "(unknown)"),
                    as_args(function.get("arguments")),
                    output,
                    "tool_error" if failed else None,
                )
            )
    return attach_usage(found, marks)
