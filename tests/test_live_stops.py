"""The long-running paths fail closed: Session, ``heartbeat mcp-proxy`` and the adapters honour every stop.

Reliability III: the fleet stop, KILL and a human's pause are honoured within
about a second under a steady stream of calls, every call that ran is
journaled, and the model is never told something untrue.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import live_streams
import pytest
from _cli import run_cli as cli
from _integrations import model_and_tools
from _mcp_pipe import RAW_SERVER, Pipe, journal, paused_mid_call, proxy, server_log, texts
from conftest import wait_until

from heartbeat.detect.monitor import Monitor
from heartbeat.integrations.session import Session, Stop, Stopped

# "Within about a second": the fleet stop is read at most once a second; the rest is slack for a
# loaded test machine (the stress script prints the real figures).
BOUND = 2.0


@pytest.mark.parametrize("stop", ["fleet", "kill"])
def test_a_session_under_a_steady_stream_honours_the_fleet_stop_and_journals_every_call(
    tmp_path: Path, stop: live_streams.StopKind
) -> None:
    report = live_streams.session_stream(tmp_path, stop, before=0.6, after=1.6)
    assert report.check(BOUND).problems == [], report.summary()
    assert report.ran > 10 and report.saved == report.ran


def test_the_mcp_proxy_under_a_steady_stream_honours_the_fleet_stop_and_journals_every_call(
    tmp_path: Path,
) -> None:
    report = live_streams.proxy_stream(tmp_path, "fleet", before=1.0, after=1.6)
    assert report.check(BOUND).problems == [], report.summary()
    assert report.ran > 5


def test_an_adapter_bound_to_a_state_folder_honours_the_fleet_stop_and_journals_every_call(
    tmp_path: Path,
) -> None:
    report = live_streams.adapter_stream(tmp_path, "fleet", before=0.6, after=1.6)
    assert report.check(BOUND).problems == [], report.summary()
    assert report.ran > 3


def test_a_humans_pause_wins_against_a_busy_session_within_seconds(tmp_path: Path) -> None:
    # No heartbeat boundary of its own for minutes: only the pause can end it.
    session = Session.from_files(live_streams.prepare(tmp_path), actions=100_000, seconds=600)
    ran: list[int] = []
    refusals: list[Stop] = []
    done = threading.Event()

    def calls() -> None:  # one call every 0.1 s: the heartbeat never idles out
        n = 0
        while not done.is_set():
            n += 1
            stop = session.check()
            if stop is not None:
                refusals.append(stop)
            else:
                ran.append(n)
                with contextlib.suppress(Stopped):  # paused while it ran: still journaled
                    session.record("search", {"q": f"query {n}"}, output=f"result {n}")
            done.wait(0.1)

    caller = threading.Thread(target=calls)
    caller.start()
    try:
        wait_until(lambda: len(ran) >= 3, what="the stream to start")
        began = time.monotonic()
        paused = subprocess.run(
            [sys.executable, "-m", "heartbeat", "pause", "--config", "heartbeat.toml", "--reason", "lunch"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        took = time.monotonic() - began
        wait_until(lambda: bool(refusals), what="a refused call")
    finally:
        done.set()
        caller.join()
        session.close()
    assert paused.returncode == 0, paused.stderr
    print(f"pause took {took:.2f} s")
    assert took < 6.0  # a fresh CLI process and its wait; it was exit 5 after 15 s
    assert all(stop.kind == "paused" for stop in refusals)
    assert json.loads((tmp_path / "state" / "state.json").read_text())["status"] == "paused"
    assert not (tmp_path / "state" / ".pause-request").exists()
    actions = [e for e in journal(tmp_path) if e["event"] == "action"]
    assert len(actions) == len(ran)  # every call that ran, also one in flight at the pause


def test_a_call_in_flight_when_kill_appears_is_journaled_not_lost(tmp_path: Path) -> None:
    session = Session.from_files(live_streams.prepare(tmp_path))
    assert session.check() is None  # the call starts
    (tmp_path / "KILL").write_text("stop now\n")
    wait_until(lambda: not session.is_open, what="the heartbeat to end on KILL")
    with pytest.raises(Stopped) as stopped:  # ... and comes back after its heartbeat ended
        session.record("search", {"q": "slow", "api": "x"}, output="the slow answer")
    assert stopped.value.journaled and stopped.value.stop.kind == "killed"
    assert "journaled only" in str(stopped.value)
    late = [e for e in journal(tmp_path) if e["event"] == "action"]
    assert len(late) == 1 and late[0]["after_stop"] == "killed"
    assert late[0]["summary"].startswith("search(") and late[0]["output_len"] == len("the slow answer")
    session.close()


# -- LangGraph: a stop ends the run whatever the ToolNode does with tool errors (item 2)


def calls(*queries: str) -> list[Any]:
    """One model turn per query (a search call), then a final answer."""
    from langchain_core.messages import AIMessage

    turns: list[Any] = [
        AIMessage(content="", tool_calls=[{"name": "search", "args": {"q": q}, "id": f"call{i}"}])
        for i, q in enumerate(queries)
    ]
    return [*turns, AIMessage(content="done")]


def langgraph_agent(responses: list[Any], wrapper: Any, before_model: Any) -> Any:
    """Model node + ``ToolNode(handle_tool_errors=True)`` over a `search` tool; wrapper or handler."""
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.tools import tool
    from langgraph.graph import MessagesState
    from langgraph.prebuilt import ToolNode

    class ScriptedChat(FakeMessagesListChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChat:
            return self

    model = ScriptedChat(responses=responses)
    turns = [0]

    @tool
    def search(q: str) -> str:
        """Search the web."""
        return f"3 hits for {q}"

    def call_model(state: MessagesState) -> dict[str, Any]:
        turns[0] += 1
        before_model(turns[0])
        return {"messages": [model.invoke(state["messages"])]}

    if wrapper is not None:
        node = ToolNode(
            [search], wrap_tool_call=wrapper, awrap_tool_call=wrapper.acall, handle_tool_errors=True
        )
    else:
        node = ToolNode([search], handle_tool_errors=True)
    return model_and_tools(call_model, node), turns


@pytest.mark.parametrize("how", ["wrapper", "handler"])
def test_a_toolnode_that_handles_tool_errors_cannot_swallow_a_kill(tmp_path: Path, how: str) -> None:
    from heartbeat.integrations import Stopped as RunStopped
    from heartbeat.integrations.langchain import HeartbeatCallbackHandler, HeartbeatToolWrapper

    kill = tmp_path / "KILL"

    def before_model(turn: int) -> None:
        if turn == 3:
            kill.write_text("stop now\n")

    monitor = Monitor()
    wrapper = HeartbeatToolWrapper(monitor, kill_file=kill) if how == "wrapper" else None
    app, turns = langgraph_agent(calls(*[f"q{i}" for i in range(30)]), wrapper, before_model)
    config: Any = {} if wrapper else {"callbacks": [HeartbeatCallbackHandler(monitor, kill_file=kill)]}
    with pytest.raises(RunStopped) as stopped:
        app.invoke({"messages": [("user", "research")]}, config=config)
    assert stopped.value.cause == "killed"
    assert turns[0] == 3  # no model call after the stop (it was 31: up to the recursion limit)


def test_a_toolnode_that_handles_tool_errors_cannot_swallow_the_stop_after_max_redirects(
    tmp_path: Path,
) -> None:
    from heartbeat.integrations import Stopped as RunStopped
    from heartbeat.integrations.langchain import HeartbeatToolWrapper

    wrapper = HeartbeatToolWrapper(Monitor(), max_redirects=1)
    app, turns = langgraph_agent(calls(*["same"] * 30), wrapper, lambda turn: None)
    with pytest.raises(RunStopped) as stopped:
        app.invoke({"messages": [("user", "research")]})
    assert stopped.value.cause == "stuck" and "redirection(s) ignored" in stopped.value.reason
    assert turns[0] < 10


# -- a notifier plug-in cannot end the delivery pass (item 5)

QUITTERS = """
import sys


