"""The ``openai-responses`` import format: Responses API items as the OpenAI Agents SDK dumps them.

The function-call runs are made by the real ``agents`` package with its
offline ``ScriptedModel`` and dumped with ``RunResult.to_input_list()``;
the hosted tool items are validated by the ``openai`` package's own types.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from _formats import assert_no_collision, kinds, refused_by_cli, replay_cli, write
from agents import Agent, Runner, SQLiteSession, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call
from openai.types.responses import (
    ResponseCodeInterpreterToolCall,
    ResponseComputerToolCall,
    ResponseFileSearchToolCall,
    ResponseFunctionWebSearch,
)
from openai.types.responses.response_input_item import ComputerCallOutput, McpCall, ShellCall, ShellCallOutput

from heartbeat.formats import detect_format, load_actions

set_tracing_disabled(True)

CITIES = ["Paris", "Rome", "Oslo", "Lima", "Cairo", "Quito"]


@function_tool
def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"{city}: {len(city) * 4} degrees, {'sunny' if len(city) % 2 else 'rain'}"


@function_tool
def book(amount: int) -> str:
    """Book the flight, paying ``amount``."""
    raise ValueError("payment amount does not add up")


def run(steps: list[Any], prompt: str | list[Any]) -> list[Any]:
    """One real Agents SDK run over scripted model turns: what ``to_input_list()`` gives."""
    agent = Agent(name="travel", model=ScriptedModel(steps), tools=[weather, book])
    return Runner.run_sync(agent, prompt).to_input_list()


def lookups() -> list[Any]:
    """Scripted model turns: one weather call per city."""
    return [[function_call("weather", {"city": c}, call_id=f"w{i}")] for i, c in enumerate(CITIES)]


def healthy_items() -> list[Any]:
    """Six lookups, a reply, the user's answer, and a second run continuing the conversation."""
    first = run([*lookups(), [assistant_message("Lima is warmest. Shall I book?")]], "Where is it warm?")
    return run([[assistant_message("Then I will not book.")]], [*first, {"role": "user", "content": "No."}])


def stuck_items() -> list[Any]:
    """The same booking, failing the same way, six times."""
    steps: list[Any] = [[function_call("book", {"amount": 900}, call_id=f"b{i}")] for i in range(6)]
    return run([*steps, [assistant_message("It keeps failing.")]], "Book the 3 pm flight.")


def hosted_items() -> list[dict[str, Any]]:
    """One item of each hosted tool call the format reads, in the openai package's own shapes."""
    items: list[Any] = [
        ResponseFunctionWebSearch.model_validate(
            {
                "id": "ws1",
                "type": "web_search_call",
                "status": "completed",
                "action": {"type": "search", "query": "x"},
            }
        ),
        ResponseFileSearchToolCall.model_validate(
            {
                "id": "fs1",
                "type": "file_search_call",
                "status": "completed",
                "queries": ["refund policy"],
                "results": [{"file_id": "f1", "text": "Refunds within 30 days."}],
            }
        ),
        ResponseComputerToolCall.model_validate(
            {
                "id": "cu1",
                "call_id": "cc1",
                "type": "computer_call",
                "status": "completed",
                "pending_safety_checks": [],
                "action": {"type": "click", "x": 10, "y": 20, "button": "left"},
            }
        ),
        ComputerCallOutput.model_validate(
            {
                "call_id": "cc1",
                "type": "computer_call_output",
                "output": {"type": "computer_screenshot", "image_url": "https://example.test/shot1.png"},
            }
        ),
        ResponseCodeInterpreterToolCall.model_validate(
            {
                "id": "ci1",
                "type": "code_interpreter_call",
                "status": "failed",
                "container_id": "c1",
                "code": "1/0",
                "outputs": [{"type": "logs", "logs": "ZeroDivisionError"}],
            }
        ),
        McpCall.model_validate(
            {
                "id": "m1",
                "type": "mcp_call",
                "name": "get_issue",
                "server_label": "tracker",
                "arguments": '{"id": 7}',
                "error": {"type": "http_error", "code": 500, "message": "upstream down"},
            }
        ),
        ShellCall.model_validate(
            {"call_id": "sh1", "type": "shell_call", "action": {"commands": ["cd /repo && pytest -q"]}}
        ),
        ShellCallOutput.model_validate(
            {
                "call_id": "sh1",
                "type": "shell_call_output",
                "output": [{"stdout": "1 failed", "stderr": "", "outcome": {"type": "exit", "exit_code": 1}}],
            }
        ),
    ]
    return [item.model_dump(mode="json", exclude_none=True) for item in items]


