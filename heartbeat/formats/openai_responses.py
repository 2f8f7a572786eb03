"""OpenAI Responses API items, as the OpenAI Agents SDK's ``RunResult.to_input_list()`` returns them.

A JSON list of items, or an object with ``input``, ``items`` and/or
``output`` lists (read in that order: a saved request, then its response).
A ``function_call`` (or ``custom_tool_call``, ``computer_call``,
``local_shell_call``, ``shell_call``, ``apply_patch_call``) is one action,
its result the ``*_output`` item with the same ``call_id``; a hosted tool
call (``web_search_call``, ``file_search_call``, ``code_interpreter_call``,
``mcp_call``, ``image_generation_call``) is one action with what it
carries. Errors: a result starting with "Error" or with the Agents SDK's
"An error occurred while running the tool", status ``failed``, an MCP
``error``, a shell command's non-zero exit or timeout. An assistant
``message`` followed by a user message is a ``respond`` action. A saved
response's ``usage`` and ``model`` are the spend of its output's heartbeat.
"""

from __future__ import annotations

from typing import Any

from .common import (
    Action,
    Calls,
    action,
    as_args,
    failed_text,
    objects,
    respond,
    result_text,
    shell_action,
    text_of,
)

NAME = "openai-responses"

USAGE = "heartbeat.usage"
"""An item another format puts among the items: ``{"type": USAGE, "usage": {...}, "model": ...}``."""

# Calls answered by a "<type>_output" item with the same call_id, and hosted calls that carry their result.
_PAIRED = frozenset(["function", "custom_tool", "computer", "local_shell", "shell", "apply_patch"])
_HOSTED = frozenset(["web_search", "file_search", "code_interpreter", "mcp", "image_generation"])


def _kind(item: dict[str, Any]) -> tuple[str, str]:
    """What an item is: ("call" | "hosted" | "output" | "", its type)."""
    kind = item.get("type")
    if not isinstance(kind, str):
        return "", ""
    base = kind.removesuffix("_output").removesuffix("_call")
    if kind.endswith("_call_output") and base in _PAIRED:
        return "output", kind
    if kind.endswith("_call"):
        return ("call" if base in _PAIRED else "hosted" if base in _HOSTED else ""), kind
    return "", kind


def _items(data: Any) -> list[Any] | None:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        lists = [data[k] for k in ("input", "items", "output") if isinstance(data.get(k), list)]
        return [item for part in lists for item in part] if lists else None
    return None


def sniff(data: Any) -> bool:
    """Items with a ``type`` only the Responses API uses: a tool call or a tool call's output."""
    return any(isinstance(i, dict) and _kind(i)[0] for i in _items(data) or [])


def _hosted(item: dict[str, Any]) -> Action:
    """A hosted tool call, with the result it carries."""
    kind, error = str(item["type"]), item.get("error")
    label = "tool_error" if item.get("status") == "failed" or error else None
    if kind == "mcp_call":
        label = (error.get("type") if isinstance(error, dict) else None) or label
        output = item.get("output") if error is None else result_text(error)
        return action(str(item.get("name") or "(unknown)"), as_args(item.get("arguments")), output, label)
    # file search results and code interpreter outputs: their texts, logs or image urls
    parts = objects(item.get("results") or item.get("outputs") or [], "result")
    output = "\n".join(str(p.get("text") or p.get("logs") or p.get("url") or "") for p in parts) or None
    if kind == "web_search_call":
        args: dict[str, Any] = dict(item.get("action") or {})  # its results come in the next message
    elif kind == "file_search_call":
        args = {"queries": item.get("queries")}
    elif kind == "code_interpreter_call":
        args = {"code": item.get("code")}
    else:  # image generation: the image itself, base64
        args, output = {"prompt": item.get("revised_prompt")}, item.get("result")
    return action(kind.removesuffix("_call"), args, output, label)


def _call(calls: Calls, item: dict[str, Any]) -> None:
    kind, call_id = item["type"], item.get("call_id") or item.get("id")
    if kind in ("local_shell_call", "shell_call"):
        act = item.get("action") or {}
        # local_shell: one argv; shell: a list of command lines
        words = act.get("command") if kind == "local_shell_call" else act.get("commands")
        cmd = (" " if kind == "local_shell_call" else "\n").join(map(str, words or []))
        shell = shell_action(cmd, None, None)
        calls.call(call_id, shell["tool"], shell["args"])
    elif kind == "computer_call":
        calls.call(call_id, "computer", dict(item.get("action") or {"actions": item.get("actions")}))
    elif kind == "apply_patch_call":
        calls.call(call_id, "apply_patch", dict(item.get("operation") or {}))
    else:
        raw = item.get("arguments") if kind == "function_call" else {"input": item.get("input")}
        calls.call(call_id, str(item.get("name") or "(unknown)"), as_args(raw))


def _result(calls: Calls, item: dict[str, Any]) -> None:
    out, error = item.get("output"), None
    if isinstance(out, dict):  # a computer call's screenshot
        out = out.get("image_url") or out.get("file_id")
    elif isinstance(out, list) and out and all(isinstance(o, dict) and "outcome" in o for o in out):
        outcomes = [o["outcome"] or {} for o in out]  # a shell call: one per command
        out = "".join(str(o.get("stdout") or "") + str(o.get("stderr") or "") for o in out)
        codes = [o.get("exit_code") for o in outcomes if o.get("type") == "exit" and o.get("exit_code")]
        error = "timeout" if any(o.get("type") == "timeout" for o in outcomes) else None
        error = error or (f"returncode {codes[0]}" if codes else None)
    text = None if out is None else result_text(out)
    if item.get("status") == "failed" or failed_text(text):
        error = error or "tool_error"
    calls.result(item.get("call_id") or item.get("id"), text, error)


def actions(data: Any) -> list[Action]:
    """One action per tool call and per message to the user."""
    items = objects(_items(data), "item")
    calls = Calls()
    # A saved response's usage (its model calls' tokens) goes with the first action of its output.
    response = data.get("usage") if isinstance(data, dict) else None
    output = data.get("output") if isinstance(data, dict) else None
    start = len(items) - len(output) if response is not None and isinstance(output, list) else None
    for i, item in enumerate(items):
        if i == start:
            calls.usage(response, data.get("model"))
        if item.get("type") == USAGE:
            calls.usage(item.get("usage"), item.get("model"))
            continue
        role, kind = _kind(item)
        if role == "call":
            _call(calls, item)
        elif role == "hosted":
            calls.add(_hosted(item))
        elif role == "output":
            _result(calls, item)
        elif item.get("role") == "assistant" and kind in ("", "message"):
            after = items[i + 1] if i + 1 < len(items) else None
            if after is not None and after.get("role") == "user":
                answer = text_of(after.get("content"))
                calls.add(respond(text_of(item.get("content")), answer))
    return calls.finished()
