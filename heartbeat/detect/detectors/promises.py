"""Promises: a message to a person saying an act is under way, or about to be done.

"I'm processing your return now", "I'll cancel it right away", "your cancellation is being
processed", "I'll enable roaming on your line now": the agent tells the person it acts. Said
once before the act, it is work announced; said again and again with nothing done between, it
is a promise never kept (``cycle``). A promise is the first person with an act's verb ("I'm
processing", "I'll cancel", "let me submit", "I'm on it"), or any verb the agent says it does
at once ("I'm turning on roaming for your line now", "I'll activate it right away"), or the act
"being processed", "in progress", "will be enabled shortly". Asking leave or asking anything
(a question mark, "please confirm", "shall I", "would you like") is no promise yet, nor are the
steps the person is told to take ("tap Settings") or a draft the agent writes for them ("I'm
writing to ask...").
"""

from __future__ import annotations

import re

__all__ = ["asks", "promises"]

_A = "['\u2019]"  # an apostrophe, straight or curly
_ACT = (
    r"(?:process|cancel|submit|complete|finali[sz]e|initiate|handle|take\s+care\s+of|issue|place|file"
    r"|book|refund|make\s+sure|modify|change|update|exchange|return|send|apply|reschedule)"
)
_ACTING = (
    r"(?:processing|cancell?ing|submitting|finali[sz]ing|completing|initiating|handling|working\s+on"
    r"|taking\s+care\s+of|making\s+sure|modifying|changing|updating|exchanging|returning|issuing"
    r"|placing|filing|booking|refunding|sending|applying|rescheduling|proceeding|going\s+ahead)"
)
_DONE = (
    r"(?:processed|submitted|cancell?ed|handled|finali[sz]ed|completed|initiated|issued|updated"
    r"|refunded|applied|modified|changed|exchanged|returned|placed|filed|booked|sent)"
)
_SOON = (
    r"(?:now|right\s+away|right\s+now|immediately|shortly|in\s+a\s+moment|one\s+moment"
    r"|at\s+this\s+moment|as\s+we\s+speak)"
)
_I_AM = rf"(?:i{_A}?m|i\s+am|we{_A}?re|we\s+are)\s+(?:now\s+|currently\s+|still\s+|just\s+)?"
_I_WILL = rf"(?:i{_A}ll|i\s+will|we{_A}ll|we\s+will|let\s+me)\s+(?:now\s+|just\s+|immediately\s+)?"
_PROMISE = re.compile(
    # an act's verb, at once or not
    rf"\b{_I_AM}(?:{_ACTING}|going\s+to\s+(?:go\s+ahead\s+and\s+|proceed\s+(?:with|to)\s+)?{_ACT}|on\s+it)\b"
    rf"|\b{_I_WILL}(?:go\s+ahead\s+and\s+|proceed\s+(?:with|to)\s+)?{_ACT}\b"
    rf"|\b(?:is|are)\s+(?:now\s+)?(?:being\s+{_DONE}|in\s+progress)\b"
    rf"|^\W*{_ACTING}\b"
    # any verb, said to be done at once in the same sentence ("let me know" and "I'll need" are asks)
    rf"|\b{_I_AM}(?!going\b)\w+ing\b[^.!?\n]*\b{_SOON}\b"
    rf"|\b{_I_WILL}(?!know\b|need\b|wait\b|be\b|have\b|let\b)\w+\b[^.!?\n]*\b{_SOON}\b"
    rf"|\b(?:will|should)\s+be\s+\w+ed\s+{_SOON}\b"
    rf"|\bwhich\s+i{_A}?m\s+doing\s+now\b",
    re.IGNORECASE,
)
_ASKS = re.compile(r"\?|\b(?:confirm|yes/no|shall\s+i|would\s+you\s+like|do\s+you\s+want)\b", re.IGNORECASE)


def promises(message: str) -> bool:
    """Whether ``message`` (a message to a person) says an act is under way or about to be done,
    asking nothing."""
    return _ASKS.search(message) is None and _PROMISE.search(message) is not None


def asks(message: str) -> bool:
    """Whether ``message`` (a message to a person) asks them anything."""
    return _ASKS.search(message) is not None
