"""The agent's page and the fleet overview: pure functions from gathered data to HTML.

:func:`render_agent` draws one agent's night: its current status and how to
resume, the timeline (progress as a line, anomalies and interventions as
markers in lanes), what happened in words, the budgets, and the actions of a
stretch with repeated and cycling calls marked. :func:`render_overview` is
one row per agent linking to those pages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .data import Timeline
from .html import LABELS, esc, glyph, page, plural, sparkline_svg, symbol_defs, when
from .rows import ActionRow
from .timeline import lanes, legend, timeline_svg

__all__ = ["AgentPage", "OverviewRow", "render_agent", "render_overview"]


@dataclass
class AgentPage:
    """Everything one agent's page shows (texts already redacted)."""

    agent: str
    generated_at: str
    state_dir: str
    timeline: Timeline
    status: str | None
    status_reason: str | None = None
    state_error: str | None = None
    kill: str | None = None
    kill_path: str = ""
    ticks: int = 0
    last_tick_at: str | None = None
    stuck_streak: int = 0
    escalate_after: int = 3
    escalate_after_anew: int | None = None  # a flat stretch's later limit (flat_grace)
    recovery: str | None = None
    instructions: str | None = None
    escalation: str | None = None
    escalation_file: str | None = None
    outbox: int = 0
    budgets: list[tuple[str, float, float | None]] = field(default_factory=list)
    commands: list[tuple[str, str]] = field(default_factory=list)
    since: str | None = None
    overview_href: str | None = None
    skipped: int = 0
    """Journal lines that could not be read (a torn last line, a hand edit)."""


@dataclass
class OverviewRow:
    """One agent's line of the overview."""

    agent: str
    href: str | None
    status: str | None
    status_reason: str | None
    kill: str | None
    ticks: int
    last_tick_at: str | None
    last_heartbeat_at: str | None
    ago: str | None
    overdue: bool | None
    overdue_text: str
    stuck_streak: int
    escalate_after: int
    progress: list[float]
    escalate_after_anew: int | None = None
    anomalies: int = 0
    error: str | None = None


def _status_badge(status: str | None, kill: str | None) -> str:
    if kill is not None:
        return '<span class="status st-killed">KILL present</span>'
    if status is None:
        return '<span class="status st-needs_human">state unreadable</span>'
    words = {"needs_human": "needs a human", "paused": "paused", "active": "active", "new": "no state yet"}
    return f'<span class="status st-{esc(status)}">{esc(words.get(status, status))}</span>'


def _status_section(p: AgentPage) -> str:
    facts: list[tuple[str, str]] = [("status", _status_badge(p.status, p.kill))]
    if p.status_reason:
        facts.append(("why", esc(p.status_reason)))
    if p.state_error:
        facts.append(("state.json", f'<span class="err">{esc(p.state_error)}</span>'))
    facts.append(
        (
            "KILL",
            f"present: {esc(p.kill)} (<code>{esc(p.kill_path)}</code>)" if p.kill is not None else "absent",
        )
    )
    facts.append(("ticks", f"{p.ticks:,}; last step called {esc(when(p.last_tick_at))}"))
    anew = p.escalate_after_anew
    later = "" if anew is None else f" ({anew} while its calls bring new results)"
    facts.append(("stuck streak", f"{p.stuck_streak} of {p.escalate_after}{later}"))
    facts.append(("recovery", esc(p.recovery or "none")))
    if p.escalation:
        facts.append(("escalation", esc(p.escalation)))
    if p.escalation_file:
        facts.append(("details", f"<code>{esc(p.escalation_file)}</code>"))
    if p.outbox:
        facts.append(("outbox", f"{p.outbox} notification(s) not yet delivered"))
    dl = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts)
    instructions = (
        f"<h3>Instructions for the next step</h3><pre>{esc(p.instructions)}</pre>" if p.instructions else ""
    )
    commands = "".join(f"<dt>{esc(what)}</dt><dd><code>{esc(cmd)}</code></dd>" for what, cmd in p.commands)
    return (
        '<section aria-labelledby="h-status"><h2 id="h-status">Status now</h2><div class="cards">'
        f'<div class="card"><dl class="facts">{dl}</dl></div>'
        f'<div class="card"><h3 id="h-resume">How to go on</h3><dl class="facts">{commands}</dl></div>'
        f"</div>{instructions}</section>"
    )


