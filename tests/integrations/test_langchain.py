"""LangChain / LangGraph: the handler stops, the ToolNode wrapper redirects; real graphs, fake model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from _integrations import (
    MODES,
    NOT_RUN,
    NOTHING,
    REPEAT,
    WANDERING,
    WITHHELD,
    anomalies,
    assert_boom_failed_and_slow_cancelled,
    decisions,
    folder_session,
    kill_mid_call,
    late_actions,
    model_and_tools,
    pause_by_hand,
    run_bound,
    saved_actions,
)
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import MessagesState
from langgraph.prebuilt import ToolNode

from heartbeat.detect.monitor import Monitor
from heartbeat.integrations import Stopped
from heartbeat.integrations.langchain import HeartbeatCallbackHandler, HeartbeatToolWrapper
from heartbeat.testing import make_heartbeat


class ScriptedChat(FakeMessagesListChatModel):
    """The fake chat model, able to be bound to tools as a graph does."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChat:
        return self


def calls(*queries: str) -> list[BaseMessage]:
    """One model turn per query (a search call), then a final answer."""
    turns: list[BaseMessage] = [
        AIMessage(content="", tool_calls=[{"name": "search", "args": {"q": q}, "id": f"call{i}"}])
        for i, q in enumerate(queries)
    ]
    return [*turns, AIMessage(content="done")]


class Agent:
    """A LangGraph agent (model node + ToolNode) over a `search` tool that counts its runs."""

    def __init__(
        self,
        responses: Sequence[BaseMessage],
        *,
        wrapper: HeartbeatToolWrapper | None = None,
        before_model: Callable[[int], None] | None = None,
        on_search: Callable[[str], None] | None = None,
    ) -> None:
        self.ran: list[str] = []
        model = ScriptedChat(responses=list(responses))
        self.model = model  # model.i: the model calls made
        turns = [0]

        @tool
        def search(q: str) -> str:
            """Search the web."""
            self.ran.append(q)
            if on_search is not None:
                on_search(q)
            if q == "fails":
                raise ValueError("search backend is down")
            if q.startswith("nothing about"):
                return NOTHING
            return f"3 hits for {q}"

        def call_model(state: MessagesState) -> dict[str, Any]:
            turns[0] += 1
            if before_model is not None:
                before_model(turns[0])
            return {"messages": [model.invoke(state["messages"])]}

        node = (
            ToolNode([search], wrap_tool_call=wrapper, awrap_tool_call=wrapper.acall)
            if wrapper is not None
            # handle_tool_errors=True turns the handler's Stopped into an error message, as a user's
            # graph may: the stop must then come from the next model call (the guard stays stopped).
            else ToolNode([search], handle_tool_errors=True)
        )
        self.app = model_and_tools(call_model, node)

    def run(self, callbacks: list[Any] | None = None) -> list[BaseMessage]:
        config: Any = {"callbacks": callbacks} if callbacks else {}
        return list(
            self.app.invoke({"messages": [("user", "research heartbeats")]}, config=config)["messages"]
        )


@pytest.mark.parametrize("mode", MODES)
def test_handler_stops_a_repeating_agent_at_the_configured_repeat(mode: str, tmp_path: Path) -> None:
    """The same search over and over: the run raises Stopped naming the repeat, right after call REPEAT."""
    agent = Agent(calls(*["x"] * 10))

    def body(target: Any, kill: Path) -> Stopped:
        with pytest.raises(Stopped) as caught:
            agent.run([HeartbeatCallbackHandler(target)])
        return caught.value

    bound = run_bound(mode, tmp_path, body)
    stop = bound.value
    assert stop.cause == "stuck" and stop.anomaly is not None and stop.anomaly.kind == "repeat"
    assert "repeat" in str(stop) and 'search({"q":"x"})' in str(stop)
    assert agent.ran == ["x"] * REPEAT
    assert anomalies(bound)[:1] == ["repeat"]  # the first finding; others (recurring) may join it
    if mode != "monitor":  # the state folder holds it all
        assert bound.tick is not None and bound.tick.decision is not None
        assert bound.tick.decision.action == "try_alternative"
        history, journal = saved_actions(tmp_path)
        assert history == journal == ['search({"q":"x"})'] * REPEAT


