"""The dead man's switches pinged around one tick (the ``ping`` notifier's tables whose URL is set).

The pings themselves are :class:`heartbeat.notify.ping.PingNotifier`'s; this
module runs them around a heartbeat's tick (:class:`~heartbeat.tick.agent.Agent`),
and is imported only when a ``ping`` table is configured.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from ..base.errors import NotifyError
from ..config.notify import PingNotifierConfig
from ..core.result import TickResult
from ..notify.ping import PingNotifier
from .control import interrupted_message
from .watchdog import TickInterrupted

if TYPE_CHECKING:
    from .agent import Agent

__all__ = ["ABANDONED_PING_SECONDS", "PingRound"]

ABANDONED_PING_SECONDS = 1.0
"""How long an abandoned tick waits for its fail pings: KILL must still end the process promptly."""


class PingRound:
    """The dead man's switches pinged around one tick: the ``ping`` tables whose URL is set."""

    def __init__(self, configs: Sequence[Any]) -> None:
        # A ping whose ${ENV} URL is not set is skipped here; the tick itself says why.
        self.pings = [
            PingNotifier(c.name, c.url, timeout=c.timeout.total_seconds(), fail_on=frozenset(c.fail_on))
            for c in configs
            if isinstance(c, PingNotifierConfig) and not c.unset_env()
        ]

    def around(self, hb: Agent, tick: Callable[[], TickResult]) -> TickResult:
        """Run ``tick``, one heartbeat of ``hb``, between the pings; failed pings join its ``undelivered``."""
        missed = self.start()
        caller = hb.on_abandon
        abandoned: list[TickResult] = []

        def on_abandon(result: TickResult) -> None:
            # KILL abandoned a step that does not return, and the caller may end the process
            # at once: the dead man's switch hears of the lost tick now, as a failure.
            abandoned.append(result)
            missed.extend(self.abandoned(result.exit_code, result.message))
            result.undelivered += [hb.redact(error) for error in dict.fromkeys(missed)]
            if caller is not None:
                caller(result)

        hb.on_abandon = on_abandon
        try:
            result = tick()
        except TickInterrupted as exc:
            # SIGTERM/SIGINT ended the tick (its work unsaved, or saved as it delivered): a failure
            # (128 + the signal), pinged before the caller exits, or the check would wait for an end
            # that never comes.
            self.abandoned(128 + exc.signum, interrupted_message(hb, str(exc)))
            raise
        finally:
            hb.on_abandon = caller
        if any(result is done for done in abandoned):
            return result  # pinged already, from the watchdog thread
        missed += self.finish(result.exit_code, result.message)
        result.undelivered += [hb.redact(error) for error in dict.fromkeys(missed)]
        return result

    def start(self) -> list[str]:
        """Ping every start; the failures as lines."""
        return [error for error in (_quietly(p.start) for p in self.pings) if error]

    def finish(self, exit_code: int, message: str) -> list[str]:
        """Ping every end with the tick's exit code; the failures as lines."""
        found = (_quietly(partial(p.finish, exit_code, message)) for p in self.pings)
        return [error for error in found if error]

    def abandoned(self, exit_code: int, message: str, *, within: float = ABANDONED_PING_SECONDS) -> list[str]:
        """The step was abandoned: ping every ``URL/<exit code>`` at once, waiting ``within`` s at most.

        Called from the watchdog thread just before the process may end, so the pings run
        side by side and a slow service costs the stop no more than ``within`` seconds.
        """
        errors: dict[int, str | None] = {}

        def one(i: int, ping: PingNotifier) -> None:
            errors[i] = _quietly(partial(ping.fail, exit_code, message))

        threads = [
            threading.Thread(target=one, args=(i, p), name=f"ping:{p.name}", daemon=True)
            for i, p in enumerate(self.pings)
        ]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + within
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        lines = []
        for i, ping in enumerate(self.pings):
            if i not in errors:  # still waiting for the service: the process will not
                lines.append(f"notifier {ping.name}: fail ping not answered within {within:g} s")
            elif errors[i]:
                lines.append(str(errors[i]))
        return lines


def _quietly(call: Callable[[], None]) -> str | None:
    """Run one ping; its failure as a line, never an exception (a ping must not fail a tick)."""
    try:
        call()
    except NotifyError as exc:
        return str(exc)
    return None
