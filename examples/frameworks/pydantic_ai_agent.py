"""A PydanticAI agent under heartbeat: a capability records every call and request, redirects a stuck model.

Offline: PydanticAI's own ``FunctionModel``, scripted by ``scripted.py``. As
a scheduled agent (from the repository root)::

    heartbeat run --config examples/frameworks/pydantic_ai.toml --every 1s --ticks 2

Heartbeat 1: the model searches the same query again and again; the third
identical call is answered with heartbeat's instructions instead of the
result, and the model reads them mid-run: it reads a document and saves a
note. The ``repeat`` is recorded, so the policy saves recovery instructions;
heartbeat 2 finds nothing left to do and clears them.

As a long-running process with a bare Monitor (detectors only, plus the KILL
file; no state folder)::

    python examples/frameworks/pydantic_ai_agent.py
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripted.py, when run as a script
from scripted import Tools, next_call, prompt

from heartbeat.integrations import Guard, Stopped
from heartbeat.integrations.pydantic_ai import HeartbeatCapability

HERE = Path(__file__).resolve().parent


def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """One model turn: the next call scripted.next_call picks from the conversation so far."""
    parts = [part for message in messages for part in message.parts]
    asked = next(str(p.content) for p in parts if isinstance(p, UserPromptPart))
    answers = [str(p.content) for p in parts if isinstance(p, ToolReturnPart)]
    picked = next_call(asked, answers)
    if picked is None:
        return ModelResponse(parts=[TextPart("I saved my note.")])
    return ModelResponse(parts=[ToolCallPart(picked[0], picked[1], tool_call_id=f"call{len(answers)}")])


def run(target: Any, instructions: str | None, notes: list[str]) -> str:
    """One agent run bound to ``target`` (the step's ctx, a Session, a Monitor or a Guard)."""
    tools = Tools(notes)
    agent = Agent(FunctionModel(respond), tools=[tools.search, tools.read, tools.save_note])
    watch = HeartbeatCapability(target)  # on_stuck="redirect"; every tool call and model request
    try:
        result = agent.run_sync(prompt(instructions, notes), capabilities=[watch])
    except Stopped as stop:  # killed, or still stuck after the redirections
        return str(stop)
    return str(result.output)


def step(ctx: Any) -> None:
    """The heartbeat step: one run per heartbeat; notes persist in state.json."""
    ctx.data["last_run"] = run(ctx, ctx.instructions, ctx.data.setdefault("notes", []))


def main() -> None:
    """Standalone: a Monitor kept for the process's life, with the KILL file beside this file."""
    from heartbeat import Monitor

    monitor = Monitor()
    monitor.start_tick(1)
    guard = Guard(monitor, on_stuck="redirect", kill_file=HERE / "KILL")
    notes: list[str] = []
    print(f"run: {run(guard, None, notes)}")
    print(f"notes: {notes}")
    print(f"anomalies: {[a.message for a in monitor.tick_anomalies]}")


if __name__ == "__main__":
    main()