class Quitter:
    def __init__(self, name, how="exit"):
        self.name, self.how = name, how

    def send(self, notification):
        if self.how == "exit":
            sys.exit(0)
        raise KeyboardInterrupt
"""


@pytest.mark.parametrize("how", ["exit", "interrupt"])
def test_a_notifier_that_calls_sys_exit_is_a_failed_send_and_the_next_notifier_still_gets_it(
    tmp_path: Path, how: str
) -> None:
    (tmp_path / "quitters.py").write_text(QUITTERS)
    (tmp_path / "agent.py").write_text(
        "def step(ctx):\n"
        "    for _ in range(3):\n"
        "        if ctx.record('search', {'q': 'same'}, output='the same page'):\n"
        "            return\n"
    )
    (tmp_path / "heartbeat.toml").write_text(
        "[agent]\n"
        'step = "agent:step"\n'
        "[policy]\n"
        "escalate_after = 1\n"
        "[[notify]]\n"
        'type = "quitters:Quitter"\n'
        f'how = "{how}"\n'
        "[[notify]]\n"
        'type = "file"\n'
        'path = "pages.log"\n'
    )
    first = cli(tmp_path, "tick")
    assert first.returncode == 4, (first.stdout, first.stderr)
    assert first.stdout.startswith("escalated to a human")
    failure = "SystemExit" if how == "exit" else "KeyboardInterrupt"
    assert failure in first.stdout + first.stderr  # said, not swallowed
    assert "escalation" in (tmp_path / "pages.log").read_text()  # the next notifier still got it
    again = cli(tmp_path, "tick")
    assert again.returncode == 4 and again.stdout.strip()  # later ticks still say the agent waits


def test_run_survives_a_notifier_that_calls_sys_exit_and_sigterm_ends_it(tmp_path: Path) -> None:
    (tmp_path / "quitters.py").write_text(QUITTERS)
    (tmp_path / "agent.py").write_text(
        "def step(ctx):\n"
        "    for _ in range(3):\n"
        "        if ctx.record('search', {'q': 'same'}, output='the same page'):\n"
        "            return\n"
    )
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstep = "agent:step"\n[schedule]\nevery = "1s"\n[policy]\nescalate_after = 1\n'
        '[[notify]]\ntype = "quitters:Quitter"\n[[notify]]\ntype = "file"\npath = "pages.log"\n'
    )
    run = subprocess.Popen(
        [sys.executable, "-m", "heartbeat", "run"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: (tmp_path / "pages.log").exists(), what="the escalation page", proc=run)
        run.send_signal(signal.SIGTERM)
        code = run.wait(timeout=20)
    finally:
        if run.poll() is None:
            run.kill()
        run.communicate()
    assert code == 0


# -- observe mode does not intervene (item 6)


def observe_config(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "heartbeat.toml"
    config.write_text(
        '[agent]\nstate_dir = "state"\nkill_file = "KILL"\n[policy]\nmode = "observe"\nescalate_after = 1\n'
    )
    return config


def test_the_mcp_proxy_in_observe_mode_passes_every_result_as_it_is(tmp_path: Path) -> None:
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    config = observe_config(tmp_path)
    server = [sys.executable, str(live_streams.REPO / "examples" / "mcp" / "server.py")]
    argv = [sys.executable, "-m", "heartbeat", "mcp-proxy", "--config", str(config), "--", *server]
    env = {**os.environ, "PYTHONPATH": str(live_streams.REPO)}
    results: list[Any] = []

    async def main() -> None:
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(tmp_path))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            for _ in range(8):  # the same call over and over: repeat fires, escalation would follow
                results.append(await client.call_tool("search", {"query": "the same thing"}))
            (tmp_path / "KILL").write_text("observe mode still honours KILL\n")
            results.append(await client.call_tool("search", {"query": "the same thing"}))

    anyio.run(main)
    *observed, killed = results
    assert [r.is_error for r in observed] == [False] * 8
    assert len({r.content[0].text for r in observed}) == 1  # the result itself, every time
    assert killed.is_error and "KILL" in killed.content[0].text
    kinds = [e["event"] for e in journal(tmp_path)]
    assert "anomaly" in kinds and "escalation" not in kinds  # found and journaled, nothing more
    assert json.loads((tmp_path / "state" / "state.json").read_text())["status"] == "active"


@pytest.mark.parametrize("target", ["session", "ctx"])
def test_an_adapter_in_observe_mode_neither_redirects_nor_stops(tmp_path: Path, target: str) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from heartbeat.integrations.pydantic_ai import guarded
    from heartbeat.tick.runner import Heartbeat

    ran: list[str] = []

    def search(q: str) -> str:
        """Search."""
        ran.append(q)
        return f"the same page about {q}"

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(ran) < 8:
            return ModelResponse(parts=[ToolCallPart("search", {"q": "same"})])
        return ModelResponse(parts=[TextPart("done")])

    def run(bound: object) -> str:
        agent: Agent[None, str] = Agent(FunctionModel(model), toolsets=[guarded([search], bound)])
        return agent.run_sync("research").output

    config = observe_config(tmp_path)
    if target == "session":
        session = Session.from_files(config)
        try:
            answer = run(session)
        finally:
            session.close()
    else:
        answers: list[str] = []
        from heartbeat.config.file import load_config

        Heartbeat(load_config(config), step=lambda ctx: answers.append(run(ctx))).tick()
        answer = answers[0]
    assert answer == "done" and ran == ["same"] * 8  # every call ran, the model saw every result
    assert "anomaly" in [e["event"] for e in journal(tmp_path)]


# -- the MCP proxy: a transparent pipe that fails closed (items 3, 4 and 16)


def test_the_proxy_passes_extension_fields_and_unknown_content_types_as_the_server_sent_them(
    tmp_path: Path,
) -> None:
    (tmp_path / "direct").mkdir()
    direct = Pipe(RAW_SERVER, tmp_path / "direct")
    try:
        plain_list = direct.ask("tools/list", {})["result"]
        plain_odd = direct.ask("tools/call", {"name": "odd", "arguments": {}})["result"]
    finally:
        direct.close()
    via = proxy(tmp_path)
    try:
        listed = via.ask("tools/list", {})["result"]
        odd = via.ask("tools/call", {"name": "odd", "arguments": {}})["result"]
        empty = via.ask("tools/call", {"name": "", "arguments": {}})
        after = via.ask("tools/call", {"name": "fast", "arguments": {"q": "still there"}})["result"]
    finally:
        stderr = via.close()
    assert listed == plain_list and listed["tools"][0]["x-vendor"] == {"cost": 3, "tier": "gold"}
    assert listed["x-page"] == "first"
    assert odd == plain_odd and odd["content"][0] == {"type": "hologram", "frames": 3}
    assert odd["x-trace"] == "t-123"
    # The empty name: one clean protocol error, never forwarded, nothing on stderr, the proxy goes on.
    assert empty["error"]["code"] == -32602 and "tool name is empty" in empty["error"]["message"]
    assert "Traceback" not in stderr and after["content"][0]["text"].startswith("fast answer")
    assert [e.get("name") for e in server_log(tmp_path) if e.get("method") == "tools/call"] == ["odd", "fast"]
    history = json.loads((tmp_path / "state" / "state.json").read_text())["history"]
    assert [a["tool"] for a in history] == ["odd", "fast"]  # the odd result was recorded


def test_resources_and_prompts_are_refused_after_kill_and_while_paused(tmp_path: Path) -> None:
    via = proxy(tmp_path)
    try:
        assert "result" in via.ask("tools/call", {"name": "fast", "arguments": {}})
        assert "result" in via.ask("resources/read", {"uri": "raw://notes"})
        assert "result" in via.ask("prompts/get", {"name": "hello"})
        (tmp_path / "KILL").write_text("stop everything\n")
        killed = [
            via.ask("resources/read", {"uri": "raw://notes"}),
            via.ask("prompts/get", {"name": "hello"}),
        ]
        (tmp_path / "KILL").unlink()
        assert cli(tmp_path, "pause", "--state-dir", "state", "--reason", "lunch").returncode == 0
        paused = [
            via.ask("resources/read", {"uri": "raw://notes"}),
            via.ask("prompts/get", {"name": "hello"}),
        ]
    finally:
        via.close()
    for answer in killed:
        assert "error" in answer and "stop everything" in answer["error"]["message"]
    assert "the resource was not read" in killed[0]["error"]["message"]
    for answer in paused:
        assert "error" in answer and "paused" in answer["error"]["message"]
    reads = [
        e["method"] for e in server_log(tmp_path) if e.get("method") in ("resources/read", "prompts/get")
    ]
    assert reads == ["resources/read", "prompts/get"]  # only the two before the KILL reached the server


def test_a_call_in_flight_at_kill_is_cancelled_recorded_and_said_truthfully(tmp_path: Path) -> None:
    via = proxy(tmp_path)
    try:
        number = via.start("tools/call", {"name": "slow", "arguments": {}})
        wait_until(lambda: any(e.get("name") == "slow" for e in server_log(tmp_path)), what="the call to run")
        (tmp_path / "KILL").write_text("pull the plug\n")
        began = time.monotonic()
        answer = via.wait(number)
        took = time.monotonic() - began
        wait_until(lambda: any("cancelled" in e for e in server_log(tmp_path)), what="the cancellation")
    finally:
        via.close()
    assert took < BOUND
    result = answer["result"]
    assert result["isError"] and "was running" in texts(answer) and "not called" not in texts(answer)
    assert "told to cancel" in texts(answer) and "pull the plug" in texts(answer)
    assert [e["cancelled"] for e in server_log(tmp_path) if "cancelled" in e] == [number]
    actions = [e for e in journal(tmp_path) if e["event"] == "action"]
    assert [a["tool"] for a in actions] == ["slow"] and "cancelled while running" in actions[0]["error"]


def test_a_call_in_flight_that_the_client_cancels_is_still_journaled(tmp_path: Path) -> None:
    via = proxy(tmp_path)
    try:
        number = via.start("tools/call", {"name": "slow", "arguments": {"q": "long"}})
        wait_until(lambda: any(e.get("name") == "slow" for e in server_log(tmp_path)), what="the call to run")
        via.send({"method": "notifications/cancelled", "params": {"requestId": number, "reason": "user"}})
        wait_until(lambda: any("cancelled" in e for e in server_log(tmp_path)), what="the cancellation")
        assert "result" in via.ask("tools/call", {"name": "fast", "arguments": {}})
    finally:
        via.close()
    actions = [e for e in journal(tmp_path) if e["event"] == "action"]
    # It reached the server, which may have done it in part or in full: it was missing from the journal.
    assert [a["tool"] for a in actions] == ["slow", "fast"]
    assert "cancelled by the client" in actions[0]["error"]


def test_a_call_in_flight_at_a_pause_returns_its_result_and_says_the_agent_is_paused(tmp_path: Path) -> None:
    via = proxy(tmp_path)
    try:
        paused, answer, refused = paused_mid_call(via, {})
    finally:
        via.close()
    assert paused.returncode == 0, paused.stderr
    assert answer["result"]["content"][0]["text"] == "slow answer"  # it ran: its result, as it is
    assert "this call ran" in texts(answer) and "paused" in texts(answer)
    assert "paused" in texts(refused) and "not called" in texts(refused)
    actions = [e for e in journal(tmp_path) if e["event"] == "action"]
    assert [(a["tool"], a.get("after_stop")) for a in actions] == [("slow", "paused")]


def test_an_adapters_call_in_flight_at_kill_is_journaled_and_the_run_stops(tmp_path: Path) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.test import TestModel

    from heartbeat.integrations import Stopped as RunStopped
    from heartbeat.integrations.pydantic_ai import guarded

    session = Session.from_files(live_streams.prepare(tmp_path))

    def search(q: str) -> str:
        """Search (slowly: KILL comes while it runs)."""
        (tmp_path / "KILL").write_text("stop mid-call\n")
        wait_until(lambda: not session.is_open, what="the heartbeat to end on KILL")
        return "a late answer"

    agent: Agent[None, str] = Agent(TestModel(call_tools=["search"]), toolsets=[guarded([search], session)])
    try:
        with pytest.raises(RunStopped) as stopped:
            agent.run_sync("research")
    finally:
        session.close()
    assert stopped.value.cause == "killed"
    actions = [e for e in journal(tmp_path) if e["event"] == "action"]
    assert [(a["tool"], a.get("after_stop")) for a in actions] == [("search", "killed")]


# -- a person's pause stops the next model call, as KILL does


def pause_by_hand(config: Path) -> None:
    """A real `heartbeat pause` process, run to its end (the pause is saved when it returns)."""
    paused = cli(config.parent, "pause", "--config", str(config), "--reason", "lunch")
    assert paused.returncode == 0, paused.stderr


def test_a_pydantic_ai_run_makes_no_model_request_after_a_pause(tmp_path: Path) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from heartbeat.integrations import Stopped as RunStopped
    from heartbeat.integrations.pydantic_ai import HeartbeatCapability

    config = live_streams.prepare(tmp_path)
    session = Session.from_files(config)
    requests: list[int] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        requests.append(len(messages))
        if len(requests) < 4:
            return ModelResponse(parts=[ToolCallPart("search", {"q": f"query {len(requests)}"})])
        return ModelResponse(parts=[TextPart("done")])

    class Person(AbstractCapability[Any]):
        """Pauses the agent right before the run's second model request."""

        seen = 0

        async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
            self.seen += 1
            if self.seen == 2:
                pause_by_hand(config)
            return request_context

    def search(q: str) -> str:
        """Search."""
        return f"hits for {q}"

    agent: Agent[None, str] = Agent(FunctionModel(model), tools=[search])
    try:
        with pytest.raises(RunStopped) as stopped:
            agent.run_sync("research", capabilities=[Person(), HeartbeatCapability(session)])
    finally:
        session.close()
    assert stopped.value.cause == "paused" and "lunch" in stopped.value.reason
    assert len(requests) == 1  # it was 2: one more paid request after the pause was saved


