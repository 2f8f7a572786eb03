"""``cycle``: long, noisy cycles and wandering back to calls and results already seen."""

from __future__ import annotations

from typing import Any

import pytest

from heartbeat.base.errors import ConfigError
from heartbeat.detect.detectors import Cycle

from .helpers import Call, actions, first, trips


def test_a_long_cycle_is_a_cycle() -> None:
    """Twelve different steps, done twice: no strict loop fits, the revisits do."""
    steps: list[Call] = [
        {"tool": f"t{k % 4}", "args": {"arg": f"value-{chr(97 + k)}"}, "output": f"answer {chr(97 + k)} " * 3}
        for k in range(12)
    ]
    hit = first(Cycle(), actions(steps * 2))
    assert hit is not None and hit[0] == 22
    assert "went back to a call and result already seen" in hit[1].message


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: Cycle(threshold=1), "cycle: threshold must be an integer between 2"),
        (lambda: Cycle(threshold=10, window=10), "cycle: window must be an integer between 11"),
        (lambda: Cycle(threshold=2, window=2), "window"),
        (lambda: Cycle(window=30.0), "window"),  # type: ignore[arg-type]
    ],
)
def test_bad_parameters_are_config_errors(make: Any, words: str) -> None:
    """A detector refuses parameters that could never work, naming the parameter."""
    with pytest.raises(ConfigError, match=words):
        make()


def _round(n: int) -> list[Call]:
    """``n`` different steps, each a call with an answer of its own."""
    return [
        {"tool": f"t{k % 4}", "args": {"arg": f"value-{chr(97 + k)}"}, "output": f"answer {chr(97 + k)} " * 3}
        for k in range(n)
    ]


def test_the_message_counts_the_revisits_and_the_calls_revisited() -> None:
    """How many actions went back, to how many different calls, within how many actions."""
    hit = first(Cycle(), actions(_round(12) * 2))
    assert hit is not None
    anomaly = hit[1]
    assert anomaly.message.startswith(
        "10 of the last 22 actions went back to a call and result already seen "
        "(10 different ones, not back to back): going round in circles; last: t1("
    )
    assert anomaly.evidence["revisits"] == 10 and anomaly.evidence["distinct"] == 10
    assert anomaly.evidence["window"] == 30 and anomaly.evidence["threshold"] == 10


def test_one_call_again_and_again_is_not_a_cycle() -> None:
    """Revisits of a single call are repeat's or recurring's; new calls all the way are work."""
    same: list[Call] = [{"tool": "get", "args": {"id": 1}, "output": "the same answer"}] * 30
    assert trips(Cycle(), actions(same)) == [None] * 30
    assert trips(Cycle(), actions(_round(26))) == [None] * 26


def test_a_new_action_does_not_fire_even_in_a_window_full_of_revisits() -> None:
    """Only an action that is itself a revisit can report: the one that moves on to something new cannot."""
    calls = [
        *(_round(12) * 2)[:22],
        {"tool": "fresh", "args": {"arg": "new"}, "output": "something new here"},
    ]
    found = trips(Cycle(), actions(calls))
    assert found[21] is not None and found[22] is None


def test_exempt_tools_are_invisible_to_cycle() -> None:
    """An exempt tool's revisits are not counted (three of the twelve steps left out: nine revisits)."""
    records = actions(_round(12) * 2)
    assert first(Cycle(), records) is not None
    assert trips(Cycle(exempt={"t0"}), records) == [None] * 24
