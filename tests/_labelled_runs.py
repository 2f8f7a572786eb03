"""Shared by the tests of labelled run folders in bench/: replay each trace as it was judged."""

from __future__ import annotations

from pathlib import Path

from heartbeat.config.file import HeartbeatConfig
from heartbeat.replay.folder import TraceSummary, read_labels, summarize_trace

BENCH = Path(__file__).resolve().parent.parent / "bench"


def replayed(folder: Path, per_heartbeat: int | None) -> dict[str, TraceSummary]:
    """Each trace of ``folder``/traces replayed with the defaults, labelled from ``folder``/labels.csv."""
    labels = read_labels(folder / "labels.csv")
    found = {}
    for path in sorted((folder / "traces").glob("*.jsonl")):
        summary = summarize_trace(path, HeartbeatConfig(), per_heartbeat=per_heartbeat)
        assert summary.error is None, summary.error
        summary.label = labels[summary.trace]
        found[summary.trace] = summary
    return found