@pytest.mark.parametrize("mode", MODES)
def test_kill_between_two_tool_calls_stops_before_the_next(mode: str, tmp_path: Path) -> None:
    """KILL written while the model thinks after call 2: call 3 never runs, the run raises Stopped(killed)."""

    def before_model(turn: int) -> None:
        if turn == 3:
            (tmp_path / "KILL").write_text("stop now\n")

    agent = Agent(calls("a", "b", "c", "d"), before_model=before_model)

    def body(target: Any, kill: Path) -> Stopped:
        with pytest.raises(Stopped) as caught:
            agent.run([HeartbeatCallbackHandler(target)])
        return caught.value

    bound = run_bound(mode, tmp_path, body)
    assert bound.value.cause == "killed"
    assert agent.ran == ["a", "b"]
    if mode != "monitor":  # the state folder holds it all
        assert bound.tick is not None and bound.tick.exit_code == 3
        history, journal = saved_actions(tmp_path)
        assert history == journal == ['search({"q":"a"})', 'search({"q":"b"})']
    else:
        assert "stop now" in bound.value.reason


@pytest.mark.parametrize("mode", MODES)
def test_healthy_agent_runs_to_the_end_untouched(mode: str, tmp_path: Path) -> None:
    """Different searches: the same messages as without heartbeat, every call recorded, no anomaly."""
    plain = Agent(calls("a", "b", "c")).run()
    agent = Agent(calls("a", "b", "c"))
    bound = run_bound(mode, tmp_path, lambda target, kill: agent.run([HeartbeatCallbackHandler(target)]))
    assert [m.content for m in bound.value] == [m.content for m in plain]
    assert agent.ran == ["a", "b", "c"] and anomalies(bound) == []
    if mode != "monitor":  # the state folder holds it all
        assert bound.tick is not None and bound.tick.exit_code == 0
        assert saved_actions(tmp_path)[0] == [f'search({{"q":"{q}"}})' for q in "abc"]


def test_tool_errors_are_recorded_as_errors(tmp_path: Path) -> None:
    """A tool that raises (turned into an error message by ToolNode) is an errored action."""
    agent = Agent(calls("fails", "a"))
    bound = run_bound("monitor", tmp_path, lambda target, kill: agent.run([HeartbeatCallbackHandler(target)]))
    assert bound.monitor is not None
    errors = [a.error for a in bound.monitor.history]
    assert errors[0] is not None and "search backend is down" in errors[0]
    assert errors[1] is None


def test_parallel_tool_calls_are_all_recorded(tmp_path: Path) -> None:
    """One model turn asking for three searches (run on ToolNode's threads): three actions."""
    turn = AIMessage(
        content="", tool_calls=[{"name": "search", "args": {"q": q}, "id": f"p{q}"} for q in "abc"]
    )
    agent = Agent([turn, AIMessage(content="done")])
    bound = run_bound("monitor", tmp_path, lambda target, kill: agent.run([HeartbeatCallbackHandler(target)]))
    assert bound.monitor is not None
    assert sorted(a.summary for a in bound.monitor.history) == [f'search({{"q":"{q}"}})' for q in "abc"]


@pytest.mark.parametrize("mode", MODES)
def test_wrapper_redirects_the_model_which_then_recovers(mode: str, tmp_path: Path) -> None:
    """Call REPEAT is answered with the instructions (an error ToolMessage); the model moves on."""
    holder: list[HeartbeatToolWrapper] = []

    def body(target: Any, kill: Path) -> list[BaseMessage]:
        wrapper = HeartbeatToolWrapper(target)
        holder.append(wrapper)
        agent = Agent(calls(*["x"] * REPEAT, "y"), wrapper=wrapper)
        messages = agent.run()
        assert agent.ran == ["x"] * REPEAT + ["y"]
        return messages

    bound = run_bound(mode, tmp_path, body)
    answers = [m for m in bound.value if isinstance(m, ToolMessage)]
    assert [m.status for m in answers] == ["success"] * (REPEAT - 1) + ["error", "success"]
    text = str(answers[REPEAT - 1].content)
    assert "Try an alternative: do not call" in text and 'search({"q":"x"})' in text
    assert bound.value[-1].content == "done"
    assert holder[0].guard.redirects == 1 and holder[0].guard.stopped is None
    if mode != "monitor":  # the state folder holds it all
        # A Session ends the heartbeat at the anomaly: the recovery is the next one, which continues.
        expected = ["try_alternative"] if mode == "ctx" else ["try_alternative", "continue"]
        assert decisions(tmp_path) == expected
        assert len(saved_actions(tmp_path)[1]) == REPEAT + 1


