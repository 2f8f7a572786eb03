"""A conversation with a person, as ``cycle`` reads it: what each message told and heard.

A message to a person (``respond``, ``send_message``) carries its facts: the data it and its
answer hold (ids, numbers, addresses), its words, whether it promises an act, asks anything, or
is answered "I already told you", and the acts the person reports doing at the agent's word
(tau2's ``[user] reboot_device({}) -> Device restarted.``). :func:`talked` reads a window of them
for the conversation going round (see :mod:`.cycle`).
Pure.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Hashable, Iterable, Mapping

from .calls import speaks
from .canonical import kept_args
from .contract import ActionView
from .promises import asks, promises
from .retold import retold
from .volatile import mask_volatile
from .words import word_print

__all__ = [
    "MARK_ASKED",
    "MARK_PROMISED",
    "MARK_RETOLD",
    "PROMISES",
    "REDONE",
    "REDONE_OF",
    "RETOLD",
    "TALK",
    "TOLD",
    "Beat",
    "beat",
    "message_facts",
    "talked",
]

TALK = 5
"""Messages to a person in a row that told and heard nothing new, and trip ``cycle``."""
TOLD = 0.5
"""The share of a message's words it may say for the first time and still tell nothing new."""
PROMISES = 3
"""Messages saying an act is under way, with nothing moving between them, that trip ``cycle``."""
RETOLD = 2
"""A person's answers saying they had already said it, nothing moving between, that trip ``cycle``."""
REDONE = 5
"""Of the last :data:`REDONE_OF` acts a person reported doing, those that redid one with the same
result, and trip ``cycle``."""
REDONE_OF = 10

# The tokens a message's facts hold (no word print is one character): it promises an act, it asks
# the person anything, its answer says the person had said it before.
MARK_PROMISED = "!"
MARK_ASKED = "?"
MARK_RETOLD = "="
_MARKS = frozenset([MARK_PROMISED, MARK_ASKED, MARK_RETOLD])
_DONE = "@"  # the prefix of a person's reported act and what it showed, in a message's facts
_SHOWED = ":"  # after a reported act's print: the print of what it showed alone
_SEEN = "%"  # the prefix of a line a person's answer showed
# What a person reports doing at the agent's word, in tau2's answers: "[user] reboot_device({}) ->
# Device restarted." (a line each); the numbers in what it showed are masked (a battery's level).
_REPORTED = re.compile(r"^\[user\] (\w+\([^\n]*?\)) -> ([^\n]*)", re.MULTILINE)
_DIGITS = re.compile(r"\d+")


def _reported(output: str) -> set[str]:
    """The facts of the acts ``output`` reports a person did: each act with what it showed, after
    a ``@``, and what it showed after a ``:``; and each line the answer showed, after a ``%``
    (numbers masked: a battery's level)."""
    facts: set[str] = set()
    for act, shown in _REPORTED.findall(output):
        seen = word_print(_DIGITS.sub("#", shown.strip()))
        facts.add(f"{_DONE}{word_print(_DIGITS.sub('#', f'{act} -> {shown}'))}{_SHOWED}{seen}")
        facts.add(f"{_SEEN}{seen}")
    for line in output.splitlines():
        if line and not line.startswith("[user] ") and (line := _DIGITS.sub("#", line.strip())):
            facts.add(f"{_SEEN}{word_print(line)}")
    return facts


# A datum: a token holding a digit, an @ or a _, or a # before a name (an id, an amount, an
# address, a user name like noah_ito_3850, an order #W2378156): what a person gives when they
# give what was asked for. A lone # is what masking left of a volatile value.
# Tried at a token's start only (the lookbehind), so each token is read once.
_DATUM = re.compile(r"(?<![\w.@#$-])(?=[\w.@#$-]*?(?:[\d@_]|#\w))[\w.@#$-]+")
_WORD = re.compile(r"[a-z]{4,}")  # a message's words, its short ones aside


