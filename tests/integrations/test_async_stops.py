"""The adapters whose hooks run on an event loop, bound to a state folder: a check that has to wait
(the fleet stop's first reading, a heartbeat to open) never holds the loop, and KILL or the fleet
stop is honoured within about a second meanwhile.

A real HTTP server on 127.0.0.1 is the fleet stop; it holds its answer until the test ends, as a
stop service that hangs does. The frameworks run with their own offline test models.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from heartbeat.integrations import Stopped
from heartbeat.integrations.session import Session


class HeldStop:
    """A fleet stop URL whose server holds every request until the test ends."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.asked_at: list[float] = []
        self.release = threading.Event()
        held = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                held.asked_at.append(time.monotonic())
                held.asked.set()
                held.release.wait(30)
                self.send_response(404)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/STOP"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def held_session(folder: Path) -> Iterator[tuple[Session, HeldStop]]:
    """A Session on ``folder`` whose fleet stop is a URL that does not answer (8 s deadline)."""
    held = HeldStop()
    (folder / "heartbeat.toml").write_text(
        f'[agent]\nstate_dir = "state"\nkill_file = "KILL"\n[stop]\nurl = "{held.url}"\ntimeout = "8s"\n'
    )
    session = Session.from_files(folder / "heartbeat.toml")
    try:
        yield session, held
    finally:
        held.close()
        session.close()


async def killed_while_the_stop_is_read(folder: Path, held: HeldStop, run: Any) -> tuple[float, float, Any]:
    """Start ``run``; once the fleet stop is being read, write KILL. How long after the read began
    this coroutine ran again (the loop was free), how long after KILL the run ended, and how."""
    task = asyncio.ensure_future(run)
    assert await asyncio.to_thread(held.asked.wait, 20), "the fleet stop was never read"
    resumed = time.monotonic()
    (folder / "KILL").write_text("deploy in progress\n")
    try:
        outcome: Any = await task
    except Stopped as exc:
        outcome = exc
    return resumed - held.asked_at[0], time.monotonic() - resumed, outcome


def assert_stopped_by_kill_at_once(loop_held: float, after_kill: float, outcome: Any) -> None:
    assert loop_held < 0.5, f"the event loop was held {loop_held:.1f}s by the fleet stop's reading"
    assert isinstance(outcome, Stopped) and outcome.cause == "killed", outcome
    assert "KILL file" in str(outcome) and "deploy in progress" in str(outcome)
    assert after_kill < 1.5, f"KILL honoured {after_kill:.1f}s after it was written"


@pytest.mark.parametrize("how", ["toolset", "capability"])
def test_pydantic_ai_first_fleet_stop_read_never_holds_the_loop(how: str, tmp_path: Path) -> None:
    """Regression: the run's first check read the fleet stop on the event loop, blocking it up to the
    stop's deadline (8 s here) and deaf to KILL meanwhile. Now it waits on a worker thread and
    watches KILL: the loop stays free, and KILL stops the run before its first model call."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from heartbeat.integrations.pydantic_ai import HeartbeatCapability, guarded

    asked: list[int] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        asked.append(1)
        return ModelResponse(parts=[TextPart("done")])

    def search(q: str) -> str:
        """Search the web."""
        return f"3 hits for {q}"

    with held_session(tmp_path) as (session, held):
        if how == "toolset":
            agent: Agent[None, str] = Agent(FunctionModel(model), toolsets=[guarded([search], session)])
        else:
            agent = Agent(FunctionModel(model), tools=[search], capabilities=[HeartbeatCapability(session)])
        measured = asyncio.run(killed_while_the_stop_is_read(tmp_path, held, agent.run("research")))
    assert_stopped_by_kill_at_once(*measured)
    assert asked == []  # no model call was paid for


def test_openai_agents_first_fleet_stop_read_never_holds_the_loop(tmp_path: Path) -> None:
    """Regression: the hooks read the fleet stop (and opened a heartbeat) on the run's event loop,
    holding it up to the stop's deadline, deaf to KILL. Now as for PydanticAI."""
    from agents import Agent, Runner, function_tool, set_tracing_disabled
    from agents.testing import ScriptedModel, assistant_message, function_call

    from heartbeat.integrations.openai_agents import HeartbeatHooks

    set_tracing_disabled(True)
    ran: list[str] = []

    @function_tool
    def search(q: str) -> str:
        """Search the web."""
        ran.append(q)
        return f"3 hits for {q}"

    model = ScriptedModel(
        [
            {"output": [function_call("search", {"q": "a"}, call_id="c0")]},
            {"output": [assistant_message("done")]},
        ]
    )
    agent: Agent[Any] = Agent(name="researcher", model=model, tools=[search])
    with held_session(tmp_path) as (session, held):
        hooks = HeartbeatHooks(session, on_stuck="redirect")
        hooks.guard_tools(agent)
        run = Runner.run(agent, "research", hooks=hooks)
        measured = asyncio.run(killed_while_the_stop_is_read(tmp_path, held, run))
    assert_stopped_by_kill_at_once(*measured)
    assert ran == []


def test_langgraph_tool_wrapper_first_fleet_stop_read_never_holds_the_loop(tmp_path: Path) -> None:
    """Regression: the ToolNode wrapper's async side (awrap_tool_call) read the fleet stop and opened
    a heartbeat on the graph's event loop. Now as for PydanticAI: the tool never runs."""
    from _integrations import model_and_tools
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langgraph.graph import MessagesState
    from langgraph.prebuilt import ToolNode

    from heartbeat.integrations.langchain import HeartbeatToolWrapper

    ran: list[str] = []

    @tool
    def search(q: str) -> str:
        """Search the web."""
        ran.append(q)
        return f"3 hits for {q}"

    turns = [AIMessage(content="", tool_calls=[{"name": "search", "args": {"q": "a"}, "id": "c0"}])]
    model = FakeMessagesListChatModel(responses=[*turns, AIMessage(content="done")])

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    with held_session(tmp_path) as (session, held):
        wrapper = HeartbeatToolWrapper(session)
        app = model_and_tools(
            call_model, ToolNode([search], wrap_tool_call=wrapper, awrap_tool_call=wrapper.acall)
        )
        run = app.ainvoke({"messages": [("user", "research")]})
        measured = asyncio.run(killed_while_the_stop_is_read(tmp_path, held, run))
    assert_stopped_by_kill_at_once(*measured)
    assert ran == []


def test_langchain_callback_handler_first_fleet_stop_read_never_holds_the_loop(tmp_path: Path) -> None:
    """Regression: in an async graph LangChain calls an inline handler on the event loop, so the
    handler's check before the first model call read the fleet stop there. Bound to a state folder it
    is no longer inline: LangChain calls it on a worker thread and waits for its verdict."""
    from _integrations import model_and_tools
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langgraph.graph import MessagesState
    from langgraph.prebuilt import ToolNode

    from heartbeat.integrations.langchain import HeartbeatCallbackHandler

    @tool
    def search(q: str) -> str:
        """Search the web."""
        return f"3 hits for {q}"

    model = FakeMessagesListChatModel(responses=[AIMessage(content="done")])

    async def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    with held_session(tmp_path) as (session, held):
        handler = HeartbeatCallbackHandler(session)
        app = model_and_tools(call_model, ToolNode([search]))
        run = app.ainvoke({"messages": [("user", "research")]}, config={"callbacks": [handler]})
        measured = asyncio.run(killed_while_the_stop_is_read(tmp_path, held, run))
    assert_stopped_by_kill_at_once(*measured)
    assert model.i == 0  # no model call was made
