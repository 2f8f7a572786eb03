"""The framework examples run offline as documented: stuck, stopped or redirected, recovered."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from heartbeat.config.file import load_config
from heartbeat.integrations.session import Session
from heartbeat.tick.runner import Heartbeat

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "frameworks"
NOTE = "Loops show up as the same fingerprint at the tail of the history."


def example(name: str) -> Any:
    """The example module (its folder on sys.path, as heartbeat's step loader puts it)."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    return importlib.import_module(name)


def ticks(config: str, folder: Path, n: int) -> list[Any]:
    """``n`` heartbeats of an example's config, its state and KILL file moved to ``folder``."""
    settings = load_config(EXAMPLES / config).with_agent(
        state_dir=str(folder / "state"), kill_file=str(folder / "KILL")
    )
    heartbeat = Heartbeat(settings)
    return [heartbeat.tick() for _ in range(n)]


def test_langgraph_example_is_stopped_then_recovers_at_the_next_heartbeat(tmp_path: Path) -> None:
    """Heartbeat 1 stopped at the repeat (instructions saved), 2 reads them and saves a note, 3 idles."""
    first, second, third = ticks("langgraph.toml", tmp_path, 3)
    assert first.actions == 3 and [a.kind for a in first.anomalies] == ["repeat"]
    assert first.decision is not None and first.decision.action == "try_alternative"
    assert second.actions == 2 and second.progress == 1.0 and second.decision is not None
    assert second.decision.action == "continue"
    assert third.actions == 0 and third.exit_code == 0


@pytest.mark.parametrize("config", ["openai_agents.toml", "pydantic_ai.toml"])
def test_redirecting_examples_recover_within_the_first_heartbeat(config: str, tmp_path: Path) -> None:
    """The stuck call is answered with the instructions: the same run reads, saves a note and ends.

    Its metric rose from the one measured before the step (no note, 0) to 1 as the step returned: the
    repeat it was redirected from no longer stands, and no recovery is sent to an agent that recovered.
    """
    first, second = ticks(config, tmp_path, 2)
    assert first.actions == 5 and first.progress == 1.0
    journal = [json.loads(line) for line in (tmp_path / "state" / "journal.jsonl").read_text().splitlines()]
    searches = [e["summary"] for e in journal if e["event"] == "action" and e["tool"] == "search"]
    assert len(searches) == 3 and len(set(searches)) == 1  # the repeat it was redirected from
    assert first.anomalies == [] and first.decision is not None and first.decision.action == "continue"
    assert second.actions == 0 and second.decision is not None and second.decision.action == "continue"


@pytest.mark.parametrize(
    ("module", "config"),
    [("langgraph_agent", "langgraph.toml"), ("openai_agents_agent", "openai_agents.toml")],
)
def test_standalone_runs_on_a_state_folder(module: str, config: str, tmp_path: Path) -> None:
    """What main() does, on a state folder in tmp: the runs end with a note, the folder holds the actions."""
    agent = example(module)
    notes: list[str] = []
    with Session.from_files(
        EXAMPLES / config, state_dir=tmp_path / "live", kill_file=tmp_path / "KILL"
    ) as session:
        answers = [agent.run(session, session.instructions, notes) for _ in range(2)]
    assert "I saved my note." in answers and notes == [NOTE]
    assert (tmp_path / "live" / "state.json").exists()


def test_pydantic_ai_standalone_main_uses_a_monitor(capsys: pytest.CaptureFixture[str]) -> None:
    """main() with a bare Monitor: redirected mid-run, recovers, the repeat is reported; no files written."""
    before = sorted(EXAMPLES.rglob("*"))
    example("pydantic_ai_agent").main()
    out = capsys.readouterr().out
    assert "run: I saved my note." in out and "called 3 times in a row" in out
    assert sorted(p for p in EXAMPLES.rglob("*") if "__pycache__" not in p.parts) == [
        p for p in before if "__pycache__" not in p.parts
    ]
