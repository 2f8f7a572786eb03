"""Anthropic Messages API transcripts: ``tool_use`` blocks and their ``tool_result`` blocks.

A JSON list of messages, or an object with a ``messages`` list (a saved
request). Each ``tool_use`` block of an assistant message is one action,
its result the ``tool_result`` block with the same ``tool_use_id`` (in
the next user message); ``content`` is a string or a list of blocks, text
kept. Server and MCP tools (``server_tool_use``, ``mcp_tool_use``) pair the
same way with their ``*_tool_result`` blocks. Errors: ``is_error``, a
result text starting with "Error", a server tool result's ``error_code``
(that code is the error) or code execution's non-zero ``return_code``.
An assistant message without tool calls, followed by a user message, is a
``respond`` action. An assistant message saved from the API response keeps
its ``usage`` and ``model``: its tokens are the heartbeat's spend.
"""

from __future__ import annotations

from typing import Any

from .common import (
    Action,
    Calls,
    as_args,
    failed_text,
    message_list,
    objects,
    respond,
    result_text,
    text_of,
)

NAME = "anthropic"

USES = ("tool_use", "server_tool_use", "mcp_tool_use")
"""The block types of a tool call, each one action."""


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def sniff(data: Any) -> bool:
    """Messages with roles, at least one assistant message holding a ``tool_use`` block."""
    return any(
        isinstance(m, dict)
        and m.get("role") == "assistant"
        and any(b.get("type") in USES for b in _blocks(m))
        for m in message_list(data) or []
    )


def _result(calls: Calls, block: dict[str, Any]) -> None:
    content = block.get("content")
    # a server tool's result is an object: an error carries its code, code execution its output
    found = content if isinstance(content, dict) else {}
    code, rc = found.get("error_code"), found.get("return_code")
    error = None
    if code:
        text, error = str(code), str(code)
    elif rc is not None:
        text = str(found.get("stdout") or "") + str(found.get("stderr") or "")
        error = f"returncode {rc}" if rc else None
    else:
        text = result_text(content)
    if error is None and (block.get("is_error") or failed_text(text)):
        error = "tool_error"
    calls.result(block.get("tool_use_id"), text, error)


def _replies(message: dict[str, Any]) -> bool:
    """Whether a message is what a person wrote (no tool results in it)."""
    return message.get("role") == "user" and not any(
        str(b.get("type", "")).endswith("tool_result") for b in _blocks(message)
    )


def actions(data: Any) -> list[Action]:
    """One action per tool use and per message to the user."""
    messages = objects(message_list(data), "message")
    calls = Calls()
    for i, message in enumerate(messages):
        used = False
        if message.get("role") == "assistant":  # an API response kept as is: its usage and model
            calls.usage(message.get("usage"), message.get("model"))
        for block in _blocks(message):
            kind = str(block.get("type", ""))
            if kind in USES:
                used = True
                calls.call(
                    block.get("id"), str(block.get("name") or "(unknown)"), as_args(block.get("input"))
                )
            elif kind.endswith("tool_result"):
                _result(calls, block)
        after = messages[i + 1] if i + 1 < len(messages) else None
        if message.get("role") == "assistant" and not used and after is not None and _replies(after):
            reply = text_of(message.get("content"))
            calls.add(respond(reply, text_of(after.get("content"))))
    return calls.finished()
