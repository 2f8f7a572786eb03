"""bench/synthetic_agents.py: valid traces, replayed, reproducible; at the default seed, the README's
figures (no healthy run flagged, every stuck twin flagged after its onset)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from heartbeat.replay.trace import load_trace

SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "synthetic_agents.py"


@pytest.fixture(scope="module")
def synthetic() -> ModuleType:
    spec = importlib.util.spec_from_file_location("synthetic_agents", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def test_every_kind_writes_valid_traces_that_replay(synthetic: ModuleType, tmp_path: Path) -> None:
    """Two healthy runs and the stuck twins of every kind: valid trace files, each replayed to a summary."""
    outcomes = synthetic.run_all(7, 2, 5, tmp_path)
    kinds = synthetic.KINDS
    assert len(outcomes) == len(kinds) * (2 + synthetic.STUCK_TWINS)
    assert {o.run.kind.name for o in outcomes} == {k.name for k in kinds}
    for o in outcomes:
        lines = load_trace(o.file)  # a bad line raises TraceError
        raw = [json.loads(text) for text in o.file.read_text().splitlines()]
        per = 1 if o.run.kind.single else 5
        assert [len(line.actions) for _, line in lines] == [len(r["actions"]) for r in raw]
        assert all(0 < len(r["actions"]) <= per for r in raw)
        assert sum(len(r["actions"]) for r in raw) == len(o.run.tape) >= 5
        assert raw[0]["_kind"] == o.run.kind.name and raw[0]["_run"] == o.file.stem
        progress = [r["progress"] for r in raw]
        if o.run.kind.metric is None:
            assert progress == [None] * len(raw)
        else:
            assert all(isinstance(p, float) for p in progress)
            assert progress == sorted(progress)  # a count of work done never goes down
        if o.run.healthy:
            assert "_onset" not in raw[0]
        else:
            assert 1 <= raw[0]["_onset"] <= len(o.run.tape)
        assert o.summary.error is None
        assert o.summary.actions == len(o.run.tape) and o.summary.ticks == len(raw)


def test_a_seed_gives_the_same_bytes_and_per_heartbeat_only_regroups(
    synthetic: ModuleType, tmp_path: Path
) -> None:
    kinds = tuple(k for k in synthetic.KINDS if k.name in ("pager", "swe", "airline"))
    first = synthetic.run_all(11, 2, 5, tmp_path / "a", kinds)
    again = synthetic.run_all(11, 2, 5, tmp_path / "b", kinds)
    wide = synthetic.run_all(11, 2, 10, tmp_path / "c", kinds)
    other = synthetic.run_all(12, 2, 5, tmp_path / "d", kinds)
    assert [o.file.read_bytes() for o in first] == [o.file.read_bytes() for o in again]
    assert [o.file.read_bytes() for o in first] != [o.file.read_bytes() for o in other]

    def actions(path: Path) -> list[object]:
        return [a for text in path.read_text().splitlines() for a in json.loads(text)["actions"]]

    assert [actions(o.file) for o in first] == [actions(o.file) for o in wide]


def test_the_command_prints_the_seed_and_the_table(
    synthetic: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--seed", "5", "--runs", "1", "--kind", "qa", "--kind", "feed", "--out", str(tmp_path)]
    code = synthetic.main(args)
    out = capsys.readouterr().out
    assert code == 0
    assert "seed 5" in out
    assert "healthy flagged" in out and "stuck escalated" in out
    assert any(line.startswith("qa ") for line in out.splitlines())
    assert any(line.startswith("feed ") for line in out.splitlines())
    assert len(list(tmp_path.glob("*.jsonl"))) == 2 * (1 + synthetic.STUCK_TWINS)


def test_at_the_default_seed_one_healthy_run_is_flagged_and_every_stuck_twin_is(
    synthetic: ModuleType, tmp_path: Path
) -> None:
    """The README's synthetic figures: one of the 450 healthy runs has an anomaly, none is
    escalated, and each of the 180 stuck twins is flagged after its onset, none before (a telecom
    walkthrough fixing one problem after another once tripped the redone-steps rule). The one is
    an ALFWorld agent taking a kettle from three places it is not, each answered "Nothing
    happens." with no error marked: a failure since the twenty-fourth session, three alike."""
    outcomes = synthetic.run_all(synthetic.DEFAULT_SEED, 30, 5, tmp_path)
    healthy = [o for o in outcomes if o.run.healthy]
    stuck = [o for o in outcomes if not o.run.healthy]
    assert (len(healthy), len(stuck)) == (450, 180)
    assert [o.file.name for o in healthy if o.summary.anomalies] == ["alfworld__healthy_29.jsonl"]
    assert [o.file.name for o in healthy if o.summary.escalated] == []
    assert [o.file.name for o in stuck if not o.flagged or o.flagged_early] == []
