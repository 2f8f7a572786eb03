"""The ``claude-code`` import format: Claude Code session transcripts (JSON Lines), as the CLI writes them.

Claude Code is not a dependency, so the samples are written in the shape
its session files have (``~/.claude/projects/<project>/<session>.jsonl``):
a ``summary`` line, then user and assistant entries (``type``, ``message``,
``uuid``, ``parentUuid``, ``timestamp``, ``sessionId``, ``cwd``,
``version``), an assistant message split over one entry per content block,
the results in user entries of ``tool_result`` blocks with a
``toolUseResult``, a failed Bash command as ``is_error`` with ``Exit code
N`` first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _formats import action_count, assert_no_collision, kinds, refused_by_cli, replay_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from heartbeat.base.errors import TraceError
from heartbeat.formats import detect_format, load_actions
from heartbeat.replay.trace import TraceAction, load_any

SESSION = "4f35e220-c435-4cf7-b9b9-f40426042847"
FAILURE = (
    "============================= test session starts ==============================\n"
    "collected 3 items\n\ntests/test_calc.py ..F\n\n"
    "FAILED tests/test_calc.py::test_add_negative - assert -1 == 1\n"
    "========================= 1 failed, 2 passed in {t}s ==========================="
)


class Session:
    """Builds a session's entries, each chained to the one before by ``parentUuid``."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = [
            {"type": "summary", "summary": "Fix add() for negative numbers", "leafUuid": "leaf-0"}
        ]
        self.parent: str | None = None
        self.calls = 0

    def _entry(self, kind: str, message: dict[str, Any], **extra: Any) -> None:
        n = len(self.entries)
        uuid = f"00000000-0000-4000-8000-{n:012d}"
        self.entries.append(
            {
                "parentUuid": self.parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": "/home/dev/calc",
                "sessionId": SESSION,
                "version": "1.0.98",
                "gitBranch": "main",
                "type": kind,
                "message": message,
                "uuid": uuid,
                "timestamp": f"2025-09-01T10:{n // 60:02d}:{n % 60:02d}.000Z",
                **extra,
            }
        )
        self.parent = uuid

    def user(self, text: str) -> None:
        """What the person typed."""
        self._entry("user", {"role": "user", "content": text})

    def say(self, text: str) -> None:
        """An assistant text block, an entry of its own as Claude Code writes it."""
        message = {
            "id": f"msg_{len(self.entries)}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-20250514",
            "content": [{"type": "text", "text": text}],
            "stop_reason": None,
            "usage": {"input_tokens": 4, "output_tokens": 12},
        }
        self._entry("assistant", message, requestId=f"req_{len(self.entries)}")

    def tool(self, name: str, args: dict[str, Any], result: Any, *, error: bool = False) -> None:
        """A tool_use entry, then the user entry holding its tool_result."""
        self.calls += 1
        call_id = f"toolu_01{self.calls:022d}"
        use = {"type": "tool_use", "id": call_id, "name": name, "input": args}
        message = {"id": f"msg_{len(self.entries)}", "type": "message", "role": "assistant"}
        self._entry("assistant", {**message, "content": [use], "stop_reason": "tool_use"})
        block: dict[str, Any] = {"tool_use_id": call_id, "type": "tool_result", "content": result}
        if name == "Bash" or error:
            block["is_error"] = error
        outcome = {"stdout": "" if error else result, "stderr": result if error else "", "interrupted": False}
        self._entry("user", {"role": "user", "content": [block]}, toolUseResult=outcome)

    def lines(self) -> str:
        """The session file's text."""
        return "".join(json.dumps(e) + "\n" for e in self.entries)


def healthy_session() -> Session:
    """Look around, read, fix, run the tests once (they pass), answer; the person thanks."""
    s = Session()
    s.user("add() is wrong for negative numbers, please fix it")
    s.say("I'll look at the code first.")
    s.tool("Glob", {"pattern": "**/*.py"}, "/home/dev/calc/src/calc.py\n/home/dev/calc/tests/test_calc.py")
    s.tool(
        "Read",
        {"file_path": "/home/dev/calc/src/calc.py"},
        "     1→def add(a, b):\n     2→    return abs(a) + b\n",
    )
    s.tool("Grep", {"pattern": "abs\\(", "path": "src"}, "src/calc.py:2:    return abs(a) + b")
    s.tool(
        "Edit",
        {"file_path": "/home/dev/calc/src/calc.py", "old_string": "abs(a) + b", "new_string": "a + b"},
        "The file /home/dev/calc/src/calc.py has been updated.",
    )
    s.tool(
        "Bash",
        {"command": "cd /home/dev/calc && python -m pytest -q", "description": "Run the tests"},
        "...\n3 passed in 0.02s",
    )
    s.tool("Bash", {"command": "git diff --stat", "description": "Show the change"}, " src/calc.py | 2 +-")
    s.say("Fixed: add() no longer takes the absolute value of its first argument; all 3 tests pass.")
    s.user("Thanks!")
    return s


