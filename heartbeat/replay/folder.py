"""``heartbeat replay DIR [--labels FILE]``: replay a folder of runs and score the detectors.

One summary line per trace (first anomaly, escalation, kinds) and, with a
labels CSV (``trace,label,onset``: label ``stuck``, ``healthy`` or
``unclear``, onset the 1-based action where the stuck behaviour begins),
a confusion table: stuck runs escalated and missed, stuck runs flagged
(an anomaly at or after the onset; one of a whole tick, ``no_progress``,
stands at the tick's last action), healthy runs escalated and with any
anomaly, and the median delay from the onset to the escalation in
actions. An optional ``kind`` column (the kind of agent: ``coding``,
``customer service``...) adds the same counts per kind. ``--json`` prints
one object per trace and a final ``{"confusion": ...}`` object (with
``by_kind`` when the labels have kinds).
"""

from __future__ import annotations

import csv
import io
import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..base.errors import TraceError, UsageError
from ..base.fsutil import read_regular
from ..config.file import HeartbeatConfig
from .play import load_any, replay_lines

__all__ = ["Label", "TraceSummary", "by_kind", "confusion", "read_labels", "run_folder", "summarize_trace"]

_SUFFIXES = (".jsonl", ".json", ".traj")


@dataclass(frozen=True)
class Label:
    """A hand label of one trace, and the kind of agent it comes from (None: not given)."""

    label: str
    onset: int | None
    kind: str | None = None


