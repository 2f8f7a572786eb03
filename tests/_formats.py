"""Shared by the import-format tests: write a history, replay it in a real process, check detection.

:func:`existing_samples` holds one sample per format that was there
before the tool-calling formats, so each new format's tests can show that
its sniffer claims none of them and that they still detect as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import spawn_heartbeat
from replay.test_trace import mini_swe_agent_traj, openai_messages, swe_agent_traj

from heartbeat.formats import FORMATS
from heartbeat.replay.trace import load_any


def write(path: Path, data: Any) -> Path:
    """Write ``data`` as JSON to ``path``, indented as the frameworks' dumps often are."""
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def claimed_by(data: Any) -> list[str]:
    """Every format whose sniffer accepts ``data`` (one name: no collision)."""
    return [name for name, module in FORMATS.items() if module.sniff(data)]


def otlp_export() -> dict[str, Any]:
    """An OTLP/JSON export with one GenAI tool span, as the Collector's file exporter writes it."""
    span = {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": "eee19b7ec3c1b174",
        "name": "execute_tool search",
        "endTimeUnixNano": "1700000000000000000",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
            {"key": "gen_ai.tool.name", "value": {"stringValue": "search"}},
        ],
    }
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


def existing_samples() -> dict[str, Any]:
    """One sample per format that existed before the tool-calling ones, by the name it detects as."""
    journal = [{"event": "action", "tool": "search", "summary": "search(q)", "output_len": 3, "error": None}]
    return {
        "journal": journal,
        "swe-agent": swe_agent_traj(2),
        "mini-swe-agent": mini_swe_agent_traj(),
        "openai": openai_messages(),
        "otlp": otlp_export(),
    }


def assert_no_collision(name: str, sample: Any) -> None:
    """Only ``name`` claims ``sample``, and ``name`` claims none of the other formats' samples."""
    assert claimed_by(sample) == [name]
    for other, data in existing_samples().items():
        assert claimed_by(data) == [other], other
    for trace in sorted((Path(__file__).parent / "traces").glob("*.jsonl")):
        try:
            rows = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines() if line]
        except ValueError:
            continue  # a deliberately broken trace
        assert not FORMATS[name].sniff(rows), trace.name
    for odd in (None, 0, "x", [], {}, [1, "a", None], {"messages": 3}, [{"type": 5, "data": []}]):
        assert FORMATS[name].sniff(odd) is False


def replay_cli(cwd: Path, path: Path, *flags: str) -> list[dict[str, Any]]:
    """``heartbeat replay PATH --json FLAGS`` in a real process: its rows (it must exit 0)."""
    done = spawn_heartbeat(cwd, "replay", str(path), "--json", *flags)
    out, err = done.communicate(timeout=60)
    assert done.returncode == 0, err
    return [json.loads(line) for line in out.splitlines()]


def refused_by_cli(cwd: Path, path: Path, *flags: str) -> str:
    """``heartbeat replay PATH FLAGS`` in a real process that must fail: its one line on stderr."""
    done = spawn_heartbeat(cwd, "replay", str(path), *flags)
    out, err = done.communicate(timeout=60)
    assert done.returncode == 2, (out, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err.strip()


def kinds(rows: list[dict[str, Any]]) -> list[str]:
    """The anomaly kinds of ``replay --json`` rows, in order."""
    return [a["kind"] for row in rows for a in row["anomalies"]]


def action_count(path: Path, fmt: str | None = None) -> int:
    """How many actions the file holds, read as a heartbeat replay reads it."""
    _, lines = load_any(path, fmt=fmt)
    return sum(len(line.actions) for _, line in lines)
