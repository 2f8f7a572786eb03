"""One tick end to end on real files: step, detection, recovery, escalation, KILL, budgets."""

from __future__ import annotations

import json
import multiprocessing as mp
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from conftest import heartbeat_over

from heartbeat.base.errors import ChangedMeanwhile
from heartbeat.core.models import Status
from heartbeat.state.journal import Journal
from heartbeat.state.store import StateStore
from heartbeat.testing import FakeClock
from heartbeat.tick.context import StepContext
from heartbeat.tick.runner import Heartbeat


def make(tmp_path: Path, step: Callable[[StepContext], Any], **kwargs: Any) -> Heartbeat:
    """A heartbeat over a temp state folder, with a file notifier so escalations land somewhere."""
    return heartbeat_over(tmp_path, step, **kwargs)


def repeater(ctx: StepContext) -> None:
    """Calls the same tool with the same arguments three times per heartbeat."""
    ctx.data.setdefault("seen", []).append(ctx.instructions)
    for _ in range(3):
        if ctx.record("search", {"q": "same"}, output="the same page of results"):
            return


def events(tmp_path: Path) -> list[dict[str, Any]]:
    return list(Journal(tmp_path / "state" / "journal.jsonl").read())


def test_healthy_tick_persists_data(tmp_path: Path) -> None:
    """A step's data survives to the next tick and counts ticks and actions."""

    def step(ctx: StepContext) -> None:
        ctx.data["n"] = ctx.data.get("n", 0) + 1
        ctx.record("work", {"n": ctx.data["n"]}, output="done well")

    hb = make(tmp_path, step, progress=lambda ctx: float(ctx.data["n"]))
    first, second = hb.tick(), hb.tick()
    assert (first.exit_code, second.exit_code) == (0, 0)
    state = StateStore(tmp_path / "state").load()
    assert state.data == {"n": 2} and state.ticks == 2 and state.actions_total == 2
    assert [s.value for s in state.progress] == [1.0, 2.0]
    assert state.instructions is None and state.stuck_streak == 0


def test_repeater_gets_instructions_then_clean_tick_clears_them(tmp_path: Path) -> None:
    """The 3rd identical call trips repeat; the next step sees the recovery text; two clean ticks clear it."""
    calls = {"n": 0}

    def step(ctx: StepContext) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            repeater(ctx)
        else:
            ctx.data["seen"] = ctx.instructions
            ctx.record("read", {"url": f"u{calls['n']}"}, output="new text here")

    hb = make(tmp_path, step)
    stuck = hb.tick()
    assert [a.kind for a in stuck.anomalies] == ["repeat"]
    assert stuck.decision is not None and stuck.decision.action == "try_alternative"
    state = StateStore(tmp_path / "state").load()
    assert state.instructions and "search" in state.instructions and state.stuck_streak == 1
    quiet = hb.tick()
    state = StateStore(tmp_path / "state").load()
    assert state.data["seen"] == stuck.decision.instructions
    # One quiet heartbeat inside a stuck stretch keeps the recovery (policy: recover_after = 2).
    assert state.instructions == stuck.decision.instructions and state.stuck_streak == 1
    assert "quiet" in quiet.message
    recovered = hb.tick()
    state = StateStore(tmp_path / "state").load()
    assert state.instructions is None and state.recovery is None and state.stuck_streak == 0
    assert "recovered" in recovered.message


