"""A stdio MCP server in raw JSON-RPC lines, for what the SDK's own server cannot send.

Tools: ``fast`` (a text), ``odd`` (a content type no SDK knows, and ``x-`` extension
fields on the result), ``slow`` (runs until the file named by ``RAW_MCP_RELEASE``
appears, or until the client cancels it; with the argument ``fail`` it then answers with
a JSON-RPC error of that text instead of a result; with ``exit`` the server exits instead of
answering), ``bare`` (answers with the line given as its argument ``line``, as it is, ``{id}`` in it
the request's id: a bare array, a string, a result that is no object). ``tools/list`` carries ``x-`` fields on
a tool and on the result. A resource and a prompt, and a slow one of each (``raw://slow``, the
prompt ``slow``: held as the ``slow`` tool is, until released or cancelled). Every request and every
``notifications/cancelled`` is appended to the file named by ``RAW_MCP_LOG``, one
JSON line each, so a test sees what reached the server.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

LOG = os.environ.get("RAW_MCP_LOG")
RELEASE = os.environ.get("RAW_MCP_RELEASE")
_out = threading.Lock()
_cancelled: dict[Any, threading.Event] = {}

TOOLS = [
    {
        "name": "fast",
        "description": "Answers at once.",
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
        "x-vendor": {"cost": 3, "tier": "gold"},
    },
    {"name": "odd", "inputSchema": {"type": "object"}},
    {"name": "slow", "inputSchema": {"type": "object"}},
    {"name": "bare", "inputSchema": {"type": "object", "properties": {"line": {"type": "string"}}}},
]


def log(entry: dict[str, Any]) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, sort_keys=True) + "\n")


def send(message: dict[str, Any]) -> None:
    with _out:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        sys.stdout.flush()


def slow(request_id: Any, fail: object = None, result: dict[str, Any] | None = None) -> None:
    """Run until released or cancelled; a cancelled request gets no answer (the protocol says so).

    ``fail``: the message of the protocol error it then answers with, instead of its result;
    ``result``: the result it answers with (a tool's text by default).
    """
    cancel = _cancelled.setdefault(request_id, threading.Event())
    while not cancel.is_set():
        if RELEASE and Path(RELEASE).exists():
            log({"finished": "slow"})
            if fail == "exit":
                os._exit(0)
            if fail is not None:
                send({"id": request_id, "error": {"code": -32603, "message": str(fail)}})
            else:
                answer = result or {"content": [{"type": "text", "text": "slow answer"}]}
                send({"id": request_id, "result": answer})
            return
        time.sleep(0.02)


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
            "serverInfo": {"name": "raw", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": TOOLS, "x-page": "first"}
    if method == "tools/call" and params.get("name") == "fast":
        return {"content": [{"type": "text", "text": f"fast answer to {params.get('arguments')}"}]}
    if method == "tools/call" and params.get("name") == "odd":
        blocks = [{"type": "hologram", "frames": 3}, {"type": "text", "text": "odd answer"}]
        return {"content": blocks, "isError": False, "x-trace": "t-123"}
    if method == "resources/list":
        return {"resources": [{"uri": "raw://notes", "name": "notes"}]}
    if method == "resources/read":
        return {"contents": [{"uri": "raw://notes", "text": "the notes"}]}
    if method == "prompts/list":
        return {"prompts": [{"name": "hello"}]}
    if method == "prompts/get":
        return {"messages": [{"role": "user", "content": {"type": "text", "text": "hello"}}]}
    if method == "ping":
        return {}
    raise LookupError(f"Unknown tool or method: {method} {params.get('name')!r}")


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method, params = message.get("method"), message.get("params") or {}
        if method == "notifications/cancelled":
            log({"cancelled": params.get("requestId")})
            _cancelled.setdefault(params.get("requestId"), threading.Event()).set()
            continue
        if "id" not in message:
            continue
        log({"method": method, "name": params.get("name"), "id": message["id"]})
        if method == "tools/call" and params.get("name") == "bare":
            line = str((params.get("arguments") or {}).get("line", "[]"))
            with _out:
                sys.stdout.write(line.replace("{id}", json.dumps(message["id"])) + "\n")
                sys.stdout.flush()
            continue
        if method == "tools/call" and params.get("name") == "slow":
            given = params.get("arguments") or {}
            fail = "exit" if given.get("exit") else given.get("fail")
            threading.Thread(target=slow, args=(message["id"], fail), daemon=True).start()
            continue
        if params.get("uri") == "raw://slow" or (method == "prompts/get" and params.get("name") == "slow"):
            result = answer(method, {**params, "uri": "raw://notes", "name": "hello"})
            threading.Thread(target=slow, args=(message["id"], None, result), daemon=True).start()
            continue
        try:
            send({"id": message["id"], "result": answer(method, params)})
        except LookupError as exc:
            send({"id": message["id"], "error": {"code": -32602, "message": str(exc)}})


if __name__ == "__main__":
    main()
