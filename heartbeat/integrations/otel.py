"""OpenTelemetry: the GenAI tool spans of any instrumented agent, fed to heartbeat's detectors live.

:class:`ToolSpanProcessor` is an SDK ``SpanProcessor``. Add it to the
``TracerProvider`` the agent's framework reports to, and each ended
``execute_tool`` span (OpenTelemetry GenAI semantic conventions: tool name,
call arguments, result, error status) is recorded as an action into

- a :class:`~heartbeat.detect.monitor.Monitor` (in memory: detectors only), or
- a :class:`~heartbeat.integrations.session.Session`, or the path of a state folder or
  of a ``heartbeat.toml`` (an agent's state folder:
  ``state.json``, journal, policy, KILL and escalation, so ``heartbeat
  status``/``log``/``resume`` work on it).

An inference span (``chat``, ``text_completion``, ``generate_content``) with
``gen_ai.usage.input_tokens``/``output_tokens`` is a model call: spend, not
an action (:func:`heartbeat.formats.otlp.chat_usage`), recorded into a
Session's budget (tokens today, priced by ``[budget.prices]`` or
genai-prices; a spent budget pauses the agent) and counted by model with
a Monitor.

One trace (one agent run) is one heartbeat: when a span of a new trace
ends, the Monitor starts its next tick and the Session ends its open
heartbeat. A finding ends none: the Session is an ``observer`` (nothing here
reaches the agent, so its run goes on, and the policy never says it ignored a
recovery it was not told). The span-to-action mapping is
:func:`heartbeat.formats.otlp.tool_action`, the same one that reads an
OTLP/JSON export for ``heartbeat replay``, so a live recording and a replay
of its export find the same anomalies.

With a Session, ending a span may wait a few milliseconds where a heartbeat
opens or ends (longer when an escalation's notifiers are slow), as a
``SimpleSpanProcessor`` waits for its exporter.

Observe-only, by design: the SDK does not guard span processors, so an
exception here would reach the agent's own code at ``span.end()``. Nothing
raises out of this processor; a span that cannot be recorded is counted in
:attr:`ToolSpanProcessor.failures` and logged. To stop or redirect an agent
mid-run, use a framework adapter or ``heartbeat mcp-proxy``; here you get
:attr:`ToolSpanProcessor.anomalies` and an ``on_anomaly`` callback (each finding once), and with a
Session, the policy's instructions and escalation.

Install with ``pip install -e '.[otel]'`` in the heartbeat checkout::

    from opentelemetry.sdk.trace import TracerProvider
    from heartbeat.integrations.otel import ToolSpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(ToolSpanProcessor("state"))   # or a Session, or a Monitor
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import StatusCode

from ..base.credential_text import mask_name
from ..base.errors import ConfigError
from ..core.models import Anomaly, clip, printable
from ..detect.monitor import Monitor
from ..formats.otlp import chat_usage, tool_action
from .session import Session, Stopped

__all__ = ["ToolSpanProcessor"]

logger = logging.getLogger(__name__)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_KEPT = 1000  # anomalies kept in memory (the state folder keeps its own, bounded)


class ToolSpanProcessor(SpanProcessor):
    """Record every ended GenAI ``execute_tool`` span into a Monitor or a Session; never raise."""

    def __init__(
        self,
        target: Monitor | Session | str | Path,
        *,
        on_anomaly: Callable[[Anomaly, ReadableSpan], object] | None = None,
        heartbeat_per_trace: bool = True,
    ) -> None:
        if isinstance(target, str | Path):  # a state folder, or a heartbeat.toml naming one
            path = Path(target)
            if path.suffix != ".toml" and path.exists() and not path.is_dir():
                # Else every span would fail to open a heartbeat there, refused without a word.
                raise ConfigError("is a file, not a state folder or a heartbeat.toml", path=path)
            target = (
                Session.from_files(path) if path.suffix == ".toml" else Session.from_files(state_dir=path)
            )
        if not isinstance(target, Monitor | Session):
            raise TypeError(
                f"target must be a heartbeat Monitor, Session or state folder, not {type(target).__name__}"
            )
        if isinstance(target, Session):
            target.observer = True  # fed by spans that ended: no instructions reach the agent
        self.target: Monitor | Session = target
        self.on_anomaly = on_anomaly
        self.heartbeat_per_trace = heartbeat_per_trace
        self.anomalies: deque[Anomaly] = deque(maxlen=_KEPT)
        """The anomalies found so far, every kind a call tripped, each once, oldest first (the last 1,000)."""
        self.recorded = 0
        """Tool spans recorded."""
        self.failures = 0
        """Tool spans that could not be recorded (logged; the agent is never disturbed)."""
        self.refused = 0
        """Spans no heartbeat of a Session could hold: KILL, or a human awaited (the agent is not
        disturbed); the journal may still keep them (logged, saying which)."""
        self.model_calls = 0
        """Inference spans with usage recorded (spend: tokens by model, never actions)."""
        self.usage: dict[str, dict[str, int]] = {}
        """With a Monitor (no budget there): tokens by model, ``calls``, ``input``, ``output``, ``cached``."""
        self._trace: int | None = None
        self._lock = threading.Lock()  # spans end on whatever thread the agent runs them

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Nothing to do when a span starts: a tool call is recorded when its span ends."""

    def on_end(self, span: ReadableSpan) -> None:
        """Record the span if it is a tool call; swallow (count and log) any failure."""
        try:
            self._record(span)
        except Exception as exc:  # the SDK does not guard processors: never let this reach the agent
            self.failures += 1
            name = _shown(str(getattr(span, "name", "?")))
            # One line, as bad input is everywhere else (a span's own text in it shown safely).
            why = clip(_shown(f"{type(exc).__name__}: {exc}"), 200)
            logger.warning("heartbeat could not record span %r: %s", name, why)

    def shutdown(self) -> None:
        """End a Session's open heartbeat (saved and journaled)."""
        self.force_flush()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """End a Session's open heartbeat now; True when nothing failed."""
        if isinstance(self.target, Session):
            try:
                self.target.flush()
            except Exception:
                logger.warning("heartbeat could not save the open heartbeat", exc_info=True)
                return False
        return True

    def _record(self, span: ReadableSpan) -> None:
        attributes = span.attributes or {}  # a tool call is an action; a chat span's usage is spend
        status = span.status
        action = tool_action(
            span.name,
            attributes,
            failed=status.status_code is StatusCode.ERROR,
            status_message=status.description,
            span_id=format(span.context.span_id, "016x") if span.context is not None else None,
        )
        trace = span.context.trace_id if span.context is not None else None
        if action is None:
            usage = chat_usage(attributes)
            if usage is not None:
                self._record_usage(usage, trace)
            return
        with self._lock:
            try:
                found = self._record_action(action, trace, _time(span.end_time or span.start_time))
            except Stopped as exc:
                self.refused += 1
                logger.info("%s: %s", _refused(exc, _shown(action["tool"])), exc)
                return
            self.recorded += 1
            self.anomalies.extend(found)
        if self.on_anomaly is not None:
            for anomaly in found:
                self.on_anomaly(anomaly, span)

    def _record_usage(self, usage: dict[str, Any], trace: int | None) -> None:
        """A model call: spend for a Session (its budget), a count in :attr:`usage` for a Monitor."""
        with self._lock:
            self.model_calls += 1
            target = self.target
            new_trace = trace != self._trace
            self._trace = trace
            if isinstance(target, Monitor):
                if self.heartbeat_per_trace and new_trace:
                    target.start_tick(target.tick + 1, reseed=True)
                model = usage["model"]
                kept = self.usage.setdefault(model, {"calls": 0, "input": 0, "output": 0, "cached": 0})
                kept["calls"] += 1
                for key in ("input", "output", "cached"):
                    kept[key] += usage[f"{key}_tokens"]
                return
            if self.heartbeat_per_trace and new_trace and target.is_open:
                target.flush()
            try:
                target.record_usage(
                    usage["model"], usage["input_tokens"], usage["output_tokens"], usage["cached_tokens"]
                )
            except Stopped as exc:
                self.refused += 1
                logger.info("%s: %s", _refused(exc, f"a {_shown(usage['model'])} call"), exc)

    def _record_action(self, action: dict[str, Any], trace: int | None, now: datetime) -> list[Anomaly]:
        """Record one tool call; the new findings it brought, each once: every kind it tripped (a
        search asked a third time and answered nothing trips ``repeat`` and ``empty``), as the
        journal and a replay of the export have them."""
        target = self.target
        new_trace = trace != self._trace
        self._trace = trace
        if isinstance(target, Monitor):
            if self.heartbeat_per_trace and new_trace:
                # As the runner and replay do at each heartbeat: the detectors start over from
                # the kept history, and each anomaly kind may be reported once again.
                target.start_tick(target.tick + 1, reseed=True)
            known = len(target.tick_anomalies)
            # The name masked as ctx.record masks it (a Session's): the anomalies name it.
            tool = mask_name(action["tool"])
            target.record(tool, action["args"], output=action["output"], error=action["error"], now=now)
            return target.tick_anomalies[known:]  # a finding seen again is kept and told once
        if self.heartbeat_per_trace and new_trace and target.is_open:
            target.flush()
        # Stopped (KILL, a human awaited) is counted by the caller as refused.
        hit = target.record(action["tool"], action["args"], output=action["output"], error=action["error"])
        if hit is None or hit.again:
            return []
        ctx = target.unsaved  # the run's heartbeat goes on (an observer's): what this call tripped
        if ctx is not None and target.is_open:
            return [a for a in ctx.findings if a.action == hit.action] or [hit]
        # The finding ended the heartbeat (the budget, or ``actions``): what its end kept, the others
        # this call tripped among them.
        ended = target.last.anomalies if target.last is not None else []
        return list(ended) if any((a.kind, a.action) == (hit.kind, hit.action) for a in ended) else [hit]


def _shown(name: str) -> str:
    """A tool's or a model's name, as a span carried it, as a log line shows it: masked, escaped."""
    return printable(mask_name(name))


def _refused(exc: Stopped, what: str) -> str:
    """What a Session did with a span it stopped: kept after its heartbeat ended (the journal; a
    model call's spend in state.json too: ``exc`` says which), or nothing."""
    if exc.kept:
        return f"heartbeat kept {what} after its heartbeat ended"
    return f"heartbeat did not record {what}"


def _time(nanoseconds: int | None) -> datetime:
    """A span time (ns since the epoch) as an aware UTC datetime."""
    return _EPOCH + timedelta(microseconds=(nanoseconds or 0) // 1000)
