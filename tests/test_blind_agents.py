"""bench/blind_agents: runs written without reading the detectors, replayed as they were judged."""

from __future__ import annotations

from pathlib import Path

import pytest

from heartbeat.config.file import HeartbeatConfig
from heartbeat.replay.folder import TraceSummary, read_labels, summarize_trace

BLIND = Path(__file__).resolve().parent.parent / "bench" / "blind_agents"
LABELS = read_labels(BLIND / "labels.csv")


def _replayed(per_heartbeat: int | None) -> dict[str, TraceSummary]:
    found = {}
    for path in sorted((BLIND / "traces").glob("*.jsonl")):
        summary = summarize_trace(path, HeartbeatConfig(), per_heartbeat=per_heartbeat)
        assert summary.error is None, summary.error
        summary.label = LABELS[summary.trace]
        found[summary.trace] = summary
    return found


# Stuck runs the detectors miss (bench/blind_agents/README.md): near-duplicate answers, and busywork
# that only its flat metric shows (missed when regrouped without it).
MISSED = {
    "stuck__cs-repeat-reservation-request",
    "stuck__k8s-restart-crashloop",
    "stuck__llm-subagent-refusal",
    "stuck__migration-flat-busywork",
}


@pytest.mark.parametrize("per_heartbeat", [None, 1, 5, 10])
def test_no_healthy_run_has_an_anomaly_and_stuck_runs_are_flagged(per_heartbeat: int | None) -> None:
    """Healthy work stays silent with its metric and without (regrouped), but for a metric flat for
    six heartbeats of work (``no_progress`` by design); stuck runs are flagged after their onset
    but for the known misses."""
    runs = _replayed(per_heartbeat)
    assert len(runs) == len(LABELS) == 132
    healthy = [s for s in runs.values() if s.label and s.label.label == "healthy"]
    assert len(healthy) == 88
    flat = {"healthy__go-limiter-clock-inject": ["no_progress"]} if per_heartbeat is None else {}
    assert {s.trace: s.kinds for s in healthy if s.anomalies} == flat
    missed = [
        s.trace for s in runs.values() if s.label and s.label.label == "stuck" and not s.flagged_after_onset()
    ]
    assert set(missed) <= MISSED
