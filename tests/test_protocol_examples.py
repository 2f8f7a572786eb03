"""The MCP and OpenTelemetry examples, each run from a clean copy as the README says to run them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LEFTOVERS = shutil.ignore_patterns("state", "KILL", "spans.jsonl", "trace.jsonl", "calls.log", "__pycache__")


def run(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEARTBEAT_")}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=180, check=False)


def copy(name: str, tmp_path: Path) -> Path:
    dest = tmp_path / name
    shutil.copytree(REPO / "examples" / name, dest, ignore=LEFTOVERS)
    return dest


def test_mcp_example_client_is_redirected_then_escalated(tmp_path: Path) -> None:
    folder = copy("mcp", tmp_path)
    done = run(sys.executable, "client.py", cwd=folder)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line[:1].isdigit()]
    assert [line.rsplit("-> ", 1)[1] for line in lines] == ["ok"] * 4 + ["ERROR"] * 4
    assert "you look stuck (recovery attempt 1" in done.stdout
    assert "waiting for a human" in done.stdout
    status = run(sys.executable, "-m", "heartbeat", "status", "--state-dir", "state", "--json", cwd=folder)
    assert status.returncode == 4 and json.loads(status.stdout)["status"] == "needs_human"
    config = json.loads((folder / "claude_desktop_config.json").read_text())
    args = config["mcpServers"]["library"]["args"]
    assert (
        config["mcpServers"]["library"]["command"] == "heartbeat" and args[0] == "mcp-proxy" and "--" in args
    )


def test_otel_example_records_spans_and_its_export_replays_the_same(tmp_path: Path) -> None:
    folder = copy("otel", tmp_path)
    done = run(sys.executable, "otel_agent.py", cwd=folder)
    assert done.returncode == 0, done.stderr
    assert "run 2: 3 tool call(s); repeat" in done.stdout and "Do not repeat: search" in done.stdout
    state = json.loads((folder / "state" / "state.json").read_text())
    assert state["ticks"] == 3 and state["actions_total"] == 7
    replayed = run(sys.executable, "-m", "heartbeat", "replay", "spans.jsonl", "--json", cwd=folder)
    assert replayed.returncode == 0, replayed.stderr
    ticks = [json.loads(line) for line in replayed.stdout.splitlines()]
    assert [[(a["kind"], a["action"]) for a in t["anomalies"]] for t in ticks] == [[], [("repeat", 5)], []]
    named = run(
        sys.executable, "-m", "heartbeat", "replay", "spans.jsonl", "--format", "otlp", "--json", cwd=folder
    )
    assert named.stdout == replayed.stdout
    assert [a["kind"] for a in state["anomalies"]] == ["repeat"] and state["anomalies"][0]["action"] == 5
    bad = run(sys.executable, "-m", "heartbeat", "replay", "state/state.json", "--format", "otlp", cwd=folder)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "resourceSpans" in bad.stderr, bad.stderr
