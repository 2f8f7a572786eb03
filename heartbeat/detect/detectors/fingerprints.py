"""Fingerprints: what makes two actions "the same", exactly or up to volatile values.

Every action gets three keys, all computed by :func:`prints` (the one
function the :class:`~heartbeat.detect.monitor.Monitor` calls per action):

* ``fingerprint``: the tool plus its arguments as canonical JSON (sorted
  keys, no spaces, absent or None arguments count as ``{}``) after dropping
  the configured volatile argument names, hashed to 16 hex characters. For a
  polling tool the call's result is part of it too.
* ``shape``: the same canonical call with every digit left out (numbers,
  line ranges, dates and times, counters, ids like ``HAT052``), hashed to 8
  hex characters. Paging through one file with a sliding line range, or a
  poll that carries a timestamp, keeps one shape.
* ``result``: the output (or, without one, the error text), stripped, with
  only the values that are volatile by nature masked (timestamps, UUIDs,
  request ids and hex digests, durations, memory addresses and numbers as
  long as an object id: :mod:`.volatile`), hashed to 8 hex characters;
  None when the action reported neither. The numbers that are the content
  (a page number, a price, a count, the dates in a list of flights) are
  kept: two pages, two bodies or two flight lists are two results, but the
  same hits ranked anew are one (:func:`~.volatile.unranked`). A "not
  found" echoing the request is "not found" (:func:`~.envelope.not_found`),
  a "No new messages." is "nothing new", an all-clear report's key starts
  with ``=`` (:func:`~.said.all_clear`).
  For a failed action, and for an output that ends as a failing test run
  does (pytest's ``1 failed in 1.97s``, unittest's ``FAILED (failures=1)``:
  a shell may report no exit status), only its last two lines count (at
  most 200 characters), line numbers and ports masked too, and when the last line names an
  exception, that line from the exception's name on: how a failure ends
  (the exception and its message, the test summary) says what failed, the
  log before it changes with every edit. The closing lines a runner prints
  after any failure (``make: *** [...] Error 1``, ``exit status 1``) are
  left out first: they say that a step failed, never what. "The same
  result again" is judged on it.
* ``failure``: for a failed action only, the words of its error and of what
  its output says failed (the last line naming an exception, from the name
  on, among its last 4,000 characters: SQLAlchemy's error comes before the
  query and a link; else how the output ends, as the result key reads it,
  its bracketed spans taken out before the cut: a list of suggestions),
  each hashed to 4 hex characters (:func:`~.words.word_print`), sorted:
  whether two failures say the same thing is judged on their words, and a
  failure labelled only ``returncode 1`` says what failed in its output.
  Digests, never the words: the journal keeps it.
* :func:`error_key`: the same masking applied to an error's own text, so
  "timeout after 3.2s (request 8f3a...)" is one error live and in replay.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Collection, Mapping
from functools import lru_cache
from hashlib import blake2b
from typing import Any, NamedTuple

from ...base.credential_text import mask_credential_text
from ...base.credentials import holds_credentials, mask_credentials
from ...core.models import TEXT_LIMIT, clip, printable
from .calls import passes_silently
from .canonical import canonical_args, encode, join, kept_args
from .envelope import (
    ENVELOPE_LONGEST,
    NO_ROWS,
    NO_ROWS_LONGEST,
    NOT_FOUND,
    NOT_FOUND_LONGEST,
    NOT_MODIFIED,
    empty_envelope,
    fetched_body,
    harness_only,
    http_body,
    no_rows,
    no_rows_found,
    not_found,
    not_modified,
    unwrapped,
)
from .paging import points_at_itself
from .said import MARKS, NOTHING_NEW, REREAD_MARK, said_of
from .volatile import (
    ERROR_RE,
    has_volatile,
    mask_ages,
    mask_deliveries,
    mask_elapsed,
    mask_request_ids,
    mask_scores,
    mask_values,
    may_hold_volatile,
    unechoed,
    unranked,
)
from .words import failure_words, unbracketed

__all__ = [
    "NOT_FOUND_RESULT",
    "NO_ROWS_RESULT",
    "Prints",
    "action_keys",
    "error_key",
    "error_text",
    "failing_run",
    "fingerprint",
    "mask",
    "pattern",
    "prints",
    "summarize",
]


# An empty hasher to copy: a copy costs a third less than blake2b(..., digest_size=8),
# whose keyword parsing dominates for short inputs. The digest is the same.
_BLAKE2B_8 = blake2b(digest_size=8)


def _digest(tool: str, canonical: str, output: str | None) -> str:
    """The fingerprint of an already canonical call (and its result, for polling tools)."""
    text = f"{tool}\x00{canonical}" if output is None else f"{tool}\x00{canonical}\x00{output}"
    hasher = _BLAKE2B_8.copy()
    hasher.update(_bytes(text))
    return hasher.hexdigest()


_TOKEN_ROOM = 200  # characters past a text's cut that masking still reads


def _summary(tool: str, canonical: str, args: object = None) -> str:
    """``tool(args)`` from canonical arguments, ``tool()`` when there are none.

    As people read it: credential-named arguments (``args``, the call's arguments as
    canonicalised) and credentials the text gives away (a URL's ``?api_key=``, a
    command's ``Bearer ...``) masked, and a tool name's line breaks and other control
    characters escaped, so it can neither leak a password nor forge a line of output.
    """
    if holds_credentials(args):
        canonical = canonical_args(mask_credentials(args))
    if not tool.isprintable():
        tool = printable(tool)
    text = f"{tool}()" if canonical == "{}" else f"{tool}({canonical})"
    # Masked before the cut, with room past it: a token across the cut would not match.
    text = mask_credential_text(text[: TEXT_LIMIT + _TOKEN_ROOM])
    return text if len(text) <= TEXT_LIMIT else clip(text) or ""


def error_text(error: str) -> str:
    """An action's error as it is kept and shown: credentials the text gives away masked,
    line breaks and other control characters escaped, cut to 200 characters."""
    text = mask_credential_text(error[: TEXT_LIMIT + _TOKEN_ROOM])
    if not text.isprintable():
        text = printable(text)
    return text if len(text) <= TEXT_LIMIT else clip(text) or ""


def fingerprint(tool: str, args: object, *, volatile: Collection[str] = (), output: str | None = None) -> str:
    """The 16-hex-digit hash of ``tool`` + canonical ``args`` (+ ``output``, given only for polling
    tools: their result is part of what repeats)."""
    return _digest(tool, canonical_args(args, volatile), output)


def summarize(tool: str, args: object, volatile: Collection[str] = ()) -> str:
    """``search({"q":"x"})`` as a human reads it, cut to 200 characters."""
    plain = kept_args(dict(args), volatile) if isinstance(args, Mapping) else args
    return _summary(tool, canonical_args(args, volatile), plain)


# A word holding a digit: 42, 3.5, 2024-05-21T10:00:00Z, 559,650p's "650p", HAT052, a1b2c3d4, v2;
# a colon before it stays (``{"cursor":#}``), one inside it is part of it (a time).
# Only for messages (the masked shape a person reads): too slow to run per action.
_VOLATILE = re.compile(r"[\w.+-]*\d[\w.:+-]*")
_DIGITS = b"0123456789"
# bytes.translate with a table (every byte kept, the digits deleted) is faster than with None.
_SAME = bytes(range(256))
# The end of a failed action's output that says what failed: its last 2 lines (the exception
# and where, the test summary), at most 200 characters; masked from a little more than that,
# so a value cut in two at the edge is masked whole. The lines before (debug prints, the log)
# change with every edit.
_ERROR_LINES = 2
_ERROR_TAIL = 200
# An exception named in the last line ("django.db.utils.OperationalError: no such table"):
# from its name on, that line alone says what failed, whatever printed or prefixed it.
_EXCEPTION = re.compile(
    r"\b[A-Za-z_]*(?:Error|Exception|Exit|Interrupt)\b(?!.*\b[A-Za-z_]*(?:Error|Exception)\b:).*"
)


def _named(stripped: str) -> str | None:
    """The last line of an output that names an exception, from the name on (None: no line does)."""
    # A line holding a name's ending, found from the end with rfind; the regex reads a bounded
    # stretch of it (each name's lookahead reads to the line's end: seconds on a minified log).
    end = len(stripped)
    floor = max(0, end - _NAMED_READ)  # a failure names itself near its end: bounded work
    while True:
        at = max(stripped.rfind(word, floor, end) for word in _EXCEPTION_ENDINGS)
        if at < 0:
            return None
        start = stripped.rfind("\n", 0, at) + 1
        stop = stripped.find("\n", at)
        stop = len(stripped) if stop < 0 else stop
        named = _EXCEPTION.search(stripped, max(start, at - _ERROR_TAIL), min(stop, at + _ERROR_TAIL))
        if named is not None:
            return named.group()
        end = start


_EXCEPTION_ENDINGS = ("Error", "Exception", "Exit", "Interrupt")
_NAMED_READ = 4000  # characters from an output's end searched for the line naming its error


def _failure(masked: str) -> str:
    """What says what failed at the end of a masked output: see the module docstring."""
    lines = masked.splitlines()
    last = lines[-1] if lines else ""
    named = _EXCEPTION.search(last)
    if named is not None:
        return named.group()[-_ERROR_TAIL:]
    return "\n".join(lines[-_ERROR_LINES:])[-_ERROR_TAIL:]


_ERROR_READ = 320
# How a failed test run ends, whatever exit status its shell gave: pytest's "1 failed in 1.97s",
# unittest's "FAILED (failures=1)", jest's "Tests: 1 failed", cargo's "test result: FAILED", go's
# "FAIL", mocha's "1 failing". Its result is its failure's end, as a failed action's: the traceback
# before it shows the lines just edited, so a cosmetic edit would make each failure look new.
_FAILED_END = 160  # a cheap test first: a failing run says "fail" or "error" in its last lines
_FAILING_RUN = re.compile(
    r"(?m)^(?:=+ )?(?:\d+ (?:passed|skipped|deselected|xfailed|warnings?), )*\d+ (?:failed|errors?)\b.*$"
    r"|^FAILED \((?:failures|errors)=\d+|^Tests:\s+\d+ failed"
    r"|^test result: FAILED|^FAIL\s|^\s*\d+ failing$"
)


def failing_run(output: str) -> str | None:
    """The line in which ``output`` ends as a failing test run does (``13 failed in 1.31s``), or None."""
    end, start = output[-_FAILED_END:], len(output) - _ERROR_READ
    found = ("ail" in end or "AIL" in end or "rror" in end) and _FAILING_RUN.search(output, start)
    return found.group().strip() if isinstance(found, re.Match) else None


# An output this short goes through the regex whatever it holds: it costs little.
_ALWAYS_MASKED = 120
_NOTHING_LISTED = frozenset(["[]", "{}"])
_LABELLED_NOTHING = re.compile(r"[A-Za-z][\w .-]{0,40}:\s*(?:\[\]|\{\})")
_ECHO_SHORTEST = 4  # characters: a shorter query ("VPN") is as likely a word of the answer
_QUERY_ARG = re.compile(
    r"(?:^|_)(?:q|query|search|text|terms?|keywords?|question|prompt|cql|jql)$", re.IGNORECASE
)


@lru_cache(maxsize=1024)
def _query_names(names: tuple[object, ...]) -> tuple[object, ...]:
    """Which of a call's argument ``names`` say they hold what a search is asked for (read per
    action: cached by the call's names, as an agent's calls have few sets of them)."""
    return tuple(name for name in names if isinstance(name, str) and _QUERY_ARG.search(name))


def error_key(error: str) -> str:
    """An error's fingerprint: its text with volatile values, line numbers, ports and the ids of
    requests (in fields named for one) masked."""
    return f"{zlib.crc32(_bytes(ERROR_RE.sub('#', mask_request_ids(error.strip(), anywhere=True)))):08x}"


def mask(text: str) -> str:
    """``text`` with every word that holds a digit replaced by ``#``: the masked shape, as shown."""
    return _VOLATILE.sub("#", text)


