"""Retold: a person's answer saying they had already given what the agent asks for.

"I just told you, it's #W4817420", "Like I said, I don't have it", "YES. For the third
time", "this is the fourth time", "I also said that in my first message", "why do you keep
asking me the same thing??", "Are you even reading my messages?": the person tells the agent
it is asking again what they have answered. Once is a slip, or a person's way of speaking ("as
I mentioned, the LAX flight"); said again and again while nothing new is looked up or done, the
conversation is going round, whatever new words each message asks it in (``cycle``). Only the person's own
words count: the agent's apology ("sorry for asking again") and text a tool reads (a file, an
email body) are not answers to a message.
"""

from __future__ import annotations

import re

__all__ = ["retold"]

_A = "['\u2019]"  # an apostrophe, straight or curly
_I_HAVE = rf"i(?:{_A}ve|\s+have)"
_RETOLD = re.compile(
    # "I just told you", "I've already given it", "I have told you four times"
    rf"\bi(?:{_A}ve|\s+have)?\s+(?:just\s+|already\s+)+"
    r"(?:told|said|gave|given|mentioned|provided|answered|explained|sent|confirmed|shared)\b"
    rf"|\b{_I_HAVE}\s+(?:told|said|given|asked)\s+(?:you|that|this|it)\b"
    r"|\bi\s+told\s+you\b"
    # "like I said"; "as I said", not "as I mentioned", which people say in passing
    r"|\blike\s+i\s+(?:said|told\s+you|mentioned)\b|\bas\s+i\s+(?:said|told\s+you)\b"
    # "for the third time", "this is the fourth time", "that's the second time" (not "the last time")
    rf"|\b(?:for|this\s+is|that{_A}s|that\s+is|that\s+makes)\s+the\s+(?:second|third|fourth|fifth|sixth"
    r"|seventh|eighth|ninth|tenth|umpteenth|\d+(?:nd|rd|th))\s+time\b|\bfor\s+the\s+last\s+time\b"
    # "I also said that in my first message": what they wrote before, pointed at
    r"|\b(?:in|from)\s+my\s+(?:first|last|previous|earlier|original|other)\s+(?:message|reply|answer)\b"
    # "why do you keep asking me the same thing", "you already asked me that"
    r"|\bkeep\s+asking\s+(?:me\s+)?(?:the\s+same|for\s+(?:it|that|this)|again)\b"
    r"|\byou\s+(?:already\s+)?asked\s+(?:me\s+)?(?:that|this|for\s+(?:it|that|this))\s+(?:already|before)\b"
    r"|\byou\s+already\s+asked\b"
    r"|\bare\s+you\s+(?:even\s+)?(?:reading|listening|paying\s+attention)\b"
    r"|\bhow\s+many\s+times\s+(?:do|must|should|have)\s+i\b|\bhow\s+many\s+(?:more\s+)?times\s*(?:\.{2,}|\u2026|[?!]{2,})"
    # "Yes, I said I'm in Lisbon": what they said, pointed at in their answer
    r"|^\W*(?:yes|no|yeah|yep|nope)\b\W*\s*i\s+(?:said|told\s+you)\b"
    r"|\bi\s+said\s+(?:that|so|yes|no|it)\s+(?:already|too|before|twice|again)\b"
    r"|\b(?:twice|(?:two|three|four|five|several|many|\d+)\s+times)\s+(?:now|already)\b"
    # "#W4817420. Again.": the word alone, a sentence of its own; "it's noah@example.com, again.":
    # after a datum given (a digit or an @ in it), not after a thing that happened ("it dropped, again")
    r"|(?:^|[.!?]\s+)again\s*[.!]|[\d@][\w.@#-]*,\s+again\b"
    # "I'm not going to repeat it again", "do I have to repeat myself?"
    rf"|\b(?:not\s+(?:going\s+to|gonna)|won{_A}?t|will\s+not|have\s+to)\s+repeat\s+(?:it|that|this|myself)\b",
    re.IGNORECASE,
)


def retold(answer: str) -> bool:
    """Whether ``answer`` (a person's answer to a message) says they had already said it."""
    return _RETOLD.search(answer) is not None
