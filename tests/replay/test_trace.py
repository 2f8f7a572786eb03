"""Replay of real agent histories: import formats, --per-heartbeat, folders of runs with labels.

The samples are written by the tests in the shapes the agents themselves
write (SWE-agent ``.traj``, mini-swe-agent trajectory JSON, OpenAI-style
chat messages, the project's own journal produced by real heartbeats).
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import spawn_heartbeat
from hypothesis import given, settings
from hypothesis import strategies as st

from heartbeat.base.errors import TraceError, UsageError
from heartbeat.config.file import HeartbeatConfig
from heartbeat.formats import FORMATS, detect_format, load_actions
from heartbeat.replay.play import load_any, replay
from heartbeat.replay.run import run_replay
from heartbeat.replay.trace import TraceAction
from heartbeat.testing import run_ticks
from heartbeat.tick.context import StepContext

TRACEBACK = (
    'Traceback (most recent call last):\n  File "/testbed/repro.py", line 3, in <module>\n'
    "    print(parse('a=1'))\nValueError: bad token at 0x7f3a{n}c0\n"
)


def swe_agent_traj(edits: int) -> dict[str, Any]:
    """A SWE-agent 1.x trajectory: edits each followed by the same crashing reproduction."""
    steps: list[dict[str, Any]] = [
        {"action": "find /testbed -name parse.py", "observation": "/testbed/src/parse.py", "thought": "look"},
        {
            "action": "str_replace_editor view /testbed/src/parse.py",
            "observation": "1 def parse(s):\n",
            "thought": "",
        },
    ]
    for i in range(edits):
        steps.append(
            {
                "action": "str_replace_editor str_replace /testbed/src/parse.py "
                f"--old_str 'v{i}' --new_str 'v{i + 1}'",
                "observation": "The file /testbed/src/parse.py has been edited.",
                "thought": "try again",
            }
        )
        steps.append(
            {"action": "cd /testbed && python repro.py", "observation": TRACEBACK.format(n=i), "thought": ""}
        )
    steps.append({"action": "", "observation": "", "thought": "Exit due to cost limit"})
    return {"trajectory": steps, "info": {"exit_status": "exit_cost"}, "history": []}


def mini_swe_agent_traj() -> dict[str, Any]:
    """A mini-swe-agent run: system and task messages, then one bash block per assistant turn."""
    turns = [
        ("ls", "0", "README.md\nsrc\n"),
        ("grep -n 'def missing' src/*.py", "1", ""),
        ("cat <<'EOF' > repro.py\nprint(1)\nEOF", "0", ""),
        ("python repro.py", "0", "1\n"),
    ]
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Fix the issue."},
    ]
    for cmd, rc, out in turns:
        messages.append({"role": "assistant", "content": f"THOUGHT: next.\n\n```bash\n{cmd}\n```"})
        messages.append(
            {"role": "user", "content": f"<returncode>{rc}</returncode>\n<output>\n{out}</output>"}
        )
    messages.append({"role": "assistant", "content": "I will answer in prose, no command."})
    messages.append(
        {"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks."}
    )
    messages.append(
        {"role": "assistant", "content": "```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"}
    )
    return {
        "info": {"exit_status": "Submitted"},
        "messages": messages,
        "trajectory_format": "mini-swe-agent-1",
    }


def openai_messages() -> list[dict[str, Any]]:
    """A tool-calling agent's chat: the same rejected booking retried with a thought in between."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are an airline agent."},
        {"role": "user", "content": "Book me the 3 pm flight, pay with two gift cards."},
    ]
    for i in range(4):
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"t{i}",
                        "type": "function",
                        "function": {"name": "think", "arguments": json.dumps({"thought": f"attempt {i}"})},
                    },
                    {
                        "id": f"b{i}",
                        "type": "function",
                        "function": {
                            "name": "book_reservation",
                            "arguments": json.dumps({"amount": 900 + i}),
                        },
                    },
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": f"t{i}", "content": ""})
        messages.append(
            {"role": "tool", "tool_call_id": f"b{i}", "content": "Error: payment amount does not add up"}
        )
    messages.append({"role": "assistant", "content": "Sorry, it failed. Shall I try a card?"})
    messages.append({"role": "user", "content": "Yes please."})
    return messages


