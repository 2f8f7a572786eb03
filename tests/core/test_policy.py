"""The policy: streaks, modes, escalation, recovery bookkeeping and instruction templates."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from heartbeat.base.errors import ConfigError
from heartbeat.config.file import PolicyConfig, load_config
from heartbeat.config.policy import PLACEHOLDERS, check_templates
from heartbeat.core.models import AgentState, Anomaly, Decision, ProgressSample, Recovery, RecoveryMode
from heartbeat.core.policy import (
    DEFAULT_TEMPLATES,
    decide,
    render_instructions,
)

NOW = datetime(2024, 1, 1, tzinfo=UTC)


def anomaly(kind: str, tick: int = 1, **evidence: Any) -> Anomaly:
    """An anomaly as the built-in detectors write them, with an ``avoid`` hint when given."""
    messages = {
        "repeat": 'search({"q":"x"}) was called 3 times in a row with the same arguments (limit 3)',
        "loop": 'the cycle search({"q":"x"}) -> read({"u":"y"}) repeated 2 times back to back',
        "error_rate": "7 of 10 actions failed (70%), last: fetch: 503",
        "no_progress": "progress stayed at 0.25 for the last 5 heartbeats; it must move by at least 0.01",
    }
    return Anomaly(
        kind=kind,
        message=messages.get(kind, f"{kind} happened"),
        tick=tick,
        action=None if kind == "no_progress" else 3,
        at=NOW,
        tool=None if kind == "no_progress" else "search",
        evidence=evidence,
    )


def run(
    kinds_per_tick: list[list[str]],
    config: PolicyConfig | None = None,
    progress: list[float | None] | None = None,
) -> list[Decision]:
    """Feed one tick's anomaly kinds after another, carrying the state like the runner does
    (with ``progress``, the tick's sample is kept before the policy decides, as the runner does)."""
    state = AgentState()
    decisions = []
    for tick, kinds in enumerate(kinds_per_tick, 1):
        if progress is not None:
            sample = ProgressSample(tick=tick, at=NOW, value=progress[tick - 1])
            state = state.model_copy(update={"progress": [*state.progress, sample]})
        decision = decide(state, [anomaly(k, tick) for k in kinds], NOW, config)
        decisions.append(decision)
        state = state.model_copy(
            update={"stuck_streak": decision.stuck_streak, "recovery": decision.recovery, "ticks": tick}
        )
    return decisions


def test_no_anomaly_continues_with_a_clean_slate() -> None:
    """No anomaly and no recovery under way: continue, streak 0, no recovery, no instructions."""
    decision = decide(AgentState(), [], NOW)
    assert decision.action == "continue" and decision.stuck_streak == 0
    assert decision.recovery is None and decision.instructions is None


def test_recover_after_quiet_heartbeats_clears_the_recovery() -> None:
    """The second quiet heartbeat in a row ends the stretch: streak 0, instructions cleared."""
    recovery = Recovery(mode=RecoveryMode.TRY_ALTERNATIVE, since_tick=1, quiet=1)
    decision = decide(AgentState(stuck_streak=2, recovery=recovery, instructions="do x"), [], NOW)
    assert decision.action == "continue" and decision.stuck_streak == 0
    assert decision.recovery is None and decision.instructions is None
    assert decision.reason.startswith("recovered")


def test_one_quiet_heartbeat_keeps_the_stretch_and_its_instructions() -> None:
    """A lucky heartbeat inside a stuck stretch resets nothing."""
    recovery = Recovery(mode=RecoveryMode.TRY_ALTERNATIVE, since_tick=1)
    decision = decide(AgentState(stuck_streak=2, recovery=recovery, instructions="do x"), [], NOW)
    assert decision.action == "continue" and decision.stuck_streak == 2
    assert decision.recovery is not None and decision.recovery.quiet == 1
    assert decision.instructions == "do x"


def test_any_action_anomaly_asks_for_an_alternative() -> None:
    """repeat, loop, empty, error_rate and custom kinds each mean try_alternative."""
    for kind in ("repeat", "loop", "empty", "error_rate", "too_costly"):
        decision = decide(AgentState(), [anomaly(kind)], NOW)
        assert decision.action == "try_alternative" and decision.stuck_streak == 1, kind
        assert decision.recovery is not None and decision.recovery.mode is RecoveryMode.TRY_ALTERNATIVE


def test_no_progress_alone_asks_to_reassess_the_goal() -> None:
    """Only no_progress: reassess_goal; with anything else: try_alternative."""
    alone = decide(AgentState(), [anomaly("no_progress")], NOW)
    assert alone.action == "reassess_goal"
    mixed = decide(AgentState(), [anomaly("no_progress"), anomaly("repeat")], NOW)
    assert mixed.action == "try_alternative"


def test_streak_reaching_escalate_after_escalates() -> None:
    """Three stuck heartbeats in a row: recover, recover, escalate."""
    decisions = run([["repeat"], ["loop"], ["no_progress"]])
    assert [d.action for d in decisions] == ["try_alternative", "try_alternative", "escalate"]
    assert [d.stuck_streak for d in decisions] == [1, 2, 3]
    assert "stuck for 3 heartbeats" in decisions[2].reason
    assert decisions[2].instructions is None


def test_an_escalation_keeps_the_recovery_the_agent_was_last_told_of() -> None:
    """Told twice to reassess its goal, then escalated on errors: the recovery a person reads is the
    two reassess_goal attempts since the first, not a try_alternative nobody sent (a newcomer's
    ESCALATION.md said "1 recovery attempt(s) of mode try_alternative since tick 3", live round 40)."""
    decisions = run([["no_progress"], ["no_progress"], ["error_rate", "recurring_error"]])
    assert [d.action for d in decisions] == ["reassess_goal", "reassess_goal", "escalate"]
    told = decisions[2].recovery
    assert told is not None and told.mode is RecoveryMode.REASSESS_GOAL and told.attempts == 2
    assert decisions[0].recovery is not None and told.since_tick == decisions[0].recovery.since_tick
    assert told.kinds == ["no_progress", "error_rate", "recurring_error"]


def test_escalate_after_is_configurable() -> None:
    """escalate_after = 1 escalates at the first stuck heartbeat."""
    assert run([["repeat"]], PolicyConfig(escalate_after=1))[0].action == "escalate"


def test_one_clean_tick_inside_a_stuck_stretch_does_not_reset_it() -> None:
    """stuck, stuck, clean, stuck escalates; stuck, clean, clean, stuck starts over."""
    decisions = run([["repeat"], ["loop"], [], ["no_progress"]])
    assert [d.stuck_streak for d in decisions] == [1, 2, 2, 3]
    assert [d.action for d in decisions] == ["try_alternative"] * 2 + ["continue", "escalate"]
    decisions = run([["repeat"], [], [], ["repeat"]])
    assert [d.stuck_streak for d in decisions] == [1, 1, 0, 1]
    assert decisions[3].recovery is not None and decisions[3].recovery.attempts == 1


def test_repeating_what_the_recovery_named_escalates_at_two() -> None:
    """The agent was told to avoid a call and made it again: a human at the second stuck heartbeat."""
    call = 'lookup({"cmd":"Lookup[Diwali]"})'
    state = AgentState()
    first = decide(state, [anomaly("repeat", 1, avoid=call, call=call)], NOW)
    assert first.action == "try_alternative" and first.recovery is not None
    state = state.model_copy(update={"stuck_streak": 1, "recovery": first.recovery})
    again = decide(state, [anomaly("recurring_error", 2, avoid="lookup calls that fail", call=call)], NOW)
    assert again.action == "escalate" and "did again what the recovery said to avoid" in again.reason
    off = decide(
        state, [anomaly("recurring_error", 2, call=call)], NOW, PolicyConfig(escalate_on_ignored=False)
    )
    assert off.action == "try_alternative"
    other = decide(state, [anomaly("loop", 2, avoid="a -> b")], NOW)
    assert other.action == "try_alternative"


def test_the_same_kind_coming_back_after_a_recovery_escalates_at_two() -> None:
    """The recovery did not help when the same kind of stuck returns; a flat metric keeps its attempts."""
    decisions = run([["cycle"], ["cycle"]])
    assert [d.action for d in decisions] == ["try_alternative", "escalate"]
    assert "the recovery did not help: cycle again" in decisions[1].reason
    # after one quiet heartbeat the stretch goes on, and so does the rule
    assert [d.action for d in run([["near_repeat"], [], ["near_repeat"]])][-1] == "escalate"
    # a different picture gets its third heartbeat; so does no_progress and the rule switched off
    assert [d.action for d in run([["cycle"], ["loop"]])] == ["try_alternative"] * 2
    assert [d.action for d in run([["no_progress"], ["no_progress"]])] == ["reassess_goal"] * 2
    off = run([["cycle"], ["cycle"]], PolicyConfig(escalate_on_ignored=False))
    assert [d.action for d in off] == ["try_alternative"] * 2


def test_no_human_is_called_while_the_metric_rose_within_the_shortest_escalating_stretch() -> None:
    """The same kind back at 2 escalates, unless the metric rose in that heartbeat or the one
    before (a worker polling an empty queue between the tickets it closes): the instructions
    still go out. A rise two heartbeats back, or none, leaves the escalation as it was."""
    stuck = [[], ["repeat"], ["repeat"], ["repeat"]]
    assert run(stuck, progress=[0, 0, 0, 0])[2].action == "escalate"
    assert run(stuck, progress=[0, 1, 1, 1])[2].action == "try_alternative"  # rose at 2
    deferred = run(stuck, progress=[0, 0, 1, 1])
    assert deferred[2].action == "try_alternative" and deferred[2].instructions
    assert "the progress metric rose at heartbeat 3: no human called" in deferred[2].reason
    assert deferred[3].action == "try_alternative"  # heartbeat 4: the rise at 3 is the one before
    assert run([*stuck, ["repeat"]], progress=[0, 0, 1, 1, 1])[4].action == "escalate"
    assert run(stuck, progress=[0, 1, 1, 0.5])[2].action == "try_alternative"
    assert run(stuck, progress=[1, 0, 0, 0])[2].action == "escalate"  # falling is no rise
    assert run(stuck, progress=[0, None, None, None])[2].action == "escalate"  # not measured
    assert run(stuck, progress=[1, 0, 1, 1])[2].action == "escalate"  # back from a dip: no new high


def test_without_escalate_on_ignored_the_rise_is_looked_for_over_escalate_after() -> None:
    """The shortest stretch that escalates is then escalate_after heartbeats long."""
    cfg = PolicyConfig(escalate_on_ignored=False)
    stuck = [["repeat"]] * 5
    assert run(stuck, cfg, progress=[0, 0, 0, 0, 0])[2].action == "escalate"
    decisions = run(stuck, cfg, progress=[0, 1, 1, 1, 1])
    assert [d.action for d in decisions[2:]] == ["try_alternative", "try_alternative", "escalate"]


def test_a_raw_error_rate_never_escalates_on_its_own() -> None:
    """error_rate heartbeats are stuck (instructions, the streak grows) but never call a human,
    however long; a heartbeat where another kind fires may, and error_rate never comes back."""
    alone = run([["error_rate"]] * 6)
    assert [d.action for d in alone] == ["try_alternative"] * 6
    assert [d.stuck_streak for d in alone] == [1, 2, 3, 4, 5, 6]
    assert all(d.instructions for d in alone)
    assert "never escalates" in alone[2].reason
    mixed = run([["error_rate"], ["error_rate"], ["recurring_error"]])
    assert [d.action for d in mixed] == ["try_alternative", "try_alternative", "escalate"]
    assert [d.action for d in run([["error_rate"], ["error_rate", "loop"]])] == ["try_alternative"] * 2


def test_observe_mode_decides_but_injects_and_escalates_nothing() -> None:
    """observe: the decision says what enforce would do; the action is continue, no instructions."""
    cfg = PolicyConfig(mode="observe")
    decisions = run([["repeat"], ["loop"], ["no_progress"]], cfg)
    assert [d.action for d in decisions] == ["continue"] * 3
    assert [d.observed for d in decisions] == ["try_alternative", "try_alternative", "escalate"]
    assert [d.stuck_streak for d in decisions] == [1, 2, 3]
    assert all(d.instructions is None for d in decisions)
    assert decisions[2].reason.startswith("observe mode, would escalate")


def test_instructions_carry_advice_for_each_kind() -> None:
    """The default template names what to do instead, per pattern."""
    decision = decide(AgentState(), [anomaly("recurring_error"), anomaly("near_repeat")], NOW)
    text = decision.instructions or ""
    assert "The same error keeps coming back" in text and "search for what you need directly" in text


def test_state_saved_before_v2_loads_with_the_new_fields_defaulted() -> None:
    """A recovery without quiet and actions without shape/result validate as they are."""
    old = {
        "stuck_streak": 1,
        "recovery": {
            "mode": "try_alternative",
            "attempts": 1,
            "since_tick": 1,
            "kinds": ["repeat"],
            "avoid": [],
        },
        "history": [
            {
                "index": 1,
                "tick": 1,
                "at": "2024-01-01T00:00:00Z",
                "tool": "search",
                "fingerprint": "0123456789abcdef",
                "summary": "search()",
            }
        ],
    }
    state = AgentState.model_validate(old)
    assert state.recovery is not None and state.recovery.quiet == 0
    assert state.history[0].shape is None and state.history[0].result is None


def test_attempts_count_a_continuing_recovery() -> None:
    """The same mode again: attempts + 1, since_tick kept, kinds merged."""
    decisions = run([["repeat"], ["loop"]], PolicyConfig(escalate_after=5))
    first, second = (d.recovery for d in decisions)
    assert first is not None and second is not None
    assert (first.attempts, first.since_tick, first.kinds) == (1, 1, ["repeat"])
    assert (second.attempts, second.since_tick, second.kinds) == (2, 1, ["repeat", "loop"])


def test_a_new_mode_starts_a_new_recovery_but_keeps_what_to_avoid() -> None:
    """reassess_goal after try_alternative: attempts back to 1, earlier avoid kept."""
    state = AgentState(
        stuck_streak=1,
        recovery=Recovery(
            mode=RecoveryMode.TRY_ALTERNATIVE, since_tick=1, kinds=["repeat"], avoid=['search({"q":"x"})']
        ),
    )
    decision = decide(state, [anomaly("no_progress", tick=2)], NOW)
    assert decision.recovery is not None
    assert decision.recovery.mode is RecoveryMode.REASSESS_GOAL
    assert (decision.recovery.attempts, decision.recovery.since_tick) == (1, 2)
    assert decision.recovery.avoid == ['search({"q":"x"})']


def test_avoid_comes_from_the_evidence_or_the_tool() -> None:
    """An ``avoid`` hint is used as is; otherwise the anomaly's tool; no_progress adds nothing."""
    hits = [
        anomaly("loop", avoid='search({"q":"x"}) -> read({"u":"y"})'),
        anomaly("error_rate"),
        anomaly("no_progress"),
    ]
    decision = decide(AgentState(), hits, NOW)
    assert decision.recovery is not None
    assert decision.recovery.avoid == ['search({"q":"x"}) -> read({"u":"y"})', "search"]


def test_instructions_name_the_repeated_action_and_what_to_avoid() -> None:
    """The try_alternative text quotes the anomaly and lists what not to repeat."""
    decision = decide(AgentState(), [anomaly("repeat", avoid='search({"q":"x"})')], NOW)
    text = decision.instructions
    assert text is not None
    assert 'search({"q":"x"}) was called 3 times in a row' in text
    assert 'Do not repeat: search({"q":"x"}).' in text
    assert "recovery attempt 1" in text and "else after 2 more stuck heartbeats" in text


def test_the_instructions_say_truly_when_a_human_is_called() -> None:
    """The first recovery says a human is called at the next heartbeat stuck the same way (as
    ``escalate_on_ignored`` decides: a newcomer's scraper was told "after 2 more" and escalated at
    the next, live round 40), else after 2 more; without that rule, or for a flat metric alone
    (a slow signal), after 2 more."""
    first = decide(AgentState(), [anomaly("repeat", avoid='search({"q":"x"})')], NOW)
    assert first.instructions is not None and "the next heartbeat is stuck the same way" in first.instructions
    state = AgentState(stuck_streak=first.stuck_streak, recovery=first.recovery)
    assert decide(state, [anomaly("repeat", avoid='search({"q":"x"})')], NOW).action == "escalate"
    strict = PolicyConfig(escalate_on_ignored=False)
    for config, kind in ((strict, "repeat"), (None, "no_progress")):
        text = decide(AgentState(), [anomaly(kind, avoid='search({"q":"x"})')], NOW, config).instructions
        assert text is not None and "a human is called after 2 more stuck heartbeats" in text, kind


def test_instructions_name_the_flat_metric_and_its_value() -> None:
    """The reassess_goal text carries the metric's value and the heartbeats it stayed flat."""
    text = decide(AgentState(), [anomaly("no_progress")], NOW).instructions
    assert text is not None and "progress stayed at 0.25 for the last 5 heartbeats" in text
    assert "restate the goal" in text


def test_instructions_name_the_failing_tool_and_warn_before_escalation() -> None:
    """The last recovery before escalation says a human comes next."""
    state = AgentState(stuck_streak=1)
    text = decide(state, [anomaly("error_rate")], NOW).instructions
    assert text is not None and "last: fetch: 503" in text
    assert "a human is called if the next heartbeat is stuck too" in text


def test_templates_can_be_overridden() -> None:
    """A configured template replaces the default text for its mode only."""
    config = PolicyConfig(templates={"try_alternative": "STOP ({kinds}, try {attempt}): {avoid}"})
    decision = decide(AgentState(), [anomaly("repeat", avoid="search(x)")], NOW, config)
    assert decision.instructions == "STOP (repeat, try 1): search(x)"
    other = decide(AgentState(), [anomaly("no_progress")], NOW, config)
    assert other.instructions is not None and other.instructions.startswith("heartbeat: your work")


def test_render_instructions_uses_every_placeholder() -> None:
    """Every documented placeholder renders to text."""
    template = " ".join("{" + name + "}" for name in PLACEHOLDERS)
    recovery = Recovery(mode=RecoveryMode.TRY_ALTERNATIVE, attempts=2, since_tick=4, avoid=["a", "b"])
    text = render_instructions(
        recovery,
        [anomaly("repeat", tick=5)],
        stuck_streak=2,
        config=PolicyConfig(templates={"try_alternative": template}),
    )
    assert "{" not in text.replace('{"q":"x"}', "")
    assert "a; b" in text and " 2 " in text and "try_alternative" in text


@pytest.mark.parametrize(
    ("template", "words"),
    [
        ("do {somthing}", "unknown placeholder {somthing}"),
        ("do {}", "unknown placeholder {}"),
        ("do {0}", "unknown placeholder {0}"),
        ("do {avoid.upper}", "unknown placeholder {avoid.upper}"),
        ("unclosed {", "literal brace"),
        ("{attempt:q}", "templates.try_alternative"),
    ],
)
def test_bad_templates_fail_when_checked(template: str, words: str) -> None:
    """A template that could not render is a ConfigError naming the problem."""
    with pytest.raises(ConfigError) as caught:
        check_templates({"try_alternative": template})
    assert words in str(caught.value)


def test_bad_template_fails_when_the_config_is_loaded(tmp_path: Path) -> None:
    """load_config refuses a template with an unknown placeholder, naming the key."""
    path = tmp_path / "heartbeat.toml"
    path.write_text('[policy.templates]\nreassess_goal = "think about {goal}"\n')
    with pytest.raises(ConfigError, match=r"templates\.reassess_goal: unknown placeholder \{goal\}"):
        load_config(path)
    with pytest.raises(ValidationError):
        PolicyConfig(templates={"reassess_goal": "{goal}"})


def test_default_templates_are_valid() -> None:
    """The shipped templates pass their own check."""
    check_templates(DEFAULT_TEMPLATES)


def test_decide_is_pure() -> None:
    """The state passed in is not changed and the same input gives the same decision."""
    state = AgentState(stuck_streak=1)
    before = state.model_dump()
    one = decide(state, [anomaly("repeat")], NOW)
    two = decide(state, [anomaly("repeat")], NOW)
    assert one == two and state.model_dump() == before


def test_observe_mode_on_a_real_heartbeat_journals_and_never_escalates(tmp_path: Path) -> None:
    """A stuck agent under observe: anomalies and would-be decisions in the journal, no instructions."""
    from heartbeat.testing import run_ticks
    from heartbeat.tick.context import StepContext

    seen: list[str | None] = []

    def repeater(ctx: StepContext) -> None:
        seen.append(ctx.instructions)
        for _ in range(3):
            ctx.record("search", {"q": "same"}, output="the same long page of results")

    results = run_ticks(repeater, tmp_path, ticks=5, policy={"mode": "observe"})
    assert all(r.exit_code == 0 for r in results) and seen == [None] * 5
    events = [json.loads(line) for line in (tmp_path / "state" / "journal.jsonl").read_text().splitlines()]
    decisions = [e for e in events if e["event"] == "decision"]
    assert {e["decision"] for e in decisions} == {"continue"}
    assert [e.get("observed") for e in decisions][:3] == ["try_alternative", "escalate", "escalate"]
    assert any(e["event"] == "anomaly" for e in events)
    assert not (tmp_path / "state" / "ESCALATION.md").exists()


def _flat_run(
    anew: list[bool], config: PolicyConfig | None = None, first: str = "no_progress"
) -> list[Decision]:
    """Stuck heartbeats of ``no_progress`` (the first may be another kind), each saying ``anew``."""
    state, decisions = AgentState(), []
    for tick, new in enumerate(anew, 1):
        kind = first if tick == 1 else "no_progress"
        found = [anomaly(kind, tick, anew=new) if kind == "no_progress" else anomaly(kind, tick)]
        decision = decide(state, found, NOW, config)
        decisions.append(decision)
        state = state.model_copy(
            update={"stuck_streak": decision.stuck_streak, "recovery": decision.recovery}
        )
    return decisions


def test_a_flat_stretch_whose_looks_answer_anew_gets_flat_grace() -> None:
    """A flat metric alone, its looks answering anew, calls a human one heartbeat later (flat_grace);
    the heartbeat that would have called one says so truthfully, and the next stuck one escalates."""
    decisions = _flat_run([True, True, True, True])
    assert [d.action for d in decisions] == ["reassess_goal"] * 3 + ["escalate"]
    assert "escalate_after = 3 + flat_grace = 1" in decisions[3].reason
    told = [d.instructions or "" for d in decisions[:3]]
    later = "while your calls keep bringing new results"
    assert f"a human is called after 2 more stuck heartbeats (3 {later})" in told[0]
    assert f"a human is called after 1 more stuck heartbeat (2 {later})" in told[1]
    assert "a human is called if the next heartbeat is stuck too" in told[2]


@pytest.mark.parametrize(
    ("anew", "config", "first", "escalated_at"),
    [
        ([True, True, False], None, "no_progress", 3),  # the heartbeat that would call one saw nothing new
        ([True, True, True], PolicyConfig(flat_grace=0), "no_progress", 3),
        ([True, True, True], None, "repeat", 3),  # the stretch found more than a flat metric
        ([True, True, True, True, True], PolicyConfig(flat_grace=2), "no_progress", 5),
    ],
)
def test_flat_grace_needs_a_flat_stretch_answered_anew(
    anew: list[bool], config: PolicyConfig | None, first: str, escalated_at: int
) -> None:
    """No grace when the escalating heartbeat's looks brought nothing new, when it is 0, or when the
    stretch also found a kind of behaviour (told to try another way, then to reassess)."""
    actions = [d.action for d in _flat_run(anew, config, first)]
    assert actions.index("escalate") + 1 == escalated_at, actions


def test_a_stretch_keeps_the_kinds_it_found_when_its_mode_changes() -> None:
    """Told to try another way (repeat), then to reassess (no_progress): the recovery's kinds are the
    stretch's, so its flat_grace is not given, while its attempts start again."""
    decisions = _flat_run([True, True], first="repeat")
    recovery = decisions[1].recovery
    assert recovery is not None and recovery.kinds == ["repeat", "no_progress"] and recovery.attempts == 1
    assert "while your calls keep bringing new results" not in (decisions[1].instructions or "")
