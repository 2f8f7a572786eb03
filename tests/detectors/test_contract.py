"""The detector contract: plain functions as detectors, the shared bounds, the dataclasses' repr."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from heartbeat.config import DetectorsConfig
from heartbeat.detectors import (
    Cycle,
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
from heartbeat.errors import ConfigError
from heartbeat.models import Anomaly

from .helpers import T0


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

    from heartbeat.config import DETECTOR_BOUNDS

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
