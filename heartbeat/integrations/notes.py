"""What a Session hands its callers once: instructions no caller has seen, and who wrote them."""

from __future__ import annotations

__all__ = ["Note"]


class Note(str):
    """Instructions handed over once (a ``str``): a person's ``heartbeat resume --note`` when
    ``by_person``, else the policy's recovery text a decision made before this process left."""

    __slots__ = ("by_person",)
    by_person: bool

    def __new__(cls, text: str, *, by_person: bool) -> Note:
        """``text`` as a Note, by a person or by the policy."""
        note = super().__new__(cls, text)
        note.by_person = by_person
        return note
