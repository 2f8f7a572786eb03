"""OpenAI Agents SDK: run hooks stop, tool guardrails redirect; the real Runner with its ScriptedModel."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
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
    folder_session,
    kill_mid_call,
    late_actions,
    run_bound,
    saved_actions,
)
from agents import Agent, FunctionTool, Runner, function_tool, set_tracing_disabled
from agents.exceptions import AgentsException
from agents.items import ToolCallOutputItem
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

from heartbeat.core.models import REFUSED
from heartbeat.detect.monitor import Monitor
from heartbeat.integrations import Guard, Stopped
from heartbeat.integrations.openai_agents import AgentStopped, HeartbeatHooks

set_tracing_disabled(True)  # the tracing exporter would want an API key


class Searcher:
    """An agent whose model searches the given queries one turn each, then answers."""

    def __init__(
        self,
        *queries: str,
        before_turn: Callable[[int], None] | None = None,
        on_search: Callable[[str], None] | None = None,
    ) -> None:
        self.ran: list[str] = []

        @function_tool
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

        def turn(n: int, item: Any) -> Any:
            if before_turn is None:
                return {"output": [item]}

            def respond(call: Any) -> list[Any]:
                before_turn(n)
                return [item]

            return ModelStep(responder=respond)

        steps = [
            turn(i + 1, function_call("search", {"q": q}, call_id=f"c{i}")) for i, q in enumerate(queries)
        ]
        steps.append(turn(len(queries) + 1, assistant_message("done")))
        self.tool: FunctionTool = search
        self.agent: Agent[Any] = Agent(name="researcher", model=ScriptedModel(steps), tools=[search])

    def run(self, hooks: HeartbeatHooks | None = None) -> Any:
        return Runner.run_sync(self.agent, "research heartbeats", hooks=hooks, max_turns=40)


def test_agent_stopped_is_both_families() -> None:
    """The SDK re-raises an AgentsException unwrapped; user code can catch heartbeat's Stopped."""
    assert issubclass(AgentStopped, Stopped) and issubclass(AgentStopped, AgentsException)


@pytest.mark.parametrize("mode", MODES)
def test_hooks_stop_a_repeating_agent_at_the_configured_repeat(mode: str, tmp_path: Path) -> None:
    """The same search over and over: the run raises Stopped naming the repeat, right after call REPEAT."""
    searcher = Searcher(*["x"] * 10)

    def body(target: Any, kill: Path) -> Stopped:
        with pytest.raises(Stopped) as caught:
            searcher.run(HeartbeatHooks(target))
        return caught.value

    bound = run_bound(mode, tmp_path, body)
    stop = bound.value
    assert isinstance(stop, AgentStopped) and stop.cause == "stuck"
    assert stop.anomaly is not None and stop.anomaly.kind == "repeat" and "repeat" in str(stop)
    assert searcher.ran == ["x"] * REPEAT
    assert anomalies(bound)[:1] == ["repeat"]  # the first finding; others (recurring) may join it
    if mode != "monitor":  # the state folder holds it all
        assert bound.tick is not None and bound.tick.decision is not None
        assert bound.tick.decision.action == "try_alternative"
        history, journal = saved_actions(tmp_path)
        assert history == journal == ['search({"q":"x"})'] * REPEAT


@pytest.mark.parametrize("mode", MODES)
def test_kill_between_two_tool_calls_stops_before_the_next(mode: str, tmp_path: Path) -> None:
    """KILL written by the model while it picks call 3: call 3 never runs."""

    def before_turn(n: int) -> None:
        if n == 3:
            (tmp_path / "KILL").write_text("stop now\n")

    searcher = Searcher("a", "b", "c", "d", before_turn=before_turn)

    def body(target: Any, kill: Path) -> Stopped:
        with pytest.raises(Stopped) as caught:
            searcher.run(HeartbeatHooks(target))
        return caught.value

    bound = run_bound(mode, tmp_path, body)
    assert bound.value.cause == "killed"
    assert searcher.ran == ["a", "b"]
    if mode != "monitor":  # the state folder holds it all
        assert bound.tick is not None and bound.tick.exit_code == 3
        history, journal = saved_actions(tmp_path)
        assert history == journal == ['search({"q":"a"})', 'search({"q":"b"})']


@pytest.mark.parametrize("mode", MODES)
def test_healthy_agent_runs_to_the_end_untouched(mode: str, tmp_path: Path) -> None:
    """Different searches: the same items and answer as without heartbeat, every call recorded."""
    plain = Searcher("a", "b", "c").run()
    searcher = Searcher("a", "b", "c")
    bound = run_bound(mode, tmp_path, lambda target, kill: searcher.run(HeartbeatHooks(target)))
    result = bound.value
    assert result.final_output == plain.final_output == "done"
    outputs = [i.output for i in result.new_items if isinstance(i, ToolCallOutputItem)]
    assert outputs == [i.output for i in plain.new_items if isinstance(i, ToolCallOutputItem)]
    assert searcher.ran == ["a", "b", "c"] and anomalies(bound) == []
    if mode != "monitor":  # the state folder holds it all
        assert bound.tick is not None and bound.tick.exit_code == 0
        assert saved_actions(tmp_path)[0] == [f'search({{"q":"{q}"}})' for q in "abc"]


