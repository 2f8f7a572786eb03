"""The policy: after a tick's detection, continue, recover or escalate.

:func:`decide` is pure: it takes the state as it was before the tick (its
progress samples with the tick's own), the tick's anomalies and ``now``, and
returns a :class:`~heartbeat.core.models.Decision`; the runner carries it out. The rules
(docs/detectors.md, "Policy")::

    a stuck heartbeat (any anomaly)  -> stuck_streak + 1, quiet 0, and
        only advisory kinds fired (error_rate)    -> try_alternative, never escalate
        streak reaches escalate_after             -> escalate
        (+ flat_grace when the stretch found only
        a flat metric and its looks answer anew:
        escalates_at)
        streak >= 2 and the agent did again what
        the last recovery said to avoid, or the
        same kind of stuck came back after it      -> escalate (escalate_on_ignored)
        ... but the progress metric rose in the
        fewest heartbeats that escalate (2; else
        escalate_after)                            -> no escalation: try_alternative
        only no_progress fired                     -> reassess_goal
        anything else fired                        -> try_alternative
    a quiet heartbeat (no anomaly)
        no recovery under way                      -> continue, streak 0
        quiet heartbeats in a row < recover_after  -> continue, streak and instructions kept
        quiet heartbeats in a row = recover_after  -> continue, streak 0, recovery and
                                                      instructions cleared (recovered)

One quiet heartbeat inside a stuck stretch therefore does not reset it.
With ``mode = "observe"`` the same decision is computed, kept in
``Decision.observed`` and the reason, and the action is ``continue``
with no instructions: nothing is injected and nothing escalates.

The instructions come from two templates (one per mode), overridable in
``[policy.templates]``; ``{advice}`` holds advice specific to each anomaly
kind (:data:`ADVICE`). :func:`heartbeat.config.policy.check_templates` rejects an
unknown placeholder when the configuration is loaded, so it cannot fail at 3 a.m.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from ..config.file import PolicyConfig
from .models import (
    STEP_ERROR_TOOL,
    AgentState,
    Anomaly,
    Decision,
    DecisionAction,
    Recovery,
    RecoveryMode,
    clip,
    rose_at,
)

__all__ = [
    "ADVICE",
    "ADVISORY",
    "DEFAULT_TEMPLATES",
    "anew_limit",
    "decide",
    "escalates_at",
    "render_instructions",
    "unheard",
]

DEFAULT_TEMPLATES: Mapping[str, str] = {
    "try_alternative": (
        "heartbeat: you look stuck (recovery attempt {attempt}; {escalation}).\n"
        "What happened:\n"
        "{problems}\n"
        "Do not repeat: {avoid}.\n"
        "Try a different approach:\n"
        "{advice}"
    ),
    "reassess_goal": (
        "heartbeat: your work is not moving the progress metric "
        "(recovery attempt {attempt}; {escalation}).\n"
        "What happened:\n"
        "{problems}\n"
        "Step back before the next action: restate the goal, work out which result would "
        "move the metric, and choose a different next step instead of refining this one."
    ),
}
"""The instructions used when ``[policy.templates]`` does not override them."""

ADVICE: Mapping[str, str] = {
    "repeat": "The same call will give the same answer: use what it returned, or change the call itself "
    "(another tool, other arguments).",
    "near_repeat": "You are stepping through something with only numbers changing (pages, line ranges, "
    "retries): search for what you need directly instead of paging, or stop and use what you have.",
    "loop": "You are going round the same steps: write down what each step taught you, "
    "then choose a step that is not in the cycle.",
    "cycle": "You keep returning to places and results you have already seen: list what you know, "
    "decide what is still missing, and go somewhere new or finish with what you have.",
    "recurring": "The same call keeps giving the same result, so what you change between the calls does "
    "not reach it: check that your change is applied where the call looks, or try another approach.",
    "recurring_error": "The same error keeps coming back: read it, find out which inputs are valid "
    "(list the options, read the documentation) instead of retrying variations; "
    "if the tool cannot do this, work around it or ask for help.",
    "empty": "A tool that used to answer now returns nothing: check its arguments and whether the thing "
    "you look for exists, then use another source.",
    "error_rate": "Many actions fail, the same ways again: stop calling the failing tool and work around it.",
    "no_progress": "Your work is not moving the progress metric: restate the goal and pick the step that "
    "would move it.",
}
"""Advice per anomaly kind, joined into ``{advice}``; other kinds get a general line."""

_GENERAL_ADVICE = "Try a different approach: another tool, other arguments or another source."
_STEP_ADVICE = (
    "The step itself raised an error (above): that is no tool call to avoid, but a fault in the agent's "
    "code or in what it depends on: find and fix its cause; a human is called if it keeps failing."
)
_SLOW_KINDS = frozenset({"no_progress"})  # kinds that do not escalate early by coming back
ADVISORY: frozenset[str] = frozenset({"error_rate"})
"""Kinds that advise but never escalate on their own: many failures can be debugging (a script
that crashes differently after each edit). They count in the stuck streak, but a heartbeat
escalates only when another kind fired in it, and they never count as coming back."""
_AVOID_KEPT = 10  # earlier actions to avoid carried across the heartbeats of one recovery


def _kinds(anomalies: Sequence[Anomaly]) -> list[str]:
    return list(dict.fromkeys(a.kind for a in anomalies))


def _step_failed(anomaly: Anomaly) -> bool:
    """Whether the anomaly is about the step raising: no action of the agent's to avoid."""
    return anomaly.tool == STEP_ERROR_TOOL


