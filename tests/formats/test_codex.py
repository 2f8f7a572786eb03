"""The ``codex`` import format: OpenAI Codex CLI session rollouts (JSON Lines), as the CLI writes them.

Codex is not a dependency, so the samples are written in the shape of its
rollout files (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``), after
``codex-rs/protocol/src/models.rs`` (``ResponseItem``) and the shell tool's
output formats: ``{"timestamp", "type", "payload"}`` lines of
``session_meta``, ``turn_context``, ``event_msg`` and ``response_item``
(messages, reasoning, ``function_call`` ``shell`` with an argv,
``shell_command`` with a command line, ``local_shell_call``,
``custom_tool_call`` ``apply_patch``, their ``*_output`` by ``call_id``); the
exit code in a structured ``{"output", "metadata": {"exit_code"}}`` output
or a freeform ``Exit code: N`` header; and the older rollout without an
envelope.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _formats import assert_no_collision, kinds, refused_by_cli, replay_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from heartbeat.base.errors import TraceError
from heartbeat.formats import detect_format, load_actions
from heartbeat.replay.trace import TraceAction, load_any

FAILURE = "F..\nFAILED tests/test_calc.py::test_add_negative - assert -1 == 1\n1 failed, 2 passed in {t}s\n"
PATCH = (
    "*** Begin Patch\n*** Update File: src/calc.py\n@@\n-    return {old}\n+    return {new}\n*** End Patch\n"
)


class Rollout:
    """Builds a rollout's lines: a session_meta, a turn_context, then response items and events."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.calls = 0
        meta = {
            "id": "0199a213-81c0-7800-8aa1-bbab2a035a53",
            "timestamp": "2025-10-29T00:59:38.308Z",
            "cwd": "/home/dev/calc",
            "originator": "codex_cli_rs",
            "cli_version": "0.46.0",
            "instructions": None,
            "source": "cli",
            "git": {"branch": "main"},
        }
        self._row("session_meta", meta)
        self.message("user", "<environment_context>\n  <cwd>/home/dev/calc</cwd>\n</environment_context>")
        self._row(
            "turn_context", {"cwd": "/home/dev/calc", "approval_policy": "on-request", "model": "gpt-5-codex"}
        )

    def _row(self, kind: str, payload: dict[str, Any]) -> None:
        n = len(self.rows)
        self.rows.append(
            {"timestamp": f"2025-10-29T01:{n // 60:02d}:{n % 60:02d}.000Z", "type": kind, "payload": payload}
        )

    def message(self, role: str, text: str) -> None:
        """A message item (and, for the person's, the event the CLI writes beside it)."""
        part = "input_text" if role == "user" else "output_text"
        self._row(
            "response_item", {"type": "message", "role": role, "content": [{"type": part, "text": text}]}
        )
        if role == "user":
            self._row("event_msg", {"type": "user_message", "message": text, "kind": "plain"})

    def think(self, text: str) -> None:
        """A reasoning item with its summary, and the agent_reasoning event."""
        summary = [{"type": "summary_text", "text": text}]
        self._row("response_item", {"type": "reasoning", "summary": summary, "encrypted_content": "gAAAAB"})
        self._row("event_msg", {"type": "agent_reasoning", "text": text})

    def shell(self, script: str, code: int, out: str, *, freeform: bool = False) -> None:
        """A ``shell`` function call (bash -lc SCRIPT) and its output, structured or freeform."""
        self.calls += 1
        call_id = f"call_{self.calls:04d}"
        args = {"command": ["bash", "-lc", script], "workdir": "/home/dev/calc", "timeout_ms": 120000}
        self._row(
            "response_item",
            {"type": "function_call", "name": "shell", "arguments": json.dumps(args), "call_id": call_id},
        )
        if freeform:
            output = f"Exit code: {code}\nWall time: 0.4 seconds\nOutput:\n{out}"
        else:
            output = json.dumps({"output": out, "metadata": {"exit_code": code, "duration_seconds": 0.4}})
        self._row("response_item", {"type": "function_call_output", "call_id": call_id, "output": output})
        self._row("event_msg", {"type": "token_count", "info": None})

    def patch(self, old: str, new: str) -> None:
        """An apply_patch custom tool call and its output."""
        self.calls += 1
        call_id = f"call_{self.calls:04d}"
        patch = PATCH.format(old=old, new=new)
        self._row(
            "response_item",
            {
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": call_id,
                "name": "apply_patch",
                "input": patch,
            },
        )
        out = {
            "output": "Success. Updated the following files:\nM src/calc.py\n",
            "metadata": {"exit_code": 0, "duration_seconds": 0.0},
        }
        self._row(
            "response_item",
            {"type": "custom_tool_call_output", "call_id": call_id, "output": json.dumps(out)},
        )

    def text(self) -> str:
        """The rollout file's text."""
        return "".join(json.dumps(r) + "\n" for r in self.rows)


