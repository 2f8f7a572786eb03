"""OTLP/JSON exports of OpenTelemetry GenAI tool spans, read as a heartbeat trace.

An export is what the OpenTelemetry Collector's file exporter or the Python
``FileSpanExporter`` writes: one ``{"resourceSpans": [...]}`` document, or
JSON Lines of them. Only the tool-execution spans of the GenAI semantic
conventions count, each one action:

====================================  ==================================
span                                  action
====================================  ==================================
``gen_ai.operation.name`` =           (the span is a tool call; without
``execute_tool``                      the attribute, a name starting
                                      ``execute_tool `` counts too)
``gen_ai.tool.name``                  ``tool`` (else the span name's rest)
``gen_ai.tool.call.arguments``        ``args`` (a JSON text is parsed;
                                      absent: unknown, never a repeat)
``gen_ai.tool.call.result``           ``output`` (absent: not reported)
status ERROR, or ``error.type``       ``error`` (the status message)
``endTimeUnixNano``                   the action's time and its order
====================================  ==================================

An inference span (``gen_ai.operation.name`` ``chat``, ``text_completion``
or ``generate_content``) with ``gen_ai.usage.input_tokens`` /
``output_tokens`` is a model call of its heartbeat (:func:`chat_usage`):
spend, not an action.

Actions are ordered by the end of their span (the order in which a live
:class:`heartbeat.integrations.otel.ToolSpanProcessor` sees them), and one trace (one
``traceId``: one agent run) is one heartbeat. :func:`tool_action` is the
one mapping from a span to an action; the live processor uses it too, so
a replay of the export and the live recording cannot drift apart.

For the import registry of ``heartbeat replay``: :data:`NAME`,
:func:`sniff` and :func:`actions`; :func:`ticks` keeps the heartbeats (one
per trace) in the trace format's shape, :func:`trace_lines` as JSONL text
that :func:`heartbeat.replay.play.replay` reads as it is. ``heartbeat replay
spans.jsonl`` reads an export directly (``--format otlp``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

__all__ = [
    "NAME",
    "ToolSpan",
    "actions",
    "chat_usage",
    "read",
    "sniff",
    "ticks",
    "tool_action",
    "tool_spans",
    "trace_lines",
]

NAME = "otlp"

OPERATION = "gen_ai.operation.name"
TOOL_NAME = "gen_ai.tool.name"
ARGUMENTS = "gen_ai.tool.call.arguments"
RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CACHED_TOKENS = "gen_ai.usage.cache_read.input_tokens"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
_INFERENCE = ("chat", "text_completion", "generate_content")
UNKNOWN_ARGS = "(arguments not recorded; span)"
_PREFIX = "execute_tool"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_STATUS_ERROR = (2, "2", "STATUS_CODE_ERROR", "ERROR")


@dataclass(frozen=True)
class ToolSpan:
    """One tool-execution span of an export: its action, its trace and when it ended."""

    trace_id: str
    end_ns: int
    action: dict[str, Any]

    @property
    def at(self) -> datetime:
        """The end of the span, UTC (microseconds: what a datetime holds)."""
        return _EPOCH + timedelta(microseconds=self.end_ns // 1000)


def tool_action(
    name: str,
    attributes: Mapping[str, Any],
    *,
    failed: bool = False,
    status_message: str | None = None,
    span_id: str | None = None,
) -> dict[str, Any] | None:
    """The action of one span (``tool``, ``args``, ``output``, ``error``), or None when not a tool call.

    ``attributes`` are plain values (what the SDK holds); ``failed`` is the
    span's ERROR status, ``status_message`` its description, ``span_id`` its
    id as 16 hex digits. A span without ``gen_ai.tool.call.arguments`` (the
    conventions make them opt-in; an MCP server's own spans never carry
    them) is a call with unknown arguments: its args name the span, so it
    never counts as a repeat of another call.
    """
    operation = attributes.get(OPERATION)
    if operation != _PREFIX and not (
        operation is None and (name == _PREFIX or name.startswith(_PREFIX + " "))
    ):
        return None
    tool = attributes.get(TOOL_NAME)
    if not isinstance(tool, str) or not tool.strip():
        tool = name[len(_PREFIX) :].strip() or "(unknown tool)"
    error: str | None = None
    error_type = attributes.get(ERROR_TYPE)
    if failed or error_type is not None:
        error = status_message or (str(error_type) if error_type is not None else None) or "the tool failed"
    result = attributes.get(RESULT)
    output = None if result is None else result if isinstance(result, str) else _json(result)
    raw = attributes.get(ARGUMENTS)
    args = _args(raw) if raw is not None else {UNKNOWN_ARGS: span_id or "?"}
    return {"tool": tool, "args": args, "output": output, "error": error}


def chat_usage(attributes: Mapping[str, Any]) -> dict[str, Any] | None:
    """The model call of an inference span (``chat``, ``text_completion``, ``generate_content``) as
    trace usage (``model``, ``input_tokens``, ``output_tokens``, ``cached_tokens``), else None.

    ``gen_ai.usage.input_tokens`` and ``output_tokens`` (an ``invoke_agent``
    span's totals would count its model calls twice: only inference spans
    count), the model from ``gen_ai.response.model``, else
    ``gen_ai.request.model``; cached tokens from
    ``gen_ai.usage.cache_read.input_tokens``.
    """
    operation = attributes.get(OPERATION)
    if operation not in _INFERENCE:
        return None
    given, made = _tokens(attributes.get(INPUT_TOKENS)), _tokens(attributes.get(OUTPUT_TOKENS))
    if not given and not made:
        return None
    model = attributes.get(RESPONSE_MODEL) or attributes.get(REQUEST_MODEL)
    cached = min(_tokens(attributes.get(CACHED_TOKENS)), given)
    name = model if isinstance(model, str) and model else "unknown"
    return {"model": name, "input_tokens": given, "output_tokens": made, "cached_tokens": cached}


def _tokens(value: object) -> int:
    if isinstance(value, str) and value.isdigit():  # OTLP/JSON writes 64-bit integers as strings
        value = int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _json(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def _args(raw: object) -> dict[str, Any]:
    """The call's arguments as a dict: a JSON text parsed, anything else wrapped."""
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        try:
            value = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return {"raw": raw}
        return value if isinstance(value, dict) else {"value": value}
    return {} if raw is None else {"value": raw}


