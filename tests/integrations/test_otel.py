"""OpenTelemetry: GenAI tool spans recorded live and their OTLP/JSON export replayed find the same anomalies.

Everything is real: the OpenTelemetry SDK, its OTLP JSON file exporter, and
PydanticAI's own instrumentation with its offline ``FunctionModel``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode, Tracer

from heartbeat.base.errors import ConfigError
from heartbeat.config.file import HeartbeatConfig
from heartbeat.detect.monitor import Monitor
from heartbeat.formats import otlp
from heartbeat.integrations.otel import ToolSpanProcessor
from heartbeat.integrations.session import Session
from heartbeat.replay.play import replay

CONFIG = HeartbeatConfig()


@contextmanager
def instrumented(
    target: Monitor | Session, export: Path
) -> Iterator[tuple[TracerProvider, ToolSpanProcessor]]:
    """A TracerProvider feeding heartbeat live and writing an OTLP/JSON export beside it."""
    provider = TracerProvider()
    processor = ToolSpanProcessor(target)
    provider.add_span_processor(processor)
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(str(export))))
    try:
        yield provider, processor
    finally:
        provider.shutdown()


def tool_call(
    tracer: Tracer, tool: str, args: dict[str, Any], result: str | None, error: str | None = None
) -> None:
    """One tool execution, named exactly as the GenAI semantic conventions name it."""
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.tool.call.id": f"call-{tool}-{json.dumps(args, sort_keys=True)}",
        "gen_ai.tool.call.arguments": json.dumps(args),
    }
    with tracer.start_as_current_span(f"execute_tool {tool}", attributes=attributes) as span:
        if error is not None:
            span.set_status(Status(StatusCode.ERROR, error))
            span.set_attribute("error.type", "ToolError")
        elif result is not None:
            span.set_attribute("gen_ai.tool.call.result", result)


def agent_run(tracer: Tracer, calls: list[tuple[str, dict[str, Any], str | None, str | None]]) -> None:
    """One agent run: one trace, an ``invoke_agent`` span around its tool calls (and a chat span)."""
    with tracer.start_as_current_span(
        "invoke_agent researcher", attributes={"gen_ai.operation.name": "invoke_agent"}
    ):
        with tracer.start_as_current_span("chat fake-model", attributes={"gen_ai.operation.name": "chat"}):
            pass
        for tool, args, result, error in calls:
            tool_call(tracer, tool, args, result, error)


RUNS: list[list[tuple[str, dict[str, Any], str | None, str | None]]] = [
    [  # healthy
        ("search", {"q": "heartbeat agents"}, "12 results about heartbeat agents", None),
        ("read", {"url": "https://example.org/a"}, "a long article about agents and heartbeats", None),
    ],
    [  # the same search again and again
        ("search", {"q": "stuck"}, "3 results about being stuck", None),
        ("search", {"q": "stuck"}, "3 results about being stuck", None),
        ("search", {"q": "stuck"}, "3 results about being stuck", None),
    ],
    [  # a cycle of two calls
        ("open", {"file": "a.py"}, "def a(): return b()", None),
        ("open", {"file": "b.py"}, "def b(): return a()", None),
        ("open", {"file": "a.py"}, "def a(): return b()", None),
        ("open", {"file": "b.py"}, "def b(): return a()", None),
    ],
    [  # a tool that keeps failing
        ("fetch", {"url": f"https://example.org/{i}"}, None, "ConnectionError: refused") for i in range(6)
    ],
]


def found(anomalies: Any) -> list[tuple[int, str, int | None]]:
    return [(a.tick, a.kind, a.action) for a in anomalies]


def replayed(export: Path) -> tuple[list[tuple[int, str, int | None]], list[str]]:
    """``heartbeat replay EXPORT``: the format detected, one heartbeat per trace."""
    ticks = list(replay(export, CONFIG))
    converted = list(replay(otlp.trace_lines(otlp.read(export)), CONFIG))  # the converter agrees
    assert [(t.actions, t.anomalies, t.decision) for t in converted] == [
        (t.actions, t.anomalies, t.decision) for t in ticks
    ]
    return [hit for t in ticks for hit in found(t.anomalies)], [t.decision.action for t in ticks]


def test_sdk_spans_named_by_the_conventions_give_the_same_anomalies_live_and_replayed(tmp_path: Path) -> None:
    export = tmp_path / "spans.jsonl"
    monitor = Monitor(CONFIG.detectors)
    with instrumented(monitor, export) as (provider, processor):
        tracer = provider.get_tracer("test-agent")
        for run in RUNS:
            agent_run(tracer, run)
    live = found(processor.anomalies)
    assert processor.recorded == sum(len(run) for run in RUNS) and processor.failures == 0
    # One kind per stuck run at least: the repeat in run 2, the cycle in run 3, the failures in run 4.
    assert [(tick, kind) for tick, kind, _ in live][:2] == [(2, "repeat"), (3, "loop")]
    assert (4, "error_rate") in [(tick, kind) for tick, kind, _ in live]
    replay_hits, decisions = replayed(export)
    assert replay_hits == live
    assert decisions[0] == "continue" and decisions[-1] == "escalate" and len(decisions) == 4
    # The export holds the other spans too; only the tool calls became actions, in order.
    data = otlp.read(export)
    names = [
        s["name"]
        for doc in data
        for rs in doc["resourceSpans"]
        for ss in rs["scopeSpans"]
        for s in ss["spans"]
    ]
    assert "invoke_agent researcher" in names and "chat fake-model" in names
    assert [a["tool"] for a in otlp.actions(data)] == [tool for run in RUNS for tool, *_ in run]
    failing = otlp.actions(data)[-1]
    assert failing == {
        "tool": "fetch",
        "args": {"url": "https://example.org/5"},
        "output": None,
        "error": "ConnectionError: refused",
    }


# A search asked a third time and told each time that nothing came: ``repeat`` and ``empty`` trip
# on the one call.
TWO_KINDS: list[tuple[str, dict[str, Any], str | None, str | None]] = [
    ("search", {"q": "stuck detection"}, "12 results about stuck agents", None),
    *[("search", {"q": "loop detection"}, "no results", None)] * 3,
]


@pytest.mark.parametrize("target", ["monitor", "session"])
def test_every_kind_one_span_trips_is_found_live_as_replayed(tmp_path: Path, target: str) -> None:
    """Each kind the call trips is in ``anomalies`` and told to ``on_anomaly``, not only the first
    (the live list once held ``repeat`` alone where the replay of its export found ``empty`` too)."""
    export = tmp_path / "spans.jsonl"
    files = {"agent": {"state_dir": str(tmp_path / "state"), "kill_file": str(tmp_path / "KILL")}}
    config = HeartbeatConfig.model_validate({**files, "base_dir": tmp_path})
    watched = Monitor(config.detectors) if target == "monitor" else Session(config, idle=30)
    told: list[str] = []
    with instrumented(watched, export) as (provider, processor):
        processor.on_anomaly = lambda anomaly, span: told.append(anomaly.kind)
        agent_run(provider.get_tracer("test-agent"), TWO_KINDS)
    replay_hits, _ = replayed(export)
    assert sorted(kind for _, kind, _ in replay_hits) == ["empty", "repeat"]
    assert sorted(kind for _, kind, _ in found(processor.anomalies)) == sorted(told) == ["empty", "repeat"]


def test_pydantic_ai_instrumentation_gives_the_same_anomalies_live_and_replayed(tmp_path: Path) -> None:
    from pydantic_ai import Agent, capabilities
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    export = tmp_path / "spans.jsonl"
    monitor = Monitor(CONFIG.detectors)
    turns = [0]

    def stuck_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        turns[0] += 1  # five times the same search, then an answer
        if turns[0] <= 5:
            return ModelResponse(parts=[ToolCallPart("search", {"query": "why is the build red"})])
        return ModelResponse(parts=[TextPart("giving up")])

    with instrumented(monitor, export) as (provider, processor):
        agent = Agent(
            FunctionModel(stuck_model),
            capabilities=[
                capabilities.Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))
            ],
        )

        @agent.tool_plain
        def search(query: str) -> str:
            """Search the build logs."""
            return f"1 result for {query}: the build is red"

        assert agent.run_sync("fix the build").output == "giving up"
    live = found(processor.anomalies)
    assert live[0] == (1, "repeat", 3)
    assert processor.recorded == 5
    replay_hits, _ = replayed(export)
    assert replay_hits == live
    actions = otlp.actions(otlp.read(export))
    [usage] = actions[0].pop("usage")  # the chat span before the call: spend, riding on the action
    assert usage["model"] == "function:stuck_model:" and usage["input_tokens"] > 0
    assert actions[0] == {
        "tool": "search",
        "args": {"query": "why is the build red"},
        "output": "1 result for why is the build red: the build is red",
        "error": None,
    }


def test_spans_recorded_into_a_state_folder_are_an_agent_like_any_other(tmp_path: Path) -> None:
    config = HeartbeatConfig.model_validate(
        {
            "agent": {"state_dir": str(tmp_path / "state"), "kill_file": str(tmp_path / "KILL")},
            "base_dir": tmp_path,
        }
    )
    session = Session(config, idle=30)
    with instrumented(session, tmp_path / "spans.jsonl") as (provider, processor):
        tracer = provider.get_tracer("test-agent")
        for run in RUNS[:2]:
            agent_run(tracer, run)
    # shutdown() ended the open heartbeat: one heartbeat per trace, saved with the decision.
    state = json.loads((tmp_path / "state" / "state.json").read_text())
    assert state["ticks"] == 2 and state["actions_total"] == 5
    assert state["stuck_streak"] == 1 and "search" in state["instructions"]
    assert [a["kind"] for a in state["anomalies"]] == ["repeat"]
    assert found(processor.anomalies)[0][1:] == ("repeat", 5)
    # A state folder's path is enough: the same agent, one more (healthy) heartbeat.
    with instrumented(ToolSpanProcessor(tmp_path / "state").target, tmp_path / "more.jsonl") as (provider, _):
        agent_run(provider.get_tracer("test-agent"), RUNS[0])
    state = json.loads((tmp_path / "state" / "state.json").read_text())
    assert (state["ticks"], state["actions_total"]) == (3, 7)


def test_the_processor_never_raises_into_the_instrumented_code(tmp_path: Path) -> None:
    class Broken(Monitor):
        def record(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("disk on fire")

    seen: list[str] = []

    def on_anomaly(anomaly: Any, span: Any) -> None:
        seen.append(anomaly.kind)
        raise ValueError("a user callback that fails")

    provider = TracerProvider()
    broken = ToolSpanProcessor(Broken(CONFIG.detectors))
    callback = ToolSpanProcessor(Monitor(CONFIG.detectors), on_anomaly=on_anomaly)
    provider.add_span_processor(broken)
    provider.add_span_processor(callback)
    tracer = provider.get_tracer("test-agent")
    agent_run(tracer, RUNS[1])  # would raise here if either processor let an exception out
    assert broken.failures == 3 and broken.recorded == 0
    assert seen == ["repeat"] and callback.failures == 1 and callback.recorded == 3


def test_otlp_parser_reads_documents_lines_and_odd_values() -> None:
    span = {
        "traceId": "t1",
        "name": "execute_tool",
        "endTimeUnixNano": "1700000000000000000",
        "attributes": [
            {"key": "gen_ai.tool.name", "value": {"stringValue": "calc"}},
            {"key": "gen_ai.tool.call.arguments", "value": {"stringValue": "[1, 2]"}},
            {"key": "gen_ai.tool.call.result", "value": {"intValue": "3"}},
        ],
        "status": {"code": "STATUS_CODE_ERROR", "message": "overflow"},
    }
    other = {"traceId": "t1", "name": "chat model", "endTimeUnixNano": "1", "attributes": []}
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [other, span]}]}]}
    assert (
        otlp.sniff(doc) and otlp.sniff([doc, doc]) and not otlp.sniff({"messages": []}) and not otlp.sniff([])
    )
    action = {"tool": "calc", "args": {"value": [1, 2]}, "output": "3", "error": "overflow"}
    assert otlp.actions(doc) == [action]
    assert otlp.ticks([doc]) == [{"at": "2023-11-14T22:13:20+00:00", "actions": [action], "heard": False}]
    with pytest.raises(ValueError, match="resourceSpans"):
        otlp.actions({"spans": []})
    assert otlp.tool_action("chat model", {}) is None
    assert otlp.tool_action(
        "x", {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.arguments": "{oops"}
    ) == {
        "tool": "(unknown tool)",
        "args": {"raw": "{oops"},
        "output": None,
        "error": None,
    }


def test_spans_after_a_kill_are_refused_quietly(tmp_path: Path) -> None:
    config = HeartbeatConfig.model_validate(
        {
            "agent": {"state_dir": str(tmp_path / "state"), "kill_file": str(tmp_path / "KILL")},
            "base_dir": tmp_path,
        }
    )
    (tmp_path / "KILL").write_text("stop\n")
    with instrumented(Session(config, idle=30), tmp_path / "spans.jsonl") as (provider, processor):
        agent_run(provider.get_tracer("test-agent"), RUNS[0])  # the agent itself is not disturbed
    assert (processor.recorded, processor.refused, processor.failures) == (0, 2, 0)
    assert not (tmp_path / "state" / "state.json").exists()


def test_spans_without_arguments_are_never_repeats_and_replay_the_same(tmp_path: Path) -> None:
    export = tmp_path / "spans.jsonl"
    monitor = Monitor(CONFIG.detectors)
    with instrumented(monitor, export) as (provider, processor):
        tracer = provider.get_tracer("mcp-like-server")
        for _ in range(4):  # what an MCP server's own spans look like: no arguments, no result
            with tracer.start_as_current_span(
                "tools/call search",
                attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"},
            ):
                pass
    assert processor.recorded == 4 and list(processor.anomalies) == []
    actions = otlp.actions(otlp.read(export))
    assert len({json.dumps(a["args"]) for a in actions}) == 4
    assert all(set(a["args"]) == {otlp.UNKNOWN_ARGS} for a in actions)
    assert (
        monitor.history[0].summary
        == f'search({{"{otlp.UNKNOWN_ARGS}":"{actions[0]["args"][otlp.UNKNOWN_ARGS]}"}})'
    )
    assert replayed(export)[0] == []


def _spans_after_kill(tmp_path: Path, tool: str, model: str) -> ToolSpanProcessor:
    """A tool span named ``tool`` and a chat span of ``model`` (10 + 2 tokens) ended through a
    Session whose KILL file is present: the processor that took them."""
    config = HeartbeatConfig.model_validate(
        {"agent": {"state_dir": str(tmp_path / "state"), "kill_file": str(tmp_path / "KILL")}}
    )
    (tmp_path / "KILL").write_text("stop\n")
    with instrumented(Session(config, idle=30), tmp_path / "spans.jsonl") as (provider, processor):
        tracer = provider.get_tracer("test-agent")
        tool_call(tracer, tool, {"q": "x"}, "ok")
        usage = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": model,
            "gen_ai.usage.input_tokens": 10,
            "gen_ai.usage.output_tokens": 2,
        }
        with tracer.start_as_current_span("chat", attributes=usage):
            pass
    return processor


def test_a_refused_span_is_logged_with_its_names_masked_and_escaped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Regression: a span refused after KILL was logged with the tool's and the model's names as the
    spans carried them: a key in them reached the log, and a line break forged a line of it."""
    caplog.set_level("INFO", logger="heartbeat.integrations.otel")
    forged = "\nERROR all agents down sk-proj-abcdefghijklmnopqrstuv"
    processor = _spans_after_kill(tmp_path, f"search{forged}", f"gpt-4o{forged}")
    assert processor.refused == 2
    logged = [record.getMessage() for record in caplog.records]
    assert len(logged) == 2 and all("all agents down ***" in line for line in logged)
    assert not [line for line in logged if "\n" in line or "sk-proj" in line]


