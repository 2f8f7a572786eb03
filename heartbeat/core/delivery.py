"""What one delivery from the outbox did: :class:`DeliveryReport` (no outbox needed to read one)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["SET_ASIDE", "DeliveryReport"]

SET_ASIDE = "outbox entry "
"""How a line of :meth:`DeliveryReport.undelivered` about an unreadable entry begins: no notification
waits for it (it was set aside), unlike a failed send."""


@dataclass
class DeliveryReport:
    """What an outbox delivery did; the CLI prints it, the journal records it."""

    delivered: list[str] = field(default_factory=list)
    """``"<key> to <notifier>"`` for each successful send."""
    failed: list[tuple[str, str]] = field(default_factory=list)
    """``(notifier name, redacted reason)`` for each failed send."""
    waiting: int = 0
    """Entries this call left in the outbox (failed now, not yet due, or notifier gone)."""
    corrupt: list[str] = field(default_factory=list)
    """Outbox files that could not be read and were moved aside as ``<name>.corrupt``."""
    busy: bool = False
    """Nothing was tried: another process was delivering from this outbox right then."""

    def undelivered(self) -> list[str]:
        """One line per failed send or unreadable entry, as the journal's ``delivery`` event keeps them."""
        lines = [f"{name}: {error}" for name, error in self.failed]
        return lines + [f"{SET_ASIDE}{name} was unreadable; set aside, not sent" for name in self.corrupt]

    @property
    def ok(self) -> bool:
        """True when nothing failed and nothing was corrupt."""
        return not self.failed and not self.corrupt

    def summary(self) -> str:
        """One line for a human, or "" when there was nothing to report."""
        parts = []
        if self.delivered:
            parts.append(f"{len(self.delivered)} delivered")
        if self.failed:
            failures = "; ".join(f"{name}: {error}" for name, error in self.failed)
            parts.append(f"{len(self.failed)} failed ({failures})")
        if self.waiting:
            parts.append(f"{self.waiting} waiting in the outbox")
        if self.corrupt:
            parts.append(f"{len(self.corrupt)} corrupt outbox file(s) moved aside")
        return ("notifications: " + ", ".join(parts)) if parts else ""