def healthy_rollout() -> Rollout:
    """Search, read, patch, run the tests once (they pass), answer; the person thanks."""
    r = Rollout()
    r.message("user", "add() is wrong for negative numbers, please fix it")
    r.think("**Locating add()**")
    r.shell("rg -n 'def add' src", 0, "src/calc.py:1:def add(a, b):\n")
    r.shell("sed -n '1,20p' src/calc.py", 0, "def add(a, b):\n    return abs(a) + b\n", freeform=True)
    r.patch("abs(a) + b", "a + b")
    r.shell("python -m pytest -q", 0, "...\n3 passed in 0.02s\n")
    r.shell("git status --short", 0, " M src/calc.py\n", freeform=True)
    r.message("assistant", "Fixed add(): it no longer takes abs() of its first argument. All 3 tests pass.")
    r.message("user", "<environment_context>\n  <cwd>/home/dev/calc</cwd>\n</environment_context>")
    r.message("user", "Thanks!")
    return r


def stuck_rollout() -> Rollout:
    """A patch, then the same failing pytest, seven times, a different patch each time."""
    r = Rollout()
    r.message("user", "make the tests pass")
    for i in range(7):
        r.think(f"**Trying fix {i + 1}**")
        r.patch(f"a + b + {i}" if i else "abs(a) + b", f"a + b + {i + 1}")
        r.shell(
            "python -m pytest tests/test_calc.py -q", 1, FAILURE.format(t=f"0.0{i + 2}"), freeform=bool(i % 2)
        )
    return r


def write(path: Path, rollout: Rollout) -> Path:
    """The rollout as its .jsonl file."""
    path.write_text(rollout.text(), encoding="utf-8")
    return path


def test_shell_calls_become_shell_actions_with_their_exit_codes(tmp_path: Path) -> None:
    """bash -lc unwrapped (tool = the program run), both output formats read, apply_patch kept, a reply."""
    path = write(tmp_path / "rollout-2025-10-29T00-59-38-0199a213.jsonl", healthy_rollout())
    _, lines = load_any(path)
    actions = [a for _, line in lines for a in line.actions]
    assert [a.tool for a in actions] == ["rg", "sed", "apply_patch", "python", "git", "respond"]
    assert actions[0].args == {"cmd": "rg -n 'def add' src"}
    assert actions[1].output == "def add(a, b):\n    return abs(a) + b\n" and actions[1].error is None
    assert actions[2].args == {"input": PATCH.format(old="abs(a) + b", new="a + b")}
    assert actions[2].output == "Success. Updated the following files:\nM src/calc.py\n"
    assert actions[-1].output == "Thanks!"
    failed = load_actions(path, stuck_rollout().rows, "codex")
    runs = [a for a in failed if a["tool"] == "python"]
    assert len(runs) == 7 and {a["error"] for a in runs} == {"returncode 1"}
    assert runs[0]["output"] == runs[1]["output"].replace("0.03", "0.02") == FAILURE.format(t="0.02")


def test_other_shell_tools_and_a_local_shell_call(tmp_path: Path) -> None:
    """shell_command, exec_command: a command line (a header before the output, still running: no error)."""
    items: list[dict[str, Any]] = [
        {
            "type": "function_call",
            "name": "shell_command",
            "arguments": '{"command": "ls -la"}',
            "call_id": "a",
        },
        {
            "type": "function_call_output",
            "call_id": "a",
            "output": "Exit code: 0\nWall time: 0 seconds\nOutput:\nx\n",
        },
        {
            "type": "function_call",
            "name": "exec_command",
            "arguments": '{"cmd": "make test"}',
            "call_id": "b",
        },
        {
            "type": "function_call_output",
            "call_id": "b",
            "output": "Chunk ID: 1\nWall time: 2.0 seconds\nProcess exited with code 2\n"
            "Output:\nmake: *** [test] Error 2\n",
        },
        {
            "type": "local_shell_call",
            "call_id": "c",
            "status": "completed",
            "action": {"type": "exec", "command": ["grep", "-rn", "TODO", "."], "timeout_ms": 10000},
        },
        {
            "type": "function_call_output",
            "call_id": "c",
            "output": {"content": "no such dir", "success": False},
        },
        {
            "type": "function_call",
            "name": "exec_command",
            "arguments": '{"cmd": "npm run dev"}',
            "call_id": "e",
        },
        {
            "type": "function_call_output",
            "call_id": "e",
            "output": "Chunk ID: 9\nWall time: 10.0 seconds\nProcess running with session ID 7\n"
            "Output:\nready\n",
        },
        {"type": "function_call", "name": "update_plan", "arguments": '{"plan": []}', "call_id": "d"},
        {"type": "function_call_output", "call_id": "d", "output": "Plan updated"},
    ]
    rows = [{"timestamp": "t", "type": "response_item", "payload": item} for item in items]
    assert load_actions(tmp_path / "r.jsonl", rows, "codex") == [
        {"tool": "ls", "args": {"cmd": "ls -la"}, "output": "x\n", "error": None},
        {
            "tool": "make",
            "args": {"cmd": "make test"},
            "output": "make: *** [test] Error 2\n",
            "error": "returncode 2",
        },
        {"tool": "grep", "args": {"cmd": "grep -rn TODO ."}, "output": "no such dir", "error": "tool_error"},
        {"tool": "npm", "args": {"cmd": "npm run dev"}, "output": "ready\n", "error": None},
        {"tool": "update_plan", "args": {"plan": []}, "output": "Plan updated", "error": None},
    ]


