"""The metric before the first heartbeat's step: what its first rise rises from.

An agent's first heartbeat has no earlier sample, so without a baseline the
work it did is only seen as a rise from the second sample on: a reconciler
that looks the same vendor up for each new invoice was told at its second
heartbeat, mid-step, that the lookup gave the same result (live round 47).
The runner measures the metric before the step while no measured sample is
kept (the first heartbeat, the first after ``heartbeat resume``), keeps it
with the heartbeat's sample and journals it, so a replay of the journal
judges as the live run did.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from heartbeat.config.file import HeartbeatConfig
from heartbeat.core.models import ProgressSample, rose_at
from heartbeat.replay.play import replay
from heartbeat.replay.trace import load_any
from heartbeat.testing import FakeClock, make_heartbeat
from heartbeat.tick.context import StepContext
from heartbeat.tick.runner import Heartbeat

START = datetime(2026, 12, 7, 6, 0, tzinfo=UTC)


def _sample(tick: int, value: float | None, baseline: float | None = None) -> ProgressSample:
    return ProgressSample(tick=tick, at=START, value=value, baseline=baseline)


def test_the_first_measured_sample_rises_from_its_baseline_and_no_later_one_does() -> None:
    """Above its baseline the first sample is a rise; equal is none; a later sample's baseline is ignored."""
    assert rose_at([_sample(1, 4.0, baseline=0.0)]) == 1
    assert rose_at([_sample(1, 4.0, baseline=4.0)]) is None
    assert rose_at([_sample(1, 4.0)]) is None  # an older state: one sample cannot rise
    assert rose_at([_sample(1, None, baseline=0.0), _sample(2, 3.0, baseline=1.0)]) == 2
    assert rose_at([_sample(1, 4.0, baseline=0.0), _sample(2, 4.0, baseline=0.0)]) == 1
    assert rose_at([_sample(1, 4.0), _sample(2, 3.0, baseline=0.0)]) is None


class Reconciler:
    """Invoices of one vendor: each looked up (the same answer), its payment found, reconciled.

    ``plan`` says how many new invoices each heartbeat reconciles (negative: how many it looks
    up whose payment has not come in); ``told`` collects every
    finding ``ctx.record`` answered with (the README's pattern: stop when told).
    """

    def __init__(self, plan: list[int]) -> None:
        self.plan = plan
        self.told: list[tuple[int, str]] = []

    def step(self, ctx: StepContext) -> None:
        new = self.plan[ctx.tick - 1]
        for i in range(abs(new)):
            if new < 0:  # invoices whose payment has not come in yet: looked up, none reconciled
                ctx.record(
                    "lookup_vendor", {"name": "ACME Corp"}, output='{"vendor_id": "V-001", "terms": "NET30"}'
                )
                ctx.record(
                    "find_payment", {"vendor_id": "V-001", "invoice": f"INV-{ctx.tick}{i}"}, output="[]"
                )
                continue
            invoice, payment = f"INV-{ctx.tick}{i}", f"PAY-{ctx.tick}{i}"
            calls = (
                ("lookup_vendor", {"name": "ACME Corp"}, '{"vendor_id": "V-001", "terms": "NET30"}'),
                ("find_payment", {"vendor_id": "V-001", "amount": 100 + ctx.tick * 10 + i}, payment),
                ("reconcile", {"invoice": invoice, "payment": payment}, "reconciled"),
            )
            for tool, args, output in calls:
                told = ctx.record(tool, args, output=output)
                if told is not None:
                    self.told.append((ctx.tick, told.kind))
                    return
            ctx.data["done"] = ctx.data.get("done", 0) + 1


def _run(folder: Path, plan: list[int], metric: Any = None) -> tuple[Reconciler, Heartbeat, list[Any]]:
    agent = Reconciler(plan)
    clock = FakeClock(START)
    measure = metric or (lambda ctx: float(ctx.data.get("done", 0)))
    hb = make_heartbeat(agent.step, folder, progress=measure, clock=clock)
    results = []
    for _ in plan:
        results.append(hb.tick())
        clock.advance(timedelta(minutes=30))
    return agent, hb, results


