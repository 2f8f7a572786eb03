"""Values volatile by nature, and the cheap tests that tell a text holds none.

Timestamps, clock times, UUIDs, memory addresses, hex digests and request
ids, numbers as long as an object id, durations: they change between two
runs of the same thing while the content stays, so the result keys of
:mod:`.fingerprints` mask them (:data:`VOLATILE_RE`), and an error's key its
line numbers and ports too (:data:`ERROR_RE`). The numbers that are content
(a page, a price, a count, a date) are not among them. A regex over every
output would cost more than all the detectors: :func:`has_volatile` and
:func:`may_hold_volatile` rule most outputs out by substring searches first.
A JSON object's field counting the time a job has been running
(``"elapsed_seconds": 955``) is no content either (:func:`mask_elapsed`), nor
a time given relative to now, "about 7 minutes ago" (:func:`mask_ages`), nor
a request's own id in a field or header named for one (:func:`mask_request_ids`).
A ranked list's order is no content either (:func:`unranked`): a search asked
again in other words ranks the same hits anew.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

__all__ = [
    "ERROR_RE",
    "VOLATILE_RE",
    "has_volatile",
    "mask_ages",
    "mask_clock",
    "mask_deliveries",
    "mask_elapsed",
    "mask_request_ids",
    "mask_scores",
    "mask_times",
    "mask_values",
    "mask_volatile",
    "may_hold_volatile",
    "unechoed",
    "unranked",
    "unstamped",
]

# Values volatile by nature: they change between two runs of the same thing while
# the content stays. Numbers that are content (a page, a price, a count, a date) are
# not among them.
_TIME_VALUES = (
    # a date and time, with seconds, fractions and a zone when present: a timestamp
    r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d)?(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
    # a clock time with seconds (a log line's), with fractions
    r"|\b\d\d?:\d\d:\d\d(?:[.,]\d+)?"
)
_VOLATILE_VALUES = _TIME_VALUES + (
    # a UUID
    r"|(?P<uuid>\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b)"
    # a memory address
    r"|\b0x[0-9a-fA-F]+\b"
    # a hex digest or request id (12 or more hex characters, letters and digits both),
    # or a number as long as an object id or a nanosecond clock
    r"|(?P<hex>(?<![\w-])(?=[0-9a-fA-F]*[a-fA-F])(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{12,}\b)|(?P<long>\b\d{12,}\b)"
    # a duration
    r"|(?P<duration>\b\d+(?:\.\d+)?\s?(?:ms|us|µs|ns|s|sec|secs|seconds)\b)"
)
VOLATILE_RE = re.compile(_VOLATILE_VALUES)
# A duration named for what a watcher measures ("lag=14.2s", "replication delay: 3 s", "p99 latency
# 820ms", "12s behind") is its content, not the time a call took: a replica's lag that spiked and the
# lag before it are two answers.
_MEASURED = re.compile(r"(?:lag|latency|delay|rtt|ping|p\d\d)\W{0,3}\Z", re.IGNORECASE)
_MEASURED_AFTER = re.compile(r"\s?behind\b", re.IGNORECASE)
# In an error's text, also where it happened: "line 42", "file.py:42:", a port; and a shorter id of
# hex letters and digits both, standing alone ("update rejected (transaction 3fa9c2b1)", a short
# commit): the same refusal with a fresh id each night is the same error (live round 60).
ERROR_RE = re.compile(
    _VOLATILE_VALUES
    + r"|\bline \d+|(?<=[\w\]]):\d+\b"
    + r"|(?<![\w-])(?=[0-9a-fA-F]*[a-fA-F])(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{7,11}\b(?!-)"
)
# A cheap test first (a regex over every output would cost more than all the detectors):
# in the output with its digits turned to 9, a literal piece that most volatile values
# hold. Only an output holding one goes through the regex. A value the test misses stays
# in the result: two such outputs count as different, never wrongly as the same.
_NINES = bytes.maketrans(b"0123456789", b"9999999999")
_HINTS = (b"9:99", b"9s", b"9ms", b"9x9", b"9-9")
_LONG_NUMBER = b"9999999"
# A literal regex finds a short needle in a few hundred bytes faster than ``in`` does (its search
# sets up a two-way match for each call): 0.34 us against 0.5-0.9 here, once or twice an action.
_has_long_number = re.compile(_LONG_NUMBER).search
_has_nine_dash = re.compile(b"9-").search
# The same test in two steps, for speed: with ":", "m", "s" and "x" turned to "-" as well,
# every hint above starts with "9-", so an output without that piece holds none of them
# and is tested by two searches instead of six.
_COARSE = bytes.maketrans(b"0123456789:msx", b"9999999999----")


def has_volatile(data: bytes) -> bool:
    """Whether ``data`` may hold a volatile value (False: it holds none the test knows)."""
    coarse = data.translate(_COARSE)
    if _has_long_number(coarse) is not None:
        return True
    if _has_nine_dash(coarse) is None:
        return False
    nines = data.translate(_NINES)
    return any(hint in nines for hint in _HINTS)


# For an ASCII text, what every match of VOLATILE_RE holds, found by substring searches (the
# regex tries each of its alternatives at each position: ~10 us over a short output here).
# _MARKS: digits as 9, hex letters as a, m u n s as U, whitespace (\s) as a space, anything else
# but ":" and "x" as ".". A timestamp or a clock holds "9:9", an address "9x", a duration "9U"
# or "9 U"; a UUID, a digest or a long number 12 hex characters in a row (_HEX: as h).
_MARKS = (
    bytes(
        ord(
            "9"
            if chr(b).isdigit()
            else "a"
            if chr(b) in "abcdefABCDEF"
            else "U"
            if chr(b) in "muns"
            else " "
            if chr(b).isspace()
            else chr(b)
            if chr(b) in ":x"
            else "."
        )
        for b in range(128)
    )
    + b"." * 128
)
_HEX = bytes(ord("h" if chr(b) in "0123456789abcdefABCDEF" else ".") for b in range(256))
_HEX_RUN = b"h" * 12
_has_hex_run = re.compile(_HEX_RUN).search
_has_mark = re.compile(b"9:9|9x|9U|9 U").search  # a clock or a timestamp, an address, a duration


def may_hold_volatile(text: str, data: bytes) -> bool:
    """False when ``text`` (``data``: its UTF-8) surely holds no value VOLATILE_RE masks."""
    if not text.isascii():  # Unicode digits and spaces: the regex decides
        return True
    return _has_mark(data.translate(_MARKS)) is not None or _has_hex_run(data.translate(_HEX)) is not None


def mask_volatile(text: str) -> str:
    """``text`` with the values volatile by nature (timestamps, UUIDs, request ids, hex digests,
    durations, memory addresses) replaced by ``#``; the numbers that are content stay."""
    if not may_hold_volatile(text, text.encode("utf-8", "surrogatepass")):
        return text  # the regex tries each alternative at each position: skipped when it cannot match
    return mask_values(text)


