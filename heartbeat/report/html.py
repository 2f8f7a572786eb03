"""The HTML and SVG pieces of the report pages: one self-contained file each, nothing fetched.

Every page is plain HTML with its CSS inline, inline SVG for the pictures and
at most one small inline script (allowed by its hash in the page's
Content-Security-Policy, which also forbids every network load). Without the
script a page reads the same; the script only lets a reader pick another
stretch of actions. Markers differ by shape and by colour, every picture has
a text title and description, tables have real headers, and the colours
follow ``prefers-color-scheme``.

Everything handed in is escaped here; redacting is the caller's job.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..core.models import printable

__all__ = ["KINDS", "Shape", "esc", "page", "plural", "shape_for", "sparkline_svg", "symbol_defs", "when"]


def esc(value: object) -> str:
    """Text made safe for HTML content and attribute values, control characters shown escaped."""
    text = str(value)
    if not text.isprintable():
        # Line breaks stay (a tooltip's lines); every other control character is shown as status and
        # log show it (``\x1b``, ``\u202e``): a right-to-left override would turn the rest of its
        # cell round, and an escape sequence is garbage to a reader or a terminal that cats the page.
        text = "\n".join(printable(line) for line in text.split("\n"))
    return html.escape(text, quote=True)


def when(at: str | None) -> str:
    """An ISO time as ``2026-01-01 03:00:00 UTC`` (to the second)."""
    if not at:
        return "never"
    text = at.replace("T", " ")
    for cut in ("+00:00", "Z"):
        text = text.removesuffix(cut)
    return text.split(".")[0] + " UTC"


def plural(n: int, word: str) -> str:
    """``1 heartbeat``, ``2,000 heartbeats``."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class Shape:
    """How one kind of marker looks: an SVG path in a 12 x 12 box centred on 0, a colour, a glyph."""

    path: str
    colour: str
    glyph: str


# Okabe-Ito colours (told apart with the common colour blindnesses), and a different
# shape for each kind, so colour is never the only signal.
_SQUARE = "M-4.5-4.5h9v9h-9z"
_CIRCLE = "M-5 0a5 5 0 1 0 10 0a5 5 0 1 0-10 0z"
_DIAMOND = "M0-6L6 0L0 6L-6 0z"
_UP = "M0-6L6 5H-6z"
_DOWN = "M0 6L6-5H-6z"
_HEX = "M-5.2-3L0-6L5.2-3V3L0 6L-5.2 3z"
_STAR = "M0-6L1.8-1.9L6-1.9L2.6 0.8L3.8 5.5L0 2.7L-3.8 5.5L-2.6 0.8L-6-1.9L-1.8-1.9z"
_PLUS = "M-1.8-6h3.6v4.2h4.2v3.6h-4.2v4.2h-3.6v-4.2h-4.2v-3.6h4.2z"
_CROSS = "M-5-3.2L-3.2-5L0-1.8L3.2-5L5-3.2L1.8 0L5 3.2L3.2 5L0 1.8L-3.2 5L-5 3.2L-1.8 0z"
_FLAG = "M-4-6h1.6v12h-1.6zM-2.4-6L6-3.2L-2.4-0.4z"
_BARS = "M-4.5-5h3.4v10h-3.4zM1.1-5h3.4v10h-3.4z"
_PLAY = "M-4-6L6 0L-4 6z"
_CHEVRON = "M-5-6L1 0L-5 6H-1L5 0L-1-6z"
_CHECK = "M-6 0.5L-3.8-1.7L-1.5 0.6L3.8-5L6-2.8L-1.5 4.9z"
_BOLT = "M1-6L-5 1H-0.5L-2 6L5-1H0.5z"
_PENTAGON = "M0-6L5.7-1.9L3.5 4.9H-3.5L-5.7-1.9z"
_BOWTIE = "M-6-5L0 0L-6 5zM6-5L0 0L6 5z"
# Hollow shapes (drawn with fill-rule evenodd) for kinds this release does not know.
_RING = "M-5.5 0a5.5 5.5 0 1 0 11 0a5.5 5.5 0 1 0-11 0zM-2.8 0a2.8 2.8 0 1 0 5.6 0a2.8 2.8 0 1 0-5.6 0z"
_FRAME = "M-5-5h10v10h-10zM-2.4-2.4v4.8h4.8v-4.8z"
_HOLLOW_DIAMOND = "M0-6.5L6.5 0L0 6.5L-6.5 0zM0-3L-3 0L0 3L3 0z"
_HOURGLASS = "M-5-6H5L0 0L5 6H-5L0 0z"

