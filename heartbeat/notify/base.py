"""What every notifier shares: the :class:`Notifier` protocol and its message helpers."""

from __future__ import annotations

from typing import Protocol

from ..base.credential_text import mask_credential_text
from ..core.models import Notification, clip, printable

__all__ = ["MAX_ANSWER", "Notifier", "one_line"]

# Of a webhook's answer or a command's stderr only this much is read: its first words are quoted.
MAX_ANSWER = 4096


def one_line(text: str, limit: int = 120) -> str:
    """A notifier's answer as it is quoted: whitespace collapsed, credentials masked, control
    characters escaped, cut to ``limit`` characters."""
    # Whoever answers (a webhook echoing its request, a command's stderr) chose these bytes: they are
    # kept in outbox/ and shown by `heartbeat outbox`, tick output and the journal. Masked before it
    # is cut: a token cut in half would no longer be recognised.
    return clip(printable(mask_credential_text(" ".join(text.split()))), limit) or ""


class Notifier(Protocol):
    """Delivers notifications somewhere a human looks."""

    @property
    def name(self) -> str:
        """The notifier's name in the config; outbox entries refer to it."""
        ...

    def send(self, message: Notification) -> None:
        """Deliver ``message`` or raise NotifyError (whose text holds no URL path or token)."""
        ...
