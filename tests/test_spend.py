"""Spend: model tokens and dollars from each framework's own test model, and budgets that stop a run.

Every agent here (``_spend_agents``) makes model calls of 120 tokens each
(100 in, 40 of them cached, 20 out), one search per call. With
``tokens_per_day = 250`` the third call goes past the limit and the run is
stopped before the fourth: one call over is the most a run spends.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _spend_agents import CACHED, INPUT, OUTPUT, SOURCES

ROOT = Path(__file__).resolve().parent.parent
PER_CALL = INPUT + OUTPUT
LIMIT = 250
STOPPED_AFTER = LIMIT // PER_CALL + 1  # the call that goes past the limit is the last one made


def project(root: Path, framework: str, budget: str) -> Path:
    """A project: ``spend_agent.py`` for ``framework``, a heartbeat.toml with ``budget``, a file notifier."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "spend_agent.py").write_text(SOURCES[framework], encoding="utf-8")
    config = root / "heartbeat.toml"
    config.write_text(
        '[agent]\nname = "spender"\nstep = "spend_agent:step"\nstate_dir = "state"\nkill_file = "KILL"\n\n'
        f"[budget]\n{budget}\n\n"
        '[[notify]]\ntype = "file"\nname = "file"\npath = "notes.jsonl"\n',
        encoding="utf-8",
    )
    return config


def heartbeat(root: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m heartbeat ARGV`` in ``root`` (a real process; this tree and the agent importable)."""
    path = os.pathsep.join([str(root), str(ROOT), os.environ.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "heartbeat", *argv],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": path, **env},
    )


def load_agent(root: Path, framework: str) -> ModuleType:
    """The project's agent module, imported in this process."""
    spec = importlib.util.spec_from_file_location(f"spend_agent_{framework}", root / "spend_agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def saved(root: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads((root / "state" / "state.json").read_text())
    return state


def notes(root: Path) -> list[dict[str, Any]]:
    path = root / "notes.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def journal(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / "state" / "journal.jsonl").read_text().splitlines()]


def genai_price(calls: int) -> float:
    """genai-prices' own price of ``calls`` of our calls on gpt-4o-mini."""
    from genai_prices import Usage, calc_price

    usage = Usage(input_tokens=INPUT, output_tokens=OUTPUT, cache_read_tokens=CACHED)
    return calls * float(calc_price(usage, "gpt-4o-mini").total_price)


@pytest.mark.parametrize("framework", sorted(SOURCES))
def test_tokens_per_day_stops_a_heartbeat_tick_mid_run(tmp_path: Path, framework: str) -> None:
    """Inside `heartbeat tick` (bound to ctx): stopped with cause budget one call past the limit, paused,
    notified; `status --json` shows today's tokens by model."""
    project(tmp_path, framework, f"tokens_per_day = {LIMIT}")
    tick = heartbeat(tmp_path, "tick")
    assert tick.returncode == 0, tick.stderr
    assert "paused: budget:" in tick.stdout
    state = saved(tmp_path)
    assert state["data"]["run"] == {
        "cause": "budget",
        "model_calls": STOPPED_AFTER,
        "tools": STOPPED_AFTER - 1,
    }
    assert state["status"] == "paused" and "tokens today, limit 250" in state["status_reason"]
    assert [n["kind"] for n in notes(tmp_path)] == ["budget"]
    status = heartbeat(tmp_path, "status", "--json")
    assert status.returncode == 0, status.stderr
    spend = json.loads(status.stdout)["spend"]
    assert spend["tokens"] == STOPPED_AFTER * PER_CALL
    assert spend["limits"] == {"tokens_per_day": LIMIT}
    used = spend["models"]["gpt-4o-mini"]
    assert (used["calls"], used["input"], used["output"], used["cached"]) == (
        STOPPED_AFTER,
        STOPPED_AFTER * INPUT,
        STOPPED_AFTER * OUTPUT,
        STOPPED_AFTER * CACHED,
    )
    assert used["cost"] == pytest.approx(genai_price(STOPPED_AFTER)) and not used["unpriced"]
    # Model calls are spend, not actions: the journal holds the searches and one spend event.
    events = journal(tmp_path)
    assert [e["tool"] for e in events if e["event"] == "action"] == ["search"] * (STOPPED_AFTER - 1)
    [spent] = [e for e in events if e["event"] == "spend"]
    assert (
        spent["tokens"] == STOPPED_AFTER * PER_CALL
        and spent["models"]["gpt-4o-mini"]["calls"] == STOPPED_AFTER
    )
    # The next tick does not call the step: the agent stays paused.
    assert heartbeat(tmp_path, "tick").returncode == 0
    assert saved(tmp_path)["ticks"] == 1


@pytest.mark.parametrize("framework", sorted(SOURCES))
def test_tokens_per_day_stops_a_run_bound_to_a_state_folder(tmp_path: Path, framework: str) -> None:
    """Bound to a state folder (a Session): the same stop, pause and notification."""
    config = project(tmp_path, framework, f"tokens_per_day = {LIMIT}")
    result = load_agent(tmp_path, framework).run(str(config))
    assert result == {"cause": "budget", "model_calls": STOPPED_AFTER, "tools": STOPPED_AFTER - 1}
    state = saved(tmp_path)
    assert state["status"] == "paused" and state["budget"]["tokens"] == STOPPED_AFTER * PER_CALL
    assert [n["kind"] for n in notes(tmp_path)] == ["budget"]
    assert state["spend_totals"]["gpt-4o-mini"]["calls"] == STOPPED_AFTER


@pytest.mark.parametrize("framework", sorted(SOURCES))
def test_cost_per_day_in_dollars_matches_genai_prices(tmp_path: Path, framework: str) -> None:
    """cost_per_day works in dollars: stopped at the call that goes past it, at genai-prices' own price."""
    limit = genai_price(1) * 2.5
    config = project(tmp_path, framework, f"cost_per_day = {limit!r}")
    result = load_agent(tmp_path, framework).run(str(config))
    assert result["cause"] == "budget" and result["model_calls"] == 3
    state = saved(tmp_path)
    assert state["status"] == "paused" and "cost" in state["status_reason"]
    assert state["budget"]["cost"] == pytest.approx(genai_price(3))