def test_wrapper_says_whether_a_redirected_call_ran_or_was_refused(tmp_path: Path) -> None:
    """Call REPEAT ran and its result is withheld; the same call again is refused before it runs:
    the model is told which (as the MCP proxy tells it), never that a refused call acted."""

    def body(target: Any, kill: Path) -> list[BaseMessage]:
        agent = Agent(calls(*["x"] * (REPEAT + 1), "y"), wrapper=HeartbeatToolWrapper(target))
        messages = agent.run()
        assert agent.ran == ["x"] * REPEAT + ["y"]
        return messages

    answers = [m for m in run_bound("monitor", tmp_path, body).value if isinstance(m, ToolMessage)]
    ran, refused = (str(m.content) for m in answers[REPEAT - 1 : REPEAT + 1])
    assert WITHHELD in ran and NOT_RUN not in ran and NOT_RUN in refused and WITHHELD not in refused


def test_wrapper_stops_a_model_that_ignores_the_instructions(tmp_path: Path) -> None:
    """Redirected max_redirects times and still repeating: Stopped, and the tool never ran again."""

    def body(target: Any, kill: Path) -> Stopped:
        agent = Agent(calls(*["x"] * 12), wrapper=HeartbeatToolWrapper(target, max_redirects=2))
        with pytest.raises(Stopped) as caught:
            agent.run()
        assert agent.ran == ["x"] * REPEAT
        return caught.value

    stop = run_bound("monitor", tmp_path, body).value
    assert stop.cause == "stuck" and "2 redirection(s) ignored" in str(stop)


@pytest.mark.parametrize("mode", ["ctx", "monitor"])
def test_wrapper_stops_a_model_that_goes_on_with_other_calls_after_max_redirects(
    mode: str, tmp_path: Path
) -> None:
    """Each later call that continues the stuck pattern is redirected too; the run stops at max_redirects.

    The model never repeats a call (so no call is refused as one that tripped before): only the
    detector's finding, reported again for every call that continues it, can count the redirections.
    """
    holder: list[Agent] = []

    def body(target: Any, kill: Path) -> Stopped:
        agent = Agent(calls(*WANDERING), wrapper=HeartbeatToolWrapper(target, max_redirects=2))
        holder.append(agent)
        with pytest.raises(Stopped) as caught:
            agent.run()
        return caught.value

    bound = run_bound(mode, tmp_path, body)
    assert bound.value.cause == "stuck" and "2 redirection(s) ignored" in str(bound.value)
    assert "recurring" in str(bound.value)
    # recurring at the fifth call, redirected there and at the sixth, stopped at the seventh.
    assert holder[0].ran == WANDERING[:7]
    if mode == "ctx":  # the journal holds the finding once, not once per redirection
        assert anomalies(bound).count("recurring") == 1


def test_async_graph_is_stopped_and_redirected(tmp_path: Path) -> None:
    """ainvoke: the handler stops a repeat; awrap_tool_call redirects (the async wrapper path)."""

    def body(target: Any, kill: Path) -> None:
        agent = Agent(calls(*["x"] * 10))
        with pytest.raises(Stopped):
            asyncio.run(
                agent.app.ainvoke(
                    {"messages": [("user", "go")]}, {"callbacks": [HeartbeatCallbackHandler(target)]}
                )
            )
        assert agent.ran == ["x"] * REPEAT

    run_bound("monitor", tmp_path, body)

    def body2(target: Any, kill: Path) -> Any:
        agent = Agent(calls(*["x"] * REPEAT, "y"), wrapper=HeartbeatToolWrapper(target))
        out = asyncio.run(agent.app.ainvoke({"messages": [("user", "go")]}))
        assert agent.ran == ["x"] * REPEAT + ["y"]
        return out["messages"]

    messages = run_bound("monitor", tmp_path / "b", body2).value
    assert any(isinstance(m, ToolMessage) and m.status == "error" for m in messages)


def test_a_wrapper_compiled_once_is_rebound_for_each_heartbeat(tmp_path: Path) -> None:
    """One graph across heartbeats: bind(ctx) in each step gives each run the tick's context."""
    wrapper = HeartbeatToolWrapper(Monitor())
    agent = Agent(calls("a", "b"), wrapper=wrapper)

    def step(ctx: Any) -> None:
        wrapper.bind(ctx)
        agent.run()

    heartbeat = make_heartbeat(step, tmp_path)
    assert [heartbeat.tick().actions for _ in range(2)] == [2, 2]
    assert saved_actions(tmp_path)[1] == [f'search({{"q":"{q}"}})' for q in "abab"]