def _value(any_value: object) -> Any:
    """An OTLP/JSON ``AnyValue`` as a plain value."""
    if not isinstance(any_value, Mapping):
        return any_value
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in any_value:
            return any_value[key]
    if "intValue" in any_value:
        return int(any_value["intValue"])  # a JSON string in OTLP/JSON: 64-bit ints do not fit a double
    if "bytesValue" in any_value:
        return any_value["bytesValue"]
    if "arrayValue" in any_value:
        return [_value(v) for v in (any_value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in any_value:
        return _attributes((any_value["kvlistValue"] or {}).get("values", []))
    return None


def _attributes(items: object) -> dict[str, Any]:
    if not isinstance(items, list):
        return {}
    return {
        str(kv["key"]): _value(kv.get("value")) for kv in items if isinstance(kv, Mapping) and "key" in kv
    }


def _documents(data: Any) -> list[Mapping[str, Any]]:
    """The export's ``{"resourceSpans": ...}`` documents (one, or one per JSON line)."""
    docs = data if isinstance(data, list) else [data]
    if not docs or not all(isinstance(d, Mapping) and "resourceSpans" in d for d in docs):
        raise ValueError('not an OTLP/JSON trace export (no "resourceSpans")')
    return docs


def sniff(data: Any) -> bool:
    """An OTLP/JSON trace export: a document, or JSON lines of documents, with ``resourceSpans``."""
    try:
        _documents(data)
    except ValueError:
        return False
    return True


def tool_spans(data: Any) -> list[ToolSpan]:
    """Every tool-execution span of the export, ordered by its end."""
    return [span for span in _spans(data) if "tool" in span.action]


def _spans(data: Any) -> list[ToolSpan]:
    """Every tool-execution span, and every inference span with usage (its action is the usage)."""
    found: list[ToolSpan] = []
    for doc in _documents(data):
        for resource_spans in _objects(doc, "resourceSpans"):
            for scope_spans in _objects(resource_spans, "scopeSpans"):
                for span in _objects(scope_spans, "spans"):
                    status = span.get("status") or {}
                    attributes = _attributes(span.get("attributes"))
                    action = tool_action(
                        str(span.get("name", "")),
                        attributes,
                        failed=status.get("code") in _STATUS_ERROR,
                        status_message=status.get("message") or None,
                        span_id=str(span.get("spanId") or "") or None,
                    )
                    if action is None:
                        action = chat_usage(attributes)
                    if action is not None:
                        end = int(span.get("endTimeUnixNano") or span.get("startTimeUnixNano") or 0)
                        found.append(ToolSpan(str(span.get("traceId", "")), end, action))
    found.sort(key=lambda s: s.end_ns)  # stable: spans that ended together keep the export's order
    return found


_JSON_KINDS = {str: "a string", bool: "true or false", int: "a number", float: "a number", dict: "an object"}


def _objects(parent: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    """The objects ``parent[key]`` lists (none when it is absent or empty); ValueError saying what
    it holds instead, so a wrong-shaped export is told which part is wrong."""
    value = parent.get(key) or []
    if isinstance(value, list) and all(isinstance(item, Mapping) for item in value):
        return value
    held = "a list of other things than objects" if isinstance(value, list) else None
    held = held or f"{_JSON_KINDS.get(type(value), type(value).__name__)}, not a list of objects"
    raise ValueError(f'"{key}" holds {held}')


def actions(data: Any) -> list[dict[str, Any]]:
    """The export's tool calls as actions, in the order they ended (each with the model calls before it)."""
    found: list[dict[str, Any]] = []
    waiting: list[dict[str, Any]] = []
    for span in _spans(data):
        if "tool" not in span.action:
            waiting.append(span.action)
            continue
        found.append({**span.action, "usage": waiting} if waiting else span.action)
        waiting = []
    if waiting and found:  # model calls after the last tool call: with the last one
        found[-1] = {**found[-1], "usage": [*found[-1].get("usage", []), *waiting]}
    return found


def ticks(data: Any) -> list[dict[str, Any]]:
    """One heartbeat per trace, in the order each trace's first span ended, as trace lines.

    A trace's inference spans with usage are its ``usage`` (model calls).
    """
    by_trace: dict[str, list[ToolSpan]] = {}
    for span in _spans(data):
        by_trace.setdefault(span.trace_id, []).append(span)
    lines = []
    for spans in by_trace.values():
        line: dict[str, Any] = {
            "at": spans[0].at.isoformat(),
            "actions": [s.action for s in spans if "tool" in s.action],
            "heard": False,  # an export of spans observed: nothing told the agent of a finding
        }
        usage = [s.action for s in spans if "tool" not in s.action]
        if usage:
            line["usage"] = usage
        lines.append(line)
    return lines


def trace_lines(data: Any) -> list[str]:
    """:func:`ticks` as the JSONL lines of a heartbeat trace (``heartbeat.replay.play.replay`` reads them)."""
    return [json.dumps(tick, ensure_ascii=False) for tick in ticks(data)]


def read(path: Path) -> Any:
    """An export file's JSON: one document, or a list of its JSON lines; ValueError when neither."""
    text = path.read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except ValueError:
        pass
    rows: list[Any] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except ValueError as exc:
                raise ValueError(f"line {number}: not valid JSON: {exc}") from None
    return rows
