"""LangChain messages, as ``langchain_core.messages.messages_to_dict`` writes them, and LangGraph state.

A JSON list of messages, an object with a ``messages`` list (a LangGraph
state), or one with ``values.messages`` (a LangGraph server's thread
state). A message is ``{"type": "ai", "data": {...}}``
(``messages_to_dict``), the ``lc`` constructor form of ``dumpd`` (its
``kwargs``), or the flat ``model_dump()``. Each entry of an AI message's
``tool_calls`` (name, args, id) is one action, its result the ``tool``
message with the same ``tool_call_id``; an ``invalid_tool_calls`` entry
is an action failed with ``invalid_tool_call``. Errors: ``status``
``error`` (what ``ToolNode`` sets when a tool raised), a result starting
with "Error". An AI message without tool calls, followed by a human
message, is a ``respond`` action.
"""

from __future__ import annotations

from typing import Any

from .common import Action, Calls, action, as_args, failed_text, objects, respond, result_text, text_of

NAME = "langchain"

_AI = ("ai", "AIMessageChunk")
_TOOL = ("tool", "ToolMessageChunk")
_HUMAN = ("human", "HumanMessageChunk")


def _messages(data: Any) -> list[Any] | None:
    if isinstance(data, dict):
        values = data.get("values")
        data = values.get("messages") if isinstance(values, dict) else data.get("messages")
    return data if isinstance(data, list) else None


def _fields(message: Any) -> dict[str, Any] | None:
    """A message's own fields, whichever of the three dumps it comes from (None: not a message)."""
    if not isinstance(message, dict):
        return None
    inner = message.get("data") if "data" in message else message.get("kwargs", message)
    if not isinstance(inner, dict):
        return None
    kind = inner.get("type") or message.get("type")  # dumpd's kwargs keep the message's own type
    return {**inner, "type": kind} if isinstance(kind, str) else None


def sniff(data: Any) -> bool:
    """LangChain messages (typed ``ai``, ``tool``, ``human``, ...), at least one from the AI."""
    return any((_fields(m) or {}).get("type") in _AI for m in _messages(data) or [])


def _calls_of(calls: Calls, fields: dict[str, Any]) -> bool:
    """Record an AI message's tool calls; whether it made any."""
    made = objects(fields.get("tool_calls") or [], "tool call")
    for call in made:
        calls.call(call.get("id"), str(call.get("name") or "(unknown)"), as_args(call.get("args")))
    bad = objects(fields.get("invalid_tool_calls") or [], "invalid tool call")
    for call in bad:
        tool = str(call.get("name") or "(unknown)")
        calls.add(action(tool, as_args(call.get("args")), call.get("error"), "invalid_tool_call"))
    return bool(made or bad)


def actions(data: Any) -> list[Action]:
    """One action per tool call and per answer to the user."""
    found = objects(_messages(data), "message")
    messages: list[dict[str, Any]] = []
    for number, message in enumerate(found, 1):
        fields = _fields(message)
        if fields is None:
            raise ValueError(f"message {number} is not a LangChain message")
        messages.append(fields)
    calls = Calls()
    for i, fields in enumerate(messages):
        kind = fields["type"]
        if kind in _TOOL:
            text = result_text(fields.get("content"))
            failed = fields.get("status") == "error" or failed_text(text)
            calls.result(fields.get("tool_call_id"), text, "tool_error" if failed else None)
        elif kind in _AI and not _calls_of(calls, fields):
            after = messages[i + 1] if i + 1 < len(messages) else None
            if after is not None and after["type"] in _HUMAN:
                reply = text_of(fields.get("content"))
                calls.add(respond(reply, text_of(after.get("content"))))
    return calls.actions