def pattern(summary: str) -> str:
    """A call as the pattern a shape matches: ``run_build({"stamp":"#"}) with any stamp``.

    For an agent told what not to do again: the exact call (a timestamp, an
    id) is one it will never make again, the pattern is what it keeps doing.
    A summary with no number in it is its own pattern.
    """
    tool, opened, rest = summary.partition("(")
    # The tool's own name is no number that varies (``sqlite3``, ``s3.get_object``).
    masked = f"{tool}({mask(rest)}" if opened else mask(summary)
    if masked == summary:
        return summary
    try:
        args = json.loads(rest[:-1]) if rest.endswith(")") else None
    except ValueError:  # cut at 200 characters, or not JSON: the shape alone
        args = None
    values = args.items() if isinstance(args, dict) else ()
    varying = [key for key, value in values if mask(json.dumps(value)) != json.dumps(value)]
    return f"{masked} with any {', '.join(varying)}" if varying else f"{masked} (# is any number)"


def _bytes(text: str) -> bytes:
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate: hashed as its UTF-8-like bytes
        return text.encode("utf-8", "surrogatepass")


class Prints(NamedTuple):
    """The keys of one action: see the module docstring."""

    fingerprint: str
    shape: str
    result: str | None
    summary: str
    failure: str | None


def prints(
    tool: str,
    args: object,
    output: str | None = None,
    error: str | None = None,
    *,
    volatile: Collection[str] = (),
    polling: bool = False,
) -> Prints:
    """The keys and summary of one action (see the module docstring)."""
    fp, shape, result, summary, _length, failure = action_keys(tool, args, output, error, volatile, polling)
    return _new_prints(Prints, (fp, shape, result, summary, failure))


