"""``cycle``: long, noisy cycles and wandering back to calls and results already seen."""

from __future__ import annotations

from heartbeat.detectors import Cycle

from .helpers import Call, actions, first


def test_a_long_cycle_is_a_cycle() -> None:
    """Twelve different steps, done twice: no strict loop fits, the revisits do."""
    steps: list[Call] = [
        {"tool": f"t{k % 4}", "args": {"arg": f"value-{chr(97 + k)}"}, "output": f"answer {chr(97 + k)} " * 3}
        for k in range(12)
    ]
    hit = first(Cycle(), actions(steps * 2))
    assert hit is not None and hit[0] == 22
    assert "went back to a call and result already seen" in hit[1].message