def test_failed_tool_is_recorded_as_an_error(tmp_path: Path) -> None:
    """The SDK hands the hooks only its fixed failure text: that text is recorded as the error."""
    searcher = Searcher("fails", "a")
    bound = run_bound("monitor", tmp_path, lambda target, kill: searcher.run(HeartbeatHooks(target)))
    assert bound.monitor is not None
    errors = [a.error for a in bound.monitor.history]
    assert errors[0] is not None and "error occurred" in errors[0] and errors[1] is None


@pytest.mark.parametrize("mode", MODES)
def test_guardrails_redirect_the_model_mid_run(mode: str, tmp_path: Path) -> None:
    """on_stuck="redirect": call REPEAT's answer is the instructions; the same call again is not run."""

    def body(target: Any, kill: Path) -> Any:
        searcher = Searcher(*["x"] * (REPEAT + 1), "y")
        hooks = HeartbeatHooks(target, on_stuck="redirect")
        hooks.guard_tools(searcher.agent)
        if mode == "session":
            with pytest.raises(Stopped) as caught:
                searcher.run(hooks)
            assert searcher.ran == ["x"] * REPEAT
            return caught.value
        result = searcher.run(hooks)
        assert searcher.ran == ["x"] * REPEAT + ["y"]
        assert hooks.guard.redirects == 2 and hooks.guard.stopped is None
        return result

    bound = run_bound(mode, tmp_path, body)
    if mode == "session":
        # Each finding ends a Session's heartbeat: the refusal is its own, stuck, and the model did
        # again what the recovery said to avoid, so the policy calls a human and the run stops.
        assert bound.value.cause == "needs_human" and "did again what the recovery said" in str(bound.value)
        assert saved_actions(tmp_path)[0] == ['search({"q":"x"})'] * (REPEAT + 1)
        return
    outputs = [str(i.output) for i in bound.value.new_items if isinstance(i, ToolCallOutputItem)]
    assert outputs[: REPEAT - 1] == ["3 hits for x"] * (REPEAT - 1)
    assert all("Try an alternative: do not call" in o for o in outputs[REPEAT - 1 : REPEAT + 1])
    # Each says what became of its call: the first ran (output guardrail), the next never did (input).
    ran, refused = outputs[REPEAT - 1 : REPEAT + 1]
    assert WITHHELD in ran and NOT_RUN not in ran and NOT_RUN in refused and WITHHELD not in refused
    assert outputs[-1] == "3 hits for y" and bound.value.final_output == "done"
    if mode != "monitor":  # the state folder holds it all, the refused call as the refusal it was
        assert saved_actions(tmp_path)[0] == ['search({"q":"x"})'] * (REPEAT + 1) + ['search({"q":"y"})']
        history = json.loads((tmp_path / "state" / "state.json").read_text())["history"]
        assert [a["error"] for a in history][REPEAT - 1 :] == [None, REFUSED, None]


def test_guardrails_stop_a_model_that_ignores_the_instructions(tmp_path: Path) -> None:
    """Still repeating after max_redirects: the run is stopped and the tool never ran again."""

    def body(target: Any, kill: Path) -> Stopped:
        searcher = Searcher(*["x"] * 12)
        hooks = HeartbeatHooks(target, on_stuck="redirect", max_redirects=2)
        hooks.guard_tools(searcher.agent)
        with pytest.raises(Stopped) as caught:
            searcher.run(hooks)
        assert searcher.ran == ["x"] * REPEAT
        return caught.value

    assert "2 redirection(s) ignored" in str(run_bound("monitor", tmp_path, body).value)


@pytest.mark.parametrize("mode", ["ctx", "monitor"])
def test_guardrails_stop_a_model_that_goes_on_with_other_calls_after_max_redirects(
    mode: str, tmp_path: Path
) -> None:
    """on_stuck="redirect": each call going on with the stuck pattern is redirected, up to max_redirects."""
    holder: list[Searcher] = []

    def body(target: Any, kill: Path) -> Stopped:
        searcher = Searcher(*WANDERING)
        holder.append(searcher)
        hooks = HeartbeatHooks(target, on_stuck="redirect", max_redirects=2)
        hooks.guard_tools(searcher.agent)
        with pytest.raises(Stopped) as caught:
            searcher.run(hooks)
        return caught.value

    bound = run_bound(mode, tmp_path, body)
    assert bound.value.cause == "stuck" and "2 redirection(s) ignored" in str(bound.value)
    assert "recurring" in str(bound.value)
    assert holder[0].ran == WANDERING[:7]
    if mode == "ctx":
        assert anomalies(bound).count("recurring") == 1