@pytest.mark.parametrize("how", ["handler", "wrapper"])
def test_a_call_in_flight_at_kill_is_stopped_as_journaled(how: str, tmp_path: Path) -> None:
    """Regression: the call ran and the Session journaled it; the GraphStopped said it had not."""
    session = folder_session(tmp_path)
    wrapper = HeartbeatToolWrapper(session) if how == "wrapper" else None
    agent = Agent(calls("a", "b"), wrapper=wrapper, on_search=lambda q: kill_mid_call(session, tmp_path))
    try:
        with pytest.raises(Stopped) as caught:
            agent.run([HeartbeatCallbackHandler(session)] if wrapper is None else None)
    finally:
        session.close()
    assert caught.value.cause == "killed" and caught.value.journaled
    assert "journaled only" in str(caught.value)
    assert agent.ran == ["a"] and late_actions(tmp_path) == [("search", "killed")]


def test_a_humans_pause_stops_the_next_model_call_before_it_is_made(tmp_path: Path) -> None:
    """`heartbeat pause`, a real process, between two model turns: no model call after it is saved."""
    session = folder_session(tmp_path)

    def pause_between(turn: int) -> None:
        if turn == 2:  # after the first search ran and was recorded, before the second model call
            pause_by_hand(tmp_path, "--config", "heartbeat.toml")

    agent = Agent(calls("a", "b", "c"), before_model=pause_between)
    try:
        with pytest.raises(Stopped) as caught:
            agent.run([HeartbeatCallbackHandler(session)])
    finally:
        session.close()
    assert caught.value.cause == "paused" and "lunch" in caught.value.reason
    assert agent.model.i == 1  # the one model call before the pause; none after it
    assert agent.ran == ["a"] and saved_actions(tmp_path)[1] == ['search({"q":"a"})']
    assert json.loads((tmp_path / "state" / "state.json").read_text())["status"] == "paused"


@pytest.mark.parametrize("how", ["wrapper", "handler"])
def test_a_call_cancelled_when_another_call_ends_the_run_is_journaled(how: str, tmp_path: Path) -> None:
    """Regression: in an async graph, a tool that raised ended the run, and the other call of that
    turn was cancelled while it ran (asyncio.run cancels what is left): the ToolNode wrapper let the
    cancellation through unrecorded, so a call that had started (it may have acted) was in neither
    state.json nor the journal (the handler recorded it as a bare "CancelledError: "). Both now
    record it as an error saying it was cancelled and may have run."""
    started: dict[str, asyncio.Event] = {}

    def began() -> asyncio.Event:  # made on the run's own event loop, by whichever call comes first
        return started.setdefault("slow", asyncio.Event())

    @tool
    async def slow(q: str) -> str:
        """Write the report (runs until it is cancelled)."""
        began().set()
        await asyncio.Event().wait()
        return "written"

    @tool
    async def boom(q: str) -> str:
        """Search the index (fails once the report is being written)."""
        await began().wait()
        raise RuntimeError("the index is gone")

    both = [
        {"name": "slow", "args": {"q": "report"}, "id": "c1"},
        {"name": "boom", "args": {"q": "x"}, "id": "c2"},
    ]
    model = ScriptedChat(responses=[AIMessage(content="", tool_calls=both), AIMessage(content="done")])
    session = folder_session(tmp_path)
    node = ToolNode([slow, boom], handle_tool_errors=False)
    config: Any = {"callbacks": [HeartbeatCallbackHandler(session)]}
    if how == "wrapper":
        wrapper = HeartbeatToolWrapper(session)
        node = ToolNode(
            [slow, boom], wrap_tool_call=wrapper, awrap_tool_call=wrapper.acall, handle_tool_errors=False
        )
        config = {}

    async def think(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    app = model_and_tools(think, node)
    try:
        with pytest.raises(RuntimeError, match="the index is gone"):
            asyncio.run(app.ainvoke({"messages": [("user", "write the report")]}, config))
    finally:
        session.close()
    assert_boom_failed_and_slow_cancelled(tmp_path)
