"""The detector contract: detectors and plain functions, the shared bounds and helpers, the repr."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from heartbeat.base.errors import ConfigError
from heartbeat.config.file import DetectorsConfig
from heartbeat.core.models import Anomaly
from heartbeat.detect.detectors import (
    Cycle,
    Detector,
    Empty,
    ErrorRate,
    FunctionDetector,
    History,
    Loop,
    NearRepeat,
    NoProgress,
    Recurring,
    RecurringError,
    Repeat,
    as_detector,
)
from heartbeat.detect.detectors.contract import tail_of, times, tool_limits

from .helpers import T0, actions, samples


def test_a_plain_function_is_accepted_as_a_detector() -> None:
    """A callable is wrapped; its name becomes the detector's kind."""

    def too_costly(history: History, now: datetime) -> Anomaly | None:
        return None

    wrapped = as_detector(too_costly)
    assert isinstance(wrapped, FunctionDetector) and wrapped.kind == "too_costly"
    assert wrapped.check(History(), T0) is None
    with pytest.raises(TypeError, match="not a detector"):
        as_detector(42)


def test_detectors_have_a_useful_repr_and_hash() -> None:
    """The repr shows the parameters; equal detectors hash equal."""
    assert repr(Loop(window=8)) == "Loop(window=8, repeats=2, exempt=frozenset())"
    assert "tools={'get_status': 10}" in repr(Repeat(tools={"get_status": 10}))
    assert hash(Repeat(tools={"a": 5})) == hash(Repeat(tools={"a": 5}))


def test_config_and_detectors_share_one_copy_of_the_bounds() -> None:
    """Every whole-number bound the config enforces is the one the detector enforces."""
    from pydantic import ValidationError

    from heartbeat.config.file import DETECTOR_BOUNDS

    makers: dict[str, Any] = {
        "repeat.threshold": lambda v: Repeat(threshold=v),
        "loop.window": lambda v: Loop(window=v),
        "loop.repeats": lambda v: Loop(repeats=v, window=max(4, 2 * v)),
        "empty.threshold": lambda v: Empty(threshold=v),
        "error_rate.window": lambda v: ErrorRate(window=v),
        "near_repeat.threshold": lambda v: NearRepeat(threshold=v, window=max(v, 2)),
        "recurring.window": lambda v: Recurring(threshold=2, window=v),
        "recurring_error.threshold": lambda v: RecurringError(threshold=v, window=max(v, 2)),
        "cycle.window": lambda v: Cycle(threshold=2, window=v),
        "no_progress.samples": lambda v: NoProgress(samples=v),
    }
    for key, make in makers.items():
        low, high = DETECTOR_BOUNDS[key]
        section, name = key.split(".")
        make(low)
        with pytest.raises(
            ConfigError, match=f"{section}: {name} must be an integer between {low} and {high}"
        ):
            make(low - 1)
        with pytest.raises(ValidationError):
            DetectorsConfig.model_validate({section: {name: low - 1}})
        DetectorsConfig.model_validate({section: {name: low}})


def _bound_makers() -> dict[str, Any]:
    """A detector built with one parameter set to ``v`` (the others made to fit), per bounded key."""
    return {
        "repeat.threshold": lambda v: Repeat(threshold=v),
        "repeat.tools": lambda v: Repeat(tools={"get_status": v}),
        "loop.window": lambda v: Loop(window=v),
        "loop.repeats": lambda v: Loop(repeats=v, window=max(4, 2 * v)),
        "empty.threshold": lambda v: Empty(threshold=v),
        "empty.max_chars": lambda v: Empty(max_chars=v),
        "error_rate.window": lambda v: ErrorRate(window=v),
        "near_repeat.threshold": lambda v: NearRepeat(threshold=v, window=max(v, 2)),
        "near_repeat.window": lambda v: NearRepeat(threshold=2, window=v),
        "recurring.threshold": lambda v: Recurring(threshold=v, window=max(v, 2)),
        "recurring.window": lambda v: Recurring(threshold=2, window=v),
        "recurring.min_chars": lambda v: Recurring(min_chars=v),
        "recurring_error.threshold": lambda v: RecurringError(threshold=v, window=max(v, 2)),
        "recurring_error.window": lambda v: RecurringError(threshold=2, window=v),
        "cycle.threshold": lambda v: Cycle(threshold=v, window=max(v + 1, 3)),
        "cycle.window": lambda v: Cycle(threshold=2, window=v),
        "no_progress.samples": lambda v: NoProgress(samples=v),
    }


