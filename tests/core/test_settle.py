"""settle(): what a tick means, as a pure function of its facts (no files, no clock)."""

from __future__ import annotations

from datetime import timedelta

from heartbeat.base.errors import EXIT_CODES, worst_exit_code
from heartbeat.config.file import HeartbeatConfig
from heartbeat.core.models import AgentState, Anomaly, Decision, Escalation, Status
from heartbeat.core.policy import decide
from heartbeat.core.settle import TickFacts, Where, settle
from heartbeat.testing import EPOCH

WHERE = Where("bot", "state/ESCALATION.md", "KILL", 'heartbeat resume --note "..."')
CONFIG = HeartbeatConfig()


def repeat(tick: int = 1) -> Anomaly:
    return Anomaly(kind="repeat", message="search 3 times", tick=tick, at=EPOCH, tool="search")


def test_the_input_state_is_never_changed() -> None:
    """The new state is a copy: the caller's state is as it was, whatever was decided."""
    state = AgentState(ticks=3, stuck_streak=2)
    before = state.model_dump()
    decision = decide(state, [repeat()], EPOCH, CONFIG.policy)
    out = settle(state, decision, [repeat()], None, EPOCH, CONFIG, where=WHERE)
    assert decision.action == "escalate" and out.state.status is Status.NEEDS_HUMAN
    assert state.model_dump() == before


def test_a_clean_tick_follows_the_decision_and_says_it_recovered() -> None:
    """A continue without recovery: streak 0, no instructions, exit 0, "recovered"; with one kept: "quiet"."""
    stuck = AgentState(stuck_streak=1, instructions="try harder")
    stuck.recovery = decide(AgentState(), [repeat()], EPOCH, CONFIG.policy).recovery
    clean = Decision(action="continue", stuck_streak=0, reason="no anomaly")
    out = settle(stuck, clean, [], None, EPOCH, CONFIG, where=WHERE, facts=TickFacts(tick=2, actions=1))
    assert (out.outcome, out.exit_code) == ("ran", 0)
    assert out.state.stuck_streak == 0 and out.state.instructions is None and out.state.recovery is None
    assert out.message == "tick 2: 1 action(s); recovered: no anomaly, instructions cleared"
    quiet = Decision(action="continue", stuck_streak=1, reason="one quiet heartbeat", recovery=stuck.recovery)
    held = settle(stuck, quiet, [], None, EPOCH, CONFIG, where=WHERE, facts=TickFacts(tick=2))
    assert held.state.recovery == stuck.recovery and held.message.endswith("; quiet: one quiet heartbeat")


def test_escalation_is_needs_human_with_one_notice_and_its_events() -> None:
    """The third stuck tick: needs_human (4), an escalation notice riding in the state, its events."""
    state = AgentState(ticks=7, stuck_streak=2)
    decision = decide(state, [repeat(7)], EPOCH, CONFIG.policy)
    out = settle(state, decision, [repeat(7)], None, EPOCH, CONFIG, where=WHERE)
    assert (out.outcome, out.exit_code) == ("needs_human", EXIT_CODES["needs_human"])
    assert [n.kind for n in out.notices] == ["escalation"] and out.state.notices == out.notices
    assert out.notices[0].key == "bot-escalation-7" and "ESCALATION.md" in out.message
    assert [e["event"] for e in out.events] == ["anomaly", "decision", "notify", "escalation"]


def test_a_budget_breach_mid_step_pauses_but_never_hides_an_escalation() -> None:
    """Breach on a healthy tick: paused. Breach on an escalating tick: the escalation stands."""
    breach = Anomaly(kind="budget", message="budget: 11 actions in one tick, limit 10", tick=1, at=EPOCH)
    healthy = settle(AgentState(), decide(AgentState(), [], EPOCH), [], breach, EPOCH, CONFIG, where=WHERE)
    assert healthy.state.status is Status.PAUSED and healthy.outcome == "paused"
    assert [n.kind for n in healthy.notices] == ["budget"] and healthy.anomalies == [breach]
    state = AgentState(stuck_streak=2)
    escalating = settle(
        state, decide(state, [repeat()], EPOCH), [repeat()], breach, EPOCH, CONFIG, where=WHERE
    )
    assert escalating.state.status is Status.NEEDS_HUMAN and escalating.exit_code == 4


