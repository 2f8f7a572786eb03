"""Size and depth limits of issue 24 (items 11-13): what one step or one file can make heartbeat do.

Real processes over real files: a step whose exception text is 5 MB, replay of
input nested hundreds of levels deep, and an importer fed thousands of parallel
tool calls.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from _cli import run_cli as cli

from heartbeat.state.journal import Journal

HUGE_RAISE = textwrap.dedent("""
    def step(ctx):
        ctx.record("read", {"page": ctx.tick}, output="page %d says something new" % ctx.tick)
        raise ValueError("the answer was " + "x" * 5_000_000)
""")


def test_a_five_megabyte_exception_is_clipped_everywhere(tmp_path: Path) -> None:
    """A step raising a 5 MB message: the output, the journal and the report stay small (item 11)."""
    (tmp_path / "agent.py").write_text(HUGE_RAISE)
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "agent:step"\n')
    for _ in range(3):
        done = cli(tmp_path, "tick")
        assert done.returncode == 1
        assert "ValueError: the answer was xxx" in done.stdout
        assert len(done.stdout) + len(done.stderr) < 10_000
    state = tmp_path / "state"
    journal = sum(p.stat().st_size for p in state.glob("journal.jsonl*"))
    assert journal < 100_000
    assert (state / "state.json").stat().st_size < 100_000
    lines = (state / "journal.jsonl").read_text().splitlines()
    errors = [json.loads(line) for line in lines if '"step_error"' in line]
    assert len(errors) == 3 and all(e["traceback"].rstrip().endswith("…") for e in errors)
    assert cli(tmp_path, "report").returncode == 0
    assert (state / "report.html").stat().st_size < 1_000_000


def test_one_huge_line_cannot_take_the_journal_past_its_rotation_bound(tmp_path: Path) -> None:
    """Events of 5 MB each: the files stay within keep + 1 times max_bytes (item 11)."""
    journal = Journal(tmp_path / "journal.jsonl", max_bytes=1_000_000, keep=3)
    for tick in range(6):
        journal.append([{"event": "note", "tick": tick, "text": "y" * 5_000_000}])
        journal.append([{"event": "deep", "tick": tick, "items": ["z" * 1000] * 5000}])
    sizes = [p.stat().st_size for p in tmp_path.glob("journal.jsonl*")]
    assert sum(sizes) <= 4 * 1_000_000 and max(sizes) <= 1_000_000
    events = list(journal.read())
    assert events and all(e["event"] in ("note", "deep") for e in events)
    assert any("[clipped]" in json.dumps(e) for e in events)


class _Counted(dict):  # type: ignore[type-arg]
    """A tool message that counts how often its fields are read."""

    reads = 0

    def get(self, key: object, default: object = None) -> object:
        _Counted.reads += 1
        return super().get(key, default)


def test_the_openai_importer_is_linear_in_one_messages_parallel_calls() -> None:
    """3,000 parallel tool calls in one message: each result is looked at a few times, not once per call."""
    from heartbeat.formats import openai_chat

    n = 3_000
    calls = [
        {"id": f"c{k}", "function": {"name": "read", "arguments": json.dumps({"k": k})}} for k in range(n)
    ]
    # Results in reverse order, matched by id: the worst case for a scan per call.
    results = [_Counted(role="tool", tool_call_id=f"c{k}", content=f"page {k}") for k in reversed(range(n))]
    messages = [{"role": "assistant", "tool_calls": calls}, *results]
    _Counted.reads = 0
    found = openai_chat.actions(messages)
    assert [a["output"] for a in found[:3]] == ["page 0", "page 1", "page 2"]
    assert len(found) == n and found[-1]["args"] == {"k": n - 1}
    assert _Counted.reads < 10 * n  # before: one read of every result per call, n * n / 2


def test_the_openai_importer_matches_as_before() -> None:
    """By id first (the first unused), else by position; an id reused, a call never answered."""
    from heartbeat.formats import openai_chat

    def call(i: object, name: str) -> dict[str, object]:
        return {"id": i, "function": {"name": name, "arguments": "{}"}}

    messages = [
        {
            "role": "assistant",
            "tool_calls": [call("a", "one"), call("a", "two"), call(None, "three"), call("z", "four")],
        },
        {"role": "tool", "tool_call_id": "a", "content": "first a"},
        {"role": "tool", "tool_call_id": "a", "content": "Error: second a"},
        {"role": "tool", "content": "no id"},
        {"role": "user", "content": "next"},
    ]
    found = openai_chat.actions(messages)
    assert [(a["tool"], a["output"], a["error"]) for a in found] == [
        ("one", "first a", None),
        ("two", "Error: second a", "tool_error"),
        ("three", "no id", None),
        ("four", None, None),
    ]


def _deep_openai(depth: int) -> list[dict[str, object]]:
    """An OpenAI chat transcript whose one tool call's arguments text is nested ``depth`` levels."""
    arguments = '{"a":' * depth + "1" + "}" * depth
    call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": arguments}}
    return [
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "found it"},
    ]


def _deep_trace(depth: int) -> str:
    """A one-heartbeat trace whose action's args are nested ``depth`` levels."""
    return '{"actions": [{"tool": "lookup", "args": ' + '{"x":' * depth + "1" + "}" * depth + "}]}\n"


WEBHOOK_CONFIG = (
    '[[notify]]\ntype = "webhook"\nurl = "http://127.0.0.1:9/hooks/T0123ABCD/B0456EFGH/abcdefghijklmnop"\n'
)


def test_replay_of_deeply_nested_input_is_one_line_or_replays(tmp_path: Path) -> None:
    """Nesting Python cannot read is a one-line error (exit 2); what it can read replays, secrets or not."""
    (tmp_path / "hook.toml").write_text(WEBHOOK_CONFIG)
    (tmp_path / "deep.json").write_text(json.dumps(_deep_openai(5000)))
    (tmp_path / "deep.jsonl").write_text(_deep_trace(900))
    for config in ([], ["--config", "hook.toml"]):
        done = cli(tmp_path, "replay", "deep.json", *config)
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and "nested too deeply" in done.stderr
        assert "internal error" not in done.stderr
        replayed = cli(tmp_path, "replay", "deep.jsonl", "--json", *config)
        assert replayed.returncode == 0, replayed.stderr
        assert json.loads(replayed.stdout.splitlines()[0])["tick"] == 1


def test_a_deeply_nested_file_does_not_abort_a_folder_replay(tmp_path: Path) -> None:
    """One file nested too deeply: that file is a line of the table; the others and the page follow."""
    folder = tmp_path / "runs"
    folder.mkdir()
    (tmp_path / "hook.toml").write_text(WEBHOOK_CONFIG)
    (folder / "a-deep.json").write_text(json.dumps(_deep_openai(5000)))
    (folder / "b-deep-args.jsonl").write_text(_deep_trace(900))
    (folder / "c-fine.jsonl").write_text(
        '{"actions": [{"tool": "read", "args": {"p": 1}, "output": "a page"}]}\n'
    )
    done = cli(tmp_path, "replay", "runs", "--config", "hook.toml", "--html", "tuning.html")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("a-deep") and "error:" in lines[0] and "nested too deeply" in lines[0]
    assert lines[1].startswith("b-deep-args") and "1 actions/1 ticks" in lines[1]
    assert lines[2].startswith("c-fine") and "1 actions/1 ticks" in lines[2]
    assert (tmp_path / "tuning.html").stat().st_size > 0
