"""PydanticAI message history, as ``ModelMessagesTypeAdapter.dump_json(result.all_messages())`` writes it.

A JSON list of messages (or an object with a ``messages`` list), each
``kind`` ``request`` or ``response`` with its ``parts``. A ``tool-call``
(or ``builtin-tool-call``) part is one action, ``args`` a dict or a JSON
text; its result the ``tool-return`` (``builtin-tool-return``) part with
the same ``tool_call_id``. Errors: a return whose ``outcome`` is
``failed`` or ``retried`` (the error is the retry's cause: ``model_retry``,
``validation_error``, ``unknown_tool``), and the ``retry-prompt`` part of
older versions. A response with only text, followed by a user prompt, is a
``respond`` action. Each response's ``usage`` (``RequestUsage``) and
``model_name`` are the heartbeat's spend.
"""

from __future__ import annotations

from typing import Any

from .common import Action, Calls, as_args, message_list, objects, respond, result_text

NAME = "pydantic-ai"

_CALLS = ("tool-call", "builtin-tool-call")
_RETURNS = ("tool-return", "builtin-tool-return")


def sniff(data: Any) -> bool:
    """Messages of ``kind`` request/response with ``parts``, at least one a response."""
    messages = message_list(data) or []
    return any(
        isinstance(m, dict) and m.get("kind") == "response" and isinstance(m.get("parts"), list)
        for m in messages
    ) and all(isinstance(m, dict) and m.get("kind") in ("request", "response") for m in messages)


def _error(part: dict[str, Any]) -> str | None:
    """What went wrong, as the part says it (None: the call succeeded)."""
    if part.get("part_kind") == "retry-prompt":  # before pydantic-ai 2.x: a retry is its own part
        content = part.get("content")
        if isinstance(content, list):
            return "validation_error"
        return "unknown_tool" if str(content).startswith("Unknown tool name") else "model_retry"
    outcome = part.get("outcome") or "success"
    if outcome not in ("failed", "retried"):
        return None  # 'denied' and 'interrupted' are results whose content says what happened
    retry = part.get("retry")
    cause = retry.get("cause") if isinstance(retry, dict) else None
    return str(cause or ("tool_error" if outcome == "failed" else "retried"))


def _text(message: dict[str, Any], kind: str) -> str | None:
    """The joined content of the message's parts of ``kind``, None when it has none."""
    parts = [p for p in objects(message.get("parts"), "part") if p.get("part_kind") == kind]
    return "".join(result_text(p.get("content")) for p in parts) if parts else None


def actions(data: Any) -> list[Action]:
    """One action per tool call and per answer to the user."""
    messages = objects(message_list(data), "message")
    calls = Calls()
    for i, message in enumerate(messages):
        parts = objects(message.get("parts"), "part")
        made = False
        if message.get("kind") == "response":  # a ModelResponse: its RequestUsage and model
            calls.usage(message.get("usage"), message.get("model_name"))
        for part in parts:
            kind = part.get("part_kind")
            if kind in _CALLS:
                made = True
                calls.call(
                    part.get("tool_call_id"),
                    str(part.get("tool_name") or "(unknown)"),
                    as_args(part.get("args")),
                )
            elif kind in _RETURNS or (kind == "retry-prompt" and part.get("tool_name")):
                calls.result(part.get("tool_call_id"), result_text(part.get("content")), _error(part))
        if message.get("kind") != "response" or made:
            continue
        text = _text(message, "text")
        after = messages[i + 1] if i + 1 < len(messages) else None
        answer = _text(after, "user-prompt") if after is not None else None
        if text is not None and answer is not None:
            calls.add(respond(text, answer))
    return calls.finished()
