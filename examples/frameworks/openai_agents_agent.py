"""An OpenAI Agents SDK agent under heartbeat: run hooks record every call, tool guardrails redirect.

Offline: the SDK's own ``ScriptedModel``, scripted by ``scripted.py`` (no
API key; tracing is switched off). As a scheduled agent (from the
repository root)::

    heartbeat run --config examples/frameworks/openai_agents.toml --every 1s --ticks 2

Heartbeat 1: the model searches the same query again and again; at the
third identical call the tool guardrail answers with heartbeat's
instructions instead of the result ("try an alternative: do not call ...
again"), the model changes course, reads a document and saves a note, all
in the same run. The ``repeat`` is still recorded, so the policy saves
recovery instructions; heartbeat 2 finds nothing left to do and clears them.

As a long-running process on a state folder::

    python examples/frameworks/openai_agents_agent.py
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripted.py, when run as a script
from scripted import Tools, next_call, prompt

from heartbeat.integrations import Stopped
from heartbeat.integrations.openai_agents import HeartbeatHooks

HERE = Path(__file__).resolve().parent
MAX_TURNS = 30  # the SDK's own stop; heartbeat acts long before it

set_tracing_disabled(True)  # the default exporter would need an API key


def respond(call: Any) -> list[Any]:
    """One model turn: the next call scripted.next_call picks from the conversation so far."""
    items = call.input if isinstance(call.input, list) else [{"role": "user", "content": str(call.input)}]
    asked = next(str(i.get("content")) for i in items if isinstance(i, dict) and i.get("role") == "user")
    answers = [
        str(i["output"]) for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"
    ]
    picked = next_call(asked, answers)
    if picked is None:
        return [assistant_message("I saved my note.")]
    return [function_call(picked[0], picked[1], call_id=f"call{len(answers)}")]


def build(notes: list[str]) -> Agent[Any]:
    """The agent: three function tools and a scripted model with enough turns for any run."""
    tools = Tools(notes)
    model = ScriptedModel([ModelStep(responder=respond) for _ in range(MAX_TURNS)])
    return Agent(
        name="researcher",
        model=model,
        tools=[function_tool(f) for f in (tools.search, tools.read, tools.save_note)],
    )


def run(target: Any, instructions: str | None, notes: list[str]) -> str:
    """One run bound to ``target`` (the step's ctx, a Session or a Monitor): its answer, or why it stopped."""
    agent = build(notes)
    hooks = HeartbeatHooks(target, on_stuck="redirect")
    hooks.guard_tools(agent)  # the guardrails answer a stuck call with the instructions
    try:
        result = Runner.run_sync(agent, prompt(instructions, notes), hooks=hooks, max_turns=MAX_TURNS)
    except Stopped as stop:  # killed, or still stuck after the redirections
        return str(stop)
    return str(result.final_output)


def step(ctx: Any) -> None:
    """The heartbeat step: one run per heartbeat; notes persist in state.json."""
    ctx.data["last_run"] = run(ctx, ctx.instructions, ctx.data.setdefault("notes", []))


def main() -> None:
    """Standalone: one run in a long-lived process, on a state folder of its own."""
    from heartbeat.integrations.session import Session

    notes: list[str] = []
    live = HERE / "state" / "openai-agents-live"
    with Session.from_files(HERE / "openai_agents.toml", state_dir=live) as session:
        print(f"run: {run(session, session.instructions, notes)}")
    print(f"notes: {notes}\nsee: heartbeat status --state-dir {live}")


if __name__ == "__main__":
    main()
