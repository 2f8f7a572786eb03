"""The timeline picture: progress per heartbeat as a line, over lanes of markers, one lane per kind.

Pure: a :class:`~heartbeat.report.data.Timeline` in, inline SVG out. Each
point is a heartbeat (or a bucket of them) and carries its ticks as data
attributes for the page's stretch picker; each marker is a ``<use>`` of its
kind's symbol with a ``<title>`` saying what happened.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .data import MARK_KINDS, Slot, Timeline
from .html import LABELS, esc, glyph, plural, symbol_id, when

__all__ = ["ANOMALY_ORDER", "lanes", "legend", "timeline_svg"]

ANOMALY_ORDER = (
    "repeat", "near_repeat", "loop", "cycle", "recurring",
    "empty", "error_rate", "recurring_error", "no_progress",
)  # fmt: skip


def lanes(timeline: Timeline) -> list[str]:
    """The marker lanes of a timeline: anomaly kinds first (known ones in order), then the other marks."""
    kinds = list(timeline.anomaly_counts)
    ordered = [k for k in ANOMALY_ORDER if k in kinds] + sorted(k for k in kinds if k not in ANOMALY_ORDER)
    return ordered + [k for k in MARK_KINDS if k in timeline.mark_counts and k not in ordered]


def timeline_svg(timeline: Timeline) -> str:
    """The timeline: progress per heartbeat as a line over lanes of markers, one lane per kind."""
    slots = timeline.slots
    kinds = lanes(timeline)
    width, left, right, top, chart = 960, 124, 16, 14, 150
    lane_h = 24
    axis_y = top + chart
    lanes_top = axis_y + 30
    height = lanes_top + lane_h * len(kinds) + 8
    plot = width - left - right
    n = max(1, len(slots))
    col = plot / n
    values = [s.progress for s in slots if s.progress is not None]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    if high - low < 1e-12:
        # A flat line gets room around it; scaled, since 1e20 - 1 is 1e20 in floating point.
        pad = max(1.0, abs(low))
        low, high = low - pad, high + pad

    def x(i: int) -> float:
        return left + col * (i + 0.5)

    def y(v: float) -> float:
        return top + chart - (v - low) / (high - low) * chart

    out = [
        f'<svg id="timeline" class="timeline" viewBox="0 0 {width} {height}" role="img" '
        f'aria-labelledby="tl-title tl-desc" preserveAspectRatio="xMinYMin meet">',
        f'<title id="tl-title">Timeline of {plural(timeline.heartbeats, "heartbeat")}</title>',
        f'<desc id="tl-desc">{esc(_describe(timeline, kinds))}</desc>',
    ]
    for slot in slots:  # a red wash behind heartbeats that waited for a human
        if slot.outcome == "needs_human":
            out.append(
                f'<rect class="wait" x="{x(slot.index) - col / 2:.1f}" y="{top}" width="{col:.1f}" '
                f'height="{height - top - 4}"><title>waiting for a human</title></rect>'
            )
    out.append(_band(timeline, x, col, top, height))
    out.append(f'<line class="axis" x1="{left}" y1="{axis_y}" x2="{width - right}" y2="{axis_y}"/>')
    for value, label in ((high, f"{high:g}"), (low, f"{low:g}")):
        out.append(
            f'<line class="grid" x1="{left}" y1="{y(value):.1f}" x2="{width - right}" y2="{y(value):.1f}"/>'
        )
        out.append(f'<text x="{left - 8}" y="{y(value) + 4:.1f}" text-anchor="end">{esc(label)}</text>')
    out.append(f'<text x="8" y="{top + chart / 2:.1f}">progress</text>')
    if not values:
        out.append(
            f'<text x="{left + plot / 2}" y="{top + chart / 2}" text-anchor="middle">'
            "no progress samples</text>"
        )
    label_every = max(1, -(-len(slots) // 10))
    for slot in slots[::label_every]:
        out.append(
            f'<text x="{x(slot.index):.1f}" y="{axis_y + 16}" text-anchor="middle">'
            f"{esc(slot.first_tick)}</text>"
        )
    out.append(f'<text x="8" y="{axis_y + 16}">tick</text>')
    out += _lines(slots, x, y)
    radius = min(4.0, max(2.0, col / 3))
    for slot in slots:
        cy = y(slot.progress) if slot.progress is not None else axis_y
        cls = "pt" if slot.progress is not None else "pt none"
        out.append(
            f'<circle class="{cls}" cx="{x(slot.index):.1f}" cy="{cy:.1f}" r="{radius:.1f}" '
            f'data-first="{slot.first_tick}" data-last="{slot.last_tick}" '
            f'data-x0="{x(slot.index) - col / 2:.1f}" '
            f'data-x1="{x(slot.index) + col / 2:.1f}"><title>{esc(_slot_text(slot))}</title></circle>'
        )
    size = min(13.0, max(7.0, col * 0.9))
    for row, kind in enumerate(kinds):
        cy = lanes_top + lane_h * row + lane_h / 2
        label = LABELS.get(kind, kind)
        out.append(f'<line class="grid" x1="{left}" y1="{cy:.1f}" x2="{width - right}" y2="{cy:.1f}"/>')
        out.append(f'<text x="8" y="{cy + 4:.1f}">{esc(label)}</text>')
        for slot in slots:
            texts = _lane_texts(slot, kind)
            if not texts:
                continue
            title = f"tick {slot.ticks}: {label}" + (f" ×{len(texts)}" if len(texts) > 1 else "")
            title += "".join(f"\n- {t}" for t in texts[:5])
            out.append(
                f'<use href="#{symbol_id(kind)}" class="mk" data-kind="{esc(kind)}" '
                f'data-tick="{slot.first_tick}" '
                f'x="{x(slot.index) - size / 2:.1f}" y="{cy - size / 2:.1f}" width="{size:.1f}" '
                f'height="{size:.1f}"><title>{esc(title)}</title></use>'
            )
    out.append("</svg>")
    return "".join(out)


def _band(timeline: Timeline, x: Callable[[int], float], col: float, top: int, height: int) -> str:
    """The selected stretch, shaded across the chart and lanes (moved by the script)."""
    covered = [
        s
        for s in timeline.slots
        if timeline.stretch and s.last_tick >= timeline.stretch[0] and s.first_tick <= timeline.stretch[1]
    ]
    tall = height - top - 4
    if not covered:
        return f'<rect id="band" class="band" x="0" y="{top}" width="0" height="{tall}" display="none"/>'
    x0 = x(covered[0].index) - col / 2
    x1 = x(covered[-1].index) + col / 2
    return (
        f'<rect id="band" class="band" x="{x0:.1f}" y="{top}" width="{x1 - x0:.1f}" height="{tall}">'
        "<title>the stretch shown in the actions table</title></rect>"
    )


def _lines(slots: Sequence[Slot], x: Callable[[int], float], y: Callable[[float], float]) -> list[str]:
    """The progress line, broken where a heartbeat had no sample."""
    out: list[str] = []
    run: list[str] = []
    for slot in [*slots, None]:
        if slot is not None and slot.progress is not None:
            run.append(f"{x(slot.index):.1f},{y(slot.progress):.1f}")
            continue
        if len(run) > 1:
            out.append(f'<polyline class="line" points="{" ".join(run)}"/>')
        run = []
    return out


def _lane_texts(slot: Slot, kind: str) -> list[str]:
    if kind in slot.anomalies:
        return slot.anomalies[kind]
    return [m.text for m in slot.marks.get(kind, [])]


def _slot_text(slot: Slot) -> str:
    parts = [f"tick {slot.ticks}", when(slot.last_at)]
    if slot.heartbeats > 1:
        parts.append(plural(slot.heartbeats, "heartbeat"))
    parts.append(f"progress {slot.progress:g}" if slot.progress is not None else "no progress sample")
    parts.append(plural(slot.actions, "action"))
    if slot.errors:
        parts.append(plural(slot.errors, "error"))
    if slot.outcome:
        parts.append(f"outcome {slot.outcome}")
    kinds = [*slot.anomalies, *slot.marks]
    if kinds:
        parts.append("; ".join(kinds))
    return " · ".join(parts)


def _describe(timeline: Timeline, kinds: Sequence[str]) -> str:
    """The timeline in one paragraph, for screen readers."""
    slots = timeline.slots
    if not slots:
        return "The journal holds no heartbeat yet."
    values = [s.progress for s in slots if s.progress is not None]
    text = f"Ticks {slots[0].first_tick} to {slots[-1].last_tick}"
    if timeline.bucket > 1:
        text += f", {timeline.bucket} heartbeats per point"
    text += f". Progress from {values[0]:g} to {values[-1]:g}." if values else ". No progress samples."
    for kind in kinds:
        ticks = [s.ticks for s in slots if _lane_texts(s, kind)]
        shown = ", ".join(ticks[:12]) + (f" and {len(ticks) - 12} more" if len(ticks) > 12 else "")
        text += f" {LABELS.get(kind, kind).capitalize()} at tick {shown}."
    return text


def legend(timeline: Timeline, kinds: Sequence[str]) -> str:
    """The markers' key: shape, name and count of each kind in the timeline."""
    if not kinds:
        return '<p class="muted">No anomaly, recovery or intervention in this journal.</p>'
    counts = {**timeline.anomaly_counts, **timeline.mark_counts}
    items = "".join(
        f"<li>{glyph(kind)}<span>{esc(LABELS.get(kind, kind))} ({counts.get(kind, 0):,})</span></li>"
        for kind in kinds
    )
    return f'<ul class="legend" aria-label="markers">{items}</ul>'
