"""``no_progress``: the progress metric stays flat over the last N samples."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from heartbeat.base.errors import ConfigError
from heartbeat.core.models import Anomaly
from heartbeat.detect.detectors import History, NoProgress
from heartbeat.detect.detectors.no_progress import novelty

from .helpers import T0, Call, actions, samples


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


def _anew(calls: list[Call]) -> bool:
    """``novelty``'s verdict on a metric flat at 3 over heartbeats 1-4, ``calls`` dicts with ticks
    (a tick after 1 is in the flat stretch; tick 1's calls are what the run had seen)."""
    progress = samples([3, 3, 3, 3])
    found = NoProgress().check(History(progress=progress), T0)
    assert found is not None
    verdict = novelty(NoProgress(), found, actions(calls), progress).evidence["anew"]
    assert isinstance(verdict, bool)
    return verdict


def _call(tool: str, tick: int, output: str | None = None, error: str | None = None, **args: Any) -> Call:
    return {"tool": tool, "args": args, "output": output, "error": error, "tick": tick}


def test_a_hard_middle_answers_anew_and_a_wanderer_or_a_countdown_does_not() -> None:
    """Looks answering anew from several calls (a new file, a new failure, a new match) are new
    results; acts are left out (a wanderer's edits each answered anew), and so is a countdown read
    from one call; looks answered as before bring nothing new."""
    names = ("round", "coerce", "format")
    failures = ["NameError: name 'unit' is not defined", "TypeError: unsupported operand", "KeyError: 'ms'"]
    seen = [_call("read_file", 1, "def parse(value):", path="src/parse.py")]
    hard = [
        *seen,
        *(
            call
            for tick, (name, failure) in enumerate(zip(names, failures, strict=True), 2)
            for call in (
                _call("read_file", tick, f"def {name}(value, unit):", path=f"src/{name}.py"),
                _call("edit_file", tick, "ok", path=f"src/{name}.py"),
                _call("run_tests", tick, error=f"FAILED test_timedelta - {failure}", path="tests"),
            )
        ),
    ]
    assert _anew(hard)
    words = [("fast", "quick"), ("big", "large"), ("end", "finish")]
    wanderer = [
        _call("edit", t, f"replaced '{a}' with '{b}' for style", old=a, new=b)
        for t, (a, b) in enumerate(words, 2)
    ]
    assert not _anew(seen + wanderer)
    countdown = [
        _call("tls.check_expiry", t, f"{45 - t} days left; nothing due", host="api") for t in (1, 2, 3, 4)
    ]
    assert not _anew(countdown)
    again = [_call("read_file", t, "def parse(value):", path="src/parse.py") for t in (2, 3, 4)]
    assert not _anew(seen + again + [_call("grep", 4, "src/x.py: parse", pattern="parse")])


def test_novelty_leaves_other_findings_alone() -> None:
    """Only ``no_progress``'s finding gets ``anew``; another detector's is returned as it came."""
    progress = samples([3, 3, 3, 3])
    found = NoProgress().check(History(progress=progress), T0)
    assert found is not None
    assert novelty(object(), found, [], progress) is found