def message_facts(tool: str, args: object, output: str | None) -> str | None:
    """The facts of a message to a person (``tool``'s call with ``args``) and its answer
    (``output``), as word prints, sorted, spaced: the data of both (ids, numbers, addresses;
    values volatile by nature masked), each print after a ``#``, the words of the message, and a
    ``!`` when it promises an act (:func:`promises`), a ``?`` when it asks anything (:func:`asks`),
    a ``=`` when its answer says the person had already said it (:func:`retold`), and each act the
    answer reports the person did, with what it showed, after a ``@`` (tau2's ``[user]
    reboot_device({}) -> Device restarted.``, numbers masked), and each line the answer showed,
    after a ``%`` (see :func:`_reported`); None for a call that sends no message."""
    if not speaks(tool):
        return None
    # What it said, not the keys each call carries anew (an idempotency key: see canonical.PER_CALL).
    said = (
        " ".join(map(str, kept_args(dict(args)).values())) if isinstance(args, Mapping) else str(args or "")
    )
    data = {f"#{word_print(datum)}" for datum in _DATUM.findall(mask_volatile(f"{said}\n{output or ''}"))}
    if promises(said):
        data.add(MARK_PROMISED)
    if output and retold(output):
        data.add(MARK_RETOLD)
    if asks(said):
        data.add(MARK_ASKED)
    if output and "[user] " in output:
        data |= _reported(output)
    return " ".join(sorted(data | {word_print(word) for word in _WORD.findall(said.lower())}))


# What talked() reads of an action, made once per action: whether it is a message to a person
# (its record holds the facts of one; one kept before facts were is judged as any other call);
# its key (None: it has none, or it is a note, which never moves a conversation); a message's
# data and words; whether it promises an act; whether its answer says the person said it before;
# the acts its answer reports the person did (each the print of the act and what it showed, and
# of what it showed alone, or None in facts kept before they held it); the lines the answer showed.
_Reported = tuple[tuple[str, str | None], ...]
Beat = tuple[bool, Hashable, frozenset[str], frozenset[str], bool, bool, _Reported, frozenset[str]]
_NO_FACTS: frozenset[str] = frozenset()


def beat(action: ActionView, key: Hashable) -> Beat:
    """What :func:`talked` reads of ``action``, whose key is ``key`` (None for a note)."""
    if action.facts is None:
        return False, key, _NO_FACTS, _NO_FACTS, False, False, (), _NO_FACTS
    facts = frozenset(action.facts.split())
    given = frozenset(fact for fact in facts if fact[0] == "#")
    reported = sorted(fact for fact in facts if fact[0] == _DONE)
    seen = frozenset(fact[1:] for fact in facts if fact[0] == _SEEN)
    done = tuple((act, shown or None) for act, _, shown in (fact.partition(_SHOWED) for fact in reported))
    words = facts - given - _MARKS - frozenset(reported) - frozenset(_SEEN + line for line in seen)
    return True, None, given, words, MARK_PROMISED in facts, MARK_RETOLD in facts, done, seen


def talked(beats: Iterable[Beat]) -> tuple[int, int, int, int]:
    """How many messages to a person end ``beats`` (:func:`beat` of each action, oldest first)
    that told and heard nothing the actions before them had not: no datum new in a message or its
    answer, at most :data:`TOLD` of the message's words new (the same request in other words: a
    walkthrough's next step says something new), and between them only notes, calls answered as
    before, and calls that answered nothing; and how many messages promised an act since a call
    last answered something new (however much each told), and how many answers since then said
    the person had already said it; and, when the newest message's answer reports an act the
    person redid with the same result, how many of the last :data:`REDONE_OF` acts reported did
    so since the conversation last moved (else 0)."""
    data: set[str] = set()
    said: set[str] = set()
    keys: set[Hashable] = set()
    run = promised = again = 0
    acts: deque[tuple[str, bool]] = deque(maxlen=REDONE_OF)  # each reported act, and whether it redid one
    shown: set[str] = set()  # every line the person's answers showed
    redid = False
    for spoke, key, given, words, promise, told_again, done, seen in beats:
        if spoke:
            redid = False
            for act, showed in done:
                again_done = any(act == before for before, _ in acts)
                if not again_done and showed not in shown:
                    # A step that showed something new (a setting now on) moved it; a check new to
                    # the conversation showing what an answer showed before (the same status bar) did not.
                    _moved(acts)
                acts.append((act, again_done))
                redid = redid or again_done
            shown |= seen
            quiet = given <= data and len(words - said) <= TOLD * len(words)
            run = run + 1 if quiet else 0
            promised += promise
            again += told_again
            data |= given
            said |= words
        elif key is not None and key not in keys:
            run = promised = again = 0  # something done or seen for the first time: the conversation moved
            keys.add(key)
            _moved(acts)
    return run, promised, again, sum(1 for _, again_done in acts if again_done) if redid else 0


def _moved(acts: deque[tuple[str, bool]]) -> None:
    """Count none of ``acts`` as redone any more (each is kept to be redone later): the
    conversation moved since them."""
    for i, (act, again_done) in enumerate(acts):
        if again_done:
            acts[i] = (act, False)
