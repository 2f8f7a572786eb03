"""PydanticAI: the wrapper toolset records, redirects a stuck model mid-run, stops on KILL; FunctionModel."""

from __future__ import annotations

import asyncio
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
    assert_boom_failed_and_slow_cancelled,
    decisions,
    folder_session,
    kill_mid_call,
    late_actions,
    run_bound,
    saved_actions,
)
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.toolsets import FunctionToolset

from heartbeat.integrations import Guard, Stopped
from heartbeat.integrations.pydantic_ai import HeartbeatToolset, guarded


class Searcher:
    """A scripted model: each turn picks the next query from ``plan(turn, last tool answer)``; None ends."""

    def __init__(self, plan: Callable[[int, str], str | None]) -> None:
        self.ran: list[str] = []
        self.seen: list[str] = []
        turns = [0]

        def search(q: str) -> str:
            """Search the web."""
            self.ran.append(q)
            if q == "fails":
                raise ValueError("search backend is down")
            if q.startswith("nothing about"):
                return NOTHING
            if q == "retry":
                raise ModelRetry("rephrase the query")
            return f"3 hits for {q}"

        def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            turns[0] += 1
            last = messages[-1].parts[-1]
            answer = str(last.content) if isinstance(last, ToolReturnPart) else ""
            self.seen.append(answer)
            query = plan(turns[0], answer)
            if query is None:
                return ModelResponse(parts=[TextPart("done")])
            return ModelResponse(parts=[ToolCallPart("search", {"q": query}, tool_call_id=f"c{turns[0]}")])

        self.tools = FunctionToolset([search])
        self.model = FunctionModel(model)

    def run(self, toolset: Any) -> Any:
        return Agent(self.model, toolsets=[toolset]).run_sync("research heartbeats")


def queries(*qs: str) -> Callable[[int, str], str | None]:
    return lambda turn, answer: qs[turn - 1] if turn <= len(qs) else None


def obedient(turn: int, answer: str) -> str | None:
    """Searches "x" until told by heartbeat to try something else, then "y", then answers."""
    if answer.startswith("heartbeat:"):
        return "y"
    if answer == "3 hits for y":
        return None
    return "x"


@pytest.mark.parametrize("mode", MODES)
def test_stuck_model_reads_the_instructions_mid_run_and_recovers(mode: str, tmp_path: Path) -> None:
    """Call REPEAT of the same search is answered with "try an alternative"; the model changes course."""
    searcher = Searcher(obedient)
    bound = run_bound(mode, tmp_path, lambda target, kill: searcher.run(guarded(searcher.tools, target)))
    assert bound.value.output == "done"
    assert searcher.ran == ["x"] * REPEAT + ["y"]
    told = searcher.seen[REPEAT]
    assert told.startswith("heartbeat: you look stuck (repeat:")
    assert 'Try an alternative: do not call search({"q":"x"}) again' in told
    assert anomalies(bound)[:1] == ["repeat"]  # the first finding; others (recurring) may join it
    if mode != "monitor":  # the state folder holds it all
        # A Session ends the heartbeat at the anomaly: the recovery is the next one, which continues.
        expected = ["try_alternative"] if mode == "ctx" else ["try_alternative", "continue"]
        assert decisions(tmp_path) == expected
        history, journal = saved_actions(tmp_path)
        assert history == journal == ['search({"q":"x"})'] * REPEAT + ['search({"q":"y"})']


