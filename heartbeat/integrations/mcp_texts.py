"""What ``heartbeat mcp-proxy`` tells the model, and what a raw tool result says (for the detectors).

The proxy passes results as the server sent them (raw JSON, so extension
fields and content types the SDK does not know go through); these functions
read those dicts and build the proxy's own answers, each true to what
happened: a call that was not made says so, a call that ran says so.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

from ..core.models import REFUSED, Anomaly
from .redirects import NOT_RUN, WITHHELD, call_key
from .session import Session, Stop, Stopped

__all__ = [
    "after_stop_note",
    "cancelled_text",
    "closing_text",
    "error_result",
    "redirect_text",
    "refusal_text",
    "refused_again",
    "result_text",
]

_STOPPED = {
    "needs_human": "the agent now waits for a human",
    "paused": "the agent is now paused",
}
# What the recorded output of a non-text content block says (only its length matters to detectors).
_BLOCK_LABELS = {"image": "[image]", "audio": "[audio]", "resource_link": "[resource link]"}


def refusal_text(stop: Stop, what: str | None = None) -> str:
    """The error text of a request that was not forwarded, and why (``what``: what did not happen,
    a tool call when None)."""
    not_done = what or "the tool was not called"
    if stop.kind == "killed":
        return (
            f"heartbeat: {not_done}: this agent was {stop.message}. "
            "Nothing will be forwarded until a person lifts that stop (removes the KILL file, or "
            "releases the fleet stop). Stop here and tell the user what you were doing."
        )
    if stop.kind == "needs_human":
        return (
            f"heartbeat: this agent is waiting for a human, so {not_done}. "
            f"{stop.message}\nStop calling tools; tell the user what you were trying to do and where "
            "you are stuck."
        )
    if stop.kind == "paused":
        return (
            f"heartbeat: this agent is paused ({stop.message}); {not_done}. "
            "Stop calling tools until a person resumes it."
        )
    if what is None:  # a tool call: the state folder could not take it
        return f"heartbeat: the call could not be recorded, so it was not made: {stop.message}"
    return f"heartbeat: {what}: this agent's state folder cannot be used now: {stop.message}"


def closing_text(what: str | None = None) -> str:
    """The error text of a request that came once the proxy was exiting (SIGTERM, its server gone):
    not forwarded (``what``: what did not happen, a tool call when None)."""
    return (
        f"heartbeat: {what or 'the tool was not called'}: the proxy in front of this MCP server is "
        "shutting down and forwards nothing more. Stop here and tell the user what you were doing."
    )


def cancelled_text(stop: Stop, what: str | None = None) -> str:
    """The answer to a request that was running when KILL (or the fleet stop) came: it was cancelled.

    ``what``: what did not happen (a resource read, a prompt); a tool call when None, which may
    have acted.
    """
    if what is not None:
        return (
            f"heartbeat: {what}: it was under way when this agent was {stop.message}, and the server "
            "was told to cancel it. Nothing will be forwarded until a person lifts that stop. Stop "
            "here and tell the user what you were doing."
        )
    return (
        f"heartbeat: this tool call was running when this agent was {stop.message}. The server was "
        "told to cancel it, so it may have run in part or in full; its result is not known. "
        "No tool will be called until a person lifts that stop. Stop here and tell the user what "
        "you were doing."
    )


def after_stop_note(stop: Stop, failed: str | None = None) -> str:
    """The text block added to the result of a call that ran while the agent was stopped or paused.

    ``failed``: the protocol error the server answered the call with (no result came); the text
    is then the whole answer, saying that error as it is before the stop.
    """
    ran = "its result is above" if failed is None else f"the server answered it with an error ({failed})"
    return (
        f"heartbeat: this call ran and {ran}, but meanwhile {_now(stop, aside=True)}. "
        "No further tool will be called: stop here and tell the user what you were doing."
    )


def redirect_text(anomaly: Anomaly, session: Session, failed: str | None = None, *, ran: bool = True) -> str:
    """The error text that replaces the result of a call that tripped a detector.

    ``failed``: the protocol error the server answered the call with (there was
    no result to withhold), said as it is before the instructions; ``ran``: False
    for a call refused before it reached the server.
    """
    stop = session.stopped
    outcome = _outcome(failed, ran)
    if anomaly.kind == "budget":  # not stuck: the agent spent what it may (and is paused for it)
        now = f", and {_now(stop, aside=False)}" if stop else ""
        return (
            f"heartbeat: this agent went past its budget ({anomaly.message}). {outcome}"
            f"{now}\nStop calling tools; tell the user what you were doing."
        )
    if stop is not None:  # that heartbeat escalated or paused (or a KILL came meanwhile): say so
        return (
            f"heartbeat: you look stuck: {anomaly.message}. {outcome}, and {_now(stop, aside=False)}\n"
            "Stop calling tools; tell the user what you were trying to do and where you are stuck."
        )
    instructions = session.instructions
    if instructions:
        return f"{outcome}.\n{instructions}"
    return (
        f"heartbeat: {anomaly.message}. {outcome}. "
        "Try a different approach: another tool, other arguments or another source."
    )


def _now(stop: Stop, *, aside: bool) -> str:
    """What became of the agent meanwhile, with the stop's own message (``aside``: in brackets).

    A KILL's message says it whole (``stopped by the KILL file <path>: why``, as every part says it).
    """
    if stop.kind == "killed":
        return f"this agent was {stop.message}"
    now = _STOPPED.get(stop.kind, "the agent is stopped")
    return f"{now} ({stop.message})" if aside else f"{now}: {stop.message}"


def refused_again(
    session: Session, told: dict[tuple[str, str], Anomaly], name: str, arguments: dict[str, Any] | None
) -> types.CallToolResult | None:
    """The answer to a call the model was told not to make again (``told``: the calls it was
    redirected from), asked again while that recovery stands: refused before it reaches the server,
    journaled as refused (a repeat at once) and said so, as the adapters do; None to forward it
    (the recovery is over: the calls it named may go again, and ``told`` is emptied)."""
    if session.instructions is None:
        told.clear()
        return None
    earlier = told.get(call_key(name, arguments))
    if earlier is None:
        return None
    try:
        anomaly = session.record(name, arguments, error=REFUSED)
    except Stopped as exc:  # the heartbeat could not open (KILL, a pause, a human awaited): nothing ran
        return error_result(refusal_text(exc.stop))
    return error_result(redirect_text(anomaly or earlier, session, ran=False))


def _outcome(failed: str | None, ran: bool = True) -> str:
    """What became of the call's answer: its result withheld, the protocol error it was instead, or
    nothing (refused before it ran)."""
    if not ran:
        return NOT_RUN
    if failed is None:
        return WITHHELD
    return f"The server answered this call with an error, not a result ({failed})"


def result_text(result: dict[str, Any]) -> str:
    """What a raw result says, as one text: its text blocks, else labels, else its structured content."""
    parts: list[str] = []
    content = result.get("content")
    for block in content if isinstance(content, list) else ():
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif kind == "resource":
            resource = block.get("resource")
            text = resource.get("text") if isinstance(resource, dict) else None
            parts.append(text if isinstance(text, str) else "[resource]")
        else:
            parts.append(_BLOCK_LABELS.get(str(kind), f"[{kind}]" if isinstance(kind, str) else "[content]"))
    structured = result.get("structuredContent")
    if not parts and structured is not None:
        return json.dumps(structured, sort_keys=True, default=str)
    return "\n".join(parts)


def error_result(text: str) -> types.CallToolResult:
    """A ``tools/call`` result of the proxy's own: one text block, ``is_error``."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