KINDS: dict[str, Shape] = {
    # anomalies
    "repeat": Shape(_SQUARE, "#D55E00", "■"),
    "near_repeat": Shape(_BOWTIE, "#B8520F", "⋈"),
    "loop": Shape(_CIRCLE, "#0072B2", "●"),
    "cycle": Shape(_PLUS, "#4B6CB7", "✚"),
    "recurring": Shape(_STAR, "#A0522D", "★"),
    "empty": Shape(_DIAMOND, "#CC79A7", "◆"),
    "error_rate": Shape(_UP, "#E69F00", "▲"),
    "recurring_error": Shape(_PENTAGON, "#C17D00", "⬟"),
    "no_progress": Shape(_DOWN, "#009E73", "▼"),
    "budget": Shape(_HEX, "#8C6D1F", "⬢"),
    # the heartbeat's own decisions and what humans did
    "recovery": Shape(_CHEVRON, "#56B4E9", "»"),
    "recovered": Shape(_CHECK, "#00A3A3", "✔"),
    "escalation": Shape(_FLAG, "#E0352B", "⚑"),
    "kill": Shape(_CROSS, "#6E40C9", "✖"),
    "pause": Shape(_BARS, "#7D8590", "‖"),
    "resume": Shape(_PLAY, "#1A7F37", "▶"),
    "step_error": Shape(_BOLT, "#BF3989", "ϟ"),
}
_SPARE = (
    Shape(_RING, "#2E8B57", "◎"),
    Shape(_FRAME, "#8250DF", "▣"),
    Shape(_HOLLOW_DIAMOND, "#9A6700", "◈"),
    Shape(_HOURGLASS, "#57606A", "⧗"),
)
LABELS = {
    "recovery": "recovery instructions",
    "recovered": "recovered",
    "escalation": "escalation",
    "kill": "KILL or signal",
    "pause": "pause",
    "resume": "resume",
    "step_error": "step or metric error",
    "budget": "budget",
}


def shape_for(kind: str) -> Shape:
    """The marker of ``kind``; a kind this release does not know gets a spare shape, the same every time."""
    known = KINDS.get(kind)
    if known is not None:
        return known
    digest = hashlib.sha256(kind.encode("utf-8")).digest()
    return _SPARE[digest[0] % len(_SPARE)]


def symbol_id(kind: str) -> str:
    """The id of ``kind``'s ``<symbol>`` (ids allow only some characters)."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "-_") else "_" for c in kind)
    return f"s-{safe}"


def symbol_defs(kinds: Iterable[str]) -> str:
    """One hidden SVG holding a ``<symbol>`` per marker kind, for ``<use>`` anywhere in the page."""
    symbols = []
    for kind in dict.fromkeys(kinds):
        shape = shape_for(kind)
        symbols.append(
            f'<symbol id="{symbol_id(kind)}" viewBox="-7 -7 14 14">'
            f'<path d="{shape.path}" fill="{shape.colour}" fill-rule="evenodd" stroke="var(--bg)" '
            'stroke-width="0.8"/></symbol>'
        )
    hidden = 'class="defs" width="0" height="0" aria-hidden="true" focusable="false"'
    return f"<svg {hidden}>{''.join(symbols)}</svg>"


def glyph(kind: str, size: int = 14) -> str:
    """A small inline marker of ``kind``, for legends and table flags (decorative: text says the kind)."""
    return (
        f'<svg class="glyph" width="{size}" height="{size}" viewBox="-7 -7 14 14" aria-hidden="true" '
        f'focusable="false"><use href="#{symbol_id(kind)}" x="-7" y="-7" width="14" height="14"/></svg>'
    )


def sparkline_svg(values: Sequence[float], label: str, *, width: int = 120, height: int = 28) -> str:
    """A small progress line with its values in the accessible label."""
    if not values:
        return '<span class="muted">no samples</span>'
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    step = width / max(1, len(values) - 1)
    points = " ".join(
        f"{i * step:.1f},{height - 3 - (v - low) / span * (height - 6):.1f}" for i, v in enumerate(values)
    )
    described = ", ".join(f"{v:g}" for v in values)
    last_y = height - 3 - (values[-1] - low) / span * (height - 6)
    return (
        f'<svg class="spark" width="{width}" height="{height}" viewBox="-2 0 {width + 4} {height}" '
        f'role="img" aria-label="{esc(label)}: {esc(described)}">'
        f"<title>{esc(label)}: {esc(described)}</title>"
        f'<polyline points="{points}" fill="none" stroke="var(--accent)" stroke-width="2"/>'
        f'<circle cx="{(len(values) - 1) * step:.1f}" cy="{last_y:.1f}" r="2.5" fill="var(--accent)"/></svg>'
    )


CSS = """
:root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--panel:#f6f8fa;
--accent:#0969da;--warn:#fff1c2;--warn-edge:#9a6700;--cyc:#ddf4ff;--cyc-edge:#0969da;--bad:#b3261e;
--ok:#1a7f37;--band:rgba(9,105,218,.10);--wait:rgba(179,38,30,.10)}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;
--panel:#151b23;--accent:#4493f8;--warn:#3b2e00;--warn-edge:#d29922;--cyc:#0c2d4a;--cyc-edge:#4493f8;
--bad:#f85149;--ok:#3fb950;--band:rgba(68,147,248,.16);--wait:rgba(248,81,73,.14)}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);
font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif}
main{max-width:76rem;margin:0 auto;padding:1rem}
h1{font-size:1.6rem;margin:.2rem 0 .4rem}h2{font-size:1.25rem;margin:2rem 0 .6rem;
border-bottom:1px solid var(--line);padding-bottom:.2rem}h3{font-size:1.05rem;margin:1.2rem 0 .4rem}
a{color:var(--accent)}code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
font-size:.88em}pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--panel);padding:.6rem;
border-radius:6px;border:1px solid var(--line);margin:.3rem 0}
.muted{color:var(--muted)}.lede{color:var(--muted);margin:0 0 1rem}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;width:100%;font-size:.92rem}
th,td{border-bottom:1px solid var(--line);padding:.3rem .5rem;text-align:left;vertical-align:top}
thead th{background:var(--panel);position:sticky;top:0}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.args,td.text{overflow-wrap:anywhere;min-width:14rem}td.nowrap{white-space:nowrap}
caption{text-align:left;padding:.3rem 0;color:var(--muted)}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:0}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;overflow-wrap:anywhere}
.status{display:inline-block;padding:.05rem .5rem;border-radius:1rem;border:1px solid currentColor;
font-weight:600}.st-needs_human,.st-killed,.st-overdue{color:var(--bad)}.st-active{color:var(--ok)}
.st-paused{color:var(--warn-edge)}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(16rem,1fr));gap:1rem}
.card{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:.8rem 1rem}
.legend{display:flex;flex-wrap:wrap;gap:.3rem 1.2rem;list-style:none;padding:0;margin:.4rem 0}
.legend li{display:flex;align-items:center;gap:.35rem}
.glyph{vertical-align:-2px;flex:none}
svg.timeline{display:block;min-width:46rem;width:100%;height:auto}
svg.timeline text{fill:var(--muted);font-size:12px;font-family:inherit}
svg.timeline .axis{stroke:var(--line)}svg.timeline .grid{stroke:var(--line);stroke-dasharray:2 4}
svg.timeline .line{fill:none;stroke:var(--accent);stroke-width:2}
svg.timeline .pt{fill:var(--accent);stroke:var(--bg);stroke-width:1;cursor:pointer}
svg.timeline .pt.none{fill:var(--bg);stroke:var(--muted)}
svg.timeline .band{fill:var(--band)}svg.timeline .wait{fill:var(--wait)}