@pytest.mark.parametrize("mode", MODES)
def test_a_model_that_ignores_the_instructions_is_stopped(mode: str, tmp_path: Path) -> None:
    """Still repeating after max_redirects: Stopped, and the tool never ran past call REPEAT."""
    searcher = Searcher(queries(*["x"] * 20))

    def body(target: Any, kill: Path) -> Stopped:
        with pytest.raises(Stopped) as caught:
            searcher.run(guarded(searcher.tools, target, max_redirects=2))
        return caught.value

    bound = run_bound(mode, tmp_path, body)
    # A Session's policy hears of the refused call at once (each finding ends its heartbeat): the
    # model did again what the recovery said to avoid, and a human is called before max_redirects.
    cause = "needs_human" if mode == "session" else "stuck"
    assert bound.value.cause == cause and "repeat" in str(bound.value)
    assert searcher.ran == ["x"] * REPEAT
    told = [s for s in searcher.seen if s.startswith("heartbeat:")]
    # Call REPEAT ran (its result withheld); the same call again was refused before it ran (bound
    # to a Session, the run stopped there instead).
    assert WITHHELD in told[0] and NOT_RUN not in told[0]
    if mode == "session":
        assert len(told) == 1
    else:
        assert len(told) == 2 and NOT_RUN in told[1] and WITHHELD not in told[1]


@pytest.mark.parametrize("mode", ["ctx", "monitor"])
def test_a_model_that_goes_on_with_other_calls_is_stopped_after_max_redirects(
    mode: str, tmp_path: Path
) -> None:
    """Every call that continues the stuck pattern gets the instructions; the run stops at max_redirects."""
    searcher = Searcher(queries(*WANDERING))

    def body(target: Any, kill: Path) -> Stopped:
        with pytest.raises(Stopped) as caught:
            searcher.run(guarded(searcher.tools, target, max_redirects=2))
        return caught.value

    bound = run_bound(mode, tmp_path, body)
    assert bound.value.cause == "stuck" and "2 redirection(s) ignored" in str(bound.value)
    assert "recurring" in str(bound.value)
    assert searcher.ran == WANDERING[:7]
    assert sum(s.startswith("heartbeat:") for s in searcher.seen) == 2
    if mode == "ctx":
        assert anomalies(bound).count("recurring") == 1


def test_stop_mode_stops_at_the_configured_repeat(tmp_path: Path) -> None:
    """on_stuck="stop": no redirection, the run ends at call REPEAT."""
    searcher = Searcher(queries(*["x"] * 10))

    def body(target: Any, kill: Path) -> Stopped:
        with pytest.raises(Stopped) as caught:
            searcher.run(guarded(searcher.tools, target, on_stuck="stop"))
        return caught.value

    assert run_bound("monitor", tmp_path, body).value.anomaly.kind == "repeat"
    assert searcher.ran == ["x"] * REPEAT


@pytest.mark.parametrize("mode", MODES)
def test_kill_between_two_tool_calls_stops_before_the_next(mode: str, tmp_path: Path) -> None:
    """KILL written while the model picks call 3: call 3 never runs."""

    def plan(turn: int, answer: str) -> str | None:
        if turn == 3:
            (tmp_path / "KILL").write_text("stop now\n")
        return "abcd"[turn - 1] if turn <= 4 else None

    searcher = Searcher(plan)

    def body(target: Any, kill: Path) -> Stopped:
        with pytest.raises(Stopped) as caught:
            searcher.run(guarded(searcher.tools, target))
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
    """Different searches: the same answers and output as without heartbeat, every call recorded."""
    plain = Searcher(queries("a", "b", "c"))
    expected = plain.run(plain.tools).output
    searcher = Searcher(queries("a", "b", "c"))
    bound = run_bound(mode, tmp_path, lambda target, kill: searcher.run(guarded(searcher.tools, target)))
    assert bound.value.output == expected == "done"
    assert searcher.seen == plain.seen and searcher.ran == ["a", "b", "c"]
    assert anomalies(bound) == []
    if mode != "monitor":  # the state folder holds it all
        assert bound.tick is not None and bound.tick.exit_code == 0
        assert saved_actions(tmp_path)[0] == [f'search({{"q":"{q}"}})' for q in "abc"]


