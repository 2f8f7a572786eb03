"""What every notifier shares: the :class:`Notifier` protocol and its message helpers."""

from __future__ import annotations

from typing import Protocol

from ..core.models import Notification, clip

__all__ = ["MAX_ANSWER", "Notifier", "one_line"]

# Of a webhook's answer or a command's stderr only this much is read: its first words are quoted.
MAX_ANSWER = 4096


def one_line(text: str, limit: int = 120) -> str:
    """Whitespace collapsed and cut to ``limit`` characters."""
    return clip(" ".join(text.split()), limit) or ""


class Notifier(Protocol):
    """Delivers notifications somewhere a human looks."""

    @property
    def name(self) -> str:
        """The notifier's name in the config; outbox entries refer to it."""
        ...

    def send(self, message: Notification) -> None:
        """Deliver ``message`` or raise NotifyError (whose text holds no URL path or token)."""
        ...
