"""Words: what a call or a failure says, as the detectors compare them.

A word is two letters or more (:data:`WORD`): numbers, one-letter names,
argument names and command flags say nothing of what was asked or what
failed. A failure's words are kept in its record as digests
(:func:`failure_words`), never as text: the journal keeps the record.
"""

from __future__ import annotations

import re
import zlib
from functools import lru_cache

__all__ = ["WORD", "failure_words", "word_print"]

# A word of two letters or more that is no argument's name ("q":) and no command's flag (-rn).
WORD = re.compile(r'(?<![^\W_])(?<!-)[^\W\d_]{2,}(?![\w"]*":)')


def word_print(word: str) -> str:
    """A word as a failure key holds it: 4 hex characters of its CRC-32 (a handful of words never collide)."""
    return f"{zlib.crc32(word.encode('utf-8', 'surrogatepass')) & 0xFFFF:04x}"


@lru_cache(maxsize=1024)
def failure_words(text: str) -> str:
    """The failure key of a failure's text: the prints of its words (:data:`WORD`), sorted, spaced."""
    return " ".join(sorted({word_print(word) for word in WORD.findall(text.lower())}))