# Seconds since 1970 as ten digits (2001 to 2033): a poll's "since" cursor, not content.
_EPOCH = re.compile(r"(?<![\w.])1\d{9}(?:\.\d{1,9})?(?![\w.])")  # Slack's "1796328000.000000" too
_TEN_DIGITS = re.compile(r"1\d{9}").search


def mask_times(text: str) -> str:
    """``text`` (a call as :func:`~.fingerprints.summarize` gives it) with the times in it masked:
    the volatile values of :func:`mask_volatile` and seconds since 1970 (``after:1710141306``,
    Slack's ``oldest: "1796328000.000000"``), a cursor moved on, not another thing asked."""
    masked = mask_volatile(text)
    if _TEN_DIGITS(masked) is None:  # a literal-led search, far cheaper than the lookarounds'
        return masked
    return _EPOCH.sub("#", masked)


# A logger's stamp at the start of a line: a timestamp or a clock time with seconds, in brackets
# ("[2026-03-04T05:06:14.123Z] ", "[05:06:14]") or followed by a separator and more of the line
# ("2026-03-04 05:06:14,123 INFO ...", "05:06:14 | ok"); one space after it is the stamp's, the
# rest of the line's (a JSON answer's indentation).
_STAMPED = r"(?:\d{4}-\d\d-\d\d[T ])?\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
_STAMP = re.compile(
    rf"^[ \t]*(?:\[{_STAMPED}\](?:[ \t]?[|:-](?!\S))?[ \t]?|{_STAMPED}(?:[ \t]?[|-])?[ \t](?=\S))",
    re.MULTILINE,
)


def unstamped(output: str) -> str:
    """``output`` without the stamps a logger put at its lines' starts, when its first line opens
    with one: when each line was written is no part of what it says, and an answer read from its
    start ("No new messages.", "Error: ...", an all-clear) opens after it."""
    if _STAMP.match(output) is None:
        return output
    return _STAMP.sub("", output)