def test_an_agents_sdk_run_makes_no_model_call_after_a_pause(tmp_path: Path) -> None:
    from agents import Agent, Runner, function_tool, set_tracing_disabled
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

    from heartbeat.integrations import Stopped as RunStopped
    from heartbeat.integrations.openai_agents import HeartbeatHooks

    set_tracing_disabled(True)
    config = live_streams.prepare(tmp_path)
    session = Session.from_files(config)
    answered: list[int] = []

    @function_tool
    def search(q: str) -> str:
        """Search."""
        return f"hits for {q}"

    def step(n: int, item: Any) -> ModelStep:
        def respond(call: Any) -> list[Any]:
            answered.append(n)
            return [item]

        return ModelStep(responder=respond)

    class Paused(HeartbeatHooks):
        """The person pauses the agent once the first tool call is recorded."""

        async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: object) -> None:
            await super().on_tool_end(context, agent, tool, result)
            pause_by_hand(config)

    steps = [step(i + 1, function_call("search", {"q": f"q{i + 1}"}, call_id=f"c{i}")) for i in range(3)]
    agent: Agent[Any] = Agent(
        name="researcher", model=ScriptedModel([*steps, step(4, assistant_message("done"))]), tools=[search]
    )
    try:
        with pytest.raises(RunStopped) as stopped:
            Runner.run_sync(agent, "research", hooks=Paused(session), max_turns=20)
    finally:
        session.close()
    assert stopped.value.cause == "paused" and "lunch" in stopped.value.reason
    assert answered == [1]  # it was [1, 2]: one more paid model call after the pause was saved
