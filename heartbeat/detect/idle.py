"""An idle wake-up: a heartbeat that looked for work, found none and did nothing.

A scheduled agent wakes, checks its inbox, queue or feed, finds nothing and
sleeps: the same round every quiet heartbeat, the metric flat because no work
came. Its calls look like a loop and its flat metric like no progress, yet it
did its job. What tells it from a stuck agent is the heartbeat as a whole: it
only looked (no act, no write, no failure, no call twice), and a source it had
looked at in an earlier heartbeat answered nothing (an empty list, an envelope
around nothing, "no results"; silence is a shell gone dark, not an answer). A
stuck agent does, fails, or asks the same thing again within a heartbeat; new
searches finding nothing ask something new each time and are no re-check.
Pure: a live Monitor and a replay agree.
"""

from __future__ import annotations

from collections.abc import Iterable

from .detectors.calls import silent_by_design
from .detectors.contract import ActionView
from .detectors.empty import is_empty_answer

__all__ = ["idle_wakeup"]


def idle_wakeup(kept: Iterable[ActionView], tick: int) -> bool:
    """Whether the actions of heartbeat ``tick`` (the newest of ``kept``) are an idle wake-up."""
    actions = list(kept)
    first = len(actions)
    while first and actions[first - 1].tick == tick:
        first -= 1
    if first == len(actions):
        return False  # no action: nothing looked at
    earlier = {action.fingerprint for action in actions[:first]}
    seen: set[str] = set()
    rechecked = False
    for action in actions[first:]:
        if action.error is not None or action.fingerprint in seen:
            return False
        if silent_by_design(action.tool, action.summary):
            return False  # it wrote or acted: work, not a look
        seen.add(action.fingerprint)
        # A source looked at before answered nothing: no work came. Silence (no output, as for
        # the empty detector) is no such answer: a shell gone dark answers every command so.
        if (
            action.fingerprint in earlier
            and action.output_len
            and is_empty_answer(action.output_len, action.result)
        ):
            rechecked = True
    return rechecked
