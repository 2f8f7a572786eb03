"""One ``Stopped``: the session's and the adapters' are one class with one meaning."""

from __future__ import annotations

import heartbeat.integrations
import heartbeat.integrations.session
from heartbeat.integrations.stops import Stop, Stopped


def test_one_stopped_for_sessions_and_adapters() -> None:
    """``heartbeat.integrations.session.Stopped`` and ``heartbeat.integrations.Stopped`` are one class."""
    assert heartbeat.integrations.session.Stopped is Stopped
    assert heartbeat.integrations.Stopped is Stopped


def test_stopped_from_a_stop_and_from_a_cause_say_the_same() -> None:
    """Built from a Session's Stop or from an adapter's cause: cause, reason, exit code and stop agree."""
    waiting = Stopped(Stop("needs_human", "see ESCALATION.md", 4))
    assert (waiting.cause, waiting.reason, waiting.exit_code) == ("needs_human", "see ESCALATION.md", 4)
    spent = Stopped("budget", "budget: 1200 tokens today, limit 1000")
    assert spent.stop == Stop("budget", "budget: 1200 tokens today, limit 1000", 0)  # paused, as `tick`
    assert spent.cause == "budget" and "(budget)" in str(spent)
    assert Stopped("killed", "KILL file present").exit_code == 3