def test_tool_failures_are_recorded_and_passed_on(tmp_path: Path) -> None:
    """A ModelRetry reaches the model as before and is an errored action; a raised error leaves the run."""
    searcher = Searcher(queries("retry", "a"))
    bound = run_bound("monitor", tmp_path, lambda target, kill: searcher.run(guarded(searcher.tools, target)))
    assert bound.value.output == "done"
    assert bound.monitor is not None
    assert [a.error for a in bound.monitor.history] == ["ModelRetry: rephrase the query", None]

    failing = Searcher(queries("fails"))

    def body(target: Any, kill: Path) -> None:
        with pytest.raises(ValueError, match="backend is down"):
            failing.run(guarded(failing.tools, target))

    bound = run_bound("monitor", tmp_path, body)
    assert bound.monitor is not None
    assert bound.monitor.history[0].error == "ValueError: search backend is down"


def test_toolset_needs_a_guard_and_shares_it_across_runs(tmp_path: Path) -> None:
    """HeartbeatToolset without a guard is refused; one guard remembers a stuck call across two runs."""
    with pytest.raises(TypeError, match="needs guard"):
        HeartbeatToolset(FunctionToolset([]))

    def body(target: Any, kill: Path) -> None:
        searcher = Searcher(obedient)
        toolset = HeartbeatToolset(searcher.tools, guard=Guard(target, on_stuck="redirect"))
        searcher.run(toolset)
        again = Searcher(queries("x", "z"))  # a second run over the same toolset
        again.run(toolset)
        assert searcher.ran == ["x"] * REPEAT + ["y", "z"]  # "x" did not run again
        assert again.seen[1].startswith("heartbeat:")  # "x" is still answered with the instructions

    run_bound("monitor", tmp_path, body)


@pytest.mark.parametrize("how", ["toolset", "capability"])
def test_a_call_in_flight_at_kill_is_stopped_as_journaled(how: str, tmp_path: Path) -> None:
    """The call ran and the Session journaled it (after_stop): the Stopped the run raises says so too."""
    from heartbeat.integrations.pydantic_ai import HeartbeatCapability

    session = folder_session(tmp_path)
    ran: list[str] = []

    def search(q: str) -> str:
        """Search the web (slowly: KILL comes while it runs)."""
        ran.append(q)
        kill_mid_call(session, tmp_path)
        return f"3 hits for {q}"

    model = Searcher(queries("a", "b")).model
    if how == "toolset":
        agent: Agent[None, str] = Agent(model, toolsets=[guarded([search], session)])
    else:
        agent = Agent(model, tools=[search], capabilities=[HeartbeatCapability(session)])
    try:
        with pytest.raises(Stopped) as caught:
            agent.run_sync("research heartbeats")
    finally:
        session.close()
    assert caught.value.cause == "killed" and caught.value.journaled
    assert ran == ["a"] and late_actions(tmp_path) == [("search", "killed")]


@pytest.mark.parametrize("how", ["toolset", "capability"])
def test_a_call_cancelled_when_another_call_ends_the_run_is_journaled(how: str, tmp_path: Path) -> None:
    """Regression: a tool that raised ended the run, and PydanticAI cancelled the other call of that
    turn while it ran: it had started (it may have acted) and was in neither state.json nor the
    journal. Now it is recorded as an error saying it was cancelled and may have run."""
    from heartbeat.integrations.pydantic_ai import HeartbeatCapability

    started: dict[str, asyncio.Event] = {}

    def began() -> asyncio.Event:  # made on the run's own event loop, by whichever call comes first
        return started.setdefault("slow", asyncio.Event())

    async def slow(q: str) -> str:
        """Write the report (runs until it is cancelled)."""
        began().set()
        await asyncio.Event().wait()
        return "written"

    async def boom(q: str) -> str:
        """Search the index (fails once the report is being written)."""
        await began().wait()
        raise RuntimeError("the index is gone")

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls = [
            ToolCallPart("slow", {"q": "report"}, tool_call_id="c1"),
            ToolCallPart("boom", {"q": "x"}, tool_call_id="c2"),
        ]
        return ModelResponse(parts=calls)

    session = folder_session(tmp_path)
    if how == "toolset":
        agent: Agent[None, str] = Agent(FunctionModel(model), toolsets=[guarded([slow, boom], session)])
    else:
        agent = Agent(FunctionModel(model), tools=[slow, boom], capabilities=[HeartbeatCapability(session)])
    try:
        with pytest.raises(RuntimeError, match="the index is gone"):
            agent.run_sync("write the report")
    finally:
        session.close()
    assert_boom_failed_and_slow_cancelled(tmp_path)


