"""The ``mini-swe-agent`` import format, 2.x: tool-calling and ``mswea_bash_command`` text trajectories.

mini-swe-agent is not a dependency, so the samples are written in the shape
its 2.x ``DefaultAgent.serialize()`` saves (``trajectory_format``
``mini-swe-agent-1.1``, ``info``, ``messages``), after
``minisweagent/models/utils/actions_toolcall.py`` and ``actions_text.py``:
assistant messages with a ``bash`` tool call (or a ```` ```mswea_bash_command ````
block) and ``extra.actions``; observations (``tool`` messages by
``tool_call_id``, or ``user`` messages) rendered from the observation
template, with ``extra.raw_output``, ``extra.returncode`` and
``extra.timestamp``; format errors as a ``user`` message with
``extra.interrupt_type = "FormatError"``; an ``exit`` message last.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _formats import assert_no_collision, kinds, replay_cli, write

from heartbeat.formats import detect_format, load_actions

FAILURE = (
    "============================= test session starts ==============================\n"
    "collected 3 items\n\ntests/test_calc.py ..F\n\nFAILED tests/test_calc.py::test_add_negative - "
    "assert -1 == 1\n========================= 1 failed, 2 passed in 0.{t}s =========================\n"
)


def _observation(output: str, returncode: int, *, exception: str = "") -> tuple[str, dict[str, Any]]:
    """The rendered observation text and its ``extra``, as the 2.x observation template writes them."""
    text = (f"<exception>{exception}</exception>\n" if exception else "") + (
        f"<returncode>{returncode}</returncode>\n<output>\n{output}</output>"
    )
    extra: dict[str, Any] = {"raw_output": output, "returncode": returncode, "timestamp": 1761700000.5}
    if exception:
        extra["exception_info"] = exception
    return text, extra


def _head(task: str) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are a helpful assistant that can interact with a computer."},
        {"role": "user", "content": f"Please solve this issue: {task}"},
    ]


def _tail(messages: list[dict[str, Any]], mode: str) -> dict[str, Any]:
    messages.append(
        {"role": "exit", "content": "", "extra": {"exit_status": "Submitted", "submission": "diff --git ..."}}
    )
    return {
        "info": {
            "model_stats": {"instance_cost": 0.0421, "api_calls": len(messages) // 2},
            "config": {"agent": {"step_limit": 0}, "agent_type": "minisweagent.agents.default.DefaultAgent"},
            "mini_version": "2.0.0",
            "exit_status": "Submitted",
            "submission": "diff --git ...",
        },
        "messages": messages,
        "trajectory_format": "mini-swe-agent-1.1",
        "_mode": mode,
    }


# (command, output, return code) of a debugging run stuck on one failing test after each edit.
STUCK = [
    ("ls", "README.md\nsrc\ntests\n", 0),
    ("grep -rn 'def add' src/", "src/calc.py:1:def add(a, b):\n", 0),
    ("cd /testbed && python -m pytest tests/test_calc.py -q", FAILURE.format(t=11), 1),
    ("sed -i 's/return a + b/return abs(a) + b/' src/calc.py", "", 0),
    ("cd /testbed && python -m pytest tests/test_calc.py -q", FAILURE.format(t=12), 1),
    ("sed -i 's/abs(a) + b/a + abs(b)/' src/calc.py", "", 0),
    ("cd /testbed && python -m pytest tests/test_calc.py -q", FAILURE.format(t=13), 1),
    ("sed -i 's/a + abs(b)/abs(a + b)/' src/calc.py", "", 0),
    ("cd /testbed && python -m pytest tests/test_calc.py -q", FAILURE.format(t=14), 1),
    ("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n", 0),
]


def toolcall_traj(turns: list[tuple[str, str, int]] = STUCK, *, format_error_at: int = 3) -> dict[str, Any]:
    """A 2.x run with tool calling (its default): one ``bash`` call per turn, a ``tool`` answer each."""
    messages = _head("add() is wrong for negative numbers")
    for n, (command, output, rc) in enumerate(turns):
        if n == format_error_at:  # a reply with no tool call: the model's text, then the format error
            messages.append(
                {"role": "assistant", "content": "I think the fix is done.", "extra": {"cost": 0.001}}
            )
            messages.append(
                {
                    "role": "user",
                    "content": "Tool call error:\n<error>\nNo tool calls found in the response. "
                    "Every response MUST include at least one tool call.\n</error>",
                    "extra": {"interrupt_type": "FormatError"},
                }
            )
        call_id = f"call_{n:02d}Xy7Qm"
        messages.append(
            {
                "role": "assistant",
                "content": "THOUGHT: let me look at this next.",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps({"command": command})},
                    }
                ],
                "extra": {
                    "actions": [{"command": command, "tool_call_id": call_id}],
                    "cost": 0.0042,
                    "timestamp": 1761700000.0 + n,
                },
            }
        )
        text, extra = _observation(output, rc)
        messages.append({"role": "tool", "tool_call_id": call_id, "content": text, "extra": extra})
    return _tail(messages, "toolcall")


def text_traj() -> dict[str, Any]:
    """A 2.x run in text mode: a ```` ```mswea_bash_command ```` block per reply, a ``user`` observation."""
    messages = _head("the CLI hangs on empty input")
    turns: list[tuple[str, str, int, str]] = [
        ("cat src/cli.py | head -40", "import sys\n\ndef main():\n    data = sys.stdin.read()\n", 0, ""),
        ("python -m src.cli < /dev/null", "", -1, "Command timed out after 60 seconds"),
        ("grep -n 'stdin' src/cli.py", "4:    data = sys.stdin.read()\n", 0, ""),
        ("nl -ba src/missing.py | sed -n '1,20p'", "nl: src/missing.py: No such file or directory\n", 1, ""),
    ]
    for n, (command, output, rc, exception) in enumerate(turns):
        if n == 2:  # a reply with two blocks: 2.x keeps only the format error, not the reply
            messages.append(
                {
                    "role": "user",
                    "content": "Please always provide EXACTLY ONE action in triple backticks, "
                    "found 2 actions.",
                    "extra": {"interrupt_type": "FormatError", "n_actions": 2, "model_response": "..."},
                }
            )
        messages.append(
            {
                "role": "assistant",
                "content": f"THOUGHT: checking.\n\n```mswea_bash_command\n{command}\n```",
                "extra": {"actions": [{"command": command}], "cost": 0.003, "timestamp": 1761700100.0 + n},
            }
        )
        text, extra = _observation(output, rc, exception=exception)
        messages.append({"role": "user", "content": text, "extra": extra})
    return _tail(messages, "text")


def test_both_2x_modes_are_detected_as_mini_swe_agent_and_nothing_else() -> None:
    """A tool-calling trajectory is no longer taken for OpenAI chat messages; text mode is recognised."""
    for sample in (toolcall_traj(), text_traj()):
        assert detect_format(sample) == "mini-swe-agent"
        assert_no_collision("mini-swe-agent", sample)


def test_tool_calls_become_the_programs_they_run_with_their_exit_codes(tmp_path: Path) -> None:
    """Each bash call is the program it runs (cd stripped), its raw output the result, rc != 0 an error."""
    found = load_actions(tmp_path / "t.traj.json", toolcall_traj(), "mini-swe-agent")
    assert [a["tool"] for a in found] == [
        "ls", "grep", "python", "(no_command)", "sed", "python", "sed", "python", "sed", "python", "echo",
    ]  # fmt: skip
    pytest_runs = [a for a in found if a["tool"] == "python"]
    assert all(a["args"] == {"cmd": "python -m pytest tests/test_calc.py -q"} for a in pytest_runs)
    assert all(
        a["error"] == "returncode 1" and "1 failed, 2 passed" in (a["output"] or "") for a in pytest_runs
    )
    assert found[0]["output"] == "README.md\nsrc\ntests\n" and found[0]["error"] is None
    assert found[3]["error"] == "format_error" and "No tool calls found" in (found[3]["output"] or "")
    assert found[4]["output"] == "" and found[4]["error"] is None  # sed -i: silent by design


def test_text_mode_blocks_become_actions_and_a_dropped_reply_is_a_format_error(tmp_path: Path) -> None:
    """mswea_bash_command blocks; a timeout from exception_info; 2.x's lone format-error message counts."""
    found = load_actions(tmp_path / "t.traj.json", text_traj(), "mini-swe-agent")
    assert [(a["tool"], a["error"]) for a in found] == [
        ("cat", None),
        ("python", "timeout"),
        ("(no_command)", "format_error"),
        ("grep", None),
        ("nl", "returncode 1"),
    ]
    assert found[0]["args"] == {"cmd": "cat src/cli.py | head -40"}


def test_a_1x_trajectory_reads_as_before(tmp_path: Path) -> None:
    """The 1.x reader's answers are kept: ```bash blocks and <returncode> parsed from the text."""
    from replay.test_trace import mini_swe_agent_traj

    found = load_actions(tmp_path / "t.json", mini_swe_agent_traj(), "mini-swe-agent")
    assert [(a["tool"], a["error"]) for a in found] == [
        ("ls", None),
        ("grep", "returncode 1"),
        ("cat", None),
        ("python", None),
        ("(no_command)", "format_error"),
        ("echo", None),
    ]


def test_the_stuck_tool_calling_run_is_flagged_in_a_real_replay(tmp_path: Path) -> None:
    """heartbeat replay on the 2.x file as saved: the pytest failure after every edit is seen."""
    path = write(tmp_path / "calc.traj.json", toolcall_traj())
    rows = replay_cli(tmp_path, path, "--per-heartbeat", "3")
    assert kinds(rows), rows
    healthy = write(tmp_path / "healthy.traj.json", toolcall_traj(STUCK[:3] + STUCK[-1:], format_error_at=-1))
    assert kinds(replay_cli(tmp_path, healthy, "--per-heartbeat", "3")) == []
