"""The progress metric as evidence: a rise overrules findings of "no visible effect".

A detector that sees the same kind of call again and again (``repeat``,
``near_repeat``, ``recurring``, ``cycle``, ``loop``, ``empty``,
``recurring_error``, ``error_rate``) guesses from the calls' shape that they
have no effect. When the agent's own metric rose within the stretch of
actions the detector looks at, that guess is wrong: the work had an effect
(a queue worker polling an empty queue three times between the messages it
processes). Each such detector declares its ``stretch``, the newest actions
a finding speaks for; ``no_progress`` (the metric itself) declares none and
stands whatever the metric does. Pure functions of the kept samples and actions, so a live
Monitor and one seeded from the saved state (or a replay) agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Reversible, Sequence
from typing import Protocol

from ..core.models import Anomaly, ProgressSample, rose_at

__all__ = ["last_rise", "made_of", "overruled", "standing"]


class _Indexed(Protocol):
    @property
    def index(self) -> int: ...
    @property
    def tick(self) -> int: ...


def last_rise(samples: Iterable[ProgressSample], actions: Reversible[_Indexed]) -> int:
    """The newest kept action the metric's last rise speaks for; 0 when no kept sample rose.

    A sample rose when its value is above every measured one before it. It was
    taken after the actions of its tick: the newest kept action of that tick
    or earlier is the last one the rise speaks for.
    """
    rose = rose_at(samples)
    if rose is not None:
        for action in reversed(actions):
            if action.tick <= rose:
                return action.index
    return 0


def overruled(stretch: int | None, index: int, rise: int) -> bool:
    """Whether a finding at action ``index`` whose detector looks at the last ``stretch``
    actions (None: a kind the metric never overrules) holds an action from before the rise."""
    return stretch is not None and rise > 0 and index - stretch < rise


def standing(
    found: Sequence[Anomaly], stretch: Mapping[str, int], rise: int, idle: bool = False, quiet: int = 0
) -> list[Anomaly]:
    """The findings of ``found`` a rise speaking for the actions up to ``rise`` leaves standing:
    a kind with a ``stretch`` (its detector's counting window) is overruled at an action whose
    stretch holds one from before the rise; in an ``idle`` or quiet wake-up (see :mod:`.idle`),
    always. A quiet wake-up just before, whose last action (or last re-poll hearing nothing again,
    see :func:`.idle.quiet_before`) is ``quiet``, speaks for its looks as a rise does; for answers
    of nothing (``empty``) only up to ``quiet``: more of them to other asks are a search in vain."""
    return [
        a
        for a in found
        if not (idle and a.kind in stretch)
        and (a.action is None or not overruled(stretch.get(a.kind), a.action, rise))
        and (not quiet or a.action is None or not _after(a, stretch, quiet))
    ]


def _after(anomaly: Anomaly, stretch: Mapping[str, int], quiet: int) -> bool:
    """Whether a quiet wake-up ending at action ``quiet`` speaks for ``anomaly`` (see :func:`standing`)."""
    at, kind = anomaly.action or 0, anomaly.kind
    return at <= quiet if kind == "empty" and kind in stretch else overruled(stretch.get(kind), at, quiet)


# Where a built-in finding's evidence says how many actions its pattern holds.
_SIZES = ("count", "actions", "messages", "retold", "redone", "promises")


def made_of(anomaly: Anomaly) -> int:
    """How many actions a finding's pattern holds at least: its count of calls or its span (a
    cycle's revisits and the calls they went back to); 0 when its evidence says none."""
    evidence = anomaly.evidence
    sizes: list[int] = [value for key in _SIZES if (value := evidence.get(key)).__class__ is int]
    revisits, distinct = evidence.get("revisits"), evidence.get("distinct")
    if revisits.__class__ is int and distinct.__class__ is int:
        sizes.append(revisits + distinct)
    return max(sizes, default=0)
