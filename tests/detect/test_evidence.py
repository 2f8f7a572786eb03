"""The progress metric as evidence: where it last rose, and which findings that overrules."""

from __future__ import annotations

from datetime import UTC, datetime

from heartbeat.config.file import DetectorsConfig
from heartbeat.core.models import ProgressSample
from heartbeat.detect.detectors import build_detectors
from heartbeat.detect.evidence import last_rise, made_of, overruled
from heartbeat.detect.monitor import Monitor
from heartbeat.testing import action

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _samples(values: list[float | None]) -> list[ProgressSample]:
    return [ProgressSample(tick=tick, at=T0, value=value) for tick, value in enumerate(values, 1)]


def test_the_last_rise_speaks_for_the_actions_up_to_its_tick() -> None:
    """Ticks of 2 actions; the metric rose at tick 3 and then stayed: actions 1..6 had an effect."""
    actions = [action("t", {"i": i}, index=i, tick=(i + 1) // 2) for i in range(1, 11)]
    assert last_rise(_samples([0, 0, 1, 1, 1]), actions) == 6
    assert last_rise(_samples([0, 1, None, 2]), actions) == 8  # an unmeasured sample is skipped
    assert last_rise(_samples([3, 3, 2, 2]), actions) == 0  # falling is no rise
    assert last_rise(_samples([5]), actions) == 0  # one sample cannot rise
    assert last_rise(_samples([0, 1]), []) == 0  # no kept action to speak for
    # a new high: a metric that dips and comes back has not moved on (a noisy, flat one)
    assert last_rise(_samples([0, 5, 3, 5, 4, 5]), actions) == 4
    assert last_rise(_samples([0, 5, 3, 6]), actions) == 8


def test_a_finding_is_overruled_while_its_stretch_holds_an_action_from_before_the_rise() -> None:
    """A window of 15 at action 20 reaches back to action 6: a rise at 6 overrules, at 5 not."""
    assert overruled(15, 20, 6) and not overruled(15, 20, 5)
    assert not overruled(None, 20, 19)  # no_progress is never overruled
    assert not overruled(15, 20, 0)  # no rise


def test_each_detector_of_no_visible_effect_declares_the_stretch_its_findings_speak_for() -> None:
    """repeat: its N calls; empty: its longest run; the others their window; no_progress none."""
    stretch = {d.kind: getattr(d, "stretch", None) for d in build_detectors(DetectorsConfig())}
    assert stretch == {
        "repeat": 3,
        "loop": 20,
        "near_repeat": 15,
        "recurring": 30,
        "recurring_error": 10,
        "cycle": 30,
        "empty": 5,
        "error_rate": 10,
        "no_progress": None,
    }


def test_a_finding_says_how_many_actions_its_pattern_holds() -> None:
    """A finding is made of its counted calls, its loop's span, or a cycle's revisits and the calls
    they went back to: a wake-up with fewer actions of its own tripped on its wake-ups before."""
    monitor = Monitor()
    monitor.start_tick(1)
    now = datetime(2026, 12, 5, tzinfo=UTC)
    found = [monitor.record("search", {"q": "x"}, output="3 hits", now=now) for _ in range(3)]
    repeat = found[-1]
    assert repeat is not None and repeat.kind == "repeat" and made_of(repeat) == 3
    monitor.start_tick(2)
    kinds = {}
    for _ in range(3):
        for page in (1, 2):
            hit = monitor.record("read", {"page": page}, output=f"page {page} of the report", now=now)
            if hit is not None:
                kinds[hit.kind] = hit
    loop = kinds["loop"]
    assert made_of(loop) == loop.evidence["actions"] >= 4
    assert made_of(repeat.model_copy(update={"evidence": {"revisits": 10, "distinct": 4}})) == 14
    assert made_of(repeat.model_copy(update={"evidence": {}})) == 0