def test_a_real_agents_sdk_run_is_detected_and_read(tmp_path: Path) -> None:
    """Calls paired with outputs by call_id, args parsed, a reply followed by the user's answer is respond."""
    items = healthy_items()
    assert detect_format(items) == "openai-responses"
    actions = load_actions(tmp_path / "x.json", items, "openai-responses")
    assert [a["tool"] for a in actions] == ["weather"] * 6 + ["respond"]
    assert actions[0] == {
        "tool": "weather",
        "args": {"city": "Paris"},
        "output": "Paris: 20 degrees, sunny",
        "error": None,
    }
    assert actions[-1] == {
        "tool": "respond",
        "args": {"content": "Lima is warmest. Shall I book?"},
        "output": "No.",
        "error": None,
    }


def test_a_failing_tool_is_an_error_with_the_sdks_own_text(tmp_path: Path) -> None:
    """The SDK hides the exception behind a fixed text; that text is the error."""
    actions = load_actions(tmp_path / "x.json", stuck_items(), "openai-responses")
    assert len(actions) == 6
    assert {a["error"] for a in actions} == {"tool_error"}
    assert actions[0]["output"] == "An error occurred while running the tool. Please try again."
    assert actions[0]["args"] == {"amount": 900}


def test_hosted_tool_calls_are_one_action_each(tmp_path: Path) -> None:
    """Web and file search, a computer click and its screenshot, code, MCP and shell: what each carries."""
    actions = load_actions(tmp_path / "x.json", {"output": hosted_items()}, "openai-responses")
    assert actions == [
        {"tool": "web_search", "args": {"type": "search", "query": "x"}, "output": None, "error": None},
        {
            "tool": "file_search",
            "args": {"queries": ["refund policy"]},
            "output": "Refunds within 30 days.",
            "error": None,
        },
        {
            "tool": "computer",
            "args": {"type": "click", "x": 10, "y": 20, "button": "left"},
            "output": "https://example.test/shot1.png",
            "error": None,
        },
        {
            "tool": "code_interpreter",
            "args": {"code": "1/0"},
            "output": "ZeroDivisionError",
            "error": "tool_error",
        },
        {
            "tool": "get_issue",
            "args": {"id": 7},
            "output": '{"code":500,"message":"upstream down","type":"http_error"}',
            "error": "http_error",
        },
        {"tool": "pytest", "args": {"cmd": "pytest -q"}, "output": "1 failed", "error": "returncode 1"},
    ]


def test_an_object_with_input_and_output_lists_reads_both_in_order(tmp_path: Path) -> None:
    """A saved request (input) and its response (output) are one history."""
    items = healthy_items()
    data = {"input": items[:5], "output": items[5:], "model": "gpt-x"}
    assert detect_format(data) == "openai-responses"
    assert load_actions(tmp_path / "x.json", data, "openai-responses") == load_actions(
        tmp_path / "x.json", items, "openai-responses"
    )


def test_a_sessions_stored_items_read_like_the_run_result(tmp_path: Path) -> None:
    """The items an SQLiteSession keeps over two runs (session.get_items()) are the same history."""
    session = SQLiteSession("travel")
    steps = [*lookups(), [assistant_message("Lima is warmest. Shall I book?")]]
    steps.append([assistant_message("Then I will not book.")])
    agent = Agent(name="travel", model=ScriptedModel(steps), tools=[weather, book])
    Runner.run_sync(agent, "Where is it warm?", session=session)
    Runner.run_sync(agent, "No.", session=session)
    stored = asyncio.run(session.get_items())
    assert detect_format(stored) == "openai-responses"
    assert load_actions(tmp_path / "x.json", stored, "openai-responses") == load_actions(
        tmp_path / "x.json", healthy_items(), "openai-responses"
    )


def test_no_other_format_claims_it_and_it_claims_no_other() -> None:
    """The sniffer is specific: the older samples still detect as before."""
    assert_no_collision("openai-responses", healthy_items())
    assert_no_collision("openai-responses", {"output": hosted_items()})


def test_the_cli_escalates_the_stuck_run_and_not_the_healthy_one(tmp_path: Path) -> None:
    """heartbeat replay --json --per-heartbeat 2 in a real process, the format detected from the file."""
    stuck = replay_cli(tmp_path, write(tmp_path / "stuck.json", stuck_items()), "--per-heartbeat", "2")
    assert "recurring_error" in kinds(stuck) or "repeat" in kinds(stuck)
    assert stuck[-1]["decision"] == "escalate"
    healthy = replay_cli(
        tmp_path,
        write(tmp_path / "ok.json", healthy_items()),
        "--per-heartbeat",
        "2",
        "--format",
        "openai-responses",
    )
    assert kinds(healthy) == [] and {row["decision"] for row in healthy} == {"continue"}
    assert len(healthy) == 4


def test_a_malformed_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """Items that are not objects, detected or forced, are refused in one line."""
    bad = write(tmp_path / "bad.json", [{"type": "function_call", "call_id": "c", "name": "x"}, "oops"])
    assert "item 2 is not a JSON object" in refused_by_cli(tmp_path, bad)
    other = write(tmp_path / "chat.json", {"messages": [{"role": "user", "content": "hi"}]})
    assert "not a openai-responses file" in refused_by_cli(tmp_path, other, "--format", "openai-responses")