# The times alone (a timestamp, a clock time, seconds since 1970): what moves in a call re-run later.
_TIMES = re.compile(_TIME_VALUES + "|" + _EPOCH.pattern)


@lru_cache(maxsize=1024)
def mask_clock(text: str) -> str:
    """``text`` with its times alone masked (timestamps, clock times, seconds since 1970), its ids
    and digests kept: a call re-run later, the same call whatever it names."""
    if ":" not in text and _TEN_DIGITS(text) is None:
        return text  # every time masked here has a colon or ten digits
    return _TIMES.sub("#", text)


def mask_values(text: str) -> str:
    """``text`` with every match of :data:`VOLATILE_RE` replaced by ``#`` but a duration named for
    what it measures (a replica's "lag=14.2s"), whatever the cheap tests said."""
    return VOLATILE_RE.sub(_masked, text)


# A field or parameter named for the identity of a thing (``"id": "18c2f..."``, ``job_id=...``,
# ``"messageId"``): a hex, UUID or long numeric value there names what was listed or acted on (a
# Gmail message, a queued job, a post), content, not a digest; a request's, a trace's or a key's
# own id is no thing's.
_IDENTITY = re.compile(
    r"""(?<![\w-])(?!(?i:(?:x-)?(?:request|req|trace|span|correlation|idempotency|nonce|client_request)[_-]?id))"""
    r"""[A-Za-z]*(?:(?<=[a-z])Id|(?<![A-Za-z])[iI]d|[_-]id|uuid|UUID|ID)['"]?\s*[:=]\s*['"]?\Z"""
)
_NAMING = 48  # characters before a value that may hold the name of its field


def _masked(match: re.Match[str]) -> str:
    """``#`` for a volatile value; a measured duration (see :data:`_MEASURED`) and a thing's own id
    (see :data:`_IDENTITY`) as they are."""
    kind = match.lastgroup
    if kind is None:  # a timestamp, a clock time, an address
        return "#"
    text, start = match.string, match.start()
    if kind != "duration":  # a UUID, a hex run, a long number: a thing's own id, named so, is content
        keep = text[start - 1 : start] in "\"' =:" and _IDENTITY.search(text, max(0, start - _NAMING), start)
        return match.group() if keep else "#"
    end = match.end()
    if _MEASURED.search(text, max(0, start - 16), start) or _MEASURED_AFTER.match(text, end):
        return match.group()
    return "#"


# A hit's rank at a line's start: "[2] Historia | AD Tarrazu", "2. Hounds of Love", "2) ...".
_RANK = re.compile(r"^[ \t]*(?:\[\d{1,3}\]|\d{1,3}[.)])[ \t]+", re.MULTILINE)
# A cheap test first (substring searches over a long output cost a microsecond): a ranked list
# shows its first hit, "[1] ", "1. " or "1) ", in its first lines.
_HEAD = 200
_FIRST_RANK = re.compile(r"1[\].)] ")  # a literal first: the regex skips to each "1" at C speed


def unranked(text: str) -> str | None:
    """A ranked list (two hits or more, each numbered at a line's start, the first in its first
    lines: a search's results) as its lines without their ranks, sorted: the same hits in another
    order read alike, and a new hit reads anew. None for a text that is no ranked list."""
    if _FIRST_RANK.search(text, 0, _HEAD) is None:
        return None
    lines = text.splitlines()
    ranked = [_RANK.sub("", line, count=1) for line in lines]
    if sum(1 for line, bare in zip(lines, ranked, strict=True) if line != bare) < 2:
        return None
    return "\n".join(sorted(ranked))


# A JSON field counting the time a job has been running: "elapsed_seconds": 955, "elapsedSeconds": 4,
# "elapsed_s": 12. It grows on its own, so a status whose only change is its elapsed counter has not
# moved (a job frozen at 11%, polled every five minutes). The time a call itself took ("latency_ms",
# "took", "duration_ms") is kept: a health check's every answer is "ok" but for it, and a watcher
# answered "ok" each round reads as one polling a frozen job (see the README's Troubleshooting).
_ELAPSED_FIELD = re.compile(r'("[A-Za-z_]*[Ee]lapsed[A-Za-z_]*"\s*:\s*)-?\d+(?:\.\d+)?')


