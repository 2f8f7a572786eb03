"""The MCP server's messages as the proxy reads them: an answer the SDK cannot read is an error.

The SDK drops a line from the server that is no JSON-RPC message (it logs it), so
the request that line answered waited forever, and the proxy's client with it. A
line that is JSON but no JSON-RPC object (a bare array, string, number), a
response that is not one (its result no object, neither result nor error), and
an error the server sent with no id each answer a request all the same: each
becomes a JSON-RPC error (-32603) for the request whose id it carries, or,
carrying none, for every request waiting on the server then (which one it
answered cannot be told; each is told so). The proxy then answers and records
the call as it does any protocol error. A line that is not JSON at all (a server
printing its log to stdout) answers nothing: dropped, as the SDK drops it.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from mcp.shared.message import SessionMessage
from mcp_types import INTERNAL_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from ..base.credential_text import mask_credential_text
from .leaving import EndWatch

__all__ = ["Mending"]

_EXCERPT = 200
_MAY_HAVE_RUN = " (the call may have run)"


class Mending(EndWatch):
    """The server's message stream (its end told, as :class:`EndWatch` does), each answer the SDK
    cannot read turned into an error for the request(s) it answered.

    ``waiting`` gives the ids of the requests waiting on the server; set once the client session
    that sends them exists.
    """

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        super().__init__(inner, on_end)
        self.waiting: Callable[[], Iterable[Any]] = tuple
        self._owed: deque[SessionMessage] = deque()

    async def receive(self) -> Any:
        """The next message; an unreadable answer as an error for each request it may answer."""
        while not self._owed:
            item = await super().receive()
            if isinstance(item, ValidationError):
                self._owed.extend(self._unreadable(item))
            elif isinstance(item, SessionMessage) and _orphan_error(item):
                error: Any = item.message
                said = f"MCP error {error.error.code}: {error.error.message}"
                sent = f"an error for no request (its id is null): {said}"
                self._owed.extend(_unattributed(self.waiting(), sent))
            else:
                return item
            if not self._owed:
                return item  # answers nothing (not JSON, a request it cannot read): the SDK drops it
        return self._owed.popleft()

    def _unreadable(self, exc: ValidationError) -> list[SessionMessage]:
        """The errors a line the SDK could not read stands for: none when it answers nothing."""
        errors = exc.errors()
        if any(e["type"] == "json_invalid" for e in errors):
            return []
        sent = next((e["input"] for e in errors if _whole(e["loc"], e["type"])), None)
        if isinstance(sent, dict):
            if "method" in sent:
                return []  # a request or notification, not an answer
            number = sent.get("id")
            if isinstance(number, int | str) and not isinstance(number, bool):
                text = f"the MCP server answered with what is not a JSON-RPC response: {_excerpt(sent)}"
                return _errors([number], text + _MAY_HAVE_RUN)
            return _unattributed(self.waiting(), f"a response with no id: {_excerpt(sent)}")
        if not any(e["type"] == "model_type" and len(e["loc"]) == 1 for e in errors):
            return []
        return _unattributed(self.waiting(), f"a message that is not a JSON-RPC object: {_excerpt(sent)}")


def _whole(loc: tuple[int | str, ...], kind: str) -> bool:
    """Whether a validation error's input is the whole message: a union member's own error, or a
    field missing from the message itself."""
    return (len(loc) == 1 and kind == "model_type") or (len(loc) == 2 and kind == "missing")


def _orphan_error(item: SessionMessage) -> bool:
    return isinstance(item.message, JSONRPCError) and item.message.id is None


def _excerpt(value: object) -> str:
    """What the server sent, short and masked (it reaches the model and the journal)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    cut = text[:_EXCERPT] + ("..." if len(text) > _EXCERPT else "")
    return mask_credential_text(cut)


def _unattributed(waiting: Iterable[Any], sent: str) -> list[SessionMessage]:
    """The errors for an answer that names no request (``sent``: what the server sent): said as the
    answer to the one request waiting, or, several waiting, as an answer to one of them, not known
    which (each is failed: no other answer will come for the one it answered)."""
    ids = list(waiting)
    if len(ids) == 1:
        return _errors(ids, f"the MCP server answered with {sent}{_MAY_HAVE_RUN}")
    text = (
        f"the MCP server sent {sent}, the answer to one of the {len(ids)} requests waiting on it, "
        f"which one cannot be told, so each of them ends here{_MAY_HAVE_RUN}"
    )
    return _errors(ids, text)


def _errors(ids: Iterable[Any], text: str) -> list[SessionMessage]:
    return [
        SessionMessage(JSONRPCError(jsonrpc="2.0", id=i, error=ErrorData(code=INTERNAL_ERROR, message=text)))
        for i in ids
    ]