@dataclass
class TraceSummary:
    """What replaying one trace did."""

    trace: str
    actions: int
    ticks: int
    label: Label | None = None
    first_anomaly: dict[str, Any] | None = None
    escalated: dict[str, Any] | None = None
    anomalies: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    # The last action of each tick: where a finding of the tick as a whole (no_progress) stands.
    tick_ends: dict[int, int] = field(default_factory=dict, repr=False)

    @property
    def kinds(self) -> list[str]:
        """The anomaly kinds seen, in order of first appearance."""
        return list(dict.fromkeys(a["kind"] for a in self.anomalies))

    def flagged_after_onset(self) -> bool:
        """An anomaly at or after the labelled onset (any anomaly when there is no onset); one of
        a tick as a whole (``no_progress``: no action) stands at the tick's last action."""
        onset = self.label.onset if self.label else None
        if onset is None:
            return bool(self.anomalies)
        return any(
            (a["action"] if a["action"] is not None else self.tick_ends.get(a["tick"], 0)) >= onset
            for a in self.anomalies
        )

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` object of this trace."""
        return {
            "trace": self.trace,
            "label": self.label.label if self.label else None,
            "onset": self.label.onset if self.label else None,
            "actions": self.actions,
            "ticks": self.ticks,
            "first_anomaly": self.first_anomaly,
            "escalated": self.escalated,
            "kinds": self.kinds,
            "anomalies": self.anomalies,
            **({"error": self.error} if self.error else {}),
        }

    def line(self) -> str:
        """One readable summary line."""
        label = self.label.label if self.label else "-"
        onset = self.label.onset if self.label and self.label.onset else "-"
        if self.error:
            return f"{self.trace}  {label}  error: {self.error}"
        first = (
            f"{self.first_anomaly['kind']}@{self.first_anomaly['action']}" if self.first_anomaly else "none"
        )
        esc = f"tick {self.escalated['tick']} @{self.escalated['action']}" if self.escalated else "no"
        return (
            f"{self.trace}  {label} onset={onset}  {self.actions} actions/{self.ticks} ticks  "
            f"first={first}  escalated={esc}  kinds={','.join(self.kinds) or '-'}"
        )


def read_labels(path: Path) -> dict[str, Label]:
    """The labels CSV (``trace,label,onset``) by trace id; UsageError on a bad row."""
    try:
        text = read_regular(path).decode("utf-8")  # a FIFO: one line, never a wait
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the labels: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: the labels are not UTF-8 text (byte {exc.start})") from None
    found: dict[str, Label] = {}
    try:
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise UsageError(f"{path}: not a labels CSV: {exc}") from None
    for number, row in enumerate(rows, 2):
        trace, label, onset, kind = (row.get(k) or "" for k in ("trace", "label", "onset", "kind"))
        if not trace or label not in ("stuck", "healthy", "unclear"):
            raise UsageError(f"{path}: line {number}: need trace and a label stuck|healthy|unclear")
        try:
            found[trace] = Label(label, int(onset) if onset.strip() else None, kind.strip() or None)
        except ValueError:
            raise UsageError(f"{path}: line {number}: onset must be a whole number, got {onset!r}") from None
    return found


def _trace_id(path: Path) -> str:
    name = path.name
    for suffix in (".traj.json", *_SUFFIXES):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def summarize_trace(
    path: Path, config: HeartbeatConfig, *, fmt: str | None = None, per_heartbeat: int | None = None
) -> TraceSummary:
    """Replay one file and summarise it; a bad file gives a summary with ``error`` set."""
    trace = _trace_id(path)
    try:
        where, lines = load_any(path, fmt=fmt, per_heartbeat=per_heartbeat)
    except (TraceError, UsageError) as exc:
        return TraceSummary(trace, 0, 0, error=str(exc))
    summary = TraceSummary(trace, sum(len(line.actions) for _, line in lines), len(lines))
    try:
        for tick in replay_lines(where, lines, config):
            end = summary.tick_ends[tick.tick] = tick.first_action + max(tick.actions, 1) - 1
            for a in tick.anomalies:
                entry = {"tick": tick.tick, "action": a.action, "kind": a.kind, "message": a.message}
                summary.anomalies.append(entry)
                if summary.first_anomaly is None:
                    summary.first_anomaly = {"tick": tick.tick, "action": a.action, "kind": a.kind}
            if tick.decision.action == "escalate":
                summary.escalated = {"tick": tick.tick, "action": end}
    except TraceError as exc:  # one bad file is a line of the table; the folder goes on
        return TraceSummary(trace, 0, 0, error=str(exc))
    return summary


def confusion(summaries: list[TraceSummary]) -> dict[str, Any]:
    """The confusion counts of the labelled summaries (see the module docstring)."""
    stuck = [s for s in summaries if s.label and s.label.label == "stuck"]
    healthy = [s for s in summaries if s.label and s.label.label == "healthy"]
    delays = [
        s.escalated["action"] - s.label.onset
        for s in stuck
        if s.escalated and s.label and s.label.onset is not None
    ]
    return {
        "stuck": len(stuck),
        "stuck_escalated": sum(1 for s in stuck if s.escalated),
        "stuck_missed": sum(1 for s in stuck if not s.escalated),
        "stuck_flagged": sum(1 for s in stuck if s.flagged_after_onset()),
        "healthy": len(healthy),
        "healthy_escalated": sum(1 for s in healthy if s.escalated),
        "healthy_with_anomaly": sum(1 for s in healthy if s.anomalies),
        "unclear": sum(1 for s in summaries if s.label and s.label.label == "unclear"),
        "unlabelled": sum(1 for s in summaries if s.label is None),
        "median_delay": statistics.median(delays) if delays else None,
    }


def by_kind(summaries: list[TraceSummary]) -> dict[str, dict[str, Any]]:
    """The confusion counts per kind of agent, for the labels that name one (in order of appearance)."""
    kinds = dict.fromkeys(s.label.kind for s in summaries if s.label and s.label.kind)
    return {
        kind: confusion([s for s in summaries if s.label and s.label.kind == kind]) for kind in kinds if kind
    }


def _kind_table(kinds: dict[str, dict[str, Any]]) -> list[str]:
    width = max(len("kind of agent"), *(len(k) for k in kinds))
    rows = [
        f"{'kind of agent':<{width}}  stuck escalated  stuck flagged  healthy escalated  "
        "healthy with any anomaly  median delay"
    ]
    for kind, c in kinds.items():
        delay = "-" if c["median_delay"] is None else f"{c['median_delay']:g}"
        rows.append(
            f"{kind:<{width}}  {c['stuck_escalated']:>6} of {c['stuck']:<6}  {c['stuck_flagged']:>5} of "
            f"{c['stuck']:<5}  {c['healthy_escalated']:>8} of {c['healthy']:<6}  "
            f"{c['healthy_with_anomaly']:>11} of {c['healthy']:<10}  {delay:>12}"
        )
    return rows


def _table(counts: dict[str, Any]) -> list[str]:
    delay = counts["median_delay"]
    return [
        f"stuck runs escalated     {counts['stuck_escalated']} of {counts['stuck']}",
        f"stuck runs missed        {counts['stuck_missed']} of {counts['stuck']}",
        f"stuck runs flagged       {counts['stuck_flagged']} of {counts['stuck']} "
        "(an anomaly after the onset)",
        f"healthy runs escalated   {counts['healthy_escalated']} of {counts['healthy']}",
        f"healthy with any anomaly {counts['healthy_with_anomaly']} of {counts['healthy']}",
        f"median delay             {'-' if delay is None else f'{delay:g}'} actions from onset to escalation",
        f"unclear / unlabelled     {counts['unclear']} / {counts['unlabelled']}",
    ]


def run_folder(
    folder: Path,
    config: HeartbeatConfig,
    *,
    as_json: bool,
    out: TextIO,
    fmt: str | None = None,
    per_heartbeat: int | None = None,
    labels: Path | None = None,
    html: Path | None = None,
) -> int:
    """Replay every trace in ``folder`` (sorted by name), one line or object each, then the table.

    With ``html``, the same objects also become the tuning page (``heartbeat.report.write``).
    """
    known = read_labels(labels) if labels is not None else {}
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith(_SUFFIXES))
    if not files:
        raise UsageError(f"{folder}: no traces (*.jsonl, *.json, *.traj) in it")
    summaries = []
    for path in files:
        summary = summarize_trace(path, config, fmt=fmt, per_heartbeat=per_heartbeat)
        summary.label = known.get(summary.trace)
        summaries.append(summary)
        out.write((json.dumps(summary.to_json()) if as_json else summary.line()) + "\n")
    counts = confusion(summaries)
    kinds = by_kind(summaries)
    if kinds:
        counts["by_kind"] = kinds
    if as_json:
        out.write(json.dumps({"confusion": counts}) + "\n")
    elif known:
        out.write("\n" + "\n".join(_table(counts)) + "\n")
        if kinds:
            out.write("\n" + "\n".join(_kind_table(kinds)) + "\n")
    if html is not None:
        from ..report.write import write_tuning

        write_tuning([*(s.to_json() for s in summaries), {"confusion": counts}], html)
    return 0
