"""Prometheus metrics of every agent of a config, built on ``prometheus_client``.

``heartbeat metrics`` writes the text format for node_exporter's textfile
collector; ``heartbeat run --metrics-port`` serves the same on ``/metrics``.
Values are read from the state folders at each scrape, so the numbers are the
ones ``status`` shows. ``prometheus_client`` (the ``prometheus`` extra: ``pip install -e
'.[prometheus]'`` in the checkout) is imported here only, never by a tick.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.errors import ConfigError, HeartbeatError
from ..base.fsutil import not_regular
from .status import agent_report

if TYPE_CHECKING:
    from ..tick.runner import Heartbeat

__all__ = ["HeartbeatCollector", "registry", "render", "serve", "write_textfile"]

_STATUSES = ("active", "paused", "needs_human")


def _client() -> Any:
    try:
        import prometheus_client
    except ImportError:
        raise ConfigError(
            "metrics need prometheus_client: pip install -e '.[prometheus]' in the heartbeat checkout"
        ) from None
    return prometheus_client


class HeartbeatCollector:
    """A prometheus_client collector that reads each agent's state at every scrape."""

    def __init__(self, heartbeats: Sequence[Heartbeat], clock: Callable[[], datetime]) -> None:
        self.heartbeats = list(heartbeats)
        self.clock = clock

    def collect(self) -> Iterator[Any]:
        """The metric families, one sample per agent (per status or kind where labelled)."""
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        def gauge(name: str, doc: str, labels: Sequence[str] = ()) -> Any:
            return GaugeMetricFamily(name, doc, labels=["agent", *labels])

        up = gauge("heartbeat_up", "1 when the agent's state folder could be read")
        ticks = CounterMetricFamily("heartbeat_ticks", "heartbeats that called the step", labels=["agent"])
        status = gauge("heartbeat_status", "1 for the agent's current status", ["status"])
        killed = gauge("heartbeat_killed", "1 while the agent's KILL file exists")
        overdue = gauge("heartbeat_overdue", "1 when no heartbeat was seen for 2 schedule periods")
        streak = gauge("heartbeat_stuck_streak", "stuck heartbeats in a row")
        escalate = gauge("heartbeat_escalate_after", "the stuck streak at which a human is called")
        totals = CounterMetricFamily(
            "heartbeat_anomalies",
            "anomalies detected, by kind (counted in state.json since it began)",
            labels=["agent", "kind"],
        )
        # What the agent is stuck on now: a gauge over the last anomalies the state keeps.
        anomalies = gauge(
            "heartbeat_recent_anomalies", "anomalies among the last ones the state keeps, by kind", ["kind"]
        )
        last_tick = gauge(
            "heartbeat_last_tick_timestamp_seconds", "when the step was last called (Unix time)"
        )
        last_seen = gauge("heartbeat_last_seen_timestamp_seconds", "when a heartbeat last ran (Unix time)")
        outbox = gauge("heartbeat_undelivered_notifications", "notifications waiting in outbox/")
        progress = gauge("heartbeat_progress", "the last progress sample")
        tokens = CounterMetricFamily(
            "heartbeat_tokens",
            "model tokens used since the state began, by model and kind (input, output, cached)",
            labels=["agent", "model", "kind"],
        )
        dollars = CounterMetricFamily(
            "heartbeat_cost_dollars",
            "dollars spent on priced model calls since the state began, by model",
            labels=["agent", "model"],
        )
        unpriced = CounterMetricFamily(
            "heartbeat_unpriced_calls",
            "model calls with no price since the state began, by model: their dollars are not in"
            " heartbeat_cost_dollars_total, and a cost budget cannot count them",
            labels=["agent", "model"],
        )
        now = self.clock()
        for hb in self.heartbeats:
            name = hb.name
            try:
                report = agent_report(hb, now)
            except (HeartbeatError, OSError):
                up.add_metric([name], 0)
                continue
            up.add_metric([name], 1)
            ticks.add_metric([name], report.ticks)
            for value in _STATUSES:
                status.add_metric([name, value], 1 if report.status == value else 0)
            killed.add_metric([name], 1 if report.killed else 0)
            overdue.add_metric([name], 1 if report.overdue else 0)
            streak.add_metric([name], report.stuck_streak)
            escalate.add_metric([name], report.escalate_after)
            state = hb.read_state()
            for kind, total in sorted(state.anomaly_totals.items()):
                totals.add_metric([name, kind], total)
            kinds: dict[str, int] = {}
            for anomaly in state.anomalies:
                kinds[anomaly.kind] = kinds.get(anomaly.kind, 0) + 1
            for kind, count in sorted(kinds.items()):
                anomalies.add_metric([name, kind], count)
            for family, at in ((last_tick, report.last_tick_at), (last_seen, report.last_seen_at)):
                if at:
                    family.add_metric([name], datetime.fromisoformat(at).timestamp())
            for model, spend in sorted(state.spend_totals.items()):
                used = (("input", spend.input), ("output", spend.output), ("cached", spend.cached))
                for kind, count in used:
                    tokens.add_metric([name, model, kind], count)
                dollars.add_metric([name, model], spend.cost)
                if spend.unpriced:
                    unpriced.add_metric([name, model], spend.unpriced)
            outbox.add_metric([name], report.outbox)
            if report.progress:
                progress.add_metric([name], report.progress[-1])
        yield from (up, ticks, status, killed, overdue, streak, escalate, totals, anomalies)
        yield from (last_tick, last_seen, outbox, progress, tokens, dollars, unpriced)