def _avoid(anomalies: Sequence[Anomaly]) -> list[str]:
    """What the agent should not do again: each anomaly's ``evidence["avoid"]``, else its tool."""
    found: list[str] = []
    for anomaly in anomalies:
        if _step_failed(anomaly):
            continue
        hint = anomaly.evidence.get("avoid")
        if isinstance(hint, str) and hint:
            found.append(hint)
        elif anomaly.tool:
            found.append(anomaly.tool)
    return list(dict.fromkeys(found))


def _nothing_to_avoid(anomalies: Sequence[Anomaly]) -> str:
    if anomalies and all(_step_failed(a) for a in anomalies):
        return "no action of yours (the step itself raised, see below)"
    return "the actions named above"


def _escalation(remaining: int, on_ignored: bool, grace: int = 0) -> str:
    """When a human is called, as the rules of :func:`_enforce` will decide it (``on_ignored``:
    ``escalate_on_ignored``, which calls one at the next stuck heartbeat that is the same again;
    ``grace``: ``flat_grace``, the later call of a flat stretch whose calls bring new results)."""
    if grace:
        # In the grace already (the streak past escalate_after), the next stuck heartbeat calls one.
        soon, later = max(remaining, 1), remaining + grace
        if later > soon:
            heartbeats = "heartbeat" if soon == 1 else "heartbeats"
            return (
                f"a human is called after {soon} more stuck {heartbeats}"
                f" ({later} while your calls keep bringing new results)"
            )
        remaining = soon
    if remaining <= 0:
        return "a human has been called"
    if remaining == 1:
        return "a human is called if the next heartbeat is stuck too"
    if on_ignored:
        return (
            "a human is called if the next heartbeat is stuck the same way or repeats what is named"
            f" below, else after {remaining} more stuck heartbeats"
        )
    return f"a human is called after {remaining} more stuck heartbeats"


def _flat(config: PolicyConfig, recovery: Recovery | None) -> bool:
    """Whether ``recovery``'s stretch found only a flat metric, so ``flat_grace`` may apply."""
    return bool(config.flat_grace) and recovery is not None and all(k in _SLOW_KINDS for k in recovery.kinds)


def escalates_at(config: PolicyConfig, recovery: Recovery | None, anomalies: Sequence[Anomaly] = ()) -> int:
    """The stuck streak at which ``recovery``'s stretch calls a human: ``escalate_after``, or
    :func:`anew_limit` when this heartbeat's findings (``anomalies``) say the calls of its flat
    stretch kept bringing new results (``evidence["anew"]``)."""
    later = anew_limit(config, recovery)
    anew = bool(anomalies) and all(a.evidence.get("anew") is True for a in anomalies)
    return later if later is not None and anew else config.escalate_after


def anew_limit(config: PolicyConfig, recovery: Recovery | None) -> int | None:
    """The streak that calls a human while the calls keep bringing new results, when ``recovery``'s
    stretch found only a flat metric (``escalate_after + flat_grace``); None when no grace applies."""
    return config.escalate_after + config.flat_grace if _flat(config, recovery) else None


