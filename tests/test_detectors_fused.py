"""The fused step (the default trackers stepped as one) answers exactly as the eight trackers do."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from heartbeat.config import (
    CycleConfig,
    DetectorsConfig,
    EmptyConfig,
    ErrorRateConfig,
    LoopConfig,
    NearRepeatConfig,
    RecurringConfig,
    RecurringErrorConfig,
    RepeatConfig,
)
from heartbeat.detectors import Loop, Repeat
from heartbeat.monitor import Monitor

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class Unfused(Monitor):
    """A Monitor that always calls the trackers one by one."""

    def _fuse(self) -> None:
        self._fused = None


def _config(variant: int) -> DetectorsConfig:
    if variant == 0:
        return DetectorsConfig()
    if variant == 1:  # small windows and thresholds: every kind trips often
        return DetectorsConfig(
            volatile_args=["rid"],
            polling=["poll"],
            repeat=RepeatConfig(threshold=2, tools={"poll": 4, "log": "off"}),
            loop=LoopConfig(window=6, exempt=["log"]),
            empty=EmptyConfig(threshold=2),
            error_rate=ErrorRateConfig(window=3),
            recurring=RecurringConfig(threshold=3, window=8),
            near_repeat=NearRepeatConfig(threshold=3, window=5),
            recurring_error=RecurringErrorConfig(threshold=2, window=4),
            cycle=CycleConfig(threshold=3, window=6),
        )
    return DetectorsConfig(exempt=["log"], loop=LoopConfig(window=40), polling=["poll"])


_steps = st.lists(
    st.tuples(
        st.sampled_from(["search", "read", "poll", "log"]),
        st.sampled_from([None, {"q": 1}, {"q": 2}, {"q": 12, "rid": 3}]),
        # 10 characters: the edge of empty's, recurring's and cycle's "short"
        st.sampled_from([None, "", "0123456789", "a long enough output", "x " * 60 + "1", "x " * 60 + "2"]),
        st.sampled_from([None, None, None, "boom", "bang 7"]),
        st.sampled_from([0] * 12 + [1, 2]),  # 1: a new heartbeat, 2: one re-seeded
    ),
    min_size=20,
    max_size=150,
)


@settings(max_examples=300, deadline=None, print_blob=True)  # a failure prints how to replay it
@given(steps=_steps, variant=st.sampled_from([0, 1, 2]))
def test_fused_step_reports_what_the_trackers_report(steps: list[Any], variant: int) -> None:
    """Every record's answer, every heartbeat's anomalies and the history agree, reseeds included."""
    cfg = _config(variant)
    fused, unfused = Monitor(cfg, tick=1), Unfused(cfg, tick=1)
    assert fused._fused is not None and unfused._fused is None
    tick = 1
    for i, (tool, args, output, error, new_tick) in enumerate(steps):
        if new_tick:
            assert [a.model_dump() for a in fused.tick_anomalies] == [
                a.model_dump() for a in unfused.tick_anomalies
            ]
            tick += 1
            fused.start_tick(tick, reseed=new_tick == 2)
            unfused.start_tick(tick, reseed=new_tick == 2)
            assert fused._fused is not None
        now = T0 + timedelta(seconds=i)
        got = fused.record(tool, args, output=output, error=error, now=now)
        want = unfused.record(tool, args, output=output, error=error, now=now)
        assert (got and got.model_dump()) == (want and want.model_dump())
    assert [a.model_dump() for a in fused.tick_anomalies] == [a.model_dump() for a in unfused.tick_anomalies]
    assert [r.model_dump() for r in fused.history] == [r.model_dump() for r in unfused.history]


def test_only_the_default_trackers_are_fused() -> None:
    """A Monitor with fewer or other detectors steps its trackers one by one."""
    assert Monitor()._fused is not None
    assert Monitor(detectors=[Repeat(), Loop()])._fused is None
    assert Monitor(DetectorsConfig(cycle={"enabled": False}))._fused is None  # type: ignore[arg-type]
