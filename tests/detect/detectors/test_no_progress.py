"""``no_progress``: the progress metric stays flat over the last N samples."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from heartbeat.base.errors import ConfigError
from heartbeat.core.models import Anomaly
from heartbeat.detect.detectors import History, NoProgress

from .helpers import T0, samples


def _flat(values: Iterable[float | None], detector: NoProgress | None = None) -> list[Anomaly | None]:
    det = detector or NoProgress()
    progress = samples(values)
    return [det.check(History(progress=progress[: i + 1]), T0) for i in range(len(progress))]


def test_flat_metric_for_four_heartbeats_trips_no_progress() -> None:
    """The same value four heartbeats running trips no_progress, naming the value."""
    found = _flat([3, 3, 3, 3])
    assert found[:3] == [None] * 3
    anomaly = found[3]
    assert anomaly is not None and anomaly.kind == "no_progress" and anomaly.action is None
    assert "stayed at 3 for the last 4 heartbeats" in anomaly.message
    assert anomaly.evidence["value"] == 3


def test_small_moves_are_still_no_progress_and_real_moves_are_not() -> None:
    """A spread under min_delta is flat; a spread of min_delta is progress."""
    assert _flat([1.0, 1.002, 1.004, 1.001, 1.003])[-1] is not None
    assert _flat([1.0, 1.0, 1.0, 1.01])[-1] is None


def test_failed_measurements_are_left_out() -> None:
    """Samples without a value neither count nor trip the detector."""
    found = _flat([2, None, 2, 2, None, 2])
    assert found[4] is None and found[5] is not None


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: NoProgress(min_delta=float("nan")), "min_delta"),
        (lambda: NoProgress(samples=1), "no_progress: samples must be an integer between 2"),
        (lambda: NoProgress(min_delta=-0.1), "min_delta must be a finite number"),
        (lambda: NoProgress(min_delta=float("inf")), "min_delta"),
        (lambda: NoProgress(min_delta=True), "min_delta"),
    ],
)
def test_bad_parameters_are_config_errors(make: Any, words: str) -> None:
    """A detector refuses parameters that could never work, naming the parameter."""
    with pytest.raises(ConfigError, match=words):
        make()


def test_a_small_move_is_named_with_its_range() -> None:
    """A metric that moved a little says how little, between what, where it is now, and what is needed."""
    anomaly = _flat([1.0, 1.002, 1.004, 1.001, 1.003])[-1]
    assert anomaly is not None
    assert anomaly.message == (
        "progress moved only 0.003 over the last 4 heartbeats (between 1.001 and 1.004, now 1.003); "
        "it must move by at least 0.01"
    )
    assert anomaly.evidence["min"] == 1.001 and anomaly.evidence["max"] == 1.004
    assert anomaly.evidence["samples"] == 4 and anomaly.evidence["min_delta"] == 0.01


def test_the_number_of_samples_and_the_delta_are_the_configured_ones() -> None:
    """samples=3 fires at the third flat sample; min_delta=0 never fires, as no spread is below it."""
    found = _flat([7, 7, 7], NoProgress(samples=3))
    assert found[:2] == [None, None] and found[2] is not None and found[2].evidence["samples"] == 3
    assert _flat([7] * 8, NoProgress(min_delta=0)) == [None] * 8
    assert _flat([1, 2, 3, 4, 4.5, 4.6], NoProgress(samples=3, min_delta=1))[-1] is not None


def test_only_the_newest_sample_can_report() -> None:
    """A failed measurement after a flat stretch reports nothing: it is not a sample of the metric."""
    found = _flat([3, 3, 3, 3, 3, None])
    assert found[4] is not None and found[5] is None
