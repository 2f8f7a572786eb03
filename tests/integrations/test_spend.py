"""Spend: model tokens and dollars from each framework's own test model, and budgets that stop a run.

Every agent here (``_spend_agents``) makes model calls of 120 tokens each
(100 in, 40 of them cached, 20 out), one search per call. With
``tokens_per_day = 250`` the third call goes past the limit and the run is
stopped before the fourth: one call over is the most a run spends.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _spend_agents import CACHED, INPUT, OUTPUT, SOURCES

from heartbeat.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
PER_CALL = INPUT + OUTPUT
LIMIT = 250
STOPPED_AFTER = LIMIT // PER_CALL + 1  # the call that goes past the limit is the last one made


def project(root: Path, framework: str, budget: str) -> Path:
    """A project: ``spend_agent.py`` for ``framework``, a heartbeat.toml with ``budget``, a file notifier."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "spend_agent.py").write_text(SOURCES[framework], encoding="utf-8")
    config = root / "heartbeat.toml"
    config.write_text(
        '[agent]\nname = "spender"\nstep = "spend_agent:step"\nstate_dir = "state"\nkill_file = "KILL"\n\n'
        f"[budget]\n{budget}\n\n"
        '[[notify]]\ntype = "file"\nname = "file"\npath = "notes.jsonl"\n',
        encoding="utf-8",
    )
    return config


