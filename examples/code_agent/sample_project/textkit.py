"""textkit: small text helpers, shipped with three bugs for the code agent to fix.

This is the pristine copy. The code agent never edits it: it copies it to
``../workspace/sample_project`` on its first heartbeat and works there.
"""

import re


def slugify(title: str) -> str:
    """'Hello, World!' -> 'hello-world': lower case, words joined by single dashes."""
    return re.sub(r"\s", "-", title.lower())


def word_count(text: str) -> int:
    """The number of words, whatever whitespace separates them."""
    return len(text.split(" "))


def is_palindrome(text: str) -> bool:
    """True if ``text`` reads the same backwards, ignoring case and punctuation."""
    letters = [c.lower() for c in text if c.isalnum()]
    return letters == letters[::-1]


def truncate(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` characters, ending with '…' when it was cut."""
    return text[:width] + "…"