def test_escalation_after_three_stuck_ticks(tmp_path: Path) -> None:
    """Three stuck heartbeats escalate: exit 4, needs_human, ESCALATION.md, one notification."""
    calls = {"n": 0}

    def step(ctx: StepContext) -> None:
        calls["n"] += 1
        repeater(ctx)

    # Three stuck ticks, not two: the repeat the recovery named does not escalate early here.
    hb = make(tmp_path, step, policy={"escalate_on_ignored": False})
    codes = [hb.tick().exit_code for _ in range(3)]
    assert codes == [0, 0, 4]
    state = StateStore(tmp_path / "state").load()
    assert state.status is Status.NEEDS_HUMAN and state.escalation is not None
    report = (tmp_path / "state" / "ESCALATION.md").read_text()
    assert "repeat" in report and "heartbeat resume" in report and "search" in report
    lines = (tmp_path / "notes.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["kind"] == "escalation"
    waiting = hb.tick()
    assert waiting.exit_code == 4 and calls["n"] == 3  # the step is not called while waiting
    assert len((tmp_path / "notes.jsonl").read_text().splitlines()) == 1


def test_resume_note_becomes_next_instructions(tmp_path: Path) -> None:
    """resume --note clears needs_human, resets the streak, and the next step sees exactly the note."""
    hb = make(tmp_path, repeater, policy={"escalate_after": 1})
    assert hb.tick().exit_code == 4
    state = hb.resume("try the archive")
    assert state.status is Status.ACTIVE and state.stuck_streak == 0
    assert not (tmp_path / "state" / "ESCALATION.md").exists()
    hb.tick()
    seen = StateStore(tmp_path / "state").load().data["seen"]
    assert seen[-1] == "try the archive"


def test_resume_leaves_an_escalation_it_waited_for_to_the_human(tmp_path: Path) -> None:
    """Regression (live round 41): a `resume` typed while a tick ran waited for the lock, the tick
    escalated and paged, and the resume cleared that escalation unseen, saying the agent "was not
    paused or waiting for a human". A resume given the status its human saw (active) now changes
    nothing when it finds the agent waiting for a human: exit 4, the page and ESCALATION.md stand."""
    hb = make(tmp_path, repeater, policy={"escalate_after": 1})
    assert hb.tick().exit_code == 4  # the tick the resume waited for escalated
    with pytest.raises(ChangedMeanwhile, match=r"not resumed: .*needs_human.*ESCALATION\.md") as caught:
        hb.resume("carry on", seen=Status.ACTIVE)
    assert caught.value.exit_code == 4
    state = StateStore(tmp_path / "state").load()
    assert state.status is Status.NEEDS_HUMAN and state.instructions != "carry on"
    assert (tmp_path / "state" / "ESCALATION.md").exists()
    assert hb.resume("carry on", seen=Status.NEEDS_HUMAN).status is Status.ACTIVE  # seen: it goes on


def test_step_that_raises_is_an_errored_action(tmp_path: Path) -> None:
    """A raising step exits 1, is recorded as an errored action, and its traceback is journaled."""

    def step(ctx: StepContext) -> None:
        raise RuntimeError("model API said 503")

    result = make(tmp_path, step).tick()
    assert result.exit_code == 1 and "503" in (result.step_error or "")
    state = StateStore(tmp_path / "state").load()
    assert state.ticks == 1 and state.history[-1].tool == "step" and "503" in (state.history[-1].error or "")
    errors = [e for e in events(tmp_path) if e["event"] == "step_error"]
    assert errors and "Traceback" in errors[0]["traceback"]


def test_kill_before_the_tick_never_calls_the_step(tmp_path: Path) -> None:
    """With KILL present the tick exits 3, journals the reason and leaves the state alone."""
    called = []
    (tmp_path / "KILL").write_text("rotating keys")
    result = make(tmp_path, called.append).tick()
    assert result.exit_code == 3 and "rotating keys" in result.message and called == []
    assert not (tmp_path / "state" / "state.json").exists()
    assert any(e["event"] == "kill" and e["reason"] == "rotating keys" for e in events(tmp_path))


def test_kill_mid_step_lets_the_step_finish(tmp_path: Path) -> None:
    """A KILL that appears during the step: the step finishes, its work is saved, exit 3."""

    def step(ctx: StepContext) -> None:
        assert not ctx.killed
        (tmp_path / "KILL").write_text("enough")
        ctx.data["finished"] = ctx.killed

    result = make(tmp_path, step).tick()
    assert result.exit_code == 3
    assert StateStore(tmp_path / "state").load().data == {"finished": True}


def _hold_lock(state_dir: str, ready: Any, release: Any) -> None:
    with StateStore(Path(state_dir)).lock():
        ready.set()
        release.wait(30)


def test_locked_state_exits_5_and_changes_nothing(tmp_path: Path) -> None:
    """While another process holds the lock the tick exits 5 and writes nothing."""
    ctx = mp.get_context("spawn")
    ready, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_lock, args=(str(tmp_path / "state"), ready, release))
    holder.start()
    try:
        assert ready.wait(30)
        called: list[Any] = []
        result = make(tmp_path, called.append).tick()
        assert result.exit_code == 5 and called == []
        assert not (tmp_path / "state" / "state.json").exists()
    finally:
        release.set()
        holder.join(30)


def test_corrupt_state_exits_2_and_is_kept(tmp_path: Path) -> None:
    """A corrupt state.json is never overwritten: exit 2, the step is not called."""
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "state.json").write_text('{"schema_version": 1, "ticks": ')
    called: list[Any] = []
    result = make(tmp_path, called.append).tick()
    assert result.exit_code == 2 and called == [] and "state.json" in result.message
    assert (tmp_path / "state" / "state.json").read_text() == '{"schema_version": 1, "ticks": '


def test_metric_error_is_recorded_and_the_tick_goes_on(tmp_path: Path) -> None:
    """A progress metric that raises is a metric error, not a failed tick."""

    def metric(ctx: StepContext) -> float:
        raise ValueError("draft.md missing")

    result = make(tmp_path, lambda ctx: None, progress=metric).tick()
    assert result.exit_code == 0 and "draft.md missing" in (result.progress_error or "")
    assert StateStore(tmp_path / "state").load().progress[-1].error


