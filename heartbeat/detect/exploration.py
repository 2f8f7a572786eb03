"""An exploration: a flat stretch of the metric whose every look brought something not seen before.

A coding agent reads file after file before its first fix, runs a test that fails anew after each
edit, tries one command after another: its metric is flat, yet each step answered something new.
That is a search, not busy work, and ``no_progress`` (about a busy agent) spares it. One call asked
anew each time with only its numbers moving (a crawl storing nothing), the very same act again,
or an answer heard before, is busy work and stays judged.
Pure: a live Monitor and a replay agree.
"""

from __future__ import annotations

from collections import Counter

from .detectors.calls import silent_by_design
from .detectors.contract import ActionView

__all__ = ["explored", "noted"]


def noted(action: ActionView) -> bool:
    """Whether ``action`` wrote or acted and did not fail."""
    return action.error is None and silent_by_design(action.tool, action.summary)


def explored(first: int, heartbeats: list[list[ActionView]], samples: int, kept: list[ActionView]) -> bool:
    """Whether the flat stretch of ``no_progress``'s N ``samples`` (its first sample's heartbeat
    ``first``, the actions of each heartbeat after it, ``heartbeats``) of ``kept`` is steps of a
    search (see :func:`.idle.exploring`)."""
    seen: set[str | None] = set()
    done: set[str] = set()
    looked = acted = False
    for action in kept:
        answer = action.result or action.failure
        if action.tick <= first:
            seen.add(answer)
            if noted(action):
                done.add(action.fingerprint)
        elif noted(action):
            # An act's answer is its acknowledgement, the same each time: no news and no repeat.
            # Doing the very same act again is a repeat; one that failed may be tried again.
            if action.fingerprint in done:
                return False
            done.add(action.fingerprint)
            acted = True
        elif answer is None or answer in seen:
            return False
        else:
            seen.add(answer)
            looked = True
    # One call asked anew each time, only its numbers moving (a crawl fetching page after page,
    # storing nothing), is the busy work the metric judges; a search reads, runs and edits. Two
    # actions a sample or more, it only reads, and no one call is most of it: a coding agent reading
    # file after file before its first fix. Acts at that pace with the metric flat are busy work (a
    # calendar proposing meetings none confirms), and so is paging one file back and forth.
    shapes = Counter(action.shape for heartbeat in heartbeats for action in heartbeat)
    if sum(shapes.values()) >= 2 * samples:
        return looked and not acted and 2 * max(shapes.values()) <= sum(shapes.values())
    return looked and len(shapes) > 1
