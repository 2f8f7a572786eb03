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

__all__ = [
    "ALIKE",
    "REWORDED",
    "WORD",
    "alike",
    "bare_name",
    "error_words",
    "failure_words",
    "reworded",
    "unbracketed",
    "word_print",
    "words",
]

# A word of two letters or more that is no argument's name ("q":) and no command's flag (-rn).
WORD = re.compile(r'(?<![^\W_])(?<!-)[^\W\d_]{2,}(?![\w"]*":)')
# A path, a file name or a dotted or snake_case name (a test's node id, a module, a URL),
# cut at "::" (pytest's file::test) and at quotes, brackets and spaces.
_THING = re.compile(r"[\w.~-]*(?:/[\w.~-]*)+|[\w-]+\.[^\W\d_]\w*|[^\W\d]\w*_\w+")
_KEY = re.compile(r'"[^"\\]*":')
# A test runner's selection of tests by name (pytest's and unittest's ``-k EXPR``, quoted or not):
# the tests it asks about, kept whole as one place (see reworded()), not words of a question.
_SELECTION = re.compile(r"""(?<!\S)-k[\s=]+(?:(\\?["'])(.+?)\1|([^\s"'\\]+))""")
_RUNNER = re.compile(r"pytest|unittest")


@lru_cache(maxsize=4096)  # a conversation says its words again and again
def word_print(word: str) -> str:
    """A word as a failure key holds it: 4 hex characters of its CRC-32 (a handful of words never collide)."""
    return f"{zlib.crc32(word.encode('utf-8', 'surrogatepass')) & 0xFFFF:04x}"


# A bracketed span: a list of suggestions ("Similar: ['Kate Bush', 'Hounds of Love']"), a test's
# parameters (test_parse[case-1]), a log line's [ERROR] or [Errno 2]. It says which data, not what
# failed: two searches not found with other suggestions fail alike.
_BRACKET = re.compile(r"[\[\]]")


def unbracketed(text: str) -> str:
    """``text`` with its bracketed spans blanked, line by line, nested ones too.

    A line's ``]`` without its ``[`` closes a span opened before the line's start
    (or before a cut: a failure's end is kept cut), so what precedes it is inside
    the span, as is what follows a ``[`` never closed on its line. One pass over
    the brackets: an agent's text may nest them deep.
    """
    kept = []
    for line in text.splitlines():
        if "[" not in line and "]" not in line:
            kept.append(line)
            continue
        parts: list[str] = []
        depth = start = 0
        for bracket in _BRACKET.finditer(line):
            at = bracket.start()
            if bracket.group() == "[":
                if not depth:
                    parts.append(line[start:at])
                depth += 1
            elif depth:
                depth -= 1
                if not depth:
                    parts.append(" ")
                    start = at + 1
            else:  # its "[" lies before the line's start: all so far was inside
                parts = []
                start = at + 1
        if not depth:
            parts.append(line[start:])
        kept.append("".join(parts))
    return "\n".join(kept)


def _unbracketed_words(text: str) -> list[str]:
    """The words (:data:`WORD`) of a failure's text outside brackets, lower case."""
    return WORD.findall(unbracketed(text.lower()))


@lru_cache(maxsize=1024)
def failure_words(text: str) -> str:
    """The failure key of a failure's text: the prints of its words (:data:`WORD`) outside
    brackets, sorted, spaced."""
    return " ".join(sorted({word_print(word) for word in _unbracketed_words(text)}))


def bare_name(tool: str) -> str:
    """``tool``'s own name, without the namespace an MCP client puts before it (Claude Code's
    ``mcp__github__create_issue`` is ``create_issue``): what a name says is said by that part."""
    if tool[:5] != "mcp__":
        return tool
    end = tool.find("__", 5)
    return tool[end + 2 :] if end > 5 and len(tool) > end + 2 else tool


@lru_cache(maxsize=512)
def words(tool: str, summary: str) -> frozenset[str]:
    """The words of a call's argument values, lower case, without numbers, flags, argument
    names or the tool's own name (a shell tool's command names its program).

    A path, a file name or a snake_case name is one word, kept whole: it names one
    thing, and two different ones are two things, not one in other words. A test
    runner failing on ``tests/test_models.py`` and then on ``tests/test_views.py``
    is going through the tests, not rewording one call; so is one selecting other tests by
    name (``-k compound``, then ``-k "compound or whitespace"``: one word each, with a ``/``,
    another place to :func:`reworded`).
    """
    text = _KEY.sub(" ", summary[len(tool) :].lower())
    found: set[str] = set()
    if "-k" in text and _RUNNER.search(text):
        found.update(f"-k/{m.group(2) or m.group(3)}" for m in _SELECTION.finditer(text))
        text = _SELECTION.sub(" ", text)
    found.update(_THING.findall(text))
    found.update(WORD.findall(_THING.sub(" ", text)))
    found.discard(bare_name(tool).lower())
    return frozenset(found)


@lru_cache(maxsize=512)
def error_words(error: str, said: frozenset[str], failure: str | None) -> frozenset[str]:
    """What a failure says: the words of its ``failure`` key but the call's own (``said``, see
    :func:`words`), as their prints; from an older record without the key, the error's words."""
    if failure is None:
        return frozenset(_unbracketed_words(error)) - said
    return frozenset(failure.split()) - {word_print(word) for word in said}


REWORDED = 1 / 3
"""The share of words a call must say again, more than it, to reword the calls before it (see
:func:`reworded`).

A question asked again keeps its subject and changes the rest: real rewordings of one failing
search share a third to a half of their words ("Aunt May (comics)" -> "Aunt May Parker").
"""
ALIKE = 0.5
"""The share of words (Jaccard) two errors must share at least to say the same failure."""


def reworded(before: frozenset[str], after: frozenset[str], chain: frozenset[str] = frozenset()) -> bool:
    """Whether the call with words ``after`` rewords the one before it, ``before`` (more than
    :data:`REWORDED` of the words of both shared), or the calls before it in a chain, ``chain``
    (their words together): more than :data:`REWORDED` of its own words, two at least, said
    before. A question asked again comes back to words an earlier one had dropped; one word in
    common is a shared subject at most ("Noah Cyrus", then "Miley Cyrus": two questions). A call
    that differs from the one before only in names of things (a path, a file, a test's name:
    ``tests/test_models.py::test_create`` then ``::test_delete``) asks the same of another
    thing: going through the failing tests one by one is no rewording; nor is a call that looks
    in another place (another path: ``grep -rn "did not parse" astropy/table/``, then
    ``astropy/utils/``), whatever else it changes.
    """
    changed = before ^ after
    if changed and not any(word.isalpha() for word in changed):  # only things (see words())
        return False
    # Asked in another place (a folder or file path that changed): a search relaxed as it moves
    # from folder to folder explores; one reworded in the same place asks again.
    where = {word for word in before if "/" in word}
    there = {word for word in after if "/" in word}
    if where and there and where != there:
        return False
    union = len(before | after)
    if union and len(before & after) > REWORDED * union:
        return True
    shared = len(after & chain)
    return shared >= 2 and shared > REWORDED * len(after)


def alike(before: frozenset[str], after: frozenset[str]) -> bool:
    """Whether two failures' error words (see :func:`error_words`) say the same failure."""
    union = len(before | after)
    return before == after or len(before & after) >= ALIKE * union