def _budget_section(p: AgentPage) -> str:
    t = p.timeline
    rows = []
    for name, spent, limit in p.budgets:
        if limit:
            share = spent / limit
            bar = (
                f'<div class="meter" role="img" aria-label="{share:.0%} of the limit">'
                f'<span class="{"over" if share >= 1 else ""}" '
                f'style="width:{min(share, 1):.0%}"></span></div>'
            )
            rows.append(
                f'<tr><th scope="row">{esc(name)}</th><td class="num">{spent:,.4g}</td>'
                f'<td class="num">{limit:,.4g}</td><td>{bar} {share:.0%}</td></tr>'
            )
        else:
            rows.append(
                f'<tr><th scope="row">{esc(name)}</th><td class="num">{spent:,.4g}</td>'
                '<td class="num">no limit</td><td></td></tr>'
            )
    table = (
        '<div class="scroll"><table><caption>Today\'s budget counters against the configured limits</caption>'
        '<thead><tr><th scope="col">budget</th><th scope="col" class="num">spent</th>'
        f'<th scope="col" class="num">limit</th><th scope="col">share</th></tr></thead><tbody>{"".join(rows)}'
        "</tbody></table></div>"
    )
    tokens = f", {plural(t.tokens_total, 'model token')}" if t.tokens_total else ""
    totals = (
        f"<p>In this journal: {plural(t.heartbeats, 'heartbeat')}, {plural(t.actions_total, 'action')} "
        f"({plural(t.errors_total, 'error')}){tokens}, cost {t.cost_total:,.4g}.</p>"
    )
    return (
        f'<section aria-labelledby="h-budget"><h2 id="h-budget">Budgets spent</h2>{totals}{table}'
        f"{_spend_tables(t)}</section>"
    )


SPEND_ROWS = 50
"""Heartbeats shown in the spend table at most (the newest)."""


def _spend_tables(t: Timeline) -> str:
    """Spend by model over the journal and per heartbeat (the newest that spent); empty with no model call."""
    if not t.models:
        return ""
    by_model = "".join(
        f'<tr><th scope="row"><code>{esc(model)}</code></th><td class="num">{used["calls"]:,.0f}</td>'
        f'<td class="num">{used["tokens"]:,.0f}</td><td class="num">${used["cost"]:,.4f}</td></tr>'
        for model, used in sorted(t.models.items())
    )
    spent = [slot for slot in t.slots if slot.tokens or slot.models][-SPEND_ROWS:]
    per_tick = "".join(
        f'<tr><th scope="row">{esc(slot.ticks)}</th><td>{esc(when(slot.last_at))}</td>'
        f'<td class="num">{slot.tokens:,}</td><td class="num">${slot.cost:,.4f}</td>'
        f"<td>{esc(', '.join(sorted(slot.models)))}</td></tr>"
        for slot in reversed(spent)
    )
    return (
        '<h3 id="h-spend">Model spend</h3><div class="scroll"><table><caption>Model calls in this journal, '
        'by model</caption><thead><tr><th scope="col">model</th><th scope="col" class="num">calls</th>'
        '<th scope="col" class="num">tokens</th><th scope="col" class="num">cost</th></tr></thead>'
        f'<tbody>{by_model}</tbody></table></div><div class="scroll"><table><caption>Spend per heartbeat '
        f'(the newest {len(spent)} that called a model)</caption><thead><tr><th scope="col">tick</th>'
        '<th scope="col">when</th><th scope="col" class="num">tokens</th>'
        '<th scope="col" class="num">cost</th>'
        f'<th scope="col">models</th></tr></thead><tbody>{per_tick}</tbody></table></div>'
    )