def render_instructions(
    recovery: Recovery,
    anomalies: Sequence[Anomaly],
    *,
    stuck_streak: int,
    config: PolicyConfig | None = None,
) -> str:
    """The instructions for the agent's next step, from the template of ``recovery.mode``.

    A template is ``str.format`` text over these placeholders:
    ``{problems}`` one line per anomaly (``- kind: message``), ``{avoid}``
    the repeated actions, cycles and failing tools, ``{attempt}`` the
    attempt number of this recovery, ``{streak}`` stuck heartbeats in a row,
    ``{escalate_after}``, ``{remaining}`` stuck heartbeats left before a
    human is called, ``{escalation}`` that as a sentence, ``{kinds}``,
    ``{mode}`` and ``{tick}``. Literal braces are doubled.
    """
    cfg = config if config is not None else PolicyConfig()
    template = cfg.templates.get(recovery.mode.value) or DEFAULT_TEMPLATES[recovery.mode.value]
    remaining = max(cfg.escalate_after - stuck_streak, 0)
    problems = "\n".join(f"- {a.kind}: {clip(a.message, 400)}" for a in anomalies)
    # The step raising is not a tool the agent called: the advice about calls is not for it.
    calls = [a for a in anomalies if not _step_failed(a)]
    advice = list(dict.fromkeys(ADVICE.get(k, _GENERAL_ADVICE) for k in _kinds(calls)))
    if len(calls) < len(anomalies):
        advice.insert(0, _STEP_ADVICE)
    return template.format(
        advice="\n".join(f"- {line}" for line in advice) or f"- {_GENERAL_ADVICE}",
        problems=problems or "- (no details)",
        avoid="; ".join(recovery.avoid) or _nothing_to_avoid(anomalies),
        attempt=recovery.attempts,
        streak=stuck_streak,
        escalate_after=cfg.escalate_after,
        remaining=remaining,
        # A flat metric alone (reassess_goal) is a slow signal: it never calls one sooner.
        escalation=_escalation(
            remaining,
            cfg.escalate_on_ignored and recovery.mode is RecoveryMode.TRY_ALTERNATIVE,
            cfg.flat_grace if _flat(cfg, recovery) else 0,
        ),
        kinds=", ".join(_kinds(anomalies)),
        mode=recovery.mode.value,
        tick=max((a.tick for a in anomalies), default=recovery.since_tick),
    )


def unheard(config: PolicyConfig) -> PolicyConfig:
    """``config`` for an agent that could hear no recovery (a run only observed): it ignored none."""
    return config.model_copy(update={"escalate_on_ignored": False})


def decide(
    state: AgentState,
    anomalies: Sequence[Anomaly],
    now: datetime,
    config: PolicyConfig | None = None,
) -> Decision:
    """What to do after a tick, given the state before it and the tick's anomalies.

    ``state.progress`` holds the kept samples with the tick's own (the runner measures the
    metric before it decides): a rise in it or the heartbeat before defers an escalation.

    ``now`` is part of the contract so time-based rules need no new
    signature; the default rules do not use it.
    """
    cfg = config if config is not None else PolicyConfig()
    decision = _enforce(state, anomalies, cfg)
    if cfg.mode != "observe":
        return decision
    if decision.action == "continue":
        return decision.model_copy(update={"instructions": None})
    return decision.model_copy(
        update={
            "action": "continue",
            "observed": decision.action,
            "instructions": None,
            "reason": f"observe mode, would {decision.action}: {decision.reason}",
        }
    )


def _shortest_escalation(cfg: PolicyConfig) -> int:
    """The fewest stuck heartbeats in a row that can escalate (2 when a recovery is ignored)."""
    return min(cfg.escalate_after, 2) if cfg.escalate_on_ignored else cfg.escalate_after