def registry(heartbeats: Sequence[Heartbeat], clock: Callable[[], datetime]) -> Any:
    """A ``CollectorRegistry`` holding only heartbeat's collector."""
    client = _client()
    reg = client.CollectorRegistry(auto_describe=False)
    reg.register(HeartbeatCollector(heartbeats, clock))
    return reg


def render(heartbeats: Sequence[Heartbeat], clock: Callable[[], datetime]) -> str:
    """The metrics in the Prometheus text format."""
    text: bytes = _client().generate_latest(registry(heartbeats, clock))
    return text.decode("utf-8")


def write_textfile(heartbeats: Sequence[Heartbeat], path: Path, clock: Callable[[], datetime]) -> None:
    """Write the metrics for node_exporter's textfile collector (atomically: temp file, rename)."""
    problem = not_regular(path)
    if problem:  # the rename would replace a device such as /dev/null with the metrics
        raise ConfigError(f"--output {path}: {problem}; give a file name (or leave --output out for stdout)")
    try:
        _client().write_to_textfile(str(path), registry(heartbeats, clock))
    except OSError as exc:
        raise ConfigError(f"--output {path}: cannot write ({exc.strerror})") from None


def serve(heartbeats: Sequence[Heartbeat], address: str, clock: Callable[[], datetime]) -> tuple[Any, Any]:
    """Serve ``/metrics`` on ``[HOST:]PORT`` (HOST defaults to 127.0.0.1) in a daemon thread.

    At most :data:`~heartbeat.cli.metricserver.MAX_CONNECTIONS` at once, each dropped
    after :data:`~heartbeat.cli.metricserver.READ_TIMEOUT_SECONDS` of silence.
    """
    host, _, port_text = address.rpartition(":")
    try:
        port = int(port_text)
    except ValueError:
        raise ConfigError(f"--metrics-port {address!r}: give PORT or HOST:PORT") from None
    if not 0 <= port < 65536:
        raise ConfigError(f"--metrics-port {address!r}: the port must be 0-65535")
    from .metricserver import start

    client = _client()
    reg = registry(heartbeats, clock)

    def render() -> tuple[bytes, str]:
        body: bytes = client.generate_latest(reg)
        return body, client.CONTENT_TYPE_LATEST

    try:  # bounded connections and read timeouts (prometheus_client's own server has neither)
        server, thread = start(host.strip("[]") or "127.0.0.1", port, render)
    except OSError as exc:
        raise ConfigError(f"--metrics-port {address}: {exc.strerror}") from None
    return server, thread
