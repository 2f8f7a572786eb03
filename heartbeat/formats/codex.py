"""OpenAI Codex CLI session rollouts: ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``.

JSON Lines of ``{"timestamp", "type", "payload"}``: the ``response_item``
payloads are Responses API items, read as the ``openai-responses`` format
reads them (a call pairs with its output by ``call_id``); ``session_meta``,
``turn_context``, ``event_msg`` (which repeat what the items say) and
``compacted`` entries are skipped, and so are the user messages the CLI
writes itself (``<environment_context>``, ``<user_instructions>``,
AGENTS.md text). Older rollouts hold the items directly, one per line,
after a first line with the session's ``id`` and ``timestamp`` (and
``record_type`` lines, skipped).

Shell calls become shell actions (tool = the program run, a ``bash -lc``
wrapper unwrapped): the ``shell`` and ``container.exec`` functions (an
argv), ``shell_command`` and ``exec_command`` (a command line) and
``local_shell_call`` items. Their error is the exit code the output
reports (``{"output": ..., "metadata": {"exit_code": N}}``, or a header
of ``Exit code: N`` or ``Process exited with code N``, wall time, ...
before ``Output:``, taken off the output), ``returncode N``; the same
holds for ``apply_patch``. Other tools keep their name and arguments.
Each model call's ``token_count`` event (``last_token_usage``, on the model
of the ``turn_context``) is the spend of the heartbeat holding its calls.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from typing import Any

from . import openai_responses
from .common import Action, action, objects, shell_action, text_of

NAME = "codex"

_ENVELOPES = frozenset(["session_meta", "response_item", "event_msg", "turn_context", "compacted"])
_ARGV = frozenset(["shell", "container.exec", "local_shell"])  # arguments {"command": [argv]}
_LINE = frozenset(["shell_command", "exec_command"])  # arguments {"command" or "cmd": "a command line"}
_SHELLS = ("bash", "sh", "zsh")
# The header the shell tools put before a command's output (codex-rs: the freeform exec
# output, unified exec's format_response), and the exit code in it.
_HEADER = re.compile(
    r"\A(?:(?:Exit code: |Wall time: |Chunk ID: |Process exited with code |Process running with session ID "
    r"|Original token count: |Total output lines: )[^\n]*\n)+Output:\n?"
)
_CODE = re.compile(r"^(?:Exit code: |Process exited with code )(-?\d+)$", re.M)
# What the CLI puts in user messages itself, not a person's answer: left out, so a reply is not paired with it
_INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions")


def _enveloped(row: object) -> bool:
    if not isinstance(row, dict) or not isinstance(row.get("payload"), dict):
        return False
    kind = row.get("type")
    return isinstance(kind, str) and kind in _ENVELOPES


def _legacy(rows: list[Any]) -> bool:
    """An older rollout: a first line with the session's id and time, then items without an envelope."""
    head = rows[0] if rows else None
    return isinstance(head, dict) and "type" not in head and "id" in head and "timestamp" in head


def sniff(data: Any) -> bool:
    """Rollout lines: ``{"type": "response_item", "payload": {...}}`` and the like, or an older rollout."""
    if not isinstance(data, list):
        return False
    if any(_enveloped(row) for row in data):
        return True
    return _legacy(data) and openai_responses.sniff(data[1:])


def _items(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Responses items of the rollout, shell calls made function calls so all pair the same way."""
    if any(_enveloped(row) for row in rows):
        items = _with_usage(rows)
    else:
        items = [row for row in rows[1:] if "record_type" not in row]  # objects() checked they are dicts
    found: list[dict[str, Any]] = []
    for number, item in enumerate(objects(items, "item"), 1):
        if item.get("type") == "local_shell_call":
            act = item.get("action")
            if not isinstance(act, dict):
                raise ValueError(f"item {number}: a local_shell_call without an action object")
            item = {**item, "type": "function_call", "name": "local_shell", "arguments": act}
        elif item.get("role") == "user" and text_of(item.get("content")).lstrip().startswith(_INJECTED):
            continue
        elif item.get("type") in ("function_call_output", "custom_tool_call_output"):
            out = item.get("output")
            if isinstance(out, dict) and "content" in out:  # how older versions wrote a failure
                status = "failed" if out.get("success") is False else item.get("status")
                item = {**item, "output": out["content"], "status": status}
        found.append(item)
    return found


def _with_usage(rows: list[dict[str, Any]]) -> list[Any]:
    """The ``response_item`` payloads, each model call's ``token_count`` (its ``last_token_usage``)
    put before the items of its turn as a usage item (see :data:`openai_responses.USAGE`)."""
    items: list[Any] = []
    model: object = None
    turn = 0  # where the items of the current model call begin
    for row in rows:
        payload = row.get("payload")
        if row.get("type") == "response_item":
            items.append(payload)  # objects() then names one that is not an object
        elif not isinstance(payload, dict):
            continue
        elif row.get("type") == "turn_context":
            model = payload.get("model") or model
        elif row.get("type") == "event_msg" and payload.get("type") == "token_count":
            info = payload.get("info")
            last = info.get("last_token_usage") if isinstance(info, dict) else None
            if isinstance(last, dict):
                items.insert(turn, {"type": openai_responses.USAGE, "usage": last, "model": model})
            turn = len(items)
    return items


def _command(tool: str, args: dict[str, Any]) -> str | None:
    """The command line a shell call ran, a ``bash -lc`` wrapper taken off; None when it is not one."""
    if tool in _LINE:
        line = args.get("command", args.get("cmd"))
        return line if isinstance(line, str) else None
    argv = args.get("command") if tool in _ARGV else None
    if not isinstance(argv, list) or not argv:
        return None
    words = [str(w) for w in argv]
    if len(words) == 3 and os.path.basename(words[0]) in _SHELLS and words[1] in ("-lc", "-c"):
        return words[2]
    return shlex.join(words)


def _outcome(output: str | None, error: str | None) -> tuple[str | None, str | None]:
    """A shell or patch output's text (its header taken off) and error, from the exit code it reports."""
    if output is None:
        return None, error
    code: object = None
    if header := _HEADER.match(output):
        found = _CODE.search(header.group())
        code = int(found.group(1)) if found else None
        output = output[header.end() :]
    elif output.startswith("{"):
        try:
            parsed = json.loads(output)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("metadata"), dict):
            code, output = parsed["metadata"].get("exit_code"), str(parsed.get("output", ""))
    if not isinstance(code, int):
        return output, error  # no exit code (a command still running, a tool's text): as it was
    return output, f"returncode {code}" if code else None


def actions(data: Any) -> list[Action]:
    """One action per tool call (a shell command as a shell action) and per answer to the user."""
    found: list[Action] = []
    for done in openai_responses.actions(_items(objects(data, "record"))):
        cmd = _command(done["tool"], done["args"])
        made = done
        if cmd is not None:
            made = shell_action(cmd, *_outcome(done["output"], done["error"]))
        elif done["tool"] == "apply_patch":
            made = action("apply_patch", done["args"], *_outcome(done["output"], done["error"]))
        if "usage" in done:
            made["usage"] = done["usage"]
        found.append(made)
    return found