def _enforce(state: AgentState, anomalies: Sequence[Anomaly], cfg: PolicyConfig) -> Decision:
    """The decision of enforce mode (see the module docstring)."""
    previous = state.recovery
    if not anomalies:
        if previous is None:
            return Decision(action="continue", stuck_streak=0, reason="no anomaly")
        quiet = previous.quiet + 1
        if quiet >= cfg.recover_after:
            return Decision(
                action="continue",
                stuck_streak=0,
                reason=f"recovered: no anomaly for {quiet} heartbeats in a row",
            )
        return Decision(
            action="continue",
            stuck_streak=state.stuck_streak,
            reason=f"no anomaly ({quiet} of {cfg.recover_after} quiet heartbeats to end the stuck stretch)",
            recovery=previous.model_copy(update={"quiet": quiet}),
            instructions=state.instructions,
        )
    kinds = _kinds(anomalies)
    # An advisory-only heartbeat is stuck, but never the one that calls a human.
    advisory = all(k in ADVISORY for k in kinds)
    streak = state.stuck_streak + 1
    mode = (
        RecoveryMode.REASSESS_GOAL if all(k == "no_progress" for k in kinds) else RecoveryMode.TRY_ALTERNATIVE
    )
    tick = max(a.tick for a in anomalies)
    avoid = _avoid(anomalies)
    # What the agent did again although the last recovery named it: a detector's own hint
    # or the call itself (never the bare tool name, which any next call may share).
    seen = [
        str(hint)
        for a in anomalies
        if a.kind not in ADVISORY and not _step_failed(a)
        for hint in (a.evidence.get("avoid"), a.evidence.get("call"))
        if isinstance(hint, str) and hint
    ]
    ignored = [hint for hint in seen if previous is not None and hint in previous.avoid]
    # The same kind of stuck again after a recovery named it: the instructions did not work,
    # whatever the exact call. A flat metric (no_progress) is a slow signal and keeps its
    # reassess attempts; only the detectors of behaviour count here.
    came_back = [
        k
        for k in kinds
        if previous is not None and k in previous.kinds and k not in _SLOW_KINDS and k not in ADVISORY
    ]
    if previous is not None:
        # Still stuck: what failed before is still worth avoiding, newest first.
        avoid = list(dict.fromkeys([*avoid, *previous.avoid]))[:_AVOID_KEPT]
    # The stretch keeps the kinds it found, a new mode too (a new attempt): told to try another
    # way and then to reassess, it found more than a flat metric (escalates_at).
    found = kinds if previous is None else list(dict.fromkeys([*previous.kinds, *kinds]))
    if previous is not None and previous.mode is mode:
        recovery = Recovery(
            mode=mode,
            attempts=previous.attempts + 1,
            since_tick=previous.since_tick,
            kinds=found,
            avoid=avoid,
        )
    else:
        recovery = Recovery(mode=mode, attempts=1, since_tick=tick, kinds=found, avoid=avoid)
    problems = "; ".join(f"{a.kind}: {a.message}" for a in anomalies)
    why = ""
    if advisory:
        pass  # never escalates on its own
    elif streak >= (limit := escalates_at(cfg, recovery, anomalies)):
        grace = f" + flat_grace = {cfg.flat_grace}" if limit > cfg.escalate_after else ""
        why = f"stuck for {streak} heartbeats (escalate_after = {cfg.escalate_after}{grace})"
    elif cfg.escalate_on_ignored and streak >= 2 and ignored:
        why = (
            f"stuck for {streak} heartbeats and did again what the recovery said to avoid: "
            f"{clip(ignored[0], 120)}"
        )
    elif cfg.escalate_on_ignored and streak >= 2 and came_back:
        why = f"stuck for {streak} heartbeats and the recovery did not help: {came_back[0]} again"
    rose = rose_at(state.progress) if why else None
    if rose is not None and rose > tick - _shortest_escalation(cfg):
        # The metric rose within the fewest heartbeats a stretch escalates on: the calls looked
        # stuck between its rises (a worker polling an empty queue), but the stretch the human
        # would be called for was not all stuck. The instructions still go out.
        why, deferred = "", f"; the progress metric rose at heartbeat {rose}: no human called"
    else:
        deferred = ""

    if why:
        if previous is not None:
            # No new instructions go out: the recovery stays the one the agent was last told of,
            # its mode and attempt too when this heartbeat's kinds would have asked for another
            # (two "reassess your goal" told, then escalated on errors: no try_alternative sent).
            told = {"attempts": previous.attempts, "mode": previous.mode, "since_tick": previous.since_tick}
            kinds = list(dict.fromkeys([*previous.kinds, *recovery.kinds]))
            recovery = recovery.model_copy(update={**told, "kinds": kinds})
        return Decision(
            action="escalate", stuck_streak=streak, reason=f"{why}; last: {problems}", recovery=recovery
        )
    action: DecisionAction = "reassess_goal" if mode is RecoveryMode.REASSESS_GOAL else "try_alternative"
    return Decision(
        action=action,
        stuck_streak=streak,
        reason=(
            f"stuck for {streak} heartbeats, on {', '.join(kinds)} alone, which never escalates: {problems}"
            if advisory and streak >= cfg.escalate_after
            else f"stuck for {streak} of {cfg.escalate_after} heartbeats{deferred}: {problems}"
        ),
        recovery=recovery,
        instructions=render_instructions(recovery, anomalies, stuck_streak=streak, config=cfg),
    )
