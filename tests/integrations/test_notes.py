"""A Note: instructions handed over once, and who wrote them."""

from __future__ import annotations

from heartbeat.integrations.notes import Note


def test_a_note_is_its_text_and_says_who_wrote_it() -> None:
    """A Note compares, prints and joins as its text; ``by_person`` tells a person's resume note
    from the policy's recovery text."""
    person = Note("use the archive", by_person=True)
    policy = Note("heartbeat: you look stuck", by_person=False)
    assert person == "use the archive" and f"said: {person}" == "said: use the archive"
    assert person.by_person and not policy.by_person
    assert isinstance(policy, str) and policy.upper() == "HEARTBEAT: YOU LOOK STUCK"
