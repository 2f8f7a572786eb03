"""A LangGraph agent under heartbeat: a callback handler records every tool call and stops a stuck run.

Offline: LangChain's fake chat model, scripted by ``scripted.py``. As a
scheduled agent (from the repository root)::

    heartbeat run --config examples/frameworks/langgraph.toml --every 1s --ticks 3

Heartbeat 1: the model searches the same query again and again; the handler
stops the run right after the third identical call (``repeat``) and the
policy saves recovery instructions. Heartbeat 2: the instructions are in the
prompt; the model reads a document and saves a note (progress 1). Heartbeat
3: nothing left to do. ``heartbeat status --config ...`` and ``heartbeat log
--config ...`` show it all.

As a long-running process on a state folder (``heartbeat status --state-dir
examples/frameworks/state/langgraph-live`` works on it; ``touch
examples/frameworks/KILL`` stops it)::

    python examples/frameworks/langgraph_agent.py
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import StructuredTool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripted.py, when run as a script
from scripted import Tools, next_call, prompt

from heartbeat.integrations import Stopped
from heartbeat.integrations.langchain import HeartbeatCallbackHandler

HERE = Path(__file__).resolve().parent


class ScriptedChat(FakeMessagesListChatModel):
    """LangChain's fake chat model, answering from scripted.next_call instead of a fixed list."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChat:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        asked = next(str(m.content) for m in messages if isinstance(m, HumanMessage))
        answers = [str(m.content) for m in messages if isinstance(m, ToolMessage)]
        call = next_call(asked, answers)
        if call is None:
            message = AIMessage(content="I saved my note.")
        else:
            message = AIMessage(
                content="", tool_calls=[{"name": call[0], "args": call[1], "id": f"call{len(answers)}"}]
            )
        return ChatResult(generations=[ChatGeneration(message=message)])


def build(notes: list[str]) -> Any:
    """The agent: a model node and a ToolNode, looping until the model answers without a tool call."""
    tools = Tools(notes)
    node = ToolNode([StructuredTool.from_function(f) for f in (tools.search, tools.read, tools.save_note)])
    model = ScriptedChat(responses=[])  # answers come from _generate, not a list
    graph = StateGraph(MessagesState)
    graph.add_node("model", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("tools", node)
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile()


def run(target: Any, instructions: str | None, notes: list[str]) -> str:
    """One run bound to ``target`` (the step's ctx, a Session or a Monitor): its answer, or why it stopped."""
    handler = HeartbeatCallbackHandler(target)
    try:
        out = build(notes).invoke(
            {"messages": [("user", prompt(instructions, notes))]},
            config={"callbacks": [handler], "recursion_limit": 50},
        )
    except Stopped as stop:  # stuck or killed: the run is over; the next heartbeat carries the instructions
        return str(stop)
    return str(out["messages"][-1].content)


def step(ctx: Any) -> None:
    """The heartbeat step: one run per heartbeat; notes persist in state.json."""
    ctx.data["last_run"] = run(ctx, ctx.instructions, ctx.data.setdefault("notes", []))


def main() -> None:
    """Standalone: two runs in one process, on a state folder of their own."""
    from heartbeat.integrations.session import Session

    notes: list[str] = []
    live = HERE / "state" / "langgraph-live"
    with Session.from_files(HERE / "langgraph.toml", state_dir=live) as session:
        for attempt in (1, 2):
            print(f"run {attempt}: {run(session, session.instructions, notes)}")
    print(f"notes: {notes}\nsee: heartbeat status --state-dir {live}")


if __name__ == "__main__":
    main()