def _journal(folder: Path) -> list[dict[str, Any]]:
    text = (folder / "state" / "journal.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_a_reconciler_is_never_told_its_shared_lookup_recurs_after_its_first_heartbeat(
    tmp_path: Path,
) -> None:
    """Four invoices a heartbeat, each with the same vendor lookup: never told, never an anomaly."""
    agent, hb, results = _run(tmp_path, [4] * 6)
    assert agent.told == []
    assert [r.anomalies for r in results] == [[]] * 6
    assert [r.progress for r in results] == [4.0, 8.0, 12.0, 16.0, 20.0, 24.0]
    kept = hb.read_state().progress
    assert (kept[0].baseline, [s.baseline for s in kept[1:]]) == (0.0, [None] * 5)
    ticks = [e for e in _journal(tmp_path) if e["event"] == "tick"]
    assert [t.get("baseline") for t in ticks] == [0.0, None, None, None, None, None]


def test_the_metric_is_measured_before_the_step_only_while_no_measured_sample_is_kept(tmp_path: Path) -> None:
    """Twice at the first heartbeat, once after; a failing first sample: twice again at the next."""
    calls: list[int] = []

    def metric(ctx: Any) -> float:
        calls.append(ctx.data.get("done", 0))
        if len(calls) == 2:  # the first heartbeat's own sample fails: no sample to rise from
            raise RuntimeError("metric backend down")
        return float(ctx.data.get("done", 0))

    _, hb, results = _run(tmp_path, [2, 2, 2, 2], metric)
    assert calls == [0, 2, 2, 4, 6, 8]  # before and after 1, before and after 2, after 3 and 4
    assert results[0].progress is None and results[0].progress_error is not None
    assert [s.baseline for s in hb.read_state().progress] == [None, 2.0, None, None]
    # A baseline the step's own sample never came to keep is not journaled either.
    assert [e.get("baseline") for e in _journal(tmp_path) if e["event"] == "tick"] == [None, 2.0, None, None]


def test_a_metric_that_fails_before_the_step_leaves_the_step_and_its_sample_alone(tmp_path: Path) -> None:
    """The baseline is evidence, not a gate: its failure is not the tick's."""
    calls: list[int] = []

    def metric(ctx: Any) -> float:
        calls.append(ctx.tick)
        if len(calls) == 1:
            raise RuntimeError("not ready before the step")
        return float(ctx.data.get("done", 0))

    _, hb, results = _run(tmp_path, [3], metric)
    assert (results[0].outcome, results[0].progress, results[0].progress_error) == ("ran", 3.0, None)
    assert [s.baseline for s in hb.read_state().progress] == [None]


def test_the_journal_keeps_the_baseline_and_its_replay_judges_as_the_live_run_did(tmp_path: Path) -> None:
    """Work in the first heartbeat, then heartbeats finding nothing new but the lookups: the
    first rise speaks for them live, and in the replay only because the journal kept it."""
    plan = [4, -3, -3, 2, -3]

    _, _, results = _run(tmp_path, plan)
    live = [(r.decision.action if r.decision else None, sorted(a.kind for a in r.anomalies)) for r in results]
    journal = tmp_path / "state" / "journal.jsonl"
    replayed = [
        (t.decision.action, sorted(a.kind for a in t.anomalies)) for t in replay(journal, HeartbeatConfig())
    ]
    assert replayed == live
    # Without the key (an older journal) the replay cannot see the first rise and judges otherwise.
    rows = _journal(tmp_path)
    for row in rows:
        row.pop("baseline", None)
    older = tmp_path / "older.jsonl"
    older.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    without = [
        (t.decision.action, sorted(a.kind for a in t.anomalies)) for t in replay(older, HeartbeatConfig())
    ]
    assert without != live


@pytest.mark.parametrize("per", [1, 3])
def test_a_regrouped_journal_gives_the_baseline_to_the_heartbeat_of_the_first_action(
    tmp_path: Path, per: int
) -> None:
    """Regrouped N actions a heartbeat, the baseline goes with the first action it was measured before."""
    _run(tmp_path, [4, 4])
    _, loaded = load_any(tmp_path / "state" / "journal.jsonl", per_heartbeat=per)
    lines = [line for _, line in loaded]
    assert lines[0].baseline == 0.0
    assert [line.baseline for line in lines[1:]] == [None] * (len(lines) - 1)
