"""PydanticAI spend: HeartbeatCapability records every model request once, the final answer's too.

The real framework on its own offline models (``FunctionModel``, ``TestModel``),
bound to a step's ``ctx`` inside a real heartbeat; the totals are compared with
the framework's own ``result.usage``.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import heartbeat_over
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RequestUsage

from heartbeat.cli.main import main
from heartbeat.integrations import Stopped
from heartbeat.integrations.pydantic_ai import HeartbeatCapability, guarded

MODEL = "gpt-4o-mini"
# Each request's tokens differ, so a request counted twice or missed shows in the totals.
TURNS = [
    (RequestUsage(input_tokens=100, output_tokens=20, cache_read_tokens=40), "alpha"),
    (RequestUsage(input_tokens=150, output_tokens=30, cache_read_tokens=0), "beta"),
    (RequestUsage(input_tokens=210, output_tokens=70, cache_read_tokens=10), None),  # the final answer
]


class Scripted:
    """A FunctionModel that asks for a search per turn of ``turns`` and answers "done" at a None."""

    def __init__(self, turns: list[tuple[RequestUsage, str | None]]) -> None:
        self.calls = 0

        def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            usage, query = turns[min(self.calls, len(turns) - 1)]
            self.calls += 1
            if query is None:
                return ModelResponse(parts=[TextPart("done")], usage=usage)
            part = ToolCallPart("search", {"q": query}, tool_call_id=f"c{self.calls}")
            return ModelResponse(parts=[part], usage=usage)

        self.model = FunctionModel(answer, model_name=MODEL)


def search(q: str) -> str:
    """Search."""
    return f"3 hits for {q}"


def saved(root: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads((root / "state" / "state.json").read_text())
    return state


def spend_events(root: Path) -> list[dict[str, Any]]:
    lines = (root / "state" / "journal.jsonl").read_text().splitlines()
    return [event for event in map(json.loads, lines) if event["event"] == "spend"]


def status_spend(root: Path) -> dict[str, Any]:
    out = io.StringIO()
    assert main(["status", "--json", "--state-dir", str(root / "state")], out) == 0
    spend: dict[str, Any] = json.loads(out.getvalue())["spend"]
    return spend


def test_every_request_is_counted_once_the_final_answer_too(tmp_path: Path) -> None:
    """Two tool calls and the final answer: three requests, their tokens in the journal and in status,
    equal to the framework's own run usage (nothing missed, nothing counted twice)."""
    scripted = Scripted(TURNS)
    results: list[Any] = []

    def step(ctx: Any) -> None:
        agent = Agent(scripted.model, tools=[search])
        results.append(agent.run_sync("go", capabilities=[HeartbeatCapability(ctx)]))

    outcome = heartbeat_over(tmp_path, step).tick()
    assert outcome.outcome == "ran", outcome.message
    [result] = results
    assert result.output == "done"
    usage = result.usage
    assert usage.requests == 3 and usage.input_tokens == 460 and usage.output_tokens == 120
    [spent] = spend_events(tmp_path)
    assert spent["tokens"] == usage.input_tokens + usage.output_tokens
    used = spent["models"][MODEL]
    assert (used["calls"], used["input"], used["output"], used["cached"]) == (
        usage.requests,
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_tokens,
    )
    shown = status_spend(tmp_path)
    assert shown["tokens"] == usage.input_tokens + usage.output_tokens
    assert shown["models"][MODEL]["calls"] == 3
    assert [h["tool"] for h in saved(tmp_path)["history"]] == ["search", "search"]  # tools still watched


def test_a_run_with_no_tools_is_counted(tmp_path: Path) -> None:
    """An agent with no tool at all (TestModel answering at once): its one request is spend."""
    results: list[Any] = []

    def step(ctx: Any) -> None:
        results.append(Agent(TestModel()).run_sync("hello", capabilities=[HeartbeatCapability(ctx)]))

    assert heartbeat_over(tmp_path, step).tick().outcome == "ran"
    [result] = results
    usage = result.usage
    assert usage.requests == 1 and usage.input_tokens + usage.output_tokens > 0
    [spent] = spend_events(tmp_path)
    assert spent["tokens"] == usage.input_tokens + usage.output_tokens
    assert spent["models"]["test"]["calls"] == 1
    assert status_spend(tmp_path)["tokens"] == usage.input_tokens + usage.output_tokens


def test_a_budget_crossed_by_the_final_answer_stops_the_next_run_before_its_first_request(
    tmp_path: Path,
) -> None:
    """tokens_per_tick = 350: the first run's final answer takes it past (120 + 180 + 280); that run has
    its answer, the next one is stopped (cause budget) before any model request; the agent is paused and
    a budget notification queued."""
    scripted = Scripted(TURNS)
    seen: dict[str, Any] = {}

    def step(ctx: Any) -> None:
        agent = Agent(scripted.model, tools=[search])
        seen["first"] = agent.run_sync("go", capabilities=[HeartbeatCapability(ctx)]).output
        seen["calls"] = scripted.calls
        try:
            agent.run_sync("again", capabilities=[HeartbeatCapability(ctx)])
        except Stopped as exc:
            seen["cause"] = exc.cause

    outcome = heartbeat_over(tmp_path, step, budget={"tokens_per_tick": 350}).tick()
    assert seen == {"first": "done", "calls": 3, "cause": "budget"}
    assert scripted.calls == 3  # the second run made no request
    assert outcome.outcome == "paused" and "580 tokens in one tick, limit 350" in outcome.message
    notes = [json.loads(line) for line in (tmp_path / "notes.jsonl").read_text().splitlines()]
    assert [n["kind"] for n in notes] == ["budget"]


def test_one_capability_stops_its_later_runs_too(tmp_path: Path) -> None:
    """Given to Agent(...) once: past the budget, the stop holds for the agent's next run (no request)."""
    scripted = Scripted(TURNS)
    causes: list[str] = []

    def step(ctx: Any) -> None:
        agent = Agent(scripted.model, tools=[search], capabilities=[HeartbeatCapability(ctx)])
        agent.run_sync("go")
        try:
            agent.run_sync("again")
        except Stopped as exc:
            causes.append(exc.cause)

    heartbeat_over(tmp_path, step, budget={"tokens_per_tick": 350}).tick()
    assert causes == ["budget"] and scripted.calls == 3


def test_guarded_inside_the_capability_is_refused(tmp_path: Path) -> None:
    """A toolset already guarded under the capability would record every call twice: refused, said why."""
    scripted = Scripted(TURNS)
    errors: list[str] = []

    def step(ctx: Any) -> None:
        agent = Agent(scripted.model, toolsets=[guarded([search], ctx)])
        with pytest.raises(TypeError) as caught:
            agent.run_sync("go", capabilities=[HeartbeatCapability(ctx)])
        errors.append(str(caught.value))

    heartbeat_over(tmp_path, step).tick()
    assert errors and "not both" in errors[0] and scripted.calls == 0