def stuck_session() -> Session:
    """An edit, then the same failing pytest, seven times, a different edit each time."""
    s = Session()
    s.user("make the tests pass")
    for i in range(7):
        s.say(f"Let me try another fix (attempt {i + 1}).")
        s.tool(
            "Edit",
            {
                "file_path": "/home/dev/calc/src/calc.py",
                "old_string": f"return a + b + {i}" if i else "return abs(a) + b",
                "new_string": f"return a + b + {i + 1}",
            },
            "The file /home/dev/calc/src/calc.py has been updated.",
        )
        s.tool(
            "Bash",
            {"command": "python -m pytest tests/test_calc.py -q", "description": "Run the tests"},
            "Exit code 1\n" + FAILURE.format(t=f"0.0{i + 2}"),
            error=True,
        )
    return s


def write(path: Path, session: Session) -> Path:
    """The session as its .jsonl file."""
    path.write_text(session.lines(), encoding="utf-8")
    return path


def test_bash_becomes_a_shell_action_and_other_tools_keep_their_names(tmp_path: Path) -> None:
    """Tool = the program run (cd hop dropped); Read, Edit... keep names and input; a reply is respond."""
    path = write(tmp_path / "s.jsonl", healthy_session())
    assert detect_format([json.loads(line) for line in path.read_text().splitlines()]) == "claude-code"
    _, lines = load_any(path)
    actions = [a for _, line in lines for a in line.actions]
    assert [a.tool for a in actions] == ["Glob", "Read", "Grep", "Edit", "python", "git", "respond"]
    assert actions[1].args == {"file_path": "/home/dev/calc/src/calc.py"}
    assert actions[4].args == {"cmd": "python -m pytest -q"} and actions[4].error is None
    assert actions[4].output == "...\n3 passed in 0.02s"
    assert actions[-1].output == "Thanks!"
    assert [len(line.actions) for _, line in lines] == [5, 2]


def test_a_failed_command_is_its_exit_code_and_a_failed_tool_a_tool_error(tmp_path: Path) -> None:
    """'Exit code 1' is error 'returncode 1', taken off the output; else is_error says (not the text)."""
    s = stuck_session()
    s.tool(
        "Edit",
        {"file_path": "x.py", "old_string": "nope", "new_string": "y"},
        "<tool_use_error>String to replace not found in file.</tool_use_error>",
        error=True,
    )
    s.tool("Bash", {"command": "grep -h rate logs/*.txt"}, "Error rate: 0.1%")  # is_error false: fine
    s.tool("Bash", {"command": "sleep 999"}, "Command timed out after 2m 0.0s", error=True)
    found = load_actions(tmp_path / "s.jsonl", s.entries, "claude-code")
    pytest_runs = [a for a in found if a["tool"] == "python"]
    assert len(pytest_runs) == 7 and {a["error"] for a in pytest_runs} == {"returncode 1"}
    assert pytest_runs[0]["output"] == FAILURE.format(t="0.02")
    assert [(a["tool"], a["error"]) for a in found[-3:]] == [
        ("Edit", "tool_error"),
        ("grep", None),
        ("sleep", "tool_error"),
    ]


def test_meta_entries_and_a_sub_agents_entries_are_left_out_of_the_main_session(tmp_path: Path) -> None:
    """isMeta text is not a reply; sidechain entries are left out, unless the file is the sub-agent's own."""
    s = Session()
    s.user("check the build")
    s.tool("Task", {"description": "Check the build", "prompt": "run make"}, "The build passes.")
    side = Session()
    side.tool("Bash", {"command": "make -j4"}, "ok")
    for entry in side.entries[1:]:
        entry["isSidechain"] = True
    s.entries[2:2] = side.entries[1:]  # the sub-agent's entries, written before the Task's result
    s.say("The build passes.")
    s.entries.append({**s.entries[1], "isMeta": True, "message": {"role": "user", "content": "Caveat: ..."}})
    assert [a["tool"] for a in load_actions(tmp_path / "s.jsonl", s.entries, "claude-code")] == ["Task"]
    assert [a["tool"] for a in load_actions(tmp_path / "s.jsonl", side.entries, "claude-code")] == ["make"]


