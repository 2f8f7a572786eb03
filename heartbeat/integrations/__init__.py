"""heartbeat inside long-running processes and agent frameworks: actions recorded as they happen.

``session`` (:class:`~heartbeat.integrations.session.Session`: a state folder's
heartbeats for a server or worker; ``stops``: why it must not go on;
``filestops``: what the agent's files say about that, read without a heartbeat;
``waiting``: the agent's waiting status as it last read ``state.json``;
``notes``: instructions it hands its callers once, and who wrote them),
``mcp_proxy`` (an MCP server's tool calls; ``mcp_upstream``: its answers as read;
``leaving``: how the proxy ends),
``otel`` (OpenTelemetry spans),
one shared core (:mod:`heartbeat.integrations.guard`) and one module per
framework, each importing its framework only when that module is imported::

    heartbeat.integrations.langchain      LangChain / LangGraph  '.[langchain]'
    heartbeat.integrations.openai_agents  OpenAI Agents SDK      '.[openai-agents]'
    heartbeat.integrations.pydantic_ai    PydanticAI             '.[pydantic-ai]'

(the extra: ``pip install -e '.[langchain]'`` in the heartbeat checkout; heartbeat is not
on PyPI yet).

Importing this package imports no framework; it is the guard's public facade.
May import :mod:`heartbeat.tick`, :mod:`heartbeat.formats` and every package
below them; not :mod:`heartbeat.replay` or :mod:`heartbeat.cli`.
"""

from __future__ import annotations

from .guard import GO, Guard, MonitorRecorder, OnStuck, Recorder, Stopped, Verdict, as_recorder, redirect_text

__all__ = [
    "GO",
    "Guard",
    "MonitorRecorder",
    "OnStuck",
    "Recorder",
    "Stopped",
    "Verdict",
    "as_recorder",
    "redirect_text",
]