def test_step_error_and_kill_set_the_exit_code_by_the_one_table() -> None:
    """A step error is exit 1 unless something worse applies; KILL mid-step is exit 3."""
    decision = decide(AgentState(), [], EPOCH)
    errored = settle(
        AgentState(), decision, [], None, EPOCH, CONFIG, where=WHERE, facts=TickFacts(step_error="E")
    )
    assert errored.exit_code == 1 and "step raised E" in errored.message
    killed = TickFacts(step_error="E", killed="maintenance")
    out = settle(AgentState(), decision, [], None, EPOCH, CONFIG, where=WHERE, facts=killed)
    assert (out.outcome, out.exit_code) == ("killed", 3) and out.exit_code == worst_exit_code([1, 3])


def test_waiting_for_a_human_reminds_once_per_interval() -> None:
    """needs_human: no step, exit 4; a reminder only when reminder_every has passed and nothing waits."""
    escalation = Escalation(at=EPOCH, tick=3, reason="stuck", key="bot-escalation-3")
    state = AgentState(status=Status.NEEDS_HUMAN, escalation=escalation)
    every = CONFIG.escalation.reminder_every
    early = settle(state, None, (), None, EPOCH + every / 2, CONFIG, where=WHERE)
    assert (early.outcome, early.exit_code, early.notices, early.save) == ("needs_human", 4, [], False)
    due = settle(state, None, (), None, EPOCH + every + timedelta(seconds=1), CONFIG, where=WHERE)
    assert [n.kind for n in due.notices] == ["reminder"] and due.save
    assert state.escalation is not None and state.escalation.last_reminder_at is None  # input untouched
    pending = TickFacts(pending_delivery=True)
    assert settle(state, None, (), None, EPOCH + 2 * every, CONFIG, where=WHERE, facts=pending).notices == []


def test_paused_and_budget_spent_before_the_step() -> None:
    """paused: nothing saved, exit 0; budget spent before the step: paused with a budget notice."""
    paused = settle(AgentState(status=Status.PAUSED), None, (), None, EPOCH, CONFIG, where=WHERE)
    assert (paused.outcome, paused.exit_code, paused.save) == ("paused", 0, False)
    spent = settle(AgentState(), None, (), "budget: 5 of 5 ticks used", EPOCH, CONFIG, where=WHERE)
    assert spent.state.status is Status.PAUSED and [n.kind for n in spent.notices] == ["budget"]
    assert "resets at" not in spent.notices[0].text  # ticks never come back: no day to wait for
    daily = settle(AgentState(), None, (), "budget: 9 of 5 actions today used", EPOCH, CONFIG, where=WHERE)
    assert "Today's budget resets at" in daily.notices[0].text and "Resume: " in daily.notices[0].text


def test_replay_and_live_settle_agree() -> None:
    """explain=False (replay) gives the same state and notices, only without messages and anomaly events."""
    state = AgentState(stuck_streak=1)
    decision = decide(state, [repeat()], EPOCH)
    live = settle(state, decision, [repeat()], None, EPOCH, CONFIG, where=WHERE)
    quiet = settle(state, decision, [repeat()], None, EPOCH, CONFIG, where=WHERE, explain=False)
    assert live.state == quiet.state and live.notices == quiet.notices
    assert isinstance(decision, Decision) and quiet.message == ""


def test_anomaly_totals_count_every_kind_and_leave_the_input_alone() -> None:
    """anomaly_totals grows by each tick's anomalies (past the kept list's limit); the input is a copy."""
    loop = Anomaly(kind="loop", message="a cycle", tick=1, at=EPOCH)
    state = AgentState(anomaly_totals={"repeat": 40})
    decision = decide(state, [repeat(), loop], EPOCH, CONFIG.policy)
    out = settle(state, decision, [repeat(), loop], None, EPOCH, CONFIG, where=WHERE)
    assert out.state.anomaly_totals == {"repeat": 41, "loop": 1}
    assert state.anomaly_totals == {"repeat": 40}
    clean = Decision(action="continue", stuck_streak=0)
    quiet = settle(out.state, clean, [], None, EPOCH, CONFIG, where=WHERE)
    assert quiet.state.anomaly_totals == {"repeat": 41, "loop": 1}
