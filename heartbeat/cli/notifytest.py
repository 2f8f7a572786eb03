"""``heartbeat notify --test``: one test message through every configured notifier.

A ``ping`` notifier gets a success ping (a test must not page anyone); every
other notifier gets a message of kind ``test`` that says where it came from.
Nothing goes to the outbox: a failure is reported, not retried.
"""

from __future__ import annotations

import socket
from datetime import datetime
from typing import TYPE_CHECKING

from ..base.errors import NotifyError, UsageError
from ..core.models import Notification

if TYPE_CHECKING:
    from ..tick.runner import Heartbeat

__all__ = ["send_test"]


def send_test(hb: Heartbeat, now: datetime) -> list[tuple[str, str | None]]:
    """Send the test through each notifier of ``hb``: ``(notifier name, error or None)`` each."""
    notifiers = hb.notifiers()
    if not notifiers:
        raise UsageError(
            f"{hb.name}: no notifiers configured: add a [[notify]] table (or give --webhook URL)"
        )
    host = socket.gethostname()
    text = (
        f"heartbeat: test message for agent '{hb.name}' from {host}. "
        "If you can read this, escalations will reach you here."
    )
    note = Notification(
        key=f"{hb.name}-test-{now.strftime('%Y%m%dT%H%M%S')}",
        kind="test",
        agent=hb.name,
        reason="test message (heartbeat notify --test)",
        text=text,
        created_at=now,
        payload={"host": host},
    )
    results: list[tuple[str, str | None]] = []
    for notifier in notifiers:
        try:
            finish = getattr(notifier, "finish", None)
            if callable(finish):  # a dead man's switch: a success ping, never a page
                finish(0, text)
            else:
                notifier.send(note)
        except NotifyError as exc:
            results.append((notifier.name, hb.redact(str(exc))))
        else:
            results.append((notifier.name, None))
    return results