def _notable_section(t: Timeline) -> str:
    if not t.notable:
        return (
            '<section aria-labelledby="h-events"><h2 id="h-events">What happened</h2>'
            "<p>No recovery, escalation, KILL, pause or resume in this journal.</p></section>"
        )
    rows = []
    for mark in reversed(t.notable):
        detail = (
            f"<details><summary>instructions</summary><pre>{esc(mark.detail)}</pre></details>"
            if mark.detail
            else ""
        )
        # Between heartbeats (a pause, a resume, a KILL before the step): after that tick, not at it.
        tick = f'<span class="muted">after</span> {mark.tick}' if mark.between else str(mark.tick)
        rows.append(
            f'<tr class="ev-{esc(mark.kind)}"><td class="mono">{esc(when(mark.at))}</td>'
            f'<td class="num">{tick}</td>'
            f"<td>{glyph(mark.kind)} {esc(LABELS.get(mark.kind, mark.kind))}</td>"
            f'<td class="text">{esc(mark.text)}{detail}</td></tr>'
        )
    more = (
        f'<p class="muted">{t.notable_dropped:,} earlier entries not listed.</p>' if t.notable_dropped else ""
    )
    return (
        '<section aria-labelledby="h-events"><h2 id="h-events">What happened</h2>'
        '<div class="scroll"><table id="events"><caption>Recoveries, escalations, KILLs, pauses and resumes, '
        'newest first</caption><thead><tr><th scope="col">when</th><th scope="col" class="num">tick</th>'
        f'<th scope="col">what</th><th scope="col">detail</th></tr></thead><tbody>{"".join(rows)}</tbody>'
        f"</table></div>{more}</section>"
    )


def _flags(row: ActionRow) -> str:
    flags = []
    if row.repeat:
        flags.append(f'<span class="flag">{glyph("repeat", 11)}repeated ×{row.repeat}</span>')
    if row.cycle:
        flags.append(f'<span class="flag">{glyph("loop", 11)}cycle of {row.cycle}</span>')
    for kind in row.tripped:
        flags.append(f'<span class="flag">{glyph(kind, 11)}tripped {esc(kind)}</span>')
    return "".join(flags)


def _head(*columns: str) -> str:
    """A table head row; ``"name:num"`` right-aligns a column of numbers."""
    cells = []
    for column in columns:
        name, _, kind = column.partition(":")
        align = ' class="num"' if kind == "num" else ""
        cells.append(f'<th scope="col"{align}>{esc(name)}</th>')
    return f"<thead><tr>{''.join(cells)}</tr></thead>"


def _class_attr(classes: Sequence[str]) -> str:
    return f' class="{" ".join(classes)}"' if classes else ""