# What a running job has used so far, counted in a resource's seconds or hours (YARN's "Aggregate
# Resource Allocation : 1061000000 MB-seconds, 256100 vcore-seconds", "412.5 GPU-hours"): it grows
# with the time the job runs, whether the job moves or not.
_USAGE = re.compile(
    r"\b\d+(?:\.\d+)?(?=\s*(?:[KMGT]B|vcore|core|cpu|CPU|gpu|GPU|slot|node)-(?:seconds|hours)\b)"
)


def mask_elapsed(text: str) -> str:
    """``text`` with what counts the time a job has been running replaced by ``#``: a JSON object's
    fields (``"elapsed_seconds": 955``) and the resource time used so far (``256100 vcore-seconds``);
    any other text as it is."""
    if "-seconds" in text or "-hours" in text:
        text = _USAGE.sub("#", text)
    if text[:1] != "{" or "lapsed" not in text:  # cheap tests first: only an object has fields
        return text
    return _ELAPSED_FIELD.sub(r"\1#", text)


# A request's own id, named as one in a JSON answer's field or an HTTP answer's header: "request_id":
# "req_7FTDaFcy867e", "traceId": "...", "X-Request-Id: 4f1c...". A new one comes with every answer,
# whatever it says.
_JSON_OPENS = frozenset("{[")
_REQUEST_ID = re.compile(
    r'("[A-Za-z_-]*(?:[Rr]equest|[Tt]race|[Ss]pan|[Cc]orrelation)[_-]?[Ii][Dd]"\s*:\s*)"[^"\n]*"'
    r"|((?:^|\n)[Xx]-(?:[Rr]equest|[Tt]race|[Cc]orrelation)-[Ii][Dd]:[ \t]*)\S+"
)


# What an HTTP answer's headers say of its delivery, new with each answer whatever its body: the
# cache's age and node ("Age: 2683", "X-Cache: HIT from edge-12": blind batch 66's sitemap page
# heard anew at every look), the edge's and the platform's ids for it, its timings, a rate limit's
# count of calls left, a fresh cookie. What names the content (ETag, Last-Modified, Content-Length,
# Location) stays.
_DELIVERY_HEADER = re.compile(
    r"(?im)^((?:age|date|expires|via|set-cookie|x-cache(?:-hits)?|x-served-by|x-timer|cf-ray"
    r"|cf-cache-status|server-timing|x-runtime|x-response-time|x-envoy-upstream-service-time"
    r"|x-amz-cf-(?:id|pop)|x-amzn?-(?:request-?id|trace-id|id-2)|x-(?:github|fastly)-request-id"
    r"|x-vercel-(?:id|cache)|x-cloud-trace-context|traceparent|x-opaque-id|x-b3-[\w-]+"
    r"|(?:x-)?rate-?limit-(?:remaining|reset|used)):[ \t]*)\S[^\n]*"
)


def _delivery_masked(text: str) -> str:
    """``text`` (an HTTP answer) with the values of its headers that speak of the delivery masked
    (see :data:`_DELIVERY_HEADER`); its body, after the first empty line, as it is."""
    end = text.find("\n\n")
    head = text if end < 0 else text[:end]
    masked = _DELIVERY_HEADER.sub(r"\1#", head)
    return masked if end < 0 else masked + text[end:]


def mask_request_ids(text: str, anywhere: bool = False) -> str:
    """``text`` (an answer, stripped) with each request's own id replaced by ``#``, a JSON answer's
    field or an HTTP answer's header named for one: ``"request_id": "req_7FTDaFcy867e"`` reads
    ``"request_id": "#"``; ``anywhere`` in it for an error's text, which often quotes the body
    after its status (``402 Payment Required: {..., "request_id": "..."}``). An HTTP answer's
    headers that speak of its delivery (its cache's age, its edge's ray id) are masked too."""
    # Only a JSON answer or an HTTP answer with its headers holds one (told by their first
    # characters: a substring search over every output cost 2 us an action); then the names.
    if text[:5] == "HTTP/":
        text = _delivery_masked(text)
    elif not (anywhere or text[:1] in _JSON_OPENS):
        return text
    if not ("equest" in text or "race" in text or "pan" in text or "orrelation" in text):
        return text
    return _REQUEST_ID.sub(lambda m: f'{m.group(1)}"#"' if m.group(1) else f"{m.group(2)}#", text)