def test_an_older_rollout_without_the_envelope(tmp_path: Path) -> None:
    """A session line (id, timestamp), then bare items and record_type lines: codex, not responses."""
    rows: list[dict[str, Any]] = [
        {
            "id": "5973b6c0-94b8-487b-a530-2aeb6098ae0e",
            "timestamp": "2025-05-05T15:00:00.000Z",
            "instructions": "",
        },
        {"record_type": "state"},
        *[r["payload"] for r in stuck_rollout().rows if r["type"] == "response_item"],
    ]
    path = tmp_path / "rollout-old.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert detect_format(rows) == "codex"
    assert [a["tool"] for a in load_actions(path, rows, "codex")][:2] == ["apply_patch", "python"]
    _, lines = load_any(path)
    assert sum(len(line.actions) for _, line in lines) == 14


def test_no_other_format_claims_it_and_it_claims_no_other() -> None:
    """The type/payload envelope is the rollout's; the bare Responses items stay openai-responses."""
    assert_no_collision("codex", stuck_rollout().rows)
    items = [r["payload"] for r in stuck_rollout().rows if r["type"] == "response_item"]
    assert detect_format(items) == "openai-responses"


def test_the_cli_escalates_the_stuck_rollout_and_not_the_healthy_one(tmp_path: Path) -> None:
    """heartbeat replay FILE --json --per-heartbeat 5 in a real process, the format read from the lines."""
    stuck = replay_cli(tmp_path, write(tmp_path / "stuck.jsonl", stuck_rollout()), "--per-heartbeat", "5")
    assert kinds(stuck), stuck
    assert stuck[-1]["decision"] == "escalate", stuck
    healthy = replay_cli(tmp_path, write(tmp_path / "ok.jsonl", healthy_rollout()), "--per-heartbeat", "5")
    assert kinds(healthy) == [] and {row["decision"] for row in healthy} == {"continue"}


def test_a_malformed_rollout_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """A response_item whose payload is not an object is refused in one line, detected or forced."""
    r = stuck_rollout()
    call = next(i for i, row in enumerate(r.rows) if row["payload"].get("type") == "function_call")
    r.rows[call]["payload"] = ["not", "an", "item"]
    err = refused_by_cli(tmp_path, write(tmp_path / "bad.jsonl", r))
    assert "not a codex file" in err and "is not a JSON object" in err, err
    other = tmp_path / "other.jsonl"
    other.write_text('{"progress": 0.5, "actions": []}\n', encoding="utf-8")
    assert "not a codex file" in refused_by_cli(tmp_path, other, "--format", "codex")


_KEYS = ["type", "call_id", "name", "arguments", "output", "action", "command"]
_VALUES = st.recursive(
    st.none()
    | st.integers(-2, 2)
    | st.sampled_from(["shell", "exec_command", "local_shell_call", "function_call", "function_call_output"])
    | st.sampled_from(["custom_tool_call", "apply_patch", "bash", "-lc", "ls", "Exit code: 1\nOutput:\nx"])
    | st.sampled_from(
        ['{"output": "x", "metadata": {"exit_code": 2}}', '{"command": ["bash", "-lc", "ls"]}']
    ),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["type", "call_id", "name", "arguments", "output", "action", "command"]), inner
        )
    ),
    max_leaves=12,
)
_ROWS = st.lists(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["response_item", "event_msg", "session_meta"]), "payload": _VALUES}
    ),
    max_size=6,
)


@settings(max_examples=300, deadline=None, print_blob=True)  # a failure prints how to replay it
@given(rows=_ROWS)
def test_any_rollout_shaped_lines_give_actions_or_a_trace_error(rows: list[dict[str, Any]]) -> None:
    """Rows in the envelope with any payload: actions a trace line accepts, or a TraceError, nothing else."""
    try:
        found = load_actions(Path("r.jsonl"), rows, "codex")
    except TraceError:
        return
    for one in found:
        TraceAction.model_validate(one)
