"""An offline agent instrumented with OpenTelemetry, watched by heartbeat through its spans alone.

    cd examples/otel && python otel_agent.py
    heartbeat replay spans.jsonl        # the export, one heartbeat per trace

The agent is three scripted runs (no model, no network), each one trace:
an ``invoke_agent`` span around ``execute_tool`` spans named exactly as the
OpenTelemetry GenAI semantic conventions name them (``gen_ai.tool.name``,
``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``, an ERROR
status for a failed call). A framework's own instrumentation (PydanticAI,
OpenAI Agents, LangChain with an OpenTelemetry instrumentor) emits the same.

Two span processors share one ``TracerProvider``:

- ``heartbeat.integrations.otel.ToolSpanProcessor`` records each tool span into the state
  folder ``state/`` (one trace = one heartbeat), so ``heartbeat status``
  and ``heartbeat log`` show this agent like any other;
- the OTLP JSON file exporter writes ``spans.jsonl``, the export that
  ``heartbeat replay`` reads afterwards and that finds the same anomalies.

Needs ``pip install -e '.[otel]' opentelemetry-exporter-otlp-json-file`` in the heartbeat checkout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode, Tracer

from heartbeat.integrations.otel import ToolSpanProcessor
from heartbeat.integrations.session import Session

HERE = Path(__file__).resolve().parent

# (tool, arguments, result or None, error or None): what the scripted "model" calls in each run.
RUNS: list[list[tuple[str, dict[str, Any], str | None, str | None]]] = [
    [
        ("search", {"q": "heartbeat monitoring"}, "3 results: a paper, a post, a talk", None),
        (
            "fetch",
            {"url": "https://example.org/paper"},
            "Heartbeat monitoring for agents (12 pages) ...",
            None,
        ),
    ],
    [  # the model keeps asking the same thing
        ("search", {"q": "agent stuck detection"}, "3 results: the same paper, post and talk as before", None),
        ("search", {"q": "agent stuck detection"}, "3 results: the same paper, post and talk as before", None),
        ("search", {"q": "agent stuck detection"}, "3 results: the same paper, post and talk as before", None),
    ],
    [  # it recovers, then a dependency goes dark
        ("search", {"q": "loop detection in tool calls"}, "2 results: a blog post, a README", None),
        ("fetch", {"url": "https://example.org/post"}, None, "ConnectionError: connection refused"),
    ],
]


def execute_tool(
    tracer: Tracer, tool: str, args: dict[str, Any], result: str | None, error: str | None
) -> None:
    """One tool call as the GenAI semantic conventions name its span."""
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.tool.call.arguments": json.dumps(args),
    }
    with tracer.start_as_current_span(f"execute_tool {tool}", attributes=attributes) as span:
        if error is not None:
            span.set_attribute("error.type", error.split(":")[0])
            span.set_status(Status(StatusCode.ERROR, error))
        elif result is not None:
            span.set_attribute("gen_ai.tool.call.result", result)


def main() -> None:
    session = Session.from_files(state_dir=HERE / "state", kill_file=HERE / "KILL")
    spans = HERE / "spans.jsonl"
    spans.unlink(missing_ok=True)
    provider = TracerProvider()
    recorder = ToolSpanProcessor(session)
    provider.add_span_processor(recorder)
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(str(spans))))
    tracer = provider.get_tracer("examples.otel")
    for number, run in enumerate(RUNS, 1):
        seen = len(recorder.anomalies)
        with tracer.start_as_current_span(
            "invoke_agent researcher", attributes={"gen_ai.operation.name": "invoke_agent"}
        ):
            for tool, args, result, error in run:
                execute_tool(tracer, tool, args, result, error)
        recorder.force_flush()  # the run is over: its heartbeat ends now (saved, decided)
        new = list(recorder.anomalies)[seen:]
        print(f"run {number}: {len(run)} tool call(s); " + (", ".join(a.kind for a in new) or "no anomaly"))
        if new and session.instructions:
            print(
                "  heartbeat's instructions for the next run:\n    "
                + session.instructions.replace("\n", "\n    ")
            )
    provider.shutdown()  # ends the last heartbeat: state/state.json is saved, the journal written
    print(f"\nrecorded {recorder.recorded} tool calls into {session.state_dir}; the export is {spans.name}")
    print("see: heartbeat status --state-dir state; heartbeat log --state-dir state")


if __name__ == "__main__":
    main()