def action_keys(
    tool: str,
    args: object,
    output: str | None,
    error: str | None,
    volatile: Collection[str],
    polling: bool,
) -> tuple[str, str, str | None, str, int | None, str | None]:
    """:func:`prints` as a plain tuple, the stripped output's length before the failure key: what the
    Monitor needs.

    The Monitor calls it for every recorded action, where keyword arguments,
    a NamedTuple and stripping the output a second time would cost more than
    some of the keys.
    """
    # This runs for every recorded action: the common case (a plain dict) is encoded
    # inline, as canonical_args would, and the call's bytes are made once for all three keys.
    plain: object = args
    if args.__class__ is dict:
        kept: dict[Any, Any] = kept_args(args, volatile)
        plain = kept
        try:
            canonical = join(encode(kept, 0))
        except (TypeError, ValueError, RecursionError):
            canonical = canonical_args(kept)
    else:
        canonical = canonical_args(args, volatile)
        if isinstance(args, Mapping):
            plain = kept_args(dict(args), volatile)
    call = f"{tool}\x00{canonical}"
    try:
        data = call.encode()
    except UnicodeEncodeError:  # a lone surrogate: hashed as its UTF-8-like bytes
        data = call.encode("utf-8", "surrogatepass")
    hasher = _BLAKE2B_8.copy()
    hasher.update(data)
    if polling:
        # A polling tool repeats only when its result repeats; a failure is a result too.
        seen = output if output is not None else (f"\x00error\x00{error}" if error else "")
        hasher.update(_bytes(f"\x00{seen}"))
    # The shape drops every digit (bytes.translate: a fraction of a microsecond, where a
    # regex over the call costs several): 'sed -n 1,20p f' and 'sed -n 559,650p f' are one
    # shape, and so are HAT052 and HAT030, or two timestamps. The 4 big-endian bytes in
    # hex are f"{crc:08x}" at half its cost.
    shape = _crc32(data.translate(_SAME, _DIGITS)).to_bytes(4, "big").hex()
    length: int | None = None
    failure: str | None = None
    if output is not None:
        stripped = output.strip()
        if not stripped:
            if not error and passes_silently(canonical):
                stripped = _CHECKED_CLEAN  # a linter's silence: its verdict, an all-clear
        elif stripped[:7] == "Content":  # a cheap test first: few outputs open so
            stripped = fetched_body(stripped)
        elif stripped[:5] == "HTTP/" and not error:
            stripped = http_body(stripped)
        if stripped[:1] == "[" and not error and harness_only(stripped):
            stripped = ""  # a shell harness's notices alone: the shell said nothing
        length = len(stripped)
        if error and stripped[:_OPENS] == error.lstrip()[:_OPENS]:
            # The answer opens with its own failure (an "Error: ..." or an edit refused, said as the
            # answer): that line is what failed, not the echo of the call that follows it.
            result, failure = _error_alone(error, canonical)
        elif error:
            # A request's own id in a failed JSON answer is no part of what failed either.
            stripped = mask_request_ids(unwrapped(stripped))
            # The failure's words quoting the call's own values back are no part of what failed.
            cut = unechoed(stripped[-_ERROR_READ:] if len(stripped) > _ERROR_TAIL else stripped, canonical)
            result, end = _error_result(cut)
            failure = failure_words(f"{error}\n{_named(stripped) or _said(stripped, end)}")
        elif length <= NOT_FOUND_LONGEST and not_found(stripped, plain):
            # Nothing found, whatever it echoes: the answer of nothing it is (its length its own:
            # is_empty_answer reads the result).
            result = NOT_FOUND_RESULT
        elif length <= NO_ROWS_LONGEST and no_rows(stripped):
            # A write that matched no row, whatever its client adds: the answer of nothing it is.
            result = NO_ROWS_RESULT
        elif length <= _ALWAYS_MASKED:  # short outputs repeat ("ok", "no results"): kept
            result = _short_output_result(unranked(stripped) or stripped)
        elif failing_run(stripped) is not None:
            result, _ = _error_result(stripped[-_ERROR_READ:])
        else:
            result = _output_result(_unechoed_answer(unranked(stripped) or stripped, plain))
        if not error and result[:1] not in MARKS and points_at_itself(plain, stripped):
            result = REREAD_MARK + result[1:]  # a page saying to read it again
    elif error is not None:
        result, failure = _error_alone(error, canonical)
    else:
        result = None
    return hasher.hexdigest(), shape, result, _summary(tool, canonical, plain), length, failure


