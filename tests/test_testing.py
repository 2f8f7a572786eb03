"""heartbeat.testing: the helpers users test their own agents and detectors with."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from heartbeat.detect.detectors import NoProgress, Repeat
from heartbeat.testing import EPOCH, FakeClock, action, history, make_heartbeat, run_ticks
from heartbeat.tick.context import StepContext


def repeater(ctx: StepContext) -> None:
    for _ in range(3):
        if ctx.record("search", {"q": "same"}, output="the same long page"):
            return


def test_run_ticks_returns_each_result(tmp_path: Path) -> None:
    """run_ticks runs real heartbeats over tmp_path/state and returns their results in order."""
    results = run_ticks(repeater, tmp_path, ticks=3)
    # The second tick repeats the very call the first one's recovery named: a human is called.
    assert [r.decision.action for r in results if r.decision] == ["try_alternative", "escalate"]
    assert (tmp_path / "state" / "state.json").exists()


def test_a_relative_folder_holds_the_state_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``folder/state`` for a relative folder too: its state was written to ``folder/folder/state``
    (the config resolved the already-joined path against the folder again; live round 47)."""
    monkeypatch.chdir(tmp_path)
    run_ticks(lambda ctx: None, Path("sub/x"), ticks=1)
    assert (tmp_path / "sub/x/state/state.json").is_file()
    assert not (tmp_path / "sub/x/sub").exists()


def test_config_keywords_reach_the_heartbeat(tmp_path: Path) -> None:
    """Config keys given as keyword arguments change the heartbeat's behaviour."""
    results = run_ticks(repeater, tmp_path, ticks=1, policy={"escalate_after": 1})
    assert results[0].exit_code == 4


def test_fake_clock_drives_the_tick_time(tmp_path: Path) -> None:
    """A FakeClock moved by hand is the time the state records."""
    clock = FakeClock(datetime(2026, 3, 1, tzinfo=UTC))
    hb = make_heartbeat(lambda ctx: None, tmp_path, clock=clock)
    hb.tick()
    clock.advance(timedelta(hours=2))
    hb.tick()
    assert hb.read_state().last_tick_at == datetime(2026, 3, 1, 2, tzinfo=UTC)


def test_fake_clock_refuses_naive_time() -> None:
    """Naive datetimes are refused: heartbeat keeps UTC."""
    with pytest.raises(ValueError, match="timezone"):
        FakeClock(datetime(2026, 3, 1))


def test_history_feeds_detectors() -> None:
    """history() builds what a detector's check() takes, actions and progress alike."""
    assert Repeat().check(history(("a", {"x": 1}), ("a", {"x": 1}), ("a", {"x": 1})), EPOCH) is not None
    assert Repeat().check(history(("a", {"x": 1}), ("a", {"x": 2}), ("a", {"x": 1})), EPOCH) is None
    assert NoProgress().check(history(progress=[2, 2, 2, 2, 2]), EPOCH) is not None


def test_action_matches_the_recorder() -> None:
    """action() fingerprints like the recorder: same tool and args, same fingerprint."""
    assert action("t", {"a": 1, "b": 2}).fingerprint == action("t", {"b": 2, "a": 1}).fingerprint
    assert action("t", {"a": 1}).fingerprint != action("t", {"a": 2}).fingerprint
    assert action("t", output="  hi  ").output_len == 2