tr.rep td{background:var(--warn)}tr.rep td:first-child{box-shadow:inset 4px 0 var(--warn-edge)}
tr.cyc td{background:var(--cyc)}tr.cyc td:first-child{box-shadow:inset 4px 0 var(--cyc-edge)}
tr.trip td:first-child{font-weight:700}
.flag{display:inline-flex;align-items:center;gap:.2rem;white-space:nowrap;font-size:.82rem;
border:1px solid var(--line);border-radius:4px;padding:0 .3rem;margin:0 .2rem .1rem 0;background:var(--bg)}
.err{color:var(--bad)}
.meter{height:.55rem;background:var(--line);border-radius:1rem;overflow:hidden;min-width:6rem}
.meter span{display:block;height:100%;background:var(--accent)}.meter span.over{background:var(--bad)}
form#pick{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end;margin:.4rem 0}
form#pick label{display:flex;flex-direction:column;font-size:.85rem;color:var(--muted)}
form#pick input{width:6rem;font:inherit;padding:.15rem .3rem}
details summary{cursor:pointer}
.defs{position:absolute;width:0;height:0;overflow:hidden}
@media (max-width:40rem){main{padding:.6rem}h1{font-size:1.3rem}body{font-size:15px}
dl.facts{grid-template-columns:1fr}dl.facts dt{margin-top:.4rem}}
@media print{:root{--bg:#fff;--fg:#000;--muted:#333;--line:#999;--panel:#fff;--warn:#fff1c2;--cyc:#ddf4ff}
body{font-size:10.5pt}main{max-width:none;padding:0}.noprint,form#pick{display:none!important}
.scroll{overflow:visible}svg.timeline{min-width:0}thead th{position:static}
tr,.card,svg{break-inside:avoid}h2{break-after:avoid}a{color:inherit;text-decoration:none}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}}
"""


def page(title: str, body: str, *, script: str | None = None) -> str:
    """A whole self-contained page: inline CSS, a policy that forbids every network load, the body."""
    sources = "script-src 'none'"
    tail = ""
    if script is not None:
        digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
        sources = f"script-src 'sha256-{digest}'"
        tail = f"<script>{script}</script>"
    policy = f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; {sources}; form-action 'none'"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        '<meta name="color-scheme" content="light dark">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>"
        f"<body><main>{body}</main>{tail}</body></html>\n"
    )