def _error_alone(error: str, canonical: str) -> tuple[str, str]:
    """The result and failure keys of a failure told by its error's text alone (no output, or an
    answer that opens with that text), the call's own values it quotes back masked, and the ids
    of requests in the body it quotes (``402 Payment Required: {..., "request_id": "..."}``)."""
    stripped = mask_request_ids(unwrapped(error.strip()), anywhere=True)
    cut = unechoed(stripped[-_ERROR_READ:] if len(stripped) > _ERROR_TAIL else stripped, canonical)
    return _error_result(cut)[0], failure_words(error)


def _output_result(stripped: str) -> str:
    """The result key of a stripped output (of an action that did not fail)."""
    said = said_of(stripped)
    if stripped[:1] == "{" and len(stripped) <= ENVELOPE_LONGEST and empty_envelope(stripped):
        stripped, said = "{}", None
    elif stripped[-2:] in _NOTHING_LISTED and _LABELLED_NOTHING.fullmatch(stripped) is not None:
        stripped, said = "{}", None  # an envelope around nothing printed as text: "Messages: []"
    elif len(stripped) <= ENVELOPE_LONGEST and not_modified(stripped):
        stripped, said = NOT_MODIFIED, None
    elif no_rows_found(stripped):  # a query's result set of no row: "(0 rows)", "Empty set"
        stripped, said = "{}", None
    elif said == NOTHING_NEW:
        stripped = NOTHING_NEW
    else:
        stripped = mask_request_ids(mask_deliveries(mask_ages(mask_elapsed(stripped))))
    out = _bytes(stripped)
    if (len(out) <= _ALWAYS_MASKED or has_volatile(out)) and may_hold_volatile(stripped, out):
        out = _bytes(mask_values(stripped))
    key = _crc32(out).to_bytes(4, "big").hex()
    return f"{said}{key[1:]}" if said in MARKS else key