# What a queue gives each delivery of a message (SQS's "ReceiptHandle" and "ApproximateReceiveCount",
# Pub/Sub's "ackId" and "deliveryAttempt", RabbitMQ's "delivery_tag", Service Bus's "lockToken"): the
# same message received again comes with a new one, and is the same work left undone (blind batch
# 56's worker received the same three poison messages at every wake-up, each time new).
_DELIVERY = re.compile(
    r'("(?:[Rr]eceipt[_-]?[Hh]andle|[Aa]ck(?:_id|Id)|[Dd]elivery[_-]?(?:[Tt]ag|[Aa]ttempt|[Cc]ount)'
    r'|[Ll]ock(?:_token|Token)|(?:Approximate)?[Rr]eceive[_-]?[Cc]ount)"\s*:\s*)(?:"[^"\n]*"|\d+)'
)


def mask_deliveries(text: str) -> str:
    """A JSON answer's ``text`` with what a queue gives each delivery of a message (its receipt
    handle, its delivery count) replaced by ``#``; any other text as it is."""
    if text[:1] not in _JSON_OPENS or not (
        "eceipt" in text
        or "eceive" in text
        or "elivery" in text
        or "ckId" in text
        or "ck_id" in text
        or "ckToken" in text
        or "ck_token" in text
    ):
        return text
    return _DELIVERY.sub(r'\1"#"', text)


# A search's hits scored for the words asked (Tavily's "score", Elasticsearch's "_score" and
# "max_score", a vector store's "similarity"): asked in other words, the same hits score anew, and
# the time the search took ("response_time", "took") is the asking's too (blind batch 56's
# researcher rewording one question eight times landed on the same three hits, each time new).
_SCORED = re.compile(r'"(?:_?score|max_score|relevance(?:_score)?|similarity)"\s*:\s*-?\d')
_SCORE_FIELD = re.compile(
    r'("(?:_?score|max_score|relevance(?:_score)?|similarity|distance|response_time|took(?:_ms)?)"\s*:\s*)'
    r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
)


def mask_scores(text: str) -> str:
    """A JSON answer's ``text`` holding hits scored for a search, with each score and the time the
    search took replaced by ``#``; any other text as it is."""
    if text[:1] not in _JSON_OPENS or ("score" not in text and "similarity" not in text):
        return text
    return _SCORE_FIELD.sub(r"\1#", text) if _SCORED.search(text) is not None else text


# A time given relative to now ("about 7 minutes ago", "3h ago", "an hour ago", gh's and kubectl's
# ages): it grows on its own, as a clock does, so a run's status whose only change is its age has not
# moved.
_AGE = re.compile(
    r"\b(?:(?:about|over|almost|nearly|less than) )?(?:an?|\d+) ?(?:s|secs?|seconds?|m|mins?|minutes?|h|hrs?"
    r"|hours?|d|days?|w|weeks?|mo|months?|y|yrs?|years?) ago\b"
)


# An age in a table of things that has a column for it (kubectl's ``AGE``, ``LAST SEEN``: ``7m``,
# ``5h32m``, ``2d``): a cell of its own, between runs of spaces or at the end of a row. The table
# is otherwise the same on the next poll, a pod stuck ``Pending`` as before (blind batch 56).
_AGE_CELL = re.compile(r"(?m)(?<=\s)\d+[smhd](?:\d+[smh])?(?=[ \t]*$|[ \t]{2})")


def mask_ages(text: str) -> str:
    """``text`` with each time given relative to now ("about 7 minutes ago", a table's ``AGE``
    cell) replaced by ``#``."""
    if " ago" in text:  # cheap tests first: most outputs hold none
        text = _AGE.sub("#", text)
    if "AGE" in text or "LAST SEEN" in text:
        text = _AGE_CELL.sub("#", text)
    return text


# A quoted span in a failure's text: "invalid employee_id 'dana.kwon': expected format E123456".
_QUOTED = re.compile(r"'([^'\n]{2,200})'|\"([^\"\n]{2,200})\"")


@lru_cache(maxsize=512)
def unechoed(text: str, call: str) -> str:
    """A failure's ``text`` with each quoted span that is one of the call's own argument values
    (a string in ``call``, its canonical JSON, where a value stands: after ``:``, ``,`` or ``[``)
    replaced by ``'#'``, case aside: "invalid employee_id 'dana.kwon'" and then "'Dana Kwon'"
    say the same of two tries; a traceback's file, quoted but no value of the call, stays."""
    if "'" not in text and '"' not in text:
        return text
    lowered = call.lower()

    def masked(found: re.Match[str]) -> str:
        value = json.dumps((found.group(1) or found.group(2)).lower(), ensure_ascii=False)
        for before in ":,[":
            if before + value in lowered:
                return "'#'"
        return found.group(0)

    return _QUOTED.sub(masked, text)
