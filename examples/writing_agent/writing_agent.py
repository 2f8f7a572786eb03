"""A writing agent whose progress metric is the word count of its draft.

It writes ``draft/draft.md`` one section per heartbeat from a built-in outline
(a stand-in for the paragraphs an LLM would write). When the outline runs
out it turns into a *wanderer*: every heartbeat it "polishes" the draft,
swapping a word for a synonym. Each edit is a different, reasonable-looking
action, so no action detector fires, but the word count stays flat:
heartbeat's ``no_progress`` detector notices, and the reassess-the-goal
instructions make it write the conclusion it had been putting off.

With ``[detectors.no_progress] samples = 3`` in its heartbeat.toml the story
takes eight heartbeats: sections on ticks 1-3, polishing on ticks 4-5,
``no_progress`` on tick 5, the conclusion on tick 6, polishing again after.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from heartbeat.tick.context import StepContext

DRAFT = Path("draft") / "draft.md"  # relative to heartbeat.toml's folder; [progress] counts its words

OUTLINE: list[tuple[str, str]] = [
    (
        "Why scheduled agents get stuck",
        "An agent that wakes every half hour has no one watching it between runs. "
        "When a tool starts returning the same page, the agent keeps asking for it, "
        "and each run looks busy in the logs while nothing new is learned.",
    ),
    (
        "What a heartbeat measures",
        "A heartbeat records every tool call and one number that only real work moves. "
        "Repeated calls, loops, empty results and a flat metric are each a different "
        "kind of stuck, and each gets its own recovery instructions.",
    ),
    (
        "When to call a human",
        "Instructions help an agent that is merely lost. When several recoveries in a "
        "row change nothing, the right move is to stop spending and ask a person, with "
        "the evidence attached and a one-line way to resume.",
    ),
]
CONCLUSION = (
    "Conclusion",
    "Most stuck agents are not broken, only unobserved. A lock, a kill file, a progress "
    "number and a short escalation path are enough to turn a silent loop into a message "
    "someone can act on before the bill arrives.",
)
# The wanderer's busywork: one-word swaps, so the word count never changes.
SYNONYMS: list[tuple[str, str]] = [
    ("keeps", "continues"),
    ("busy", "active"),
    ("each", "every"),
    ("right", "correct"),
    ("continues", "keeps"),
    ("active", "busy"),
    ("correct", "right"),
]


def _section(title: str, body: str) -> str:
    return f"## {title}\n\n{body}\n\n"


def step(ctx: StepContext) -> None:
    """One heartbeat of writing."""
    draft = ctx.base_dir / DRAFT
    draft.parent.mkdir(parents=True, exist_ok=True)
    text = draft.read_text(encoding="utf-8") if draft.exists() else "# Keeping scheduled agents honest\n\n"
    data = ctx.data
    written: int = data.get("sections", 0)

    if ctx.instructions:
        print(f"  [writing agent] heartbeat says: {ctx.instructions.splitlines()[0]}")
    if written < len(OUTLINE) or (ctx.instructions and not data.get("concluded")):
        if ctx.instructions:
            # Reassess the goal: the draft needs words, not polish. The one
            # thing left undone is the conclusion. (Once it is written the
            # agent has no better idea: it goes on polishing, and heartbeat
            # escalates to a human after `escalate_after` stuck heartbeats.)
            title, body = CONCLUSION
            data["concluded"] = True
        else:
            title, body = OUTLINE[written]
            data["sections"] = written + 1
        draft.write_text(text + _section(title, body), encoding="utf-8")
        words = len(body.split())
        ctx.record("append_section", {"title": title}, output=f"{words} words about {title.lower()}")
        return

    # The wanderer: a different small edit each heartbeat, never a new word.
    turn: int = data.get("edits", 0)
    for offset in range(len(SYNONYMS)):
        old, new = SYNONYMS[(turn + offset) % len(SYNONYMS)]
        if f" {old} " in text:
            break
    else:
        ctx.record("edit", {"turn": turn}, output="nothing left to polish")
        return
    data["edits"] = turn + 1
    draft.write_text(text.replace(f" {old} ", f" {new} ", 1), encoding="utf-8")
    ctx.record("edit", {"replace": old, "with": new}, output=f"replaced '{old}' with '{new}' for style")
