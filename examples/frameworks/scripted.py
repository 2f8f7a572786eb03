"""The offline "model" the three framework examples share: a researcher that gets stuck.

Each example plugs :func:`next_call` into its framework's own test model
(LangChain's fake chat model, the Agents SDK's ``ScriptedModel``,
PydanticAI's ``FunctionModel``), so no network and no API key are needed.

The researcher searches the same query again and again (a stuck agent: the
results never satisfy it) until it reads heartbeat's instructions, either in
its prompt at the next heartbeat or as a tool's answer mid-run. Then it
reads a document, saves a note and answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

GOAL = "Research how scheduled agents detect loops; save one note."
STUCK_CALL: tuple[str, dict[str, Any]] = ("search", {"q": "agent loop detection"})
RECOVERY: list[tuple[str, dict[str, Any]]] = [
    ("read", {"name": "loops.md"}),
    ("save_note", {"text": "Loops show up as the same fingerprint at the tail of the history."}),
]
DONE = "A note is saved already: answer without tools."
LIBRARY = {
    "loops.md": "# Loops\nA loop is a cycle of calls at the tail of the history, repeated back to back.",
}


def told(text: str) -> bool:
    """Whether ``text`` carries heartbeat's instructions (a prompt or a tool's answer)."""
    return "heartbeat:" in text


def next_call(prompt: str, answers: Sequence[str]) -> tuple[str, dict[str, Any]] | None:
    """The scripted model's next tool call given its prompt and the tool answers so far; None: answer."""
    if DONE in prompt:
        return None
    if told(prompt):
        since = 0
    else:
        marks = [i for i, answer in enumerate(answers) if told(answer)]
        if not marks:
            return STUCK_CALL
        since = marks[0] + 1
    done = len(answers) - since
    return RECOVERY[done] if done < len(RECOVERY) else None


def prompt(instructions: str | None, notes: Sequence[str] = ()) -> str:
    """The user prompt of one run: the goal, what is done, and heartbeat's instructions if any."""
    text = f"{GOAL}\n{DONE}" if notes else GOAL
    return text if not instructions else f"{text}\n\n{instructions}"


class Tools:
    """The three tools, as plain functions over a notes list (``ctx.data["notes"]`` in a heartbeat)."""

    def __init__(self, notes: list[str]) -> None:
        self.notes = notes

    def search(self, q: str) -> str:
        """Search the library; returns matching document names."""
        return f"2 results for {q!r}: loops.md, escalation.md (no summary available)"

    def read(self, name: str) -> str:
        """Read one document of the library."""
        return LIBRARY.get(name, f"no document named {name!r}")

    def save_note(self, text: str) -> str:
        """Save a research note (what the progress metric counts)."""
        self.notes.append(text)
        return f"saved note {len(self.notes)}"