def write(path: Path, data: Any) -> Path:
    """Write ``data`` as JSON to ``path``."""
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_each_format_is_detected_from_its_content(tmp_path: Path) -> None:
    """No flag needed: each sample is recognised as what it is, and only as that."""
    samples = {
        "swe-agent": swe_agent_traj(1),
        "mini-swe-agent": mini_swe_agent_traj(),
        "openai": openai_messages(),
    }
    for name, data in samples.items():
        assert detect_format(data) == name
    assert detect_format({"something": "else"}) is None
    assert set(FORMATS) == {
        "journal",
        "swe-agent",
        "claude-code",
        "codex",
        "openai-responses",
        "anthropic",
        "pydantic-ai",
        "langchain",
        "mini-swe-agent",
        "openai",
        "otlp",
    }


def test_every_format_is_named_in_the_help_and_the_readme(tmp_path: Path) -> None:
    """--format's help and the README's "Tuning with replay" list every registered format."""
    done = spawn_heartbeat(tmp_path, "replay", "--help")
    out, _ = done.communicate(timeout=60)
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    tuning = readme[readme.index("## Tuning with replay") :]
    for name in FORMATS:
        assert name in " ".join(out.split()), name
        assert re.search(rf"[`| ]{re.escape(name)}[`|]", tuning), name


def test_swe_agent_steps_become_shell_actions(tmp_path: Path) -> None:
    """Tool = the program run (cd hops dropped), error read from the text, the harness's exit dropped."""
    actions = load_actions(tmp_path / "x.traj", swe_agent_traj(2), "swe-agent")
    assert [a["tool"] for a in actions] == [
        "find",
        "str_replace_editor",
        "str_replace_editor",
        "python",
        "str_replace_editor",
        "python",
    ]
    assert actions[3]["args"] == {"cmd": "python repro.py"}
    assert actions[3]["error"] == "python_exception" and actions[2]["error"] is None


def test_mini_swe_agent_turns_become_actions_with_return_codes(tmp_path: Path) -> None:
    """returncode 1 is an error label; a turn without a bash block is a format error."""
    actions = load_actions(tmp_path / "x.json", mini_swe_agent_traj(), "mini-swe-agent")
    assert [a["tool"] for a in actions] == ["ls", "grep", "cat", "python", "(no_command)", "echo"]
    assert actions[1]["error"] == "returncode 1" and actions[1]["output"] == ""
    assert actions[0]["output"] == "README.md\nsrc\n" and actions[0]["error"] is None
    assert actions[4]["error"] == "format_error"


def test_openai_tool_calls_and_replies_become_actions(tmp_path: Path) -> None:
    """Each tool call with its result by id; "Error..." results fail; a reply to the user is respond."""
    actions = load_actions(tmp_path / "x.json", {"messages": openai_messages()}, "openai")
    assert [a["tool"] for a in actions[:2]] == ["think", "book_reservation"]
    assert actions[1]["args"] == {"amount": 900} and actions[1]["error"] == "tool_error"
    assert actions[0]["error"] is None and actions[0]["output"] == ""
    assert actions[-1] == {
        "tool": "respond",
        "args": {"content": "Sorry, it failed. Shall I try a card?"},
        "output": "Yes please.",
        "error": None,
    }


def test_a_swe_agent_run_rerunning_the_same_crash_escalates(tmp_path: Path) -> None:
    """The same traceback after every edit: recurring_error, then a human, 5 actions per heartbeat."""
    path = write(tmp_path / "run.traj", swe_agent_traj(6))
    ticks = list(replay(path, HeartbeatConfig()))
    kinds = [a.kind for t in ticks for a in t.anomalies]
    assert "recurring_error" in kinds
    assert ticks[-1].decision.action == "escalate"
    assert all(t.actions == 5 for t in ticks[:-1])


def test_the_journal_of_real_heartbeats_replays(tmp_path: Path) -> None:
    """state/journal.jsonl written by real ticks replays its action events, heartbeat by heartbeat:
    a tick asking the same search twice after one that did is no watcher's round."""

    def repeater(ctx: StepContext) -> None:
        for _ in range(2):
            ctx.record("search", {"q": "same"}, output="the same long page of results")

    run_ticks(repeater, tmp_path, ticks=2, policy={"escalate_after": 100, "escalate_on_ignored": False})
    journal = tmp_path / "state" / "journal.jsonl"
    _, lines = load_any(journal)
    assert [len(line.actions) for _, line in lines] == [2, 2]
    ticks = list(replay(journal, HeartbeatConfig()))
    assert [[(a.kind, a.action) for a in t.anomalies] for t in ticks] == [[], [("repeat", 3)]]