def _actions_section(t: Timeline) -> str:
    first, last = t.stretch if t.stretch else (0, -1)
    body = []
    shown = 0
    for row in t.rows:
        classes = [
            c
            for c, on in (("rep", row.repeat), ("cyc", row.cycle and not row.repeat), ("trip", row.tripped))
            if on
        ]
        inside = first <= row.tick <= last
        shown += inside
        output = "none" if row.output_len is None else f"{row.output_len:,} chars"
        error = f'<span class="err">{esc(row.error)}</span>' if row.error else ""
        body.append(
            f'<tr data-tick="{row.tick}"{_class_attr(classes)}'
            f'{"" if inside else " hidden"}><td class="num">{row.index}</td><td class="num">{row.tick}</td>'
            f'<td class="mono">{esc(row.tool)}</td><td class="args mono">{esc(row.args)}</td>'
            f'<td class="nowrap">{output}</td>'
            f'<td>{error}</td><td class="num">{row.cost:,.4g}</td><td>{_flags(row)}</td></tr>'
        )
    if t.stretch:
        caption = f"Actions of ticks {first} to {last}: {plural(shown, 'action')}"
        if t.stretch_dropped:
            caption += f" (the newest {shown:,}; {t.stretch_dropped:,} earlier ones not in this page)"
    else:
        caption = "No action recorded in this journal"
    oldest = t.rows[0].tick if t.rows else 0
    picker = (
        '<form id="pick" hidden aria-label="choose a stretch of ticks">'
        f'<label>from tick<input id="from" type="number" inputmode="numeric" value="{first}"></label>'
        f'<label>to tick<input id="to" type="number" inputmode="numeric" value="{last}"></label>'
        '<button type="submit">Show</button><span class="muted">or click a heartbeat on the timeline '
        f"(shift-click to extend); this page holds the actions from tick {oldest} on.</span></form>"
    )
    return (
        '<section aria-labelledby="h-actions"><h2 id="h-actions">Actions of a stretch</h2>'
        '<p class="lede">Rows marked <span class="flag">repeated</span> are the same call (tool and '
        'arguments) made several times in a row; <span class="flag">cycle</span> rows go round the same few '
        "calls back to back. Outputs are journaled as their length only. Another stretch: "
        "<code>heartbeat report --stretch FROM:TO</code>.</p>"
        f'{picker}<div class="scroll"><table id="actions">'
        f'<caption id="stretch-caption">{esc(caption)}</caption>'
        + _head("#:num", "tick:num", "tool", "arguments", "output", "error", "cost:num", "flags")
        + f"<tbody>{''.join(body)}"
        "</tbody></table></div></section>"
    )


PICK_SCRIPT = (
    "(function(){var f=document.getElementById('pick');if(!f)return;f.hidden=false;"
    "var a=document.getElementById('from'),b=document.getElementById('to'),"
    "cap=document.getElementById('stretch-caption'),band=document.getElementById('band'),"
    "rows=[].slice.call(document.querySelectorAll('#actions tbody tr')),"
    "pts=[].slice.call(document.querySelectorAll('#timeline .pt')),anchor=null;"
    "function show(x,y){if(y<x){var t=x;x=y;y=t;}a.value=x;b.value=y;var n=0;"
    "rows.forEach(function(r){var k=+r.getAttribute('data-tick'),on=k>=x&&k<=y;r.hidden=!on;if(on)n++;});"
    "cap.textContent='Actions of ticks '+x+' to '+y+': '+n+' action'+(n==1?'':'s')+' in this page';"
    "var p=pts.filter(function(q){"
    "return +q.getAttribute('data-last')>=x&&+q.getAttribute('data-first')<=y;});"
    "if(band&&p.length){var x0=+p[0].getAttribute('data-x0'),x1=+p[p.length-1].getAttribute('data-x1');"
    "band.setAttribute('x',x0);band.setAttribute('width',x1-x0);band.removeAttribute('display');}}"
    "f.addEventListener('submit',function(e){e.preventDefault();show(+a.value,+b.value);});"
    # Points are picked with the mouse; the from/to fields are the keyboard's way (the
    # timeline is one labelled image to assistive technology, with nothing to focus inside).
    "pts.forEach(function(q){q.addEventListener('click',function(e){"
    "var t0=+q.getAttribute('data-first'),t1=+q.getAttribute('data-last');"
    "if(e.shiftKey&&anchor!==null){show(Math.min(anchor,t0),Math.max(anchor,t1));}else{anchor=t0;show(t0,t1);}"
    "});});})();"
)