def test_every_bound_is_enforced_by_its_detector_at_both_ends() -> None:
    """Each key of DETECTOR_BOUNDS: its lowest and highest values build, one past either is a ConfigError."""
    from heartbeat.config.file import DETECTOR_BOUNDS

    makers = _bound_makers()
    assert set(makers) == set(DETECTOR_BOUNDS)
    for key, make in makers.items():
        low, high = DETECTOR_BOUNDS[key]
        section, name = key.split(".")
        words = f"{section}: {name}.* must be an integer between"
        make(low)
        with pytest.raises(ConfigError, match=words):
            make(low - 1)
        with pytest.raises(ConfigError, match=words):
            make(high + 1)
        make(high)


def test_a_per_tool_threshold_out_of_bounds_is_refused_when_the_detectors_are_built() -> None:
    """The config takes any whole number per tool; building the detectors refuses one below 2, by name."""
    from heartbeat.detect.detectors import build_detectors

    cfg = DetectorsConfig.model_validate({"repeat": {"tools": {"get_status": 1}}})
    with pytest.raises(ConfigError, match=r"repeat: tools\.get_status must be an integer between 2"):
        build_detectors(cfg)


def test_an_object_with_check_but_no_kind_is_refused() -> None:
    """A check method alone is not enough: the anomaly kind must be named."""

    class NoKind:
        def check(self, history: History, now: datetime) -> Anomaly | None:
            return None

    with pytest.raises(TypeError, match="no 'kind' text"):
        as_detector(NoKind())


def test_a_detector_is_used_as_is_and_a_function_keeps_its_kind_and_scope() -> None:
    """An object with kind and check is returned itself; a function's ``kind`` and ``scope`` are read."""
    repeat = Repeat()
    assert as_detector(repeat) is repeat

    def flat(history: History, now: datetime) -> Anomaly | None:
        return None

    flat.kind = "flat_metric"  # type: ignore[attr-defined]
    flat.scope = "progress"  # type: ignore[attr-defined]
    wrapped = as_detector(flat)
    assert isinstance(wrapped, FunctionDetector)
    assert wrapped.kind == "flat_metric" and wrapped.scope == "progress"
    assert as_detector(lambda h, n: None).scope == "action"  # type: ignore[attr-defined]


BUILT_INS = [Repeat, Loop, Empty, ErrorRate, NearRepeat, Recurring, RecurringError, Cycle, NoProgress]


@pytest.mark.parametrize("cls", BUILT_INS, ids=lambda cls: cls.__name__)
def test_every_built_in_is_a_detector_that_says_nothing_about_an_empty_history(cls: type) -> None:
    """Each built-in meets the Detector protocol and returns None when there is nothing to look at."""
    detector = cls()
    assert isinstance(detector, Detector)
    assert detector.check(History(tick=3), T0) is None


def test_an_anomaly_needs_a_timezone_aware_time() -> None:
    """A naive ``now`` is refused rather than written into an anomaly that cannot be ordered."""
    records = actions([("search", {"q": "x"})] * 3)
    naive = datetime(2024, 1, 1, 12, 0)
    assert Repeat().check(History(records, tick=1), T0) is not None
    with pytest.raises(ValueError, match="timezone-aware"):
        Repeat().check(History(records, tick=1), naive)
    with pytest.raises(ValueError, match="timezone-aware"):
        NoProgress(samples=2).check(History(progress=samples([1, 1]), tick=2), naive)


def test_tail_of_keeps_the_newest_actions_that_are_not_exempt_oldest_first() -> None:
    """What a tracker is seeded from: the last n actions, exempt tools skipped, in order."""
    records = actions([("a", None), ("log", None), ("b", None), ("log", None), ("c", None)])
    assert [a.tool for a in tail_of(records, 2, {"log"})] == ["b", "c"]
    assert [a.tool for a in tail_of(records, 9, {"log"})] == ["a", "b", "c"]
    assert [a.tool for a in tail_of(records, 2, ())] == ["log", "c"]
    assert tail_of(records, 0, ()) == []


def test_counts_are_written_as_words_a_person_reads() -> None:
    """Messages say once, twice, then N times."""
    assert [times(n) for n in (1, 2, 3, 12)] == ["once", "twice", "3 times", "12 times"]


def test_per_tool_limits_are_never_below_the_detectors_own_threshold() -> None:
    """A tool's repeat threshold gives it room in the windowed detectors; "off" leaves it out."""
    limits = tool_limits("near_repeat", 12, {"a": 3, "b": "off", "c": 20})
    assert limits == {"a": 12, "b": None, "c": 20}
    with pytest.raises(ConfigError, match=r"repeat: tools\.d must be an integer"):
        tool_limits("near_repeat", 12, {"d": "sometimes"})
