"""JSON Lines dumps of the message formats, detected from their lines, and what stays a trace or a journal.

A history written one message (or item) per line is detected from the list
of its lines when neither its first line nor the whole file is a known
format; a file whose first line is a trace line is a trace (its lines are
not parsed to sniff), a journal stays a journal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _formats import action_count, kinds, refused_by_cli, replay_cli, write
from conftest import spawn_heartbeat
from langchain_core.messages import messages_to_dict
from replay.test_trace import openai_messages

from formats.test_anthropic import stuck_messages as anthropic_stuck
from formats.test_claude_code import healthy_session, stuck_session
from formats.test_codex import healthy_rollout, stuck_rollout
from formats.test_langchain import stuck_messages as langchain_stuck
from formats.test_openai_responses import stuck_items
from formats.test_pydantic_ai import stuck_history
from heartbeat.replay.trace import _import_format, load_any

# ../shared/corpus beside the checkout (a worktree sits one folder deeper)
CORPUS = next(
    (
        p / "shared/corpus/traces"
        for p in Path(__file__).resolve().parents
        if (p / "shared/corpus/traces").is_dir()
    ),
    None,
)


def jsonl(path: Path, rows: list[Any]) -> Path:
    """``rows`` written one JSON value per line."""
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def samples() -> dict[str, list[Any]]:
    """One stuck history per message format, as the list of its messages or items."""
    return {
        "openai": openai_messages(),
        "openai-responses": stuck_items(),
        "anthropic": anthropic_stuck(),
        "langchain": messages_to_dict(langchain_stuck()),
        "pydantic-ai": stuck_history(),
    }


def test_each_message_format_is_detected_from_its_lines(tmp_path: Path) -> None:
    """One message per line reads as the same actions as the JSON document of the same messages."""
    for name, rows in samples().items():
        lines = jsonl(tmp_path / f"{name}.jsonl", rows)
        document = write(tmp_path / f"{name}.json", rows)
        assert _import_format(lines) == name, name
        assert load_any(lines) == (str(lines), load_any(document)[1]), name
        assert action_count(lines) > 0


def test_the_cli_replays_a_jsonl_dump_without_format(tmp_path: Path) -> None:
    """heartbeat replay FILE.jsonl --json in a real process: the stuck anthropic run escalates."""
    rows = replay_cli(tmp_path, jsonl(tmp_path / "a.jsonl", anthropic_stuck()), "--per-heartbeat", "2")
    assert kinds(rows) and rows[-1]["decision"] == "escalate"


def test_a_bad_line_in_a_detected_dump_is_named(tmp_path: Path) -> None:
    """The lines before it say what the file is; the error names the line that is not JSON."""
    path = jsonl(tmp_path / "a.jsonl", anthropic_stuck())
    path.write_text(path.read_text() + "\n{oops\n", encoding="utf-8")
    assert _import_format(path) == "anthropic"
    assert f"line {len(anthropic_stuck()) + 2}: not valid JSON" in refused_by_cli(tmp_path, path)


def test_a_trace_is_a_trace_whatever_its_later_lines_hold(tmp_path: Path) -> None:
    """A first trace line makes the file a trace: later lines are not sniffed, and a bad one is named."""
    head = {"progress": 0.1, "actions": [{"tool": "search", "args": {"q": "x"}, "output": "3 hits"}]}
    chat = jsonl(tmp_path / "t.jsonl", [head, *openai_messages()])
    assert _import_format(chat) is None
    _, lines = load_any(chat)
    assert [len(line.actions) for _, line in lines] == [1] + [0] * len(openai_messages())
    broken = tmp_path / "b.jsonl"
    broken.write_text(json.dumps(head) + "\n{not json\n", encoding="utf-8")
    assert "line 2: not valid JSON" in refused_by_cli(tmp_path, broken)
    for odd in ({}, {"_note": "hand-made"}, {"at": "2025-01-01T00:00:00Z"}):
        path = jsonl(tmp_path / "odd.jsonl", [odd, *openai_messages()])
        assert _import_format(path) is None, odd


def test_a_journal_stays_a_journal_and_one_line_files_still_sniff(tmp_path: Path) -> None:
    """The journal is known from its first line; a file of one message line is that message's list."""
    journal = [
        {"event": "tick", "tick": 1},
        {"event": "action", "tool": "search", "summary": "search(q)", "output_len": 3, "error": None},
    ]
    assert _import_format(jsonl(tmp_path / "journal.jsonl", journal)) == "journal"
    one = {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{}"}}]}
    assert _import_format(jsonl(tmp_path / "one.jsonl", [one])) == "openai"
    assert _import_format(jsonl(tmp_path / "other.jsonl", [{"hello": 1}, {"world": 2}])) is None


def test_every_shipped_trace_and_corpus_trace_is_still_a_trace() -> None:
    """tests/traces and, where it is checked out beside the repo, the shared corpus: no format claims them."""
    traces = sorted((Path(__file__).parent.parent / "traces").glob("*.jsonl"))
    traces += sorted(CORPUS.glob("*.jsonl")) if CORPUS is not None else []
    assert len(traces) >= 6
    print(f"{len(traces)} traces checked")
    for trace in traces:
        assert _import_format(trace) is None, trace.name


def test_a_folder_of_sessions_gives_the_confusion_table(tmp_path: Path) -> None:
    """Claude Code sessions and Codex rollouts in one folder, labelled, replayed by the CLI in one go."""
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "stuck-claude.jsonl").write_text(stuck_session().lines(), encoding="utf-8")
    (runs / "ok-claude.jsonl").write_text(healthy_session().lines(), encoding="utf-8")
    (runs / "stuck-codex.jsonl").write_text(stuck_rollout().text(), encoding="utf-8")
    (runs / "ok-codex.jsonl").write_text(healthy_rollout().text(), encoding="utf-8")
    labels = tmp_path / "labels.csv"
    labels.write_text(
        "trace,label,onset\nstuck-claude,stuck,1\nok-claude,healthy,\nstuck-codex,stuck,1\nok-codex,healthy,\n",
        encoding="utf-8",
    )
    done = spawn_heartbeat(
        tmp_path, "replay", str(runs), "--labels", str(labels), "--per-heartbeat", "5", "--json"
    )
    out, err = done.communicate(timeout=120)
    assert done.returncode == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    by_trace = {row["trace"]: row for row in rows[:-1]}
    assert (
        by_trace["stuck-claude"]["escalated"] is not None and by_trace["stuck-codex"]["escalated"] is not None
    )
    assert by_trace["ok-claude"]["first_anomaly"] is None and by_trace["ok-codex"]["first_anomaly"] is None
    confusion = rows[-1]["confusion"]
    assert confusion["stuck_escalated"] == 2 and confusion["healthy_escalated"] == 0