def test_a_span_journaled_after_a_kill_is_logged_as_kept_not_as_unrecorded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Regression: a span after KILL was logged "did not record" while the journal held it (and a
    model call's spend was counted in state.json): the log says what was kept of each."""
    caplog.set_level("INFO", logger="heartbeat.integrations.otel")
    processor = _spans_after_kill(tmp_path, "search", "gpt-4o")
    journal = [json.loads(line) for line in (tmp_path / "state" / "journal.jsonl").read_text().splitlines()]
    assert [e["event"] for e in journal if e.get("after_stop") == "killed"] == ["action", "spend"]
    assert json.loads((tmp_path / "state" / "state.json").read_text())["budget"]["tokens"] == 12
    logged = [record.getMessage() for record in caplog.records]
    assert logged[0].startswith("heartbeat kept search after its heartbeat ended: ")
    assert logged[0].endswith("(the call ran: journaled only, not in state.json)")
    assert logged[1].startswith("heartbeat kept a gpt-4o call after its heartbeat ended: ")
    assert logged[1].endswith("(the call ran: its spend counted in state.json and journaled)")
    assert not [line for line in logged if "did not record" in line]
    assert processor.refused == 2  # no heartbeat held them


def test_one_trace_is_one_heartbeat_and_no_recovery_is_said_ignored(tmp_path: Path) -> None:
    """Regression: a finding ended the Session's heartbeat mid-trace, so one run of five identical
    searches made two heartbeats, and the second escalated as "did again what the recovery said to
    avoid", though the processor only observes and nothing told the agent anything. Now a run is
    one heartbeat, and the stuck runs reach a human at ``escalate_after`` (3), never as ignored; its
    journal says so (``"heard": false``), and a replay of it decides as the live run did."""
    config = HeartbeatConfig.model_validate(
        {"agent": {"state_dir": str(tmp_path / "state"), "kill_file": str(tmp_path / "KILL")}}
    )
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    processor = ToolSpanProcessor(Session(config, idle=30))
    provider.add_span_processor(processor)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    same = [("search", {"q": "x"}, "3 hits: a, b, c", None)] * 5
    streaks = []
    for _ in range(3):
        agent_run(provider.get_tracer("test-agent"), same)
        processor.force_flush()
        streaks.append(json.loads((tmp_path / "state" / "state.json").read_text())["stuck_streak"])
    provider.shutdown()
    assert streaks == [1, 2, 3]
    journal = [json.loads(line) for line in (tmp_path / "state" / "journal.jsonl").read_text().splitlines()]
    ticks = [e for e in journal if e["event"] == "tick"]
    assert [t["tick"] for t in ticks] == [1, 2, 3] and all(t["actions"] == 5 for t in ticks)
    assert [e["decision"] for e in journal if e["event"] == "decision"] == [
        "try_alternative",
        "try_alternative",
        "escalate",
    ]
    assert all(t["heard"] is False for t in ticks)
    replayed = [t.decision.action for t in replay(tmp_path / "state" / "journal.jsonl", config)]
    assert replayed == ["try_alternative", "try_alternative", "escalate"]
    (escalated,) = [e for e in journal if e["event"] == "tick" and "escalated" in e["message"]]
    assert "stuck for 3 heartbeats (escalate_after = 3)" in escalated["message"]
    assert "said to avoid" not in escalated["message"] and "did not help" not in escalated["message"]
    assert [(a.tick, a.kind) for a in processor.anomalies][:1] == [(1, "repeat")]
    assert len(exporter.get_finished_spans()) == 3 * 7  # every span passed on unchanged


def test_a_plain_file_as_the_target_is_refused_at_once(tmp_path: Path) -> None:
    """Regression: a path to a plain file (neither a state folder nor a heartbeat.toml) was taken,
    and every span was then dropped without a word: recorded 0, failures 0, nothing logged."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(ConfigError, match="is a file, not a state folder") as refused:
        ToolSpanProcessor(afile)
    assert "\n" not in str(refused.value) and str(afile) in str(refused.value)
    assert afile.read_text() == "x" and sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_a_span_that_cannot_be_recorded_is_logged_in_one_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: arguments nested 5,000 deep logged a 20-line RecursionError traceback on stderr;
    the span is counted in ``failures`` and logged in one line saying why, no traceback."""
    caplog.set_level("WARNING", logger="heartbeat.integrations.otel")
    provider = TracerProvider()
    processor = ToolSpanProcessor(Monitor(CONFIG.detectors))
    provider.add_span_processor(processor)
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "t",
        "gen_ai.tool.call.arguments": "[" * 5000,
    }
    with provider.get_tracer("test-agent").start_as_current_span("execute_tool t", attributes=attributes):
        pass
    provider.shutdown()
    assert (processor.failures, processor.recorded) == (1, 0)
    [logged] = caplog.records
    assert logged.exc_info is None and "Traceback" not in capsys.readouterr().err
    said = logged.getMessage()
    assert "\n" not in said and said.startswith("heartbeat could not record span 'execute_tool t': ")
    assert "RecursionError" in said and len(said) < 400