def render_agent(p: AgentPage) -> str:
    """One agent's self-contained report page."""
    t = p.timeline
    kinds = lanes(t)
    window = f"since {when(p.since)}" if p.since else "the whole journal"
    span = f"{when(t.first_at)} to {when(t.last_at)}" if t.first_at else "no events"
    back = (
        f'<p class="noprint"><a href="{esc(p.overview_href)}">← all agents</a></p>' if p.overview_href else ""
    )
    bucket = (
        f'<p class="muted">{t.bucket:,} heartbeats per point; the markers count every one.</p>'
        if t.bucket > 1
        else ""
    )
    skipped = f" {plural(p.skipped, 'unreadable journal line')} skipped." if p.skipped else ""
    body = (
        f"{back}<header><h1>Agent <code>{esc(p.agent)}</code>: {_status_badge(p.status, p.kill)}</h1>"
        f'<p class="lede">heartbeat report of {esc(window)} ({esc(span)}, {plural(t.events, "event")}), '
        f"made {esc(when(p.generated_at))} from <code>{esc(p.state_dir)}</code>.{skipped}</p></header>"
        f"{symbol_defs([*kinds, *(m.kind for m in t.notable), 'repeat', 'loop'])}"
        f"{_status_section(p)}"
        '<section aria-labelledby="h-timeline"><h2 id="h-timeline">Timeline</h2>'
        '<p class="lede">Each point is a heartbeat: the line is the progress metric, the lanes below mark '
        "anomalies by kind and what the heartbeat and people did. Shaded: waiting for a human.</p>"
        f'{bucket}<div class="scroll">{timeline_svg(t)}</div>{legend(t, kinds)}</section>'
        f"{_notable_section(t)}{_actions_section(t)}{_budget_section(p)}"
    )
    return page(f"heartbeat: {p.agent}", body, script=PICK_SCRIPT if t.rows else None)


_OVERVIEW_COLUMNS = (
    "agent", "status", "last heartbeat", "overdue", "streak:num", "ticks:num", "anomalies:num", "progress"
)  # fmt: skip


def render_overview(rows: Sequence[OverviewRow], *, generated_at: str, config: str) -> str:
    """The fleet overview: one row per agent, each linking to its page."""
    body = []
    for r in rows:
        name = f'<a href="{esc(r.href)}">{esc(r.agent)}</a>' if r.href else esc(r.agent)
        if r.overdue is None:
            overdue = f'<span class="muted">{esc(r.overdue_text)}</span>'
        elif r.overdue:
            overdue = f'<span class="status st-overdue">overdue</span> {esc(r.overdue_text)}'
        else:
            overdue = f"no {esc(r.overdue_text)}".strip()
        reason = f'<br><span class="muted">{esc(r.status_reason)}</span>' if r.status_reason else ""
        error = f'<br><span class="err">{esc(r.error)}</span>' if r.error else ""
        ago = f'<br><span class="muted">{esc(r.ago)}</span>' if r.ago else ""
        later = "" if r.escalate_after_anew is None else f" ({r.escalate_after_anew})"
        body.append(
            f'<tr><th scope="row">{name}</th>'
            f'<td class="text">{_status_badge(r.status, r.kill)}{reason}{error}</td>'
            f'<td class="mono">{esc(when(r.last_heartbeat_at or r.last_tick_at))}{ago}</td>'
            f"<td>{overdue}</td>"
            f'<td class="num">{r.stuck_streak} of {r.escalate_after}{later}</td>'
            f'<td class="num">{r.ticks:,}</td>'
            f'<td class="num">{r.anomalies:,}</td>'
            f"<td>{sparkline_svg(r.progress, f'progress of {r.agent}')}</td></tr>"
        )
    waiting = sum(1 for r in rows if r.status == "needs_human")
    late = sum(1 for r in rows if r.overdue)
    summary = f"{plural(len(rows), 'agent')}: {waiting} waiting for a human, {late} overdue."
    content = (
        "<header><h1>heartbeat: all agents</h1>"
        f'<p class="lede">{esc(summary)} Made {esc(when(generated_at))} '
        f"from <code>{esc(config)}</code>.</p></header>"
        '<section aria-labelledby="h-agents"><h2 id="h-agents">Agents</h2>'
        '<div class="scroll"><table id="agents">'
        "<caption>Each agent's name links to its own report page.</caption>"
        + _head(*_OVERVIEW_COLUMNS)
        + f"<tbody>{''.join(body)}</tbody></table></div></section>"
    )
    return page("heartbeat: all agents", content)
