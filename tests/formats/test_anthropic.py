"""The ``anthropic`` import format: Messages API transcripts with ``tool_use`` and ``tool_result`` blocks.

The anthropic package is not a dependency, so the samples are written in
the documented shapes: an assistant message's content blocks (``text``,
``tool_use`` with id, name and input), the next user message's
``tool_result`` blocks (``tool_use_id``, ``content`` as a string or text
blocks, ``is_error``), and a server tool's ``server_tool_use`` with its
``web_search_tool_result`` (an error result carries an ``error_code``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from _formats import assert_no_collision, kinds, refused_by_cli, replay_cli, write

from heartbeat.formats import detect_format, load_actions


def turn(calls: list[tuple[str, str, dict[str, Any]]], results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An assistant message with a thought and tool uses, then the user message with their results."""
    content: list[dict[str, Any]] = [{"type": "text", "text": "Let me check."}]
    content += [{"type": "tool_use", "id": i, "name": n, "input": args} for i, n, args in calls]
    return [{"role": "assistant", "content": content}, {"role": "user", "content": results}]


def healthy_messages() -> list[dict[str, Any]]:
    """Different lookups with different answers, one with its content as text blocks, then a reply."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Which order is late?"}]
    for i in range(5):
        result = f"order {1000 + i * 7}: shipped on day {i * 3}, carrier {'UPS' if i % 2 else 'DHL'}"
        content: Any = result if i % 2 else [{"type": "text", "text": result}]
        messages += turn(
            [(f"toolu_{i}", "get_order", {"order_id": f"A{i}{i}"})],
            [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": content}],
        )
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "None is late."}]})
    messages.append({"role": "user", "content": "Thanks!"})
    return messages


def stuck_messages() -> list[dict[str, Any]]:
    """The same refund attempt, rejected with is_error each time, six times."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Refund my order."}]
    for i in range(6):
        messages += turn(
            [(f"toolu_r{i}", "refund", {"order_id": "A11", "amount": 40})],
            [
                {
                    "type": "tool_result",
                    "tool_use_id": f"toolu_r{i}",
                    "content": "refund exceeds the amount paid",
                    "is_error": True,
                }
            ],
        )
    return messages


def test_tool_uses_pair_with_their_results_by_id(tmp_path: Path) -> None:
    """Two calls in one turn, answered in the other order: each gets its own result."""
    messages = turn(
        [("toolu_a", "search", {"q": "x"}), ("toolu_b", "fetch", {"url": "https://example.test"})],
        [
            {"type": "tool_result", "tool_use_id": "toolu_b", "content": [{"type": "text", "text": "page"}]},
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": "Error: rate limited"},
        ],
    )
    assert detect_format({"model": "claude-x", "messages": messages}) == "anthropic"
    assert load_actions(tmp_path / "x.json", messages, "anthropic") == [
        {"tool": "search", "args": {"q": "x"}, "output": "Error: rate limited", "error": "tool_error"},
        {"tool": "fetch", "args": {"url": "https://example.test"}, "output": "page", "error": None},
    ]


def test_results_as_text_or_blocks_and_a_reply_to_the_user(tmp_path: Path) -> None:
    """A string and a list of text blocks read the same; a text-only turn answered by the user is respond."""
    actions = load_actions(tmp_path / "x.json", healthy_messages(), "anthropic")
    assert [a["tool"] for a in actions] == ["get_order"] * 5 + ["respond"]
    assert actions[0]["output"] == "order 1000: shipped on day 0, carrier DHL"
    assert actions[1]["output"] == "order 1007: shipped on day 3, carrier UPS"
    assert actions[-1] == {
        "tool": "respond",
        "args": {"content": "None is late."},
        "output": "Thanks!",
        "error": None,
    }


def test_is_error_and_a_server_tools_error_code_are_errors(tmp_path: Path) -> None:
    """is_error fails a call; a server tool fails with its error_code, code execution with its exit code."""
    assert {a["error"] for a in load_actions(tmp_path / "x.json", stuck_messages(), "anthropic")} == {
        "tool_error"
    }
    search = [
        {"role": "user", "content": "News?"},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_1",
                    "name": "web_search",
                    "input": {"query": "news"},
                },
                {
                    "type": "web_search_tool_result",
                    "tool_use_id": "srvtoolu_1",
                    "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"},
                },
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_2",
                    "name": "code_execution",
                    "input": {"code": "1/0"},
                },
                {
                    "type": "code_execution_tool_result",
                    "tool_use_id": "srvtoolu_2",
                    "content": {
                        "type": "code_execution_result",
                        "stdout": "",
                        "stderr": "ZeroDivisionError",
                        "return_code": 1,
                        "content": [],
                    },
                },
                {"type": "text", "text": "I could not search."},
            ],
        },
    ]
    assert load_actions(tmp_path / "x.json", search, "anthropic") == [
        {
            "tool": "web_search",
            "args": {"query": "news"},
            "output": "max_uses_exceeded",
            "error": "max_uses_exceeded",
        },
        {
            "tool": "code_execution",
            "args": {"code": "1/0"},
            "output": "ZeroDivisionError",
            "error": "returncode 1",
        },
    ]


def test_no_other_format_claims_it_and_it_claims_no_other() -> None:
    """Blocks of type tool_use tell it from chat messages; it is tried before mini-swe-agent."""
    assert_no_collision("anthropic", healthy_messages())
    quoting_bash = {"messages": stuck_messages()}
    quoting_bash["messages"][1]["content"][0]["text"] = "Run:\n```bash\nls\n```"
    # mini-swe-agent's sniffer accepts it too: anthropic, tried first, wins
    assert detect_format(quoting_bash) == "anthropic"


def test_the_cli_escalates_the_stuck_run_and_not_the_healthy_one(tmp_path: Path) -> None:
    """heartbeat replay --json --per-heartbeat 2 in a real process, the format detected from the file."""
    stuck = replay_cli(tmp_path, write(tmp_path / "stuck.json", stuck_messages()), "--per-heartbeat", "2")
    assert "recurring_error" in kinds(stuck) or "repeat" in kinds(stuck)
    assert stuck[-1]["decision"] == "escalate"
    healthy = replay_cli(
        tmp_path,
        write(tmp_path / "ok.json", {"messages": healthy_messages()}),
        "--per-heartbeat",
        "2",
        "--format",
        "anthropic",
    )
    assert kinds(healthy) == [] and {row["decision"] for row in healthy} == {"continue"}
    assert len(healthy) == 3


def test_a_malformed_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """A message that is not an object, detected or forced, is refused in one line."""
    broken = [*stuck_messages()[:3], 42]
    assert "message 4 is not a JSON object" in refused_by_cli(tmp_path, write(tmp_path / "bad.json", broken))
    other = write(tmp_path / "other.json", {"trajectory": []})
    said = refused_by_cli(tmp_path, other, "--format", "anthropic")
    assert "--format anthropic does not read this file: it looks like swe-agent" in said
