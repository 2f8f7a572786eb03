"""Who settles a step's calls: its tick when it returns, or a stop that will not wait for it.

A step is the agent's code and may not return: KILL abandons it (the
watchdog's thread), and a SIGTERM it swallows ends the process without it.
Its tick then saves nothing, yet the calls it made ran. :class:`StepGuard` is
where the parties meet, under one lock: whether the step returned, whether a
stop took it first (its result), and what of its calls the journal and
``state.json`` hold already (:class:`Accounted`), so each is accounted for
once (:func:`heartbeat.tick.late.account_step`). The tick under way keeps its
guard on its heartbeat (``stepping``) until its save keeps the calls.

Once saved, a tick that delivers its notifications may be stopped too (a
webhook that never answers, then KILL or a signal): :class:`Closing` writes its
last journal lines once, from the tick or from the stop, whichever comes first.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core.models import ModelSpend

if TYPE_CHECKING:
    from ..core.result import TickResult
    from .context import StepContext

__all__ = ["Accounted", "Closing", "StepGuard"]


@dataclass(frozen=True)
class Accounted:
    """What of a step's calls the journal and ``state.json`` hold already (see ``account_step``)."""

    actions: int = 0
    usage: dict[str, ModelSpend] = field(default_factory=dict)
    cost: float = 0.0


class StepGuard:
    """Who settles a step: the tick when it returns, or the stop that took it (KILL, a signal)."""

    __slots__ = ("accounted", "ctx", "lock", "result", "returned", "tick", "why")

    def __init__(self, tick: int) -> None:
        self.lock = threading.Lock()
        self.tick = tick
        self.returned = False
        self.result: TickResult | None = None  # set by a stop that took the step: the tick's result
        self.why = "killed"  # what took it, as its calls are marked (after_stop)
        self.ctx: StepContext | None = None  # the step's, once made: its calls outlive an abandoned tick
        self.accounted: Accounted | None = None  # what of them the journal and state.json hold already


class Closing:
    """A saved tick's last journal lines (what it delivered, then its ``tick`` event), written once:
    after its delivery, or by a stop (KILL, SIGTERM, SIGINT) that ends the tick while it delivers."""

    def __init__(self, write: Callable[[], None]) -> None:
        self._write = write
        self._lock = threading.Lock()
        self._done = False

    def __call__(self) -> None:
        """Write them, unless they were written already (from any thread)."""
        with self._lock:
            done, self._done = self._done, True
        if not done:
            self._write()