def heartbeat(root: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m heartbeat ARGV`` in ``root`` (a real process; this tree and the agent importable)."""
    path = os.pathsep.join([str(root), str(ROOT), os.environ.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "heartbeat", *argv],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": path, **env},
    )


def load_agent(root: Path, framework: str) -> ModuleType:
    """The project's agent module, imported in this process."""
    spec = importlib.util.spec_from_file_location(f"spend_agent_{framework}", root / "spend_agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def saved(root: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads((root / "state" / "state.json").read_text())
    return state


def notes(root: Path) -> list[dict[str, Any]]:
    path = root / "notes.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def journal(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / "state" / "journal.jsonl").read_text().splitlines()]


def genai_price(calls: int) -> float:
    """genai-prices' own price of ``calls`` of our calls on gpt-4o-mini."""
    from genai_prices import Usage, calc_price

    usage = Usage(input_tokens=INPUT, output_tokens=OUTPUT, cache_read_tokens=CACHED)
    return calls * float(calc_price(usage, "gpt-4o-mini").total_price)


@pytest.mark.parametrize("framework", sorted(SOURCES))
def test_tokens_per_day_stops_a_heartbeat_tick_mid_run(tmp_path: Path, framework: str) -> None:
    """Inside `heartbeat tick` (bound to ctx): stopped with cause budget one call past the limit, paused,
    notified; `status --json` shows today's tokens by model."""
    project(tmp_path, framework, f"tokens_per_day = {LIMIT}")
    tick = heartbeat(tmp_path, "tick")
    assert tick.returncode == 0, tick.stderr
    assert "paused: budget:" in tick.stdout
    state = saved(tmp_path)
    assert state["data"]["run"] == {
        "cause": "budget",
        "model_calls": STOPPED_AFTER,
        "tools": STOPPED_AFTER - 1,
    }
    assert state["status"] == "paused" and "tokens today, limit 250" in state["status_reason"]
    assert [n["kind"] for n in notes(tmp_path)] == ["budget"]
    status = heartbeat(tmp_path, "status", "--json")
    assert status.returncode == 0, status.stderr
    spend = json.loads(status.stdout)["spend"]
    assert spend["tokens"] == STOPPED_AFTER * PER_CALL
    assert spend["limits"] == {"tokens_per_day": LIMIT}
    used = spend["models"]["gpt-4o-mini"]
    assert (used["calls"], used["input"], used["output"], used["cached"]) == (
        STOPPED_AFTER,
        STOPPED_AFTER * INPUT,
        STOPPED_AFTER * OUTPUT,
        STOPPED_AFTER * CACHED,
    )
    assert used["cost"] == pytest.approx(genai_price(STOPPED_AFTER)) and not used["unpriced"]
    # Model calls are spend, not actions: the journal holds the searches and one spend event.
    events = journal(tmp_path)
    assert [e["tool"] for e in events if e["event"] == "action"] == ["search"] * (STOPPED_AFTER - 1)
    [spent] = [e for e in events if e["event"] == "spend"]
    assert (
        spent["tokens"] == STOPPED_AFTER * PER_CALL
        and spent["models"]["gpt-4o-mini"]["calls"] == STOPPED_AFTER
    )
    # The next tick does not call the step: the agent stays paused.
    assert heartbeat(tmp_path, "tick").returncode == 0
    assert saved(tmp_path)["ticks"] == 1


@pytest.mark.parametrize("framework", sorted(SOURCES))
def test_tokens_per_day_stops_a_run_bound_to_a_state_folder(tmp_path: Path, framework: str) -> None:
    """Bound to a state folder (a Session): the same stop, pause and notification."""
    config = project(tmp_path, framework, f"tokens_per_day = {LIMIT}")
    result = load_agent(tmp_path, framework).run(str(config))
    assert result == {"cause": "budget", "model_calls": STOPPED_AFTER, "tools": STOPPED_AFTER - 1}
    state = saved(tmp_path)
    assert state["status"] == "paused" and state["budget"]["tokens"] == STOPPED_AFTER * PER_CALL
    assert [n["kind"] for n in notes(tmp_path)] == ["budget"]
    assert state["spend_totals"]["gpt-4o-mini"]["calls"] == STOPPED_AFTER


@pytest.mark.parametrize("framework", sorted(SOURCES))
def test_cost_per_day_in_dollars_matches_genai_prices(tmp_path: Path, framework: str) -> None:
    """cost_per_day works in dollars: stopped at the call that goes past it, at genai-prices' own price."""
    limit = genai_price(1) * 2.5
    config = project(tmp_path, framework, f"cost_per_day = {limit!r}")
    result = load_agent(tmp_path, framework).run(str(config))
    assert result["cause"] == "budget" and result["model_calls"] == 3
    state = saved(tmp_path)
    assert state["status"] == "paused" and "cost" in state["status_reason"]
    assert state["budget"]["cost"] == pytest.approx(genai_price(3))


SPENDER = """
def step(ctx):
    ctx.record("search", {"q": f"tick {ctx.tick}"}, output="3 hits")
    ctx.record_usage("gpt-4o-mini", 1000, 200, 100)
    ctx.record_usage("my-llama", 500, 50)
    ctx.record_usage("lab-model", 300, 30)
"""


@pytest.fixture
def spender(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An agent calling three models per tick: one genai-prices knows, one priced in [budget.prices], one
    priced nowhere; two ticks run, as the current folder."""
    (tmp_path / "spender_agent.py").write_text(SPENDER)
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nname = "spender"\nstep = "spender_agent:step"\nstate_dir = "state"\n\n'
        '[budget]\ntokens_per_day = 100000\n\n[budget.prices]\n"my-llama" = { input = 0.5, output = 1.5 }\n'
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for _ in range(2):
        assert main(["tick"], io.StringIO()) == 0
    return tmp_path


def test_metrics_carry_tokens_and_dollars_by_model(spender: Path) -> None:
    """`heartbeat metrics` parses with prometheus_client's parser and has both counters, by model."""
    from prometheus_client.parser import text_string_to_metric_families

    out = io.StringIO()
    assert main(["metrics"], out) == 0
    found = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(out.getvalue())
        for s in family.samples
    }
    agent = ("agent", "spender")

    def tokens(model: str, kind: str) -> float:
        return found[("heartbeat_tokens_total", (agent, ("kind", kind), ("model", model)))]

    assert (tokens("gpt-4o-mini", "input"), tokens("gpt-4o-mini", "output")) == (2000, 400)
    assert tokens("gpt-4o-mini", "cached") == 200 and tokens("lab-model", "input") == 600
    from genai_prices import Usage, calc_price

    once = float(
        calc_price(
            Usage(input_tokens=1000, output_tokens=200, cache_read_tokens=100), "gpt-4o-mini"
        ).total_price
    )
    assert found[("heartbeat_cost_dollars_total", (agent, ("model", "gpt-4o-mini")))] == pytest.approx(
        2 * once
    )
    llama = 2 * (500 * 0.5 + 50 * 1.5) / 1e6  # [budget.prices] in dollars per million tokens
    assert found[("heartbeat_cost_dollars_total", (agent, ("model", "my-llama")))] == pytest.approx(llama)
    assert found[("heartbeat_cost_dollars_total", (agent, ("model", "lab-model")))] == 0


def test_an_unpriced_model_is_counted_in_tokens_and_said_once(spender: Path) -> None:
    """A model no price is known for: tokens counted, one `unpriced` journal event, named in status."""
    events = journal(spender)
    assert [e["model"] for e in events if e["event"] == "unpriced"] == ["lab-model"]
    spends = [e for e in events if e["event"] == "spend"]
    assert len(spends) == 2 and spends[0]["models"]["lab-model"] == {
        "calls": 1, "input": 300, "output": 30, "cached": 0, "cost": 0.0, "unpriced": 1,
    }  # fmt: skip
    out = io.StringIO()
    assert main(["status", "--json"], out) == 0
    spend = json.loads(out.getvalue())["spend"]
    assert spend["unpriced"] == ["lab-model"] and spend["tokens"] == 2 * (1200 + 550 + 330)
    text = io.StringIO()
    assert main(["status"], text) == 0
    lines = text.getvalue().splitlines()
    assert any(line.startswith("spend today  4,160 tokens of 100,000, $") for line in lines)
    assert any("lab-model" in line and "no price: counted in tokens only" in line for line in lines)
    # Regression (live round 41): the headline said "$0.0000 of $0.01" for calls it could not price,
    # metrics exported 0 dollars alone, and a replay of the journal a bare "$...". Each says them now.
    assert any(
        line.startswith("spend today") and line.endswith("and 2 call(s) with no price") for line in lines
    )
    metrics = io.StringIO()
    assert main(["metrics"], metrics) == 0
    assert 'heartbeat_unpriced_calls_total{agent="spender",model="lab-model"} 2.0' in metrics.getvalue()
    replayed = io.StringIO()
    assert main(["replay", str(spender / "state" / "journal.jsonl")], replayed) == 0
    assert replayed.getvalue().count("1 call(s) with no price") == 2, replayed.getvalue()
    assert "2 call(s) with no price; last decision" in replayed.getvalue()


def test_tokens_per_tick_pauses_within_the_heartbeat(tmp_path: Path) -> None:
    """tokens_per_tick: record_usage returns the budget anomaly past the limit; the tick pauses, notified."""
    from conftest import heartbeat_over

    seen: list[Any] = []

    def step(ctx: Any) -> None:
        for _ in range(5):
            hit = ctx.record_usage("some-model", 80, 20, cost=0.001)
            seen.append(hit)
            if hit is not None:
                return

    result = heartbeat_over(tmp_path, step, budget={"tokens_per_tick": 250}).tick()
    assert result.outcome == "paused" and "300 tokens in one tick, limit 250" in result.message
    assert [hit is None for hit in seen] == [True, True, False]
    assert seen[-1].kind == "budget" and seen[-1].evidence["model"] == "some-model"
    assert [json.loads(line)["kind"] for line in (tmp_path / "notes.jsonl").read_text().splitlines()] == [
        "budget"
    ]
    assert saved(tmp_path)["history"] == []  # model calls are not actions: the detectors never saw them


def test_a_tick_imports_neither_genai_prices_nor_a_framework(tmp_path: Path) -> None:
    """`heartbeat tick` of an agent that records actions loads no price data and no framework."""
    (tmp_path / "plain_agent.py").write_text(
        'def step(ctx):\n    ctx.record("search", {"q": "x"}, output="hits")\n'
    )
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstep = "plain_agent:step"\nstate_dir = "state"\n\n[budget]\ntokens_per_day = 1000\n'
    )
    tick = heartbeat(tmp_path, "tick", PYTHONPROFILEIMPORTTIME="1")
    assert tick.returncode == 0, tick.stderr
    loaded = {
        line.split("|")[-1].strip() for line in tick.stderr.splitlines() if line.startswith("import time:")
    }
    assert "heartbeat.tick.runner" in loaded  # the import log is there
    for heavy in ("genai_prices", "langchain_core", "langgraph", "agents", "pydantic_ai", "opentelemetry"):
        assert heavy not in loaded, f"a tick imported {heavy}"


def test_exec_usage_lines_are_spend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--exec: a program in any language writes a `usage` line per model call; a bad one is named."""
    script = tmp_path / "agent.sh"
    script.write_text(
        "#!/bin/sh\n"
        'echo \'{"tool": "grep", "args": {"pattern": "TODO"}, "output": "3 matches"}\' '
        '>> "$HEARTBEAT_ACTIONS"\n'
        'echo \'{"usage": {"model": "gpt-4o-mini", "input_tokens": 900, "output_tokens": 100}}\' '
        '>> "$HEARTBEAT_ACTIONS"\n'
        'echo \'{"usage": {"model": "in-house", "input_tokens": 50, "output_tokens": 5, "cost": 0.25}}\' '
        '>> "$HEARTBEAT_ACTIONS"\n'
        'echo \'{"usage": {"model": "in-house", "input_tokens": -1}}\' >> "$HEARTBEAT_ACTIONS"\n'
    )
    script.chmod(0o755)
    (tmp_path / "heartbeat.toml").write_text(f'[agent]\nexec = "{script}"\nstate_dir = "state"\n')
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    assert main(["tick", "--json"], out) == 1  # the bad line: named, the good ones kept
    assert "line 4: 'usage.input_tokens' must be an integer >= 0" in json.loads(out.getvalue())["step_error"]
    budget = saved(tmp_path)["budget"]
    assert budget["tokens"] == 1055 and budget["models"]["in-house"]["cost"] == 0.25
    assert [h["tool"] for h in saved(tmp_path)["history"]] == ["grep"]


def test_otel_chat_spans_are_spend_live_and_in_replay(tmp_path: Path) -> None:
    """PydanticAI's own instrumentation: each chat span's gen_ai.usage.* is spend of the state folder
    (past tokens_per_day the agent is paused), and a replay of the export shows it per heartbeat."""
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from pydantic_ai import Agent, capabilities
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.usage import RequestUsage

    from heartbeat.integrations.otel import ToolSpanProcessor

    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nname = "traced"\nstate_dir = "state"\n\n[budget]\ntokens_per_day = 500\n'
    )
    export = tmp_path / "spans.jsonl"
    provider = TracerProvider()
    processor = ToolSpanProcessor(tmp_path / "heartbeat.toml")
    provider.add_span_processor(processor)
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(str(export))))
    turns = [0]

    def model(messages: Any, info: Any) -> ModelResponse:
        turns[0] += 1
        usage = RequestUsage(input_tokens=INPUT, output_tokens=OUTPUT, cache_read_tokens=CACHED)
        if turns[0] <= 4:
            return ModelResponse(
                parts=[ToolCallPart("search", {"q": f"topic {'abcd'[turns[0] - 1]}"})], usage=usage
            )
        return ModelResponse(parts=[TextPart("done")], usage=usage)

    settings = InstrumentationSettings(tracer_provider=provider)
    agent = Agent(
        FunctionModel(model, model_name="gpt-4o-mini"),
        capabilities=[capabilities.Instrumentation(settings=settings)],
    )

    @agent.tool_plain
    def search(q: str) -> str:
        """Search."""
        return f"hits for {q}"

    assert agent.run_sync("go").output == "done"
    provider.shutdown()
    assert processor.model_calls == 5 and processor.recorded == 4
    state = saved(tmp_path)
    assert state["budget"]["models"]["gpt-4o-mini"]["calls"] == 5
    assert state["status"] == "paused" and "tokens today, limit 500" in state["status_reason"]
    assert [e["kind"] for e in journal(tmp_path) if e["event"] == "notify"] == ["budget"]
    # The export replayed: one heartbeat (one trace), its spend, and where the budget would have stopped it.
    out = io.StringIO()
    assert main(["replay", str(export), "--json", "--config", str(tmp_path / "heartbeat.toml")], out) == 0
    [line] = [json.loads(text) for text in out.getvalue().splitlines()]
    assert line["spend"]["tokens"] == 5 * PER_CALL
    assert line["spend"]["cost"] == pytest.approx(genai_price(5), abs=1e-6)
    assert line["budget"] == "budget: 600 tokens today, limit 500"


def test_the_report_shows_spend_per_heartbeat_and_by_model(spender: Path) -> None:
    """The report page: tokens today against the limit, model spend by model and per heartbeat."""
    out = io.StringIO()
    assert main(["report", "--out", "-"], out) == 0
    page = out.getvalue()
    assert "model tokens on" in page and "Model spend" in page and "Spend per heartbeat" in page
    for model in ("gpt-4o-mini", "my-llama", "lab-model"):
        assert f"<code>{model}</code>" in page
    assert page.count("gpt-4o-mini, lab-model, my-llama") == 2  # one row per heartbeat that spent
    assert "4,160 model tokens" in page and "no price for model lab-model" in page


def test_the_toolnode_wrapper_counts_each_asking_message_once(tmp_path: Path) -> None:
    """HeartbeatToolWrapper: the tokens of the AI message that asked for the calls, once for its two calls;
    past the limit the next call is stopped (cause budget) before its tool runs."""
    from conftest import heartbeat_over
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    from heartbeat.integrations import Stopped
    from heartbeat.integrations.langchain import HeartbeatToolWrapper

    class Chat(FakeMessagesListChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Chat:
            return self

    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
    usage: Any = {"input_tokens": INPUT, "output_tokens": OUTPUT, "total_tokens": PER_CALL}
    turns = [
        AIMessage(
            content="",
            tool_calls=[
                {"name": "search", "args": {"q": words[2 * i + k]}, "id": f"c{i}{k}"} for k in range(2)
            ],
            usage_metadata=usage,
            response_metadata={"model_name": "gpt-4o-mini"},
        )
        for i in range(5)
    ]
    ran: list[str] = []

    @tool
    def search(q: str) -> str:
        """Search."""
        ran.append(q)
        return f"hits for {q}"

    model = Chat(responses=[*turns, AIMessage(content="done")])
    outcome: dict[str, Any] = {}

    def step(ctx: Any) -> None:
        wrapper = HeartbeatToolWrapper(ctx)
        graph = StateGraph(MessagesState)
        graph.add_node("model", lambda state: {"messages": [model.invoke(state["messages"])]})
        graph.add_node("tools", ToolNode([search], wrap_tool_call=wrapper, awrap_tool_call=wrapper.acall))
        graph.add_edge(START, "model")
        graph.add_conditional_edges("model", tools_condition)
        graph.add_edge("tools", "model")
        try:
            graph.compile().invoke({"messages": [("user", "go")]})
        except Stopped as exc:
            outcome["cause"] = exc.cause

    result = heartbeat_over(tmp_path, step, budget={"tokens_per_day": LIMIT}).tick()
    assert outcome == {"cause": "budget"} and result.outcome == "paused"
    assert model.i == STOPPED_AFTER and len(ran) == 2 * (STOPPED_AFTER - 1)
    assert saved(tmp_path)["budget"]["tokens"] == STOPPED_AFTER * PER_CALL  # once per message, not per call


def test_a_monitor_bound_guard_counts_tokens_in_memory() -> None:
    """Bound to a Monitor (no budget, no files): the model calls are counted by model, never actions."""
    from heartbeat.detect.monitor import Monitor
    from heartbeat.integrations import Guard, MonitorRecorder

    monitor = Monitor()
    monitor.start_tick(1)
    recorder = MonitorRecorder(monitor)
    guard = Guard(recorder)
    for _ in range(3):
        assert guard.usage("gpt-4o-mini", 100, 20, 40).action == "go"
    assert guard.check().action == "go" and monitor.actions_total == 0
    spent = recorder.usage["gpt-4o-mini"]
    assert (spent.calls, spent.input, spent.output, spent.cached) == (3, 300, 60, 120)


def test_log_shows_spend_by_model(spender: Path) -> None:
    """`heartbeat log --event spend`: tokens and dollars by model, one line per heartbeat."""
    out = io.StringIO()
    assert main(["log", "--event", "spend", "--event", "unpriced"], out) == 0
    lines = out.getvalue().splitlines()
    assert sum("spend" in line for line in lines) == 2 and sum("unpriced" in line for line in lines) == 1
    assert any("2080 tokens, $" in line and "gpt-4o-mini 1 call(s) 1200 tokens" in line for line in lines)
    assert any("lab-model: genai-prices does not know it" in line for line in lines)
    # Never priced as zero in silence: a model no price is known for says so in each line and tick.
    assert all("lab-model 1 call(s) 330 tokens, 1 with no price" in line for line in lines if "spend" in line)
    ticks = io.StringIO()
    assert main(["log", "--event", "tick"], ticks) == 0
    assert all(
        "2080 tokens, $" in line and ", 1 call(s) with no price" in line
        for line in ticks.getvalue().splitlines()
    )
