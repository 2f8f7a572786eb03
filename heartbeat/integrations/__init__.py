"""heartbeat inside agent frameworks: tool calls recorded as they happen, stuck runs stopped mid-way.

One shared core (:mod:`heartbeat.integrations.guard`) and one module per
framework, each importing its framework only when that module is imported::

    heartbeat.integrations.langchain      LangChain / LangGraph  'heartbeat-watchdog[langchain]'
    heartbeat.integrations.openai_agents  OpenAI Agents SDK      'heartbeat-watchdog[openai-agents]'
    heartbeat.integrations.pydantic_ai    PydanticAI             'heartbeat-watchdog[pydantic-ai]'

(the extra to ``pip install``: the distribution is ``heartbeat-watchdog``).

Importing this package imports no framework.
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