def _unechoed_answer(stripped: str, args: object) -> str:
    """An answer with the words it was asked for taken out where it quotes them back: a search API
    answering ``{"results": [...], "query": "<what was asked>"}`` (Confluence's ``cqlQuery``,
    Tavily's ``query``) lands on the same hits whatever words asked for them. Only an argument
    named for a query (``q``, ``query``, ``search_text``...): a record looked up by its id or by
    its guest's name, each quoted back, is the same record however it was asked for. The scores
    such a search gives its hits, and the time it took, are the asking's too (see
    :func:`~.volatile.mask_scores`)."""
    if args.__class__ is not dict:
        return stripped
    names = _query_names(tuple(args))
    if names:  # the hits' scores and the search's time are the asking's (see volatile.mask_scores)
        stripped = mask_scores(stripped)
    for name in names:
        value = args[name]
        if value.__class__ is str and len(value) >= _ECHO_SHORTEST:
            # Quoted, as an echo is: in a JSON string of its own, or quoted within one, or in
            # single quotes (a page's text that holds the words is the page, not an echo).
            plain = value.isprintable() and '"' not in value and "\\" not in value
            escaped = value if plain else json.dumps(value, ensure_ascii=False)[1:-1]
            if escaped in stripped:
                for before, after in (('"', '"'), ('\\"', '\\"'), ("'", "'")):
                    stripped = stripped.replace(f"{before}{escaped}{after}", f"{before}#{after}")
    return stripped