def test_per_heartbeat_regroups_any_trace(tmp_path: Path) -> None:
    """Own traces and imports alike: N actions per heartbeat, the last one may hold fewer."""
    trace = tmp_path / "t.jsonl"
    trace.write_text(
        "\n".join(json.dumps({"actions": [{"tool": f"t{i}-{k}"} for k in range(3)]}) for i in range(4)),
        encoding="utf-8",
    )
    _, lines = load_any(trace, per_heartbeat=5)
    assert [len(line.actions) for _, line in lines] == [5, 5, 2]
    _, lines = load_any(write(tmp_path / "o.json", openai_messages()), per_heartbeat=4)
    assert [len(line.actions) for _, line in lines] == [4, 4, 1]
    with pytest.raises(UsageError, match="per-heartbeat"):
        load_any(trace, per_heartbeat=0)


def test_regrouping_keeps_each_lines_sample_calls_and_time(tmp_path: Path) -> None:
    """A sample goes with its line's last action (the latest wins), model calls and time with its first."""
    usage = [{"model": "gpt-4o", "input_tokens": 100, "output_tokens": 10}]
    rows = [
        {"progress": 1, "at": "2026-01-01T00:00:00+00:00", "usage": usage, "actions": [{"tool": "a"}] * 3},
        {"progress": 2, "at": "2026-01-01T01:00:00+00:00", "actions": [{"tool": "b"}] * 3},
        {"progress": 5},  # measured in a heartbeat that ran no action
        {"progress": 7, "at": "2026-01-01T03:00:00+00:00", "usage": usage, "actions": [{"tool": "c"}]},
    ]
    trace = tmp_path / "t.jsonl"
    trace.write_text("\n".join(json.dumps(row) for row in rows), encoding="utf-8")
    _, lines = load_any(trace, per_heartbeat=4)
    assert [(len(line.actions), line.progress) for _, line in lines] == [(4, 1), (3, 7)]
    assert [len(line.usage) for _, line in lines] == [1, 1]
    assert [line.at.hour if line.at else None for _, line in lines] == [0, 1]
    _, lines = load_any(trace, per_heartbeat=2)
    assert [line.progress for _, line in lines] == [None, 1, 5, 7]


def test_a_line_marked_as_a_model_turn_is_replayed_as_one(tmp_path: Path) -> None:
    """``"turn": true`` (a live agent's next model turn): one lookup a heartbeat answered nothing
    again is found stuck, where the same lines as scheduled wake-ups are idle; regrouped, a
    heartbeat is a turn when the line of its first action was."""
    lookup = {"tool": "lookup", "args": {"keyword": "vegan"}, "output": "No more results."}
    first = {"actions": [{"tool": "search", "args": {"entity": "Tilda Swinton"}, "output": "An actress."}]}
    found = {}
    for turn in (True, False):
        trace = tmp_path / f"turns-{turn}.jsonl"
        rows = [first] + [{"turn": turn, "actions": [lookup]}] * 8
        trace.write_text("\n".join(json.dumps(row) for row in rows), encoding="utf-8")
        found[turn] = [tick.anomalies for tick in replay(trace, HeartbeatConfig())]
        _, lines = load_any(trace, per_heartbeat=2)
        assert [line.turn for _, line in lines] == [False] + [turn] * 4
    assert any(found[True]) and not any(found[False])


def test_a_flat_metric_still_escalates_when_regrouped(tmp_path: Path) -> None:
    """Regrouped into fewer, larger heartbeats, a busy agent whose metric never moves is still caught.

    The regrouping used to drop the samples, so the same run replayed as an agent without a metric.
    """
    rows = [
        {
            "progress": 3,
            "actions": [
                {"tool": "read", "args": {"file": f"f{i}-{k}.py"}, "output": f"def f{i}_{k}(): ..."}
                for k in range(5)
            ],
        }
        for i in range(16)
    ]
    trace = tmp_path / "flat.jsonl"
    trace.write_text("\n".join(json.dumps(row) for row in rows), encoding="utf-8")
    ticks = list(replay(trace, HeartbeatConfig(), per_heartbeat=10))
    assert [t.progress for t in ticks[:4]] == [3, 3, 3, 3]
    assert [a.kind for a in ticks[3].anomalies] == ["no_progress"]
    assert ticks[-1].decision.action == "escalate"