@pytest.mark.parametrize("how", ["toolset", "capability"])
def test_a_redirect_the_run_ended_before_the_model_read_is_not_counted(how: str, tmp_path: Path) -> None:
    """Regression: a stuck call answered with the instructions in the turn whose output tool ended the
    run (the model never read them) counted toward max_redirects, so the agent's next run was stopped
    at its first call as having ignored a redirection it never saw. Now only redirections a model
    request carries count: the next run's model reads the instructions and changes course."""
    from pydantic import BaseModel

    from heartbeat.config.file import DetectorsConfig
    from heartbeat.detect.monitor import Monitor
    from heartbeat.integrations.pydantic_ai import HeartbeatCapability

    class Report(BaseModel):
        text: str

    ran: list[str] = []
    seen: list[str] = []

    def search(q: str) -> str:
        """Search the web."""
        ran.append(q)
        return f"3 hits for {q}"

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        answers = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        told = [str(p.content) for p in answers if str(p.content).startswith("heartbeat:")]
        seen.extend(told)
        turn = len([m for m in messages if isinstance(m, ModelResponse)]) + 1
        if told:
            query = "y"
        elif answers and answers[-1].content == "3 hits for y":
            return ModelResponse(parts=[ToolCallPart("final_result", {"text": "done"}, tool_call_id="end")])
        else:
            query = "x"
        calls = [ToolCallPart("search", {"q": query}, tool_call_id=f"c{turn}")]
        if turn == REPEAT and not seen:  # the stuck call and the answer in one turn: the run ends there
            calls.append(ToolCallPart("final_result", {"text": "first draft"}, tool_call_id="end"))
        return ModelResponse(parts=calls)

    monitor = Monitor(DetectorsConfig.model_validate({"repeat": {"threshold": REPEAT}}))
    if how == "toolset":
        agent: Agent[None, Report] = Agent(
            FunctionModel(model), output_type=Report, toolsets=[guarded([search], monitor, max_redirects=1)]
        )
    else:
        capability = HeartbeatCapability(monitor, max_redirects=1)
        agent = Agent(FunctionModel(model), output_type=Report, tools=[search], capabilities=[capability])
    assert agent.run_sync("research heartbeats").output.text == "first draft"
    assert ran == ["x"] * REPEAT and seen == []
    assert agent.run_sync("research heartbeats again").output.text == "done"
    assert len(seen) == 1 and NOT_RUN in seen[0]  # the same call asked again: refused, and said so
    assert ran == ["x"] * REPEAT + ["y"]


def test_a_tool_asking_to_retry_again_and_again_is_not_said_to_have_a_withheld_result(
    tmp_path: Path,
) -> None:
    """Regression: a tool that kept raising ModelRetry for the same query tripped a detector, and the
    model read that the call's result was withheld: there was none, the tool asked it to rephrase.
    Now it reads that the call failed, with the tool's words."""
    searcher = Searcher(lambda turn, answer: None if answer.startswith("heartbeat:") else "retry")
    searcher.tools.max_retries = REPEAT + 1  # PydanticAI's own limit is 1: the run would end there
    bound = run_bound("monitor", tmp_path, lambda target, kill: searcher.run(guarded(searcher.tools, target)))
    assert bound.value.output == "done"
    told = [s for s in searcher.seen if s.startswith("heartbeat:")]
    assert len(told) == 1 and WITHHELD not in told[0], told
    assert "ran and failed" in told[0] and "ModelRetry: rephrase the query" in told[0]