def _said(stripped: str, end: str) -> str:
    """A failed output's ``end``, its bracketed spans taken out before the cut: a long list of
    suggestions would push what failed ("Could not find [X]. Similar: [...]") out of it."""
    if "[" not in end and "]" not in end:
        return end
    return _error_result(unbracketed(stripped[-_NAMED_READ:])[-_ERROR_READ:])[1]


def _failure_result(stripped: str) -> tuple[str, str]:
    """The result key of a failed action from its stripped output or error, and the end it is of.

    A failure is told by how it ends (the exception, the test summary, the shell's
    complaint), not by the log before it, which changes with every edit.
    """
    end = _failure(ERROR_RE.sub("#", stripped))
    return _crc32(_bytes(end)).to_bytes(4, "big").hex(), end


# Kept by text: the same short outputs and the same failures come back again and again, and
# their regexes cost more than all the other keys. Longer outputs vary and are not kept.
_short_output_result = lru_cache(maxsize=1024)(_output_result)
_error_result = lru_cache(maxsize=1024)(_failure_result)
_new_prints = tuple.__new__
_crc32 = zlib.crc32
_CHECKED_CLEAN = "No issues found."  # what a checker's silence says (see calls.passes_silently)
_OPENS = 24  # characters: an answer opening with its error's own first ones said its failure as its answer
NOT_FOUND_RESULT = _output_result(NOT_FOUND)
"""The result key of every answer saying only that nothing was found, whatever it echoes."""
NO_ROWS_RESULT = _output_result(NO_ROWS)
"""The result key of every SQL write that matched no row ("UPDATE 0")."""
