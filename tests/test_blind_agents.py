"""bench/blind_agents: runs written without reading the detectors, replayed as they were judged."""

from __future__ import annotations

import pytest
from _labelled_runs import BENCH, replayed

from heartbeat.replay.folder import read_labels

BLIND = BENCH / "blind_agents"
LABELS = read_labels(BLIND / "labels.csv")


# Stuck runs the detectors miss (bench/blind_agents/README.md): near-duplicate answers. Busywork that
# only its flat metric shows is caught however the run is grouped: a regrouped trace keeps its samples.
MISSED = {
    "stuck__cs-repeat-reservation-request",
    "stuck__retail_cancel_asks_same_confirmation",
    "stuck__k8s-restart-crashloop",
    "stuck__llm-subagent-refusal",
    "stuck__airline_reasks_known_info",
    "stuck__telecom_two_instructions_loop",
}


@pytest.mark.parametrize("per_heartbeat", [None, 1, 5, 10])
def test_no_healthy_run_has_an_anomaly_and_stuck_runs_are_flagged(per_heartbeat: int | None) -> None:
    """Healthy work stays silent however grouped, but for a metric flat for six heartbeats of work
    (``no_progress`` by design, regrouped too); stuck runs are flagged after their onset but for the
    known misses."""
    runs = replayed(BLIND, per_heartbeat)
    assert len(runs) == len(LABELS) == 268
    healthy = [s for s in runs.values() if s.label and s.label.label == "healthy"]
    assert len(healthy) == 174
    # Pylint run with three flags in turn as a patch is checked, each run failing alike (exit 20
    # and a score), and a search reworded three times before it lands: reworded retries, flagged
    # once and never escalated. A feed poller whose metric stays flat for four heartbeats of
    # "304 Not Modified" (by design, where its heartbeats are measured often enough), or whose
    # rounds of 304s between sleeps revisit what they saw before the metric's first rise is known
    # (at 10 actions a heartbeat).
    quiet_feed = {None: ["no_progress"], 1: ["no_progress"], 5: None, 10: ["cycle"]}[per_heartbeat]
    known = {
        "healthy__pylint_recursive_ignore_greps_miss_then_hit": ["recurring_error"],
        "healthy__go-limiter-clock-inject": ["no_progress"],
        "healthy__qa_search_rewording_lands": ["recurring_error"],
        **({"healthy__feed_poller_mostly_quiet": quiet_feed} if quiet_feed else {}),
    }
    assert {s.trace: s.kinds for s in healthy if s.anomalies} == known
    assert {s.trace for s in healthy if s.escalated} <= {"healthy__go-limiter-clock-inject"}
    missed = [
        s.trace for s in runs.values() if s.label and s.label.label == "stuck" and not s.flagged_after_onset()
    ]
    assert set(missed) == MISSED
