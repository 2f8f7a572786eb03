"""Claude Code (and Claude Agent SDK) session transcripts: ``~/.claude/projects/<project>/<session>.jsonl``.

JSON Lines, one entry per line: ``{"type": "user" | "assistant", "message":
{...}, "uuid", "parentUuid", "timestamp", "sessionId", ...}`` whose
``message`` is an Anthropic message, and entries of other types
(``summary``, ``system``, ``file-history-snapshot``, ``queue-operation``)
that are skipped, as are ``isMeta`` entries (text the CLI injected). The
messages are read as the ``anthropic`` format reads them, in file order (an
assistant message often spans several entries, one content block each; a
tool use pairs with its ``tool_result`` by id). A sub-agent's entries
(``isSidechain``) are left out when the main conversation is in the file,
its ``Task`` call standing for them; a sub-agent's own file replays as is.
``claude -p --output-format stream-json --verbose`` prints the same
entries (a sub-agent's carry a ``parent_tool_use_id``).

A ``Bash`` call becomes a shell action (tool = the program run, as the
coding formats do), its error ``returncode N`` from the result's ``Exit
code N`` line, else what the result's ``is_error`` says (a timeout, a
denied permission); every other tool (Read, Edit, Write, Grep, Glob, WebFetch,
Task, MCP tools) keeps its name, its input as the arguments. Each API
response's ``usage`` and ``model`` (repeated on every entry of it) are
counted once, as the heartbeat's spend.
"""

from __future__ import annotations

import re
from typing import Any

from . import anthropic
from .common import Action, objects, shell_action

NAME = "claude-code"

_MESSAGES = ("user", "assistant")
_EXIT = re.compile(r"\AExit code (-?\d+)\n?")


def _is_message(entry: object) -> bool:
    """A user or assistant entry: its ``type`` is the role of the message it carries."""
    if not isinstance(entry, dict) or entry.get("type") not in _MESSAGES:
        return False
    message = entry.get("message")
    return isinstance(message, dict) and message.get("role") == entry["type"]


def sniff(data: Any) -> bool:
    """JSON Lines entries, at least one a user or assistant entry wrapping a message of that role."""
    return isinstance(data, list) and any(_is_message(entry) for entry in data)


def _messages(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation's messages, in file order (a sub-agent's only in its own file)."""
    chat = [e for e in entries if e.get("type") in _MESSAGES and not e.get("isMeta")]
    # a sub-agent's entries: isSidechain in a session file, parent_tool_use_id in stream-json
    main = [e for e in chat if not e.get("isSidechain") and e.get("parent_tool_use_id") is None] or chat
    found: list[dict[str, Any]] = []
    counted: set[str] = set()
    for entry in main:
        message = entry.get("message")
        if not isinstance(message, dict):
            raise ValueError(f"a {entry['type']} entry's message is not a JSON object")
        # One API response spans several entries, each repeating its usage: counted once, at the first.
        key = message.get("id")
        if isinstance(key, str) and "usage" in message:
            if key in counted:
                message = {k: v for k, v in message.items() if k != "usage"}
            counted.add(key)
        found.append(message)
    return found


def _flagged(messages: list[dict[str, Any]]) -> list[object]:
    """Each Bash call's ``is_error`` as its result says it, in call order (None: no result, or unsaid)."""
    blocks = [
        b for m in messages if isinstance(m.get("content"), list) for b in m["content"] if isinstance(b, dict)
    ]
    said = {str(b.get("tool_use_id")): b.get("is_error") for b in blocks if b.get("type") == "tool_result"}
    uses = [b for b in blocks if b.get("type") in anthropic.USES and b.get("name") == "Bash"]
    return [said.get(str(b.get("id"))) for b in uses]


def _shell(done: Action, is_error: object) -> Action:
    """A Bash call as a shell action: its exit code is its error, else what its ``is_error`` says."""
    output, error = done["output"], done["error"]
    if output is not None and (code := _EXIT.match(output)):
        output = output[code.end() :]
        error = f"returncode {code.group(1)}" if code.group(1) != "0" else None
    elif is_error is False:
        error = None  # Claude Code says whether a command failed: output that starts with "Error" did not
    return shell_action(str(done["args"]["command"]), output, error)


def actions(data: Any) -> list[Action]:
    """One action per tool use (a Bash command as a shell action) and per answer to the user."""
    messages = _messages(objects(data, "record"))
    flags = iter(_flagged(messages))  # anthropic makes one action per tool_use block, in block order
    found: list[Action] = []
    for done in anthropic.actions(messages):
        if done["tool"] != "Bash":
            found.append(done)
            continue
        is_error = next(flags, None)
        shell = _shell(done, is_error) if isinstance(done["args"].get("command"), str) else done
        if "usage" in done:
            shell["usage"] = done["usage"]
        found.append(shell)
    return found
