"""What a human is told: ``ESCALATION.md`` and the notification texts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from .models import ActionRecord, AgentState, Anomaly, printable

__all__ = ["escalation_markdown", "notification_text", "payload"]

_LAST_ACTIONS = 10
# Markdown that could hide a link's target, show an image or run HTML where ESCALATION.md is
# rendered (GitHub, an editor's preview), or end a code span early: escaped in every text an
# agent had a hand in. Line breaks never reach here (summaries and errors keep them escaped).
_MARKDOWN = str.maketrans({c: "\\" + c for c in "\\`[]<"})  # "<" opens HTML and autolinks; "->" stays


def _md(text: str) -> str:
    """``text`` (an agent had a hand in it) safe to put in Markdown: shown as it is, never a link."""
    return text.translate(_MARKDOWN)


def _action_line(action: ActionRecord) -> str:
    outcome = (
        f"error: {action.error}"
        if action.error
        else ("no output" if action.output_len is None else f"{action.output_len} chars")
    )
    # Escaped as the evidence's messages are: a summary keeps the agent's characters as they came
    # (a right-to-left override turns the rest of a line round in an editor or a terminal).
    return printable(f"#{action.index} (tick {action.tick}) {action.summary} -> {outcome}")


def _host() -> str:
    import socket

    return socket.gethostname()


def payload(state: AgentState, anomalies: Sequence[Anomaly]) -> dict[str, object]:
    """The evidence every notification carries: anomalies, streak, last actions."""
    return {
        "host": _host(),  # which machine's agent: a fleet's messages look alike otherwise
        "status": state.status.value,
        "ticks": state.ticks,
        "stuck_streak": state.stuck_streak,
        "anomalies": [
            {"kind": a.kind, "tick": a.tick, "action": a.action, "message": a.message} for a in anomalies
        ],
        "last_actions": [_action_line(a) for a in state.history[-_LAST_ACTIONS:]],
        "last_progress": state.last_progress(),
        "recovery": state.recovery.model_dump(mode="json") if state.recovery else None,
    }


def notification_text(agent: str, headline: str, anomalies: Sequence[Anomaly], resume: str) -> str:
    """A short message that reads well in Slack, Discord, e-mail or a terminal."""
    lines = [f"heartbeat: agent '{agent}' {headline}"]
    lines += [f"- {a.kind}: {a.message}" for a in anomalies[:5]]
    lines.append(resume)
    return "\n".join(lines)


def escalation_markdown(
    agent: str,
    state: AgentState,
    anomalies: Sequence[Anomaly],
    *,
    reason: str,
    now: datetime,
    resume_hint: str,
    redact: Callable[[str], str] = str,
) -> str:
    """The text of ``ESCALATION.md``: what happened, the evidence, the last actions, what to do.

    ``redact`` masks each text before it is escaped, never the page after: a URL cut to its host
    would take the backslash escaping the ``<`` after it, and an escaped secret is no longer found.
    """

    def md(text: str) -> str:
        return _md(redact(text))

    agent, resume_hint = redact(agent), redact(resume_hint)
    recovery = state.recovery
    tried = (
        f"{recovery.attempts} recovery attempt(s) of mode `{recovery.mode.value}` since tick "
        f"{recovery.since_tick}"
        if recovery
        else "no recovery recorded"
    )
    out = [
        f"# Agent `{agent}` needs a human",
        "",
        f"Escalated at {now.isoformat(timespec='seconds')} on tick {state.ticks}: {md(reason)}.",
        f"Stuck for {state.stuck_streak} heartbeat(s) in a row; {tried}.",
        "The heartbeat will not call the agent's step until someone resumes it.",
        "",
        "## Evidence",
        "",
    ]
    out += [f"- **{a.kind}** (tick {a.tick}): {md(a.message)}" for a in anomalies] or ["- (none)"]
    if state.instructions:
        out += [
            "",
            "## Last instructions given to the agent",
            "",
            "> " + md(state.instructions).replace("\n", "\n> "),
        ]
    samples = [s for s in state.progress if s.value is not None][-10:]
    if samples:
        out += ["", "## Recent progress", "", ", ".join(f"tick {s.tick}: {s.value:g}" for s in samples)]
    out += ["", "## Last actions", ""]
    out += [f"- {md(_action_line(a))}" for a in state.history[-_LAST_ACTIONS:]] or ["- (none)"]
    out += [
        "",
        "## What to do",
        "",
        f"- Look at the evidence, fix what the agent cannot, then: `{resume_hint}`",
        "  (the note becomes the agent's next instructions; this file is removed).",
        "- To stop the agent for good: `touch KILL` beside heartbeat.toml (or `heartbeat kill`).",
        "- The full history is in `journal.jsonl`: `heartbeat log`.",
        "",
    ]
    return "\n".join(out)