def test_unknown_and_broken_files_are_one_line_errors(tmp_path: Path) -> None:
    """Not an import format: read as a trace, with its line errors; a wrong --format names the misfit."""
    unknown = tmp_path / "u.json"
    unknown.write_text(json.dumps({"something": ["else"]}, indent=2), encoding="utf-8")
    with pytest.raises(TraceError, match="line 1: not valid JSON"):
        load_any(unknown)
    with pytest.raises(UsageError, match="--format swe-agent does not read this file: it looks like openai"):
        load_any(write(tmp_path / "o.json", openai_messages()), fmt="swe-agent")
    with pytest.raises(UsageError, match="unknown format"):
        load_any(unknown, fmt="otlp-json")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(TraceError, match="nested too deeply"):
        load_any(deep, fmt="openai")


def labels_folder(tmp_path: Path) -> tuple[Path, Path]:
    """A folder of three runs (two stuck, one healthy) and their labels."""
    runs = tmp_path / "runs"
    runs.mkdir()
    write(runs / "stuck-swe.traj", swe_agent_traj(6))
    write(runs / "stuck-chat.json", openai_messages())
    write(runs / "healthy-mini.json", mini_swe_agent_traj())
    labels = tmp_path / "labels.csv"
    labels.write_text(
        "trace,label,onset\nstuck-swe,stuck,5\nstuck-chat,stuck,2\nhealthy-mini,healthy,\n", encoding="utf-8"
    )
    return runs, labels


def test_a_folder_with_labels_gives_a_line_per_trace_and_a_confusion_table(tmp_path: Path) -> None:
    """Summary lines sorted by name, then the counts a tuning session needs."""
    runs, labels = labels_folder(tmp_path)
    out = io.StringIO()
    assert run_replay(runs, HeartbeatConfig(), as_json=False, out=out, labels=labels) == 0
    lines = out.getvalue().splitlines()
    assert [line.split()[0] for line in lines[:3]] == ["healthy-mini", "stuck-chat", "stuck-swe"]
    assert "first=none" in lines[0] and "escalated=no" in lines[0]
    assert "recurring_error" in lines[1] and "recurring_error" in lines[2]
    table = "\n".join(lines[3:])
    assert "stuck runs escalated     1 of 2" in table or "stuck runs escalated     2 of 2" in table
    assert "stuck runs flagged       2 of 2" in table
    assert "healthy runs escalated   0 of 1" in table and "healthy with any anomaly 0 of 1" in table


def test_folder_json_is_one_object_per_trace_then_the_confusion(tmp_path: Path) -> None:
    """--json: the shape the HTML report renders, and a final confusion object."""
    runs, labels = labels_folder(tmp_path)
    out = io.StringIO()
    run_replay(runs, HeartbeatConfig(), as_json=True, out=out, labels=labels)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    keys = ["trace", "label", "onset", "actions", "ticks", "first_anomaly", "escalated", "kinds", "anomalies"]
    for row in rows[:3]:
        assert list(row) == keys
    swe = next(r for r in rows if r.get("trace") == "stuck-swe")
    assert swe["label"] == "stuck" and swe["onset"] == 5 and swe["actions"] == 14
    assert set(swe["first_anomaly"]) == {"tick", "action", "kind"}
    assert swe["escalated"] is not None and set(swe["escalated"]) == {"tick", "action"}
    assert set(swe["anomalies"][0]) == {"tick", "action", "kind", "message"}
    confusion = rows[-1]["confusion"]
    assert confusion["stuck"] == 2 and confusion["healthy"] == 1 and confusion["healthy_escalated"] == 0