def test_guarding_the_same_tools_again_replaces_the_earlier_guardrails(tmp_path: Path) -> None:
    """One agent, two runs: the second run's hooks replace the first's (a stopped guard does not linger)."""

    def body(target: Any, kill: Path) -> None:
        searcher = Searcher(*["x"] * 12)
        first = HeartbeatHooks(target, on_stuck="redirect", max_redirects=1)
        first.guard_tools(searcher.agent)
        with pytest.raises(Stopped):
            searcher.run(first)
        again = Searcher("a", "b")
        again.agent.tools = searcher.agent.tools  # the same tool objects, already guarded once
        second = HeartbeatHooks(Guard(Monitor()), on_stuck="redirect")
        second.guard_tools(again.agent)
        assert again.run(second).final_output == "done"
        assert len(searcher.tool.tool_input_guardrails or []) == 1
        assert len(searcher.tool.tool_output_guardrails or []) == 1

    run_bound("monitor", tmp_path, body)


def test_a_streamed_run_is_stopped_too(tmp_path: Path) -> None:
    """Runner.run_streamed: the stop surfaces from stream_events() at the configured repeat."""

    async def stream(searcher: Searcher, hooks: HeartbeatHooks) -> None:
        result = Runner.run_streamed(searcher.agent, "research heartbeats", hooks=hooks, max_turns=40)
        async for _ in result.stream_events():
            pass

    def body(target: Any, kill: Path) -> Stopped:
        searcher = Searcher(*["x"] * 10)
        with pytest.raises(Stopped) as caught:
            asyncio.run(stream(searcher, HeartbeatHooks(target)))
        assert searcher.ran == ["x"] * REPEAT
        return caught.value

    assert run_bound("monitor", tmp_path, body).value.cause == "stuck"


@pytest.mark.parametrize("how", ["hooks", "guardrails"])
def test_a_call_in_flight_at_kill_is_stopped_as_journaled(how: str, tmp_path: Path) -> None:
    """Regression: the call ran and the Session journaled it; the AgentStopped said it had not."""
    session = folder_session(tmp_path)
    searcher = Searcher("a", "b", on_search=lambda q: kill_mid_call(session, tmp_path))
    hooks = HeartbeatHooks(session, on_stuck="redirect" if how == "guardrails" else "stop")
    if how == "guardrails":
        hooks.guard_tools(searcher.agent)
    try:
        with pytest.raises(Stopped) as caught:
            searcher.run(hooks)
    finally:
        session.close()
    assert isinstance(caught.value, AgentStopped)
    assert caught.value.cause == "killed" and caught.value.journaled
    assert searcher.ran == ["a"] and late_actions(tmp_path) == [("search", "killed")]


@pytest.mark.parametrize("how", ["hooks", "guarded"])
def test_a_call_still_running_when_heartbeat_stops_the_run_is_journaled(how: str, tmp_path: Path) -> None:
    """Regression: a turn asked for two tools at once; one tripped a detector and heartbeat stopped
    the run, and the SDK cancelled the other while it ran: it had started (it may have acted) and
    reached no hook, so it was in neither state.json nor the journal. Now it is journaled once, as
    a call the run was stopped under."""
    started: dict[str, asyncio.Event] = {}

    def began() -> asyncio.Event:  # made on the run's own event loop, by whichever call comes first
        return started.setdefault("slow", asyncio.Event())

    @function_tool
    async def slow(q: str) -> str:
        """Write the report (runs until it is cancelled)."""
        began().set()
        await asyncio.Event().wait()
        return "written"

    searched: list[str] = []

    @function_tool
    async def search(q: str) -> str:
        """Search the web (the third time, once the report is being written)."""
        searched.append(q)
        if len(searched) == 3:
            await began().wait()
        return "3 hits"

    def turn(*items: Any) -> ModelStep:
        return ModelStep(responder=lambda call: list(items))

    steps = [
        turn(function_call("search", {"q": "x"}, call_id="c1")),
        turn(function_call("search", {"q": "x"}, call_id="c2")),
        turn(
            function_call("slow", {"q": "report"}, call_id="c3"),
            function_call("search", {"q": "x"}, call_id="c4"),
        ),
        turn(assistant_message("done")),
    ]
    session = folder_session(tmp_path)
    hooks = HeartbeatHooks(session)
    agent: Agent[Any] = Agent(name="writer", model=ScriptedModel(steps), tools=[slow, search])
    if how == "guarded":
        hooks.guard_tools(agent)
    try:
        with pytest.raises(AgentStopped) as caught:
            Runner.run_sync(agent, "write the report", hooks=hooks, max_turns=10)
    finally:
        session.close()
    assert caught.value.cause == "stuck"
    lines = (tmp_path / "state" / "journal.jsonl").read_text().splitlines()
    actions = [e for e in map(json.loads, lines) if e["event"] == "action"]
    assert [a["tool"] for a in actions] == ["search", "search", "search", "slow"]
    assert actions[-1]["error"] == "the run was stopped while the call ran (it may have run): stuck"
