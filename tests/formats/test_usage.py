"""Replayed spend: the usage each history format keeps, as trace usage on the heartbeat holding its calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from heartbeat.replay.trace import load_any


def usage(path: Path, data: Any, fmt: str, *, lines: bool = False) -> list[list[tuple[str, int, int, int]]]:
    """Each heartbeat's model calls (model, input, output, cached) after reading ``data`` as ``fmt``."""
    text = "\n".join(json.dumps(row) for row in data) if lines else json.dumps(data)
    path.write_text(text + "\n", encoding="utf-8")
    _, ticks = load_any(path, fmt=fmt, per_heartbeat=2)
    return [
        [(u.model, u.input_tokens, u.output_tokens, u.cached_tokens) for u in line.usage] for _, line in ticks
    ]


def call(i: int) -> dict[str, Any]:
    return {
        "id": f"c{i}",
        "type": "function",
        "function": {"name": "search", "arguments": json.dumps({"q": i})},
    }


def test_openai_chat_usage_on_assistant_messages(tmp_path: Path) -> None:
    """An assistant message's usage (prompt/completion tokens, cached details), the object's model."""
    messages: list[dict[str, Any]] = []
    for i in range(3):
        spent = {
            "prompt_tokens": 100 * (i + 1),
            "completion_tokens": 10,
            "prompt_tokens_details": {"cached_tokens": 5},
        }
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call(i)], "usage": spent},
            {"role": "tool", "tool_call_id": f"c{i}", "content": "hits"},
        ]
    found = usage(tmp_path / "chat.json", {"model": "gpt-4o", "messages": messages}, "openai")
    assert found == [[("gpt-4o", 100, 10, 5), ("gpt-4o", 200, 10, 5)], [("gpt-4o", 300, 10, 5)]]


def test_anthropic_cache_reads_and_writes_are_added_back_to_the_input(tmp_path: Path) -> None:
    """Anthropic's input_tokens leave out the cache: input = input + cache reads + cache writes."""
    messages = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": "t1", "name": "search", "input": {"q": "a"}}],
            "usage": {"input_tokens": 10, "output_tokens": 50, "cache_read_input_tokens": 1000,
                      "cache_creation_input_tokens": 200},
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "hits"}]},
    ]  # fmt: skip
    assert usage(tmp_path / "a.json", messages, "anthropic") == [[("claude-sonnet-4-5", 1210, 50, 1000)]]


def test_claude_code_counts_a_response_once_across_its_entries(tmp_path: Path) -> None:
    """One API response split into entries (a text block, then a tool use) repeats its usage: counted once."""
    spent = {"input_tokens": 5, "output_tokens": 40, "cache_read_input_tokens": 100}
    message = {"id": "msg_1", "role": "assistant", "model": "claude-opus-4", "usage": spent}
    entries = [
        {"type": "user", "message": {"role": "user", "content": "fix it"}},
        {"type": "assistant", "message": {**message, "content": [{"type": "text", "text": "Let me look"}]}},
        {"type": "assistant", "message": {**message, "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}]}},
    ]  # fmt: skip
    assert usage(tmp_path / "s.jsonl", entries, "claude-code", lines=True) == [
        [("claude-opus-4", 105, 40, 100)]
    ]


def test_codex_token_count_events_go_with_their_turn(tmp_path: Path) -> None:
    """Each token_count's last_token_usage, on the turn_context's model, with the calls of its turn."""

    def row(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "2025-10-29T10:00:00Z", "type": kind, "payload": payload}

    rows = [row("session_meta", {"id": "s"}), row("turn_context", {"model": "gpt-5-codex"})]
    for i in range(3):
        rows += [
            row("response_item", {"type": "function_call", "name": "shell", "call_id": f"c{i}",
                                  "arguments": json.dumps({"command": ["ls", f"d{i}"]})}),
            row("response_item", {"type": "function_call_output", "call_id": f"c{i}", "output": "x"}),
            row("event_msg", {"type": "token_count", "info": {"last_token_usage": {
                "input_tokens": 1000 + i, "cached_input_tokens": 800, "output_tokens": 20}}}),
        ]  # fmt: skip
    found = usage(tmp_path / "rollout.jsonl", rows, "codex", lines=True)
    assert found == [
        [("gpt-5-codex", 1000, 20, 800), ("gpt-5-codex", 1001, 20, 800)],
        [("gpt-5-codex", 1002, 20, 800)],
    ]


def test_a_saved_responses_usage_goes_with_its_output(tmp_path: Path) -> None:
    """A saved Responses API response: its usage and model, on the heartbeat of its output's calls."""
    response = {
        "model": "gpt-4.1",
        "input": [{"role": "user", "content": "go"}],
        "output": [{"type": "function_call", "name": "search", "call_id": "c1", "arguments": "{}"}],
        "usage": {"input_tokens": 300, "output_tokens": 30, "input_tokens_details": {"cached_tokens": 100}},
    }
    assert usage(tmp_path / "r.json", response, "openai-responses") == [[("gpt-4.1", 300, 30, 100)]]


def test_the_journal_replays_its_spend_events(tmp_path: Path) -> None:
    """The project's own journal: a heartbeat's spend event, by model, with its dollars."""
    rows = [
        {"event": "action", "tick": 1, "tool": "search", "summary": "search(a)", "output_len": 3},
        {"event": "action", "tick": 1, "tool": "search", "summary": "search(b)", "output_len": 3},
        {"event": "spend", "tick": 1, "tokens": 550, "cost": 0.01, "models": {"gpt-4o-mini": {
            "calls": 2, "input": 500, "output": 50, "cached": 0, "cost": 0.01, "unpriced": 0}}},
        {"event": "decision", "tick": 1, "action": "continue"},
        {"event": "tick", "tick": 1, "outcome": "ran"},
    ]  # fmt: skip
    path = tmp_path / "journal.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    [(_, line)] = load_any(path, fmt="journal")[1]
    [spent] = line.usage
    assert (spent.model, spent.input_tokens, spent.output_tokens, spent.cost) == (
        "gpt-4o-mini",
        500,
        50,
        0.01,
    )