def test_no_other_format_claims_it_and_it_claims_no_other() -> None:
    """Entries whose type is their message's role are Claude Code's; Anthropic messages are not."""
    assert_no_collision("claude-code", stuck_session().entries)
    messages = [e["message"] for e in stuck_session().entries[1:]]
    assert detect_format(messages) == "anthropic"


def test_the_cli_escalates_the_stuck_session_and_not_the_healthy_one(tmp_path: Path) -> None:
    """heartbeat replay FILE --json --per-heartbeat 5 in a real process, the format read from the lines."""
    stuck = replay_cli(tmp_path, write(tmp_path / "stuck.jsonl", stuck_session()), "--per-heartbeat", "5")
    assert kinds(stuck), stuck
    assert stuck[-1]["decision"] == "escalate", stuck
    healthy = replay_cli(tmp_path, write(tmp_path / "ok.jsonl", healthy_session()), "--per-heartbeat", "5")
    assert kinds(healthy) == [] and {row["decision"] for row in healthy} == {"continue"}
    assert action_count(tmp_path / "ok.jsonl") == 7


def test_a_malformed_session_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """A cut-off last line (a session still being written) names its line; a message not an object too."""
    session = stuck_session()
    path = write(tmp_path / "cut.jsonl", session)
    path.write_text(path.read_text() + '{"type": "assistant", "message": {"role": "assis', encoding="utf-8")
    err = refused_by_cli(tmp_path, path)
    assert f"line {len(session.entries) + 1}: not valid JSON" in err, err
    bad = stuck_session()
    bad.entries[3]["message"] = "oops"
    err = refused_by_cli(tmp_path, write(tmp_path / "bad.jsonl", bad), "--format", "claude-code")
    assert "not a claude-code file" in err and "message is not a JSON object" in err, err


_BLOCKS = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["tool_use", "tool_result", "text"]),
        "id": st.sampled_from(["a", "b"]),
        "tool_use_id": st.sampled_from(["a", "b"]),
        "name": st.sampled_from(["Bash", "Read"]),
        "input": st.none() | st.just({"command": "ls"}) | st.just({"command": 3}) | st.just([1]),
        "content": st.none()
        | st.sampled_from(["Exit code 2\nboom", "Exit code 0", "ok"])
        | st.just([{"x": 1}]),
        "is_error": st.booleans(),
    }
)
_ENTRIES = st.lists(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["user", "assistant", "summary"]),
            "message": st.none()
            | st.fixed_dictionaries(
                {"role": st.sampled_from(["user", "assistant"]), "content": st.lists(_BLOCKS, max_size=3)}
            ),
            "isSidechain": st.booleans(),
        }
    ),
    max_size=6,
)


@settings(max_examples=300, deadline=None, print_blob=True)  # a failure prints how to replay it
@given(entries=_ENTRIES)
def test_any_session_shaped_entries_give_actions_or_a_trace_error(entries: list[dict[str, Any]]) -> None:
    """Entries with any blocks: actions a trace line accepts, or a TraceError, never another error."""
    try:
        found = load_actions(Path("s.jsonl"), entries, "claude-code")
    except TraceError:
        return
    for one in found:
        TraceAction.model_validate(one)


def test_stream_json_output_reads_the_same(tmp_path: Path) -> None:
    """claude -p --output-format stream-json --verbose: init, messages, a sub-agent's, the result."""
    rows: list[dict[str, Any]] = [
        {
            "type": "system",
            "subtype": "init",
            "session_id": SESSION,
            "cwd": "/repo",
            "tools": ["Bash", "Task"],
        }
    ]
    for entry in stuck_session().entries[1:]:
        rows.append({"type": entry["type"], "message": entry["message"], "parent_tool_use_id": None})
        rows[-1]["session_id"] = SESSION
    sub = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_s", "name": "Bash", "input": {}}],
    }
    rows.append(
        {"type": "assistant", "message": sub, "parent_tool_use_id": "toolu_task", "session_id": SESSION}
    )
    rows.append(
        {"type": "result", "subtype": "success", "is_error": False, "num_turns": 15, "session_id": SESSION}
    )
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    _, lines = load_any(path)
    _, session = load_any(write(tmp_path / "s.jsonl", stuck_session()))
    assert lines == session and sum(len(line.actions) for _, line in lines) == 14