def test_wanderer_reassess_goal(tmp_path: Path) -> None:
    """Busy with new arguments but a flat metric for 4 heartbeats -> reassess_goal."""

    def step(ctx: StepContext) -> None:
        # Each search answers something of its own: the same answer to reworded queries
        # would be a recurring anomaly before the metric's five flat heartbeats.
        ctx.record("search", {"q": f"angle {ctx.tick}"}, output=f"two old pages on angle {ctx.tick}")

    hb = make(tmp_path, step, progress=lambda ctx: 4.0)
    results = [hb.tick() for _ in range(4)]
    assert [r.decision.action for r in results if r.decision] == ["continue"] * 3 + ["reassess_goal"]
    state = StateStore(tmp_path / "state").load()
    assert state.instructions and "4" in state.instructions


def test_per_tick_budget_tells_the_step_and_pauses(tmp_path: Path) -> None:
    """Past the per-tick limit record() returns a budget anomaly at once; the tick pauses after the step."""
    seen: list[Any] = []

    def step(ctx: StepContext) -> None:
        for i in range(10):
            hit = ctx.record("fetch", {"i": i}, output="a long enough page")
            if hit:
                seen.append((i, hit.kind))
                return

    result = make(tmp_path, step, budget={"actions_per_tick": 3}).tick()
    assert seen == [(3, "budget")]
    assert result.outcome == "paused" and result.exit_code == 0
    state = StateStore(tmp_path / "state").load()
    assert state.status is Status.PAUSED and "budget" in (state.status_reason or "")
    assert json.loads((tmp_path / "notes.jsonl").read_text().splitlines()[0])["kind"] == "budget"


def test_daily_budget_resets_at_the_configured_hour(tmp_path: Path) -> None:
    """Daily counters start again at reset_hour (UTC), moved with the shipped FakeClock."""

    def step(ctx: StepContext) -> None:
        ctx.record("fetch", {"t": ctx.tick}, output="a page of text", cost=1.0)

    clock = FakeClock(datetime(2026, 3, 2, 5, tzinfo=UTC))
    hb = make(tmp_path, step, budget={"cost_per_day": 2.5, "reset_hour": 6}, clock=clock)
    assert [hb.tick().outcome for _ in range(2)] == ["ran", "ran"]
    clock.now = datetime(2026, 3, 2, 5, 59, tzinfo=UTC)
    assert hb.tick().outcome == "paused"  # the third unit of cost went past 2.5
    state = StateStore(tmp_path / "state").load()
    assert state.budget.cost == 3.0
    hb.resume()
    clock.now = datetime(2026, 3, 2, 6, 0, 1, tzinfo=UTC)
    assert hb.tick().outcome == "ran"
    state = StateStore(tmp_path / "state").load()
    assert state.budget.cost == 1.0 and str(state.budget.day) == "2026-03-02"


def test_reminders_no_more_often_than_the_interval(tmp_path: Path) -> None:
    """While waiting for a human, a reminder goes out once per reminder_every, not every tick."""
    clock = FakeClock(datetime(2026, 3, 2, 10, tzinfo=UTC))
    hb = make(
        tmp_path, repeater, policy={"escalate_after": 1}, escalation={"reminder_every": "1h"}, clock=clock
    )
    notes = tmp_path / "notes.jsonl"

    def kinds() -> list[str]:
        return [json.loads(line)["kind"] for line in notes.read_text().splitlines()]

    def at(hour: int, minute: int) -> None:
        clock.now = datetime(2026, 3, 2, hour, minute, tzinfo=UTC)

    assert hb.tick().exit_code == 4
    for minute in (10, 30, 59):
        at(10, minute)
        assert hb.tick().exit_code == 4
    assert kinds() == ["escalation"]
    at(11, 0)
    hb.tick()
    at(11, 30)
    hb.tick()
    assert kinds() == ["escalation", "reminder"]
    at(12, 0)
    hb.tick()
    assert kinds() == ["escalation", "reminder", "reminder"]


def test_paused_agent_does_nothing(tmp_path: Path) -> None:
    """A paused agent's tick exits 0 without calling the step."""
    called: list[Any] = []
    hb = make(tmp_path, called.append)
    hb.pause("holiday")
    result = hb.tick()
    assert (result.outcome, result.exit_code, called) == ("paused", 0, [])
    assert StateStore(tmp_path / "state").load().ticks == 0


def test_state_and_journal_files_are_private(tmp_path: Path) -> None:
    """The state folder is 0700 and every file heartbeat writes in it 0600."""
    make(tmp_path, repeater, policy={"escalate_after": 1}).tick()
    folder = tmp_path / "state"
    assert folder.stat().st_mode & 0o777 == 0o700
    for name in ("state.json", "journal.jsonl", "ESCALATION.md", ".lock"):
        assert (folder / name).stat().st_mode & 0o777 == 0o600, name


def test_tampered_state_cannot_choose_code(tmp_path: Path) -> None:
    """Import paths come from the config only: keys naming code in state.json are refused."""
    (tmp_path / "state").mkdir(mode=0o700)
    (tmp_path / "state" / "state.json").write_text(
        json.dumps({"schema_version": 1, "step": "os:system", "data": {}})
    )
    called: list[Any] = []
    result = make(tmp_path, called.append).tick()
    assert result.exit_code == 2 and called == []