def test_a_finding_of_a_whole_tick_after_the_onset_flags_the_run(tmp_path: Path) -> None:
    """``no_progress`` names no action: it stands at its tick's last action, so a run whose
    metric stayed flat after the onset is flagged, and one whose onset comes after it is not."""
    runs = tmp_path / "runs"
    runs.mkdir()
    lines = [
        {
            "progress": 3,
            "actions": [
                {"tool": "read", "args": {"page": p}, "output": f"page {p}"} for p in (2 * n - 1, 2 * n)
            ],
        }
        for n in range(1, 6)
    ]
    (runs / "flat.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    labels = tmp_path / "labels.csv"
    for onset, flagged in ((8, 1), (11, 0)):
        labels.write_text(f"trace,label,onset\nflat,stuck,{onset}\n", encoding="utf-8")
        out = io.StringIO()
        run_replay(runs, HeartbeatConfig(), as_json=True, out=out, labels=labels)
        rows = [json.loads(text) for text in out.getvalue().splitlines()]
        assert {a["kind"] for a in rows[0]["anomalies"]} == {"no_progress"}
        assert all(a["action"] is None for a in rows[0]["anomalies"])
        assert rows[-1]["confusion"]["stuck_flagged"] == flagged


def test_labels_with_a_kind_add_the_counts_per_kind_of_agent(tmp_path: Path) -> None:
    """A `kind` column: the same counts per kind, in the table and under `by_kind` in --json."""
    runs, labels = labels_folder(tmp_path)
    labels.write_text(
        "trace,label,onset,kind\nstuck-swe,stuck,5,coding\nstuck-chat,stuck,2,chat\n"
        "healthy-mini,healthy,,coding\n",
        encoding="utf-8",
    )
    out = io.StringIO()
    run_replay(runs, HeartbeatConfig(), as_json=True, out=out, labels=labels)
    kinds = json.loads(out.getvalue().splitlines()[-1])["confusion"]["by_kind"]
    assert list(kinds) == ["coding", "chat"]  # in the order the sorted traces name them
    assert (kinds["coding"]["stuck"], kinds["coding"]["healthy"], kinds["chat"]["stuck"]) == (1, 1, 1)
    assert kinds["chat"]["healthy"] == 0 and kinds["coding"]["healthy_with_anomaly"] == 0
    out = io.StringIO()
    run_replay(runs, HeartbeatConfig(), as_json=False, out=out, labels=labels)
    table = out.getvalue().split("kind of agent", 1)[1].splitlines()
    assert table[1].split()[0] == "coding" and table[2].split()[0] == "chat"
    assert "0 of 1" in table[1]


def test_the_cli_replays_a_folder_in_a_real_process(tmp_path: Path) -> None:
    """heartbeat replay DIR --labels FILE --per-heartbeat 10 exits 0; a bad labels file exits 2."""
    runs, labels = labels_folder(tmp_path)
    done = spawn_heartbeat(tmp_path, "replay", str(runs), "--labels", str(labels), "--per-heartbeat", "10")
    out, err = done.communicate(timeout=60)
    assert done.returncode == 0, err
    assert "healthy runs escalated   0 of 1" in out
    bad = tmp_path / "bad.csv"
    bad.write_text("trace,label,onset\nx,maybe,\n", encoding="utf-8")
    done = spawn_heartbeat(tmp_path, "replay", str(runs), "--labels", str(bad))
    out, err = done.communicate(timeout=60)
    assert done.returncode == 2 and "stuck|healthy|unclear" in err and "Traceback" not in err


def test_html_writes_the_tuning_page_of_the_same_replay(tmp_path: Path) -> None:
    """--html OUT: a page with a row per trace and the confusion table; a single trace refuses it."""
    runs, labels = labels_folder(tmp_path)
    page = tmp_path / "tuning.html"
    done = spawn_heartbeat(tmp_path, "replay", str(runs), "--labels", str(labels), "--html", str(page))
    out, err = done.communicate(timeout=60)
    assert done.returncode == 0, err
    html = page.read_text(encoding="utf-8")
    for trace in ("healthy-mini", "stuck-chat", "stuck-swe"):
        assert trace in html and trace in out
    assert "<table" in html and "escalated" in html
    done = spawn_heartbeat(tmp_path, "replay", str(runs / "stuck-swe.traj"), "--html", str(page))
    out, err = done.communicate(timeout=60)
    assert done.returncode == 2 and "need a folder" in err and "Traceback" not in err


def _views(pages: list[int]) -> list[dict[str, str]]:
    """SWE-agent steps viewing the given 40-line pages of one file."""
    return [
        {
            "action": "str_replace_editor view /testbed/sympy/core/expr.py "
            f"--view_range {i * 40 + 1} {i * 40 + 40}",
            "observation": f"Here's the result of running `cat -n` on lines {i * 40 + 1}-{i * 40 + 40}:\n"
            + "\n".join(f"{i * 40 + k}\tcode line {k} of page {chr(97 + i % 26)}" for k in range(1, 41)),
            "thought": "keep reading",
        }
        for i in pages
    ]


def test_a_swe_agent_paging_back_over_one_file_escalates_soon_after(tmp_path: Path) -> None:
    """30 views of one file with a sliding range, going back over its first ten pages again and
    again: near_repeat at the 12th, a human one heartbeat later. Reading it once through, 30 new
    pages, is reading: nothing."""
    path = write(tmp_path / "paging.traj", {"trajectory": _views([i % 10 for i in range(30)]), "info": {}})
    ticks = list(replay(path, HeartbeatConfig()))
    first = next(t for t in ticks if t.anomalies)
    assert first.anomalies[0].kind == "near_repeat" and first.anomalies[0].action == 12
    assert (
        "str_replace_editor view /testbed/sympy/core/expr.py --view_range # #" in first.anomalies[0].message
    )
    assert ticks[-1].decision.action == "escalate" and ticks[-1].tick == first.tick + 1
    once = write(tmp_path / "once.traj", {"trajectory": _views(list(range(30))), "info": {}})
    assert [list(t.anomalies) for t in replay(once, HeartbeatConfig())] == [[]] * 6


def test_a_long_command_cycle_escalates(tmp_path: Path) -> None:
    """A 12-command cycle gone round three times: cycle, then a human."""
    names = [
        "parse",
        "render",
        "load",
        "save",
        "merge",
        "split",
        "scan",
        "emit",
        "fold",
        "walk",
        "bind",
        "pack",
    ]
    files = ["core", "util", "io"]
    steps = [
        {
            "action": f"grep -n 'def {name}' src/{files[k % 3]}.py",
            "observation": f"{10 * k + 7}:def {name}(x):\n    return x",
            "thought": "",
        }
        for _ in range(3)
        for k, name in enumerate(names)
    ]
    ticks = list(replay(write(tmp_path / "cycle.traj", {"trajectory": steps}), HeartbeatConfig()))
    kinds = [a.kind for t in ticks for a in t.anomalies]
    assert kinds[0] in ("cycle", "recurring") and "cycle" in kinds
    assert ticks[-1].decision.action == "escalate"


_KEYS = ["type", "role", "content", "kind", "parts", "part_kind", "data", "kwargs", "lc", "id", "messages"]
_KEYS += ["values", "input", "output", "items", "call_id", "tool_call_id", "tool_use_id", "tool_calls"]
_KEYS += ["invalid_tool_calls", "name", "tool_name", "args", "arguments", "is_error", "status", "outcome"]
_KEYS += ["retry", "action", "error", "results", "outputs", "text", "event", "trajectory"]
_KEYS += ["message", "payload", "isMeta", "isSidechain", "command", "cmd", "timestamp", "record_type"]
_WORDS = ["function_call", "function_call_output", "shell_call_output", "mcp_call", "file_search_call"]
_WORDS += ["tool_use", "tool_result", "web_search_tool_result", "assistant", "user", "ai", "tool", "human"]
_WORDS += ["request", "response", "tool-call", "tool-return", "retry-prompt", "text", "failed", "error"]
_WORDS += ["response_item", "session_meta", "local_shell_call", "custom_tool_call", "shell", "Bash"]
_WORDS += ["Exit code 1\nboom", "Exit code: 2\nOutput:\nx", '{"output": "x", "metadata": {"exit_code": 3}}']
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(_WORDS),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None, print_blob=True)  # a failure prints how to replay it
@given(data=_JSON)
def test_the_tool_calling_formats_answer_any_json_with_a_result_or_a_trace_error(data: Any) -> None:
    """sniff never raises; actions give actions a trace line accepts, or a TraceError, never another error."""
    for name in ("openai-responses", "anthropic", "pydantic-ai", "langchain", "claude-code", "codex"):
        assert FORMATS[name].sniff(data) in (True, False)
        try:
            found = load_actions(Path("x.json"), data, name)
        except TraceError:
            continue
        for one in found:
            TraceAction.model_validate(one)
