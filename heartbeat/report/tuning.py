"""The replay tuning view: where each detector fired against the labelled onset, and the confusion table.

:func:`render_tuning` takes what ``heartbeat replay DIR --labels FILE --json``
prints: one object per trace (``trace``, ``label``, ``onset``, ``actions``,
``ticks``, ``first_anomaly``, ``escalated``, ``kinds``, ``anomalies``, maybe
``error``) and the final ``confusion`` counts, and returns one self-contained
page. The onset is the 1-based action where the stuck behaviour begins, so
each trace is drawn along its actions; an anomaly without an action (a
``no_progress``) is placed at its heartbeat's last known action. Pure: no
file, no clock.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from .html import LABELS, esc, glyph, page, symbol_defs, symbol_id

__all__ = ["render_tuning", "verdict"]

_MAX_MARKS = 400  # markers per trace at most (one per position and kind): a page stays small


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _field(value: object, key: str) -> int | None:
    return _int(value.get(key)) if isinstance(value, Mapping) else None


def _anomalies(trace: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found = trace.get("anomalies")
    return [a for a in found if isinstance(a, Mapping)] if isinstance(found, list) else []


def _positions(trace: Mapping[str, Any]) -> list[tuple[int, str, str, bool]]:
    """Each anomaly as (action, kind, message, placed by its tick), in order."""
    anomalies = _anomalies(trace)
    actions = max(1, _int(trace.get("actions")) or 1)
    ticks = max(1, _int(trace.get("ticks")) or 1)
    # The last action known for each tick: from the anomalies and the escalation that name both.
    known: dict[int, int] = {}
    for item in [*anomalies, trace.get("escalated")]:
        tick, action = _field(item, "tick"), _field(item, "action")
        if tick is not None and action is not None:
            known[tick] = max(known.get(tick, 0), action)
    found = []
    for anomaly in anomalies:
        action, tick = _int(anomaly.get("action")), _int(anomaly.get("tick"))
        by_tick = action is None
        if action is None:
            if tick is None:
                continue
            action = known.get(tick) or max(1, round(tick * actions / ticks))
        found.append((action, str(anomaly.get("kind") or "?"), str(anomaly.get("message") or ""), by_tick))
    return found


def verdict(trace: Mapping[str, Any]) -> tuple[str, str]:
    """How the escalation matched the label: (short class, words).

    Stuck and escalated at or after the onset action: caught; before it:
    early; never: missed. Healthy and escalated: false alarm; else quiet.
    A trace that could not be replayed: error.
    """
    if trace.get("error"):
        return "error", f"error: {trace.get('error')}"
    label = trace.get("label")
    escalated = _field(trace.get("escalated"), "action")
    onset = _int(trace.get("onset"))
    if label == "stuck":
        if trace.get("escalated") is None:
            return "missed", "missed"
        if onset is not None and escalated is not None and escalated < onset:
            return "early", f"escalated {onset - escalated} action(s) before the onset"
        delay = f", {escalated - onset} action(s) after the onset" if onset is not None and escalated else ""
        return "caught", f"caught{delay}"
    if label == "healthy":
        return ("false", "false alarm") if trace.get("escalated") is not None else ("quiet", "quiet")
    word = "unclear" if label == "unclear" else "unlabelled"
    return word, f"{word}, {'escalated' if trace.get('escalated') is not None else 'not escalated'}"


def _strip(trace: Mapping[str, Any], kinds: Sequence[str]) -> str:
    """One trace along its actions: a lane per detector, the onset as a line, the escalation as a flag."""
    actions = max(1, _int(trace.get("actions")) or 1)
    width, left, right, lane = 420, 92, 8, 16
    height = 22 + lane * max(1, len(kinds))
    plot = width - left - right

    def x(action: int) -> float:
        return left + plot * (min(max(action, 1), actions) - 0.5) / actions

    seen: dict[tuple[int, str], None] = {}
    marks: list[str] = []
    for action, kind, message, by_tick in _positions(trace):
        if (action, kind) in seen or kind not in kinds or len(seen) >= _MAX_MARKS:
            continue
        seen[(action, kind)] = None
        y = 18 + lane * kinds.index(kind)
        where = f"action {action}" + (" (its heartbeat's last action)" if by_tick else "")
        marks.append(
            f'<use href="#{symbol_id(kind)}" class="mk" data-kind="{esc(kind)}" data-action="{action}" '
            f'x="{x(action) - 5:.1f}" y="{y:.1f}" width="10" height="10"><title>{esc(where)}: {esc(kind)}'
            f"{': ' + esc(message) if message else ''}</title></use>"
        )
    onset = _int(trace.get("onset"))
    escalated = _field(trace.get("escalated"), "action")
    parts = [
        f'<line x1="{left}" y1="12" x2="{width - right}" y2="12" stroke="var(--line)"/>',
        f'<text x="{left}" y="9" class="tk">1</text>',
        f'<text x="{width - right}" y="9" class="tk" text-anchor="end">{actions}</text>',
    ]
    for row, kind in enumerate(kinds):
        y = 23 + lane * row
        parts.append(f'<line x1="{left}" y1="{y}" x2="{width - right}" y2="{y}" class="lane"/>')
        parts.append(f'<text x="2" y="{y + 4}" class="tk">{esc(kind[:14])}</text>')
    if onset is not None:
        parts.append(
            f'<line class="onset" x1="{x(onset):.1f}" y1="2" x2="{x(onset):.1f}" y2="{height - 2}">'
            f"<title>labelled onset: action {onset}</title></line>"
        )
    if escalated is not None:
        parts.append(
            f'<use href="#{symbol_id("escalation")}" class="esc" x="{x(escalated) - 6:.1f}" y="0" width="12" '
            f'height="12"><title>escalated at action {escalated}</title></use>'
        )
    said = [f"{actions} actions"]
    said.append(f"onset at action {onset}" if onset is not None else "no onset")
    for kind in kinds:
        fired = sorted({a for a, k in seen if k == kind})
        more = " and more" if len(fired) > 10 else ""
        said.append(f"{kind} at action {', '.join(map(str, fired[:10]))}{more}")
    said.append(f"escalated at action {escalated}" if escalated is not None else "not escalated")
    return (
        f'<svg class="strip" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{esc("; ".join(said))}">{"".join(parts)}{"".join(marks)}</svg>'
    )


def _trace_kinds(trace: Mapping[str, Any]) -> list[str]:
    kinds = [str(k) for k in trace.get("kinds") or [] if isinstance(k, str)]
    for anomaly in _anomalies(trace):
        if anomaly.get("kind") and str(anomaly["kind"]) not in kinds:
            kinds.append(str(anomaly["kind"]))
    return kinds


def _detector_table(traces: Sequence[Mapping[str, Any]], kinds: Sequence[str]) -> str:
    """Per detector: on stuck traces how often and how late it fired against the onset; on healthy ones."""
    stuck = [t for t in traces if t.get("label") == "stuck"]
    healthy = [t for t in traces if t.get("label") == "healthy"]
    rows = []
    for kind in kinds:
        delays: list[int] = []
        fired_stuck = early = 0
        for trace in stuck:
            fired = sorted(action for action, k, _, _ in _positions(trace) if k == kind)
            if not fired:
                continue
            fired_stuck += 1
            onset = _int(trace.get("onset"))
            if onset is not None:
                early += fired[0] < onset
                after = [a for a in fired if a >= onset]
                if after:
                    delays.append(after[0] - onset)
        fired_healthy = sum(1 for t in healthy if any(a.get("kind") == kind for a in _anomalies(t)))
        median = f"{statistics.median(delays):g}" if delays else "–"
        rows.append(
            f'<tr><th scope="row">{glyph(kind)} {esc(kind)}</th>'
            f'<td class="num">{fired_stuck} of {len(stuck)}</td>'
            f'<td class="num">{early}</td><td class="num">{median}</td>'
            f'<td class="num">{fired_healthy} of {len(healthy)}</td></tr>'
        )
    return (
        '<div class="scroll"><table id="detectors"><caption>Each detector against the labels '
        '(a trace counts once per detector)</caption><thead><tr><th scope="col">detector</th>'
        '<th scope="col" class="num">fired on stuck traces</th>'
        '<th scope="col" class="num">of them first before the onset</th>'
        '<th scope="col" class="num">median actions from onset to firing</th>'
        '<th scope="col" class="num">fired on healthy traces</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _confusion_table(confusion: Mapping[str, Any]) -> str:
    """The confusion counts as given: a grid for a mapping of mappings, else one row per key."""
    if not confusion:
        return '<p class="muted">No confusion counts were given.</p>'
    inner = [v for v in confusion.values() if isinstance(v, Mapping)]
    if inner and len(inner) == len(confusion):
        columns = list(dict.fromkeys(k for v in inner for k in v))
        head = "".join(f'<th scope="col" class="num">{esc(c)}</th>' for c in columns)
        body = "".join(
            f'<tr><th scope="row">{esc(name)}</th>'
            + "".join(f'<td class="num">{esc(_cell(row.get(c)))}</td>' for c in columns)
            + "</tr>"
            for name, row in confusion.items()
        )
        return (
            '<div class="scroll"><table id="confusion"><caption>Confusion counts (rows and columns as replay '
            f"gave them)</caption><thead><tr><td></td>{head}</tr></thead><tbody>{body}</tbody></table></div>"
        )
    body = "".join(
        f'<tr><th scope="row">{esc(name)}</th><td class="num">{esc(_cell(value))}</td></tr>'
        for name, value in confusion.items()
    )
    return (
        '<div class="scroll"><table id="confusion"><caption>Confusion counts</caption><thead><tr>'
        f'<th scope="col">count</th><th scope="col" class="num">value</th></tr></thead><tbody>{body}</tbody>'
        "</table></div>"
    )


def _cell(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return f"{value:g}" if isinstance(value, float) else str(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


_TUNING_CSS = (
    "<style>.strip .onset{stroke:var(--bad);stroke-width:2;stroke-dasharray:4 3}"
    ".strip .tk{fill:var(--muted);font-size:10px;font-family:inherit}"
    ".strip .lane{stroke:var(--line);stroke-dasharray:1 3}.strip{max-width:100%;height:auto}"
    "tr.v-missed td.v,tr.v-false td.v,tr.v-early td.v,tr.v-error td.v{color:var(--bad);font-weight:600}"
    "tr.v-caught td.v{color:var(--ok);font-weight:600}#traces th.mono{white-space:nowrap}"
    "#confusion{width:auto;min-width:20rem}</style>"
)


def render_tuning(traces: Sequence[Mapping[str, Any]], confusion: Mapping[str, Any]) -> str:
    """The tuning page of ``replay DIR --labels FILE``: a strip per trace, detector and confusion tables."""
    kinds_all: list[str] = []
    for trace in traces:
        kinds_all += [k for k in _trace_kinds(trace) if k not in kinds_all]
    rows = []
    counts: dict[str, int] = {}
    for trace in traces:
        cls, words = verdict(trace)
        counts[cls] = counts.get(cls, 0) + 1
        first = trace.get("first_anomaly")
        first_text = "none"
        if isinstance(first, Mapping):
            first_text = f"{first.get('kind')} at action {first.get('action')} (tick {first.get('tick')})"
        escalated = trace.get("escalated")
        escalated_text = "–"
        if isinstance(escalated, Mapping):
            escalated_text = f"action {escalated.get('action')} (tick {escalated.get('tick')})"
        onset = trace.get("onset")
        size = f"{trace.get('actions') or 0} / {trace.get('ticks') or 0}"
        rows.append(
            f'<tr class="v-{cls}"><th scope="row" class="mono">{esc(trace.get("trace"))}</th>'
            f"<td>{esc(trace.get('label') or 'unlabelled')}</td>"
            f'<td class="num">{esc(onset if onset is not None else "–")}</td>'
            f'<td class="num">{esc(size)}</td><td>{esc(first_text)}</td><td>{esc(escalated_text)}</td>'
            f'<td class="v">{esc(words)}</td><td>{_strip(trace, _trace_kinds(trace))}</td></tr>'
        )
    legend = "".join(
        f"<li>{glyph(k)}<span>{esc(LABELS.get(k, k))}</span></li>" for k in [*kinds_all, "escalation"]
    )
    tally = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no traces"
    body = (
        "<header><h1>Replay tuning</h1>"
        f'<p class="lede">{len(traces)} trace(s): {esc(tally)}. Each strip runs from the first action to '
        "the trace's last: a lane per detector, the labelled onset (an action) as a dashed line, the "
        "escalation as a flag.</p></header>"
        f"{symbol_defs([*kinds_all, 'escalation'])}{_TUNING_CSS}"
        f'<ul class="legend" aria-label="markers">{legend}</ul>'
        '<section aria-labelledby="h-confusion"><h2 id="h-confusion">Confusion</h2>'
        f"{_confusion_table(confusion)}</section>"
        '<section aria-labelledby="h-detectors"><h2 id="h-detectors">Detectors against the onset</h2>'
        f"{_detector_table(traces, kinds_all)}</section>"
        '<section aria-labelledby="h-traces"><h2 id="h-traces">Traces</h2><div class="scroll">'
        '<table id="traces"><caption>Where each detector fired, trace by trace</caption><thead><tr>'
        '<th scope="col">trace</th><th scope="col">label</th><th scope="col" class="num">onset</th>'
        '<th scope="col" class="num">actions / ticks</th><th scope="col">first anomaly</th>'
        '<th scope="col">escalated</th><th scope="col">verdict</th><th scope="col">detectors</th>'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div></section>"
    )
    return page("heartbeat: replay tuning", body)
