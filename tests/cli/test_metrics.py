"""Prometheus metrics: the text format parses with prometheus_client's own parser; run serves it."""

from __future__ import annotations

import io
import json
import re
import textwrap
import urllib.request
from pathlib import Path

import pytest
from conftest import spawn_heartbeat
from prometheus_client.parser import text_string_to_metric_families

from heartbeat.cli.main import main

AGENT = textwrap.dedent("""
    def step(ctx):
        for _ in range(3):
            if ctx.record("search", {"q": "same"}, output="the same page"):
                return

    def progress(ctx):
        return 0.5
""")


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two agents, one of them stuck for a tick, as the current folder."""
    (tmp_path / "metrics_agent.py").write_text(AGENT)
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstep = "metrics_agent:step"\nprogress = "metrics_agent:progress"\n'
        '[schedule]\nevery = "30m"\n'
        '[[agents]]\nname = "alpha"\nstate_dir = "a"\n'
        '[[agents]]\nname = "beta"\nstate_dir = "b"\n'
    )
    monkeypatch.chdir(tmp_path)
    assert main(["tick"], io.StringIO()) == 0
    return tmp_path


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample by (name, sorted labels), parsed by prometheus_client."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_metrics_text_parses_and_holds_each_agent(fleet: Path) -> None:
    """`heartbeat metrics`: ticks, status, streak, anomalies by kind, last tick, outbox, per agent."""
    out = io.StringIO()
    assert main(["metrics"], out) == 0
    found = samples(out.getvalue())
    for agent in ("alpha", "beta"):
        assert found[("heartbeat_up", (("agent", agent),))] == 1
        assert found[("heartbeat_ticks_total", (("agent", agent),))] == 1
        assert found[("heartbeat_status", (("agent", agent), ("status", "active")))] == 1
        assert found[("heartbeat_status", (("agent", agent), ("status", "needs_human")))] == 0
        assert found[("heartbeat_stuck_streak", (("agent", agent),))] == 1
        assert found[("heartbeat_recent_anomalies", (("agent", agent), ("kind", "repeat")))] == 1
        assert found[("heartbeat_last_tick_timestamp_seconds", (("agent", agent),))] > 1.7e9
        assert found[("heartbeat_undelivered_notifications", (("agent", agent),))] == 0
        assert found[("heartbeat_overdue", (("agent", agent),))] == 0
        assert found[("heartbeat_progress", (("agent", agent),))] == 0.5


def test_metrics_output_file_for_the_textfile_collector(fleet: Path) -> None:
    """--output writes the file node_exporter reads, whole (temp file and rename)."""
    target = fleet / "heartbeat.prom"
    assert main(["metrics", "--output", str(target)], io.StringIO()) == 0
    found = samples(target.read_text())
    assert found[("heartbeat_ticks_total", (("agent", "beta"),))] == 1
    assert [p.name for p in fleet.iterdir() if p.name.startswith("heartbeat.prom")] == ["heartbeat.prom"]


def test_a_broken_agent_is_up_0(fleet: Path) -> None:
    """An agent whose state cannot be read is heartbeat_up 0, the others still report."""
    (fleet / "b" / "state.json").write_text("{not json")
    out = io.StringIO()
    assert main(["metrics"], out) == 0
    found = samples(out.getvalue())
    assert found[("heartbeat_up", (("agent", "beta"),))] == 0
    assert found[("heartbeat_up", (("agent", "alpha"),))] == 1


def test_run_serves_metrics(fleet: Path) -> None:
    """`run --metrics-port 127.0.0.1:0` serves /metrics while it runs."""
    proc = spawn_heartbeat(fleet, "run", "--every", "30m", "--metrics-port", "127.0.0.1:0")
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        url = re.search(r"http://\S+/metrics", line)
        assert url, line
        with urllib.request.urlopen(url.group(0), timeout=10) as answer:
            text = answer.read().decode()
        found = samples(text)
        assert found[("heartbeat_up", (("agent", "alpha"),))] == 1
        (fleet / "KILL").write_text("done")
        proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 3


def test_anomalies_total_is_a_counter_that_only_grows(fleet: Path) -> None:
    """heartbeat_anomalies_total{kind}: a counter kept in state.json, growing past what the state keeps."""

    def scrape() -> tuple[dict[str, str], dict[tuple[str, tuple[tuple[str, str], ...]], float]]:
        out = io.StringIO()
        assert main(["metrics"], out) == 0
        types = {f.name: f.type for f in text_string_to_metric_families(out.getvalue())}
        return types, samples(out.getvalue())

    key = ("heartbeat_anomalies_total", (("agent", "alpha"), ("kind", "repeat")))
    types, found = scrape()
    assert types["heartbeat_anomalies"] == "counter" and types["heartbeat_recent_anomalies"] == "gauge"
    assert found[key] == 1
    # Stuck again, repeating what it was told to avoid: one more repeat, and an escalation (4).
    assert main(["tick", "--agent", "alpha"], io.StringIO()) == 4
    _, found = scrape()
    assert found[key] == 2
    # The state keeps the last 20 anomalies (the gauge); the count goes on past them.
    path = fleet / "a" / "state.json"
    state = json.loads(path.read_text())
    state["anomaly_totals"]["repeat"] = 45
    path.write_text(json.dumps(state))
    _, found = scrape()
    assert found[key] == 45
    assert found[("heartbeat_recent_anomalies", (("agent", "alpha"), ("kind", "repeat")))] == 2
