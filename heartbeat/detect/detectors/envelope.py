"""An API's answers of nothing: an envelope around no answer, ``{"messages": []}``, and HTTP's 304.

An envelope around nothing (its lists empty, or no list and a count of what
was found at 0) is the same result as ``{}`` (see
:mod:`.fingerprints`), and an empty answer (see :mod:`.empty`): a queue with
nothing in it, a search with no hit, a page past the last, whatever the API
wraps around it. A conditional request's "304 Not Modified", however a tool
prints it ("HTTP/1.1 304 Not Modified" and its headers, "HTTP 304 Not
Modified (etag ...)", a JSON object saying ``"status": 304`` or
``"not_modified": true``), is one result whatever its headers say, an empty
answer too, and a poll's "nothing new yet" (see :func:`.empty.idle_poll`).
A search's "not found" that echoes what it was asked ("Could not find [Ang Lee
birthplace]. Similar: ['Ang Lee', ...]", "No results for 'heat pumps'") is
an answer of nothing as well: :data:`NOT_FOUND`, whatever it echoes. So is a
SQL write that matched no row (psql's ``UPDATE 0``, ``DELETE 0``, ``INSERT 0 0``
inside ``BEGIN``/``COMMIT`` or not, MySQL's ``Query OK, 0 rows affected``):
:data:`NO_ROWS`, an update asked of rows that are not there. And so is a shell
harness's notice with nothing from the shell around it (:func:`harness_only`:
OpenHands's ``[The command has no new output after 30 seconds. ...]``,
``[Your command "..." is NOT executed. The previous command is still
running ...]``, its exit code and working directory lines): a shell that
answers only that has said nothing, whatever the command was.

What wraps an answer says nothing of it either: an MCP tool's result kept whole as JSON is the
text it carries (:func:`mcp_text`), a page fetched through the MCP
fetch server is its body (:func:`fetched_body`), a successful raw HTTP
response around an empty JSON envelope is that envelope, its status line and
headers aside (:func:`http_body`), and a failed build's output
ends in its runner's lines that only say it failed (:func:`unwrapped`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from .volatile import unstamped
from .words import unbracketed

__all__ = [
    "ENVELOPE_LONGEST",
    "NONE_WENT_WRONG",
    "NOT_FOUND",
    "NOT_FOUND_LONGEST",
    "NOT_MODIFIED",
    "NO_ROWS",
    "NO_ROWS_LONGEST",
    "answer_text",
    "around_nothing",
    "empty_envelope",
    "fetched_body",
    "harness_only",
    "http_body",
    "json_object",
    "mcp_text",
    "mcp_texts",
    "no_rows",
    "not_found",
    "not_modified",
    "unwrapped",
]

# A JSON object around no answer (``{"messages": []}``, ``{"total": 0, "results": [], "took_ms": 37}``,
# ``{"Messages": [], "ResponseMetadata": {...}}``): a list in it, every list in it empty, the rest
# counts, timings, texts and metadata. It is the same result as ``{}``. A ``true`` is an answer
# (``{"valid": true, "errors": []}``), and so is any item in a list. Some APIs leave the empty list
# out and say how many they found: Gmail's ``{"resultSizeEstimate": 0}``, X's
# ``{"meta": {"result_count": 0}}``, S3's ``{"KeyCount": 0, "MaxKeys": 1000, ...}``: a count of what
# was found, 0 (and no count above 0), stands for the list.
# A list named for what went wrong, empty, is no payload: nothing failed is an answer. JSON-LD's own
# keys are metadata (the weather service's ``{"@context": [...], "features": []}``).
# An object whose every value is nothing (``null``, an empty string, list or object, a count at 0)
# is one too: a queue's ``{"job": null, "queue_depth": 0}``, ``{"data": {}}``; but not one that
# holds only a field named for what went wrong (``{"error": null}``: nothing failed is an answer).
ENVELOPE_LONGEST = 300
"""The longest output read as an empty envelope (characters, stripped)."""


NOT_MODIFIED = "304 Not Modified"
"""The text every "not modified" answer is read as (one result)."""
_NOT_MODIFIED = re.compile(r"HTTPS?(?:/[\d.]+)?\s+304\b|304\s+Not\s+Modified\b", re.IGNORECASE)
# A count of things found: ``result_count``, ``resultSizeEstimate``, ``KeyCount``, ``total_count``,
# ``totalResults``, ``hits``; not a count of failures (``error_count``: 0 errors is an answer; see
# NONE_WENT_WRONG).
# SQS's ``ApproximateNumberOfMessages`` (a string: ``"0"``), ``num_results``.
_FOUND = re.compile(
    r"(?:.*(?:count|total|estimate)|hits|nbhits|numfound|total_?results|(?:approximate_?)?number_?of_?.*"
    r"|num_?(?:results|items|found|hits|records|rows|messages)|(?:queue_?)?depth|backlog|unread)$",
    re.IGNORECASE,
)
_NOTHING_HINT = re.compile(r'\[\]|\{\}|:\s*null\s*[,}]|:\s*"?0"?\s*[,}]')
# A list or a count named for what went wrong (``hosts_failed``, ``errors``, ``warnings``,
# ``skipped``, ``error_count``, ``broken_links``): empty or 0, it reports that nothing did, beside
# the answer: a rollout's status with no host failed is a status, a link check's is its report.
NONE_WENT_WRONG = re.compile(
    r"err|warn|fail|skip|retr|broken|invalid|missing|violat|vulnerab|conflict", re.IGNORECASE
)
_STATUS_STARTS = frozenset(["HTT", "htt", "Htt", "304"])  # a cheap test before the regex
_STATUS_OK = frozenset(["ok", "success"])  # an envelope's status (Slack's ``{"ok": true, "messages": []}``)
# A page's key to the next, given only while there is more (DynamoDB's ``LastEvaluatedKey``, AWS's
# ``NextToken``, Google's ``nextPageToken``): a filtered scan's empty page moved the scan on (its
# ``ScannedCount``). A poll's ``next_cursor`` or next ``since``, given each time, is no such key.
_MORE = frozenset(["lastevaluatedkey", "nexttoken", "nextpagetoken", "nextcontinuationtoken"])


NO_ROWS = "0 rows"
"""The text every SQL write that matched no row is read as (one result)."""
NO_ROWS_LONGEST = 200
"""The longest output read as a write that matched no row (characters, stripped)."""
# A SQL client's report of a write that changed no row, between the transaction's own lines and a
# timing line (psql's ``\timing``): ``UPDATE 0``, ``BEGIN / DELETE 0 / COMMIT``, ``INSERT 0 0``,
# ``Query OK, 0 rows affected (0.00 sec)``. A write that changed rows (``UPDATE 5000``) says more.
_NO_ROWS = re.compile(
    r"(?:(?:BEGIN|START TRANSACTION)\s*\n\s*)?"
    r"(?:(?:UPDATE|DELETE|MERGE) 0|INSERT 0 0|Query OK, 0 rows affected(?: \([\d.]+ sec\))?)"
    r"(?:\s*\n\s*(?:COMMIT|Time: [\d.]+ ms(?: \([\d:.]+\))?))*"
)
_NO_ROWS_STARTS = frozenset("UDMIBSQ")  # a cheap test before the regex


def no_rows(stripped: str) -> bool:
    """Whether ``stripped`` (an output) reports a SQL write that matched no row (``UPDATE 0``)."""
    return stripped[:1] in _NO_ROWS_STARTS and _NO_ROWS.fullmatch(stripped) is not None


# The lines a shell harness writes around what the shell said (OpenHands's execute_bash): that it
# shows the output of a command still running, that nothing came for so long, that the command sent
# was not run because another still runs, the exit code, the working directory, the interpreter.
_HARNESS_LINE = re.compile(
    r"\[(?:Below is the output of the previous command\."
    r"|The command has no new output after \d+ seconds\..*"
    r"|Your command .* is NOT executed\. The previous command is still running.*"
    r"|(?:The command completed|Command finished) with exit code -?\d+\.?(?: CTRL\+C was sent\.)?"
    r"|Current working directory: .*|Python interpreter: .*)\]"
)


def harness_only(stripped: str) -> bool:
    """Whether ``stripped`` (an output) holds only a shell harness's notices (see
    :data:`_HARNESS_LINE`) and blank lines: the shell itself said nothing."""
    return (
        stripped[:1] == "["
        and stripped[-1:] == "]"
        and all(not line.strip() or _HARNESS_LINE.fullmatch(line.strip()) for line in stripped.splitlines())
    )


# A SQL client's answer to a query that found no row: psql's column header and rule over "(0 rows)",
# MySQL's "Empty set (0.00 sec)", SQL*Plus's "no rows selected": a listing of nothing, as ``[]`` is.
_NO_ROWS_FOUND = re.compile(r"(?:[^\n]*\n[-+ ]+\n)?\(0 rows\)|Empty set(?: \([\d.]+ sec\))?|no rows selected")
_NO_ROWS_FOUND_LONGEST = 2000  # characters: a header of many columns


def no_rows_found(stripped: str) -> bool:
    """Whether ``stripped`` (an output) is a SQL client's result set of no row (``(0 rows)``)."""
    return (
        stripped[-1:] in ")td"
        and len(stripped) <= _NO_ROWS_FOUND_LONGEST
        and _NO_ROWS_FOUND.fullmatch(stripped) is not None
    )


def not_modified(stripped: str) -> bool:
    """Whether ``stripped`` (an output) is HTTP's 304, "Not Modified": as the status line says it,
    or as a JSON object says it (``{"status": 304, "fetched_at": ...}``, ``{"not_modified": true}``)."""
    if stripped[:1] == "{":
        return ("304" in stripped or "odified" in stripped) and _says_not_modified(stripped)
    return stripped[:3] in _STATUS_STARTS and _NOT_MODIFIED.match(stripped) is not None


# A JSON answer's own status (not a nested one: a feed list's per-feed statuses are its items).
_STATUS_KEYS = frozenset(["status", "status_code", "statuscode", "http_status", "httpstatus", "code"])
_NOT_MODIFIED_KEYS = frozenset(["not_modified", "notmodified"])
_NOT_MODIFIED_STATUS = frozenset([304, "304", "not_modified", "not modified", "304 not modified"])


def json_object(stripped: str) -> dict[Any, Any] | None:
    """``stripped`` parsed as a JSON object, else None."""
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _says_not_modified(stripped: str) -> bool:
    value = json_object(stripped)
    if value is None:
        return False
    for key, item in value.items():
        name = key.lower()
        if name in _NOT_MODIFIED_KEYS and item is True:
            return True
        if name in _STATUS_KEYS and not isinstance(item, bool):
            said = item.lower() if isinstance(item, str) else item
            if isinstance(said, (int, str)) and said in _NOT_MODIFIED_STATUS:
                return True
    return False


NOT_FOUND = "not found"
"""The text every "not found" answer that echoes its request is read as (one result)."""
NOT_FOUND_LONGEST = 1000
"""The longest output read as a "not found" answer (characters, stripped): a list of suggestions
may be long."""
# The words a "not found" answer says around the request it echoes and its suggestions; one of
# _NOT_FOUND_SAID at least. Anything else ("found 3 results for", "no results on page 2, see page
# 1") says more than that nothing was found.
_NOT_FOUND_SAID = re.compile(
    r"\b(?:could\s*n[o']?t\s+find|can(?:no|')?t\s+find|not\s+found|nothing\s+found|no\s+"
    r"(?:results?|match(?:es)?|entries|entry|pages?|articles?|documents?|hits?|records?))\b"
)
_NOT_FOUND_WORDS = frozenset(
    re.findall(
        r"\w+",
        "could couldn couldnt can cannot cant not t find found no nothing result results match matches "
        "matching entries entry page pages article articles document documents hit hits record records "
        "similar for the a an any of in was were with named called titled query search sorry try did "
        "you mean",
    )
)
_NOT_FOUND_STARTS = frozenset(["No", "no", "NO", "Co", "co", "CO", "Ca", "ca", "Ni", "So", "I ", "0 ", "Ze"])
_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`")
_WORD = re.compile(r"[a-z]+")


def not_found(stripped: str, args: object) -> bool:
    """Whether ``stripped`` (an output, at most :data:`NOT_FOUND_LONGEST`) says only that what was
    asked was not found, echoing it: its words, the request it echoes (the text of ``args``'
    values, any case) and whatever stands in brackets or quotes (a list of suggestions) aside, are
    a "not found" and the words around one. A plain "No results." echoes nothing: it is one of
    :data:`.empty.EMPTY_ANSWERS`, its own result."""
    # Cheap tests first, this runs for most outputs: a "not found" says so from its start ("Could
    # not find", "No results", "Nothing found", "Sorry", "0 results") or at its end ("not found").
    if stripped[:2] not in _NOT_FOUND_STARTS and "ound" not in stripped[-12:]:
        return False
    said = stripped.lower()
    edges = said[:32] + said[-16:]
    if "ound" not in edges and "find" not in edges and "esult" not in edges and "atch" not in edges:
        return False
    echoed = [
        v.lower() for v in (args.values() if isinstance(args, Mapping) else (args,)) if isinstance(v, str)
    ]
    echoed = [v for v in echoed if len(v) > 1 and v in said]
    if not echoed and "[" not in said and not _QUOTED.search(said):
        return False
    said = unbracketed(said)
    for value in echoed:
        said = said.replace(value, " ")
    said = _QUOTED.sub(" ", said)
    words = _WORD.findall(said)
    return bool(words) and _NOT_FOUND_SAID.search(said) is not None and _NOT_FOUND_WORDS.issuperset(words)


def empty_envelope(stripped: str) -> bool:
    """Whether ``stripped`` (a JSON object, by its first character) is an envelope around no answer."""
    if _NOTHING_HINT.search(stripped) is None:  # no empty list, no 0: parsing it would tell no more
        return False
    data = json_object(stripped)
    return data is not None and around_nothing(data)


def around_nothing(data: dict[Any, Any]) -> bool:
    """Whether the JSON object ``data`` is an envelope around no answer (see :func:`empty_envelope`)."""
    # No item in any list and no ``true``; at the top one list at least, or a count of things found
    # at 0 and none above (at any depth: ``{"meta": {"result_count": 0}}``).
    places = _places(data)
    if places is None:
        return False
    lists, zeros, counted = places
    return lists > 0 or (zeros > 0 and not counted) or _holds_nothing(data)


def _holds_nothing(data: dict[Any, Any]) -> bool:
    """Whether every value of ``data`` is nothing (``null``, an empty string, list or object, a count
    of things found at 0, an object holding nothing) and one not named for what went wrong is."""
    named = False
    for key, value in data.items():
        if isinstance(value, dict):
            if value and not _holds_nothing(value):
                return False
        elif not (value is None or value == "" or value == [] or _found(key, value) == 0):
            return False
        named = named or not (isinstance(key, str) and NONE_WENT_WRONG.search(key))
    return named


def _places(data: dict[Any, Any]) -> tuple[int, int, bool] | None:
    """The empty lists of ``data`` at its top, its counts of things found at 0 at any depth, and
    whether one is above 0; None when it holds an answer (an item in a list, a ``true``)."""
    lists = zeros = 0
    counted = False
    for key, value in data.items():
        if isinstance(key, str) and key[:1] == "@":
            continue  # JSON-LD's own keys (``@context``, ``@id``): metadata, whatever they hold
        if (value is True and not (isinstance(key, str) and key.lower() in _STATUS_OK)) or (
            isinstance(value, list) and value
        ):
            return None  # an answer; but an envelope's own "ok": true says only that the call went through
        if value and isinstance(key, str) and key.lower().replace("_", "") in _MORE:
            return None  # a page of a scan that moved on, and where it goes on: no answer of nothing
        if isinstance(value, list):
            lists += not (isinstance(key, str) and NONE_WENT_WRONG.search(key))
        elif isinstance(value, dict):
            inner = _places(value)
            if inner is None:
                return None
            zeros += inner[1]
            counted = counted or inner[2]
        elif (found := _found(key, value)) is not None and not NONE_WENT_WRONG.search(key):
            zeros += not found
            counted = counted or found > 0
    return lists, zeros, counted


def _found(key: object, value: object) -> int | None:
    """The count of things found that ``value`` is, under a ``key`` named for one (``resultSizeEstimate``,
    ``queue_depth``; a whole number or its digits), else None."""
    if not isinstance(key, str) or not (
        value.__class__ is int or (isinstance(value, str) and value.isdecimal())
    ):
        return None
    return int(value) if _FOUND.match(key) else None


# Lines a build or test runner prints after any failure of a step: that it failed and its exit
# code, never what failed. ``make: *** [Makefile:31: build/loader.o] Error 1`` ends a compile
# error, a link error and a failing test alike; what failed is in the lines before.
_WRAPPER = re.compile(
    r"make(?:\[\d+\])?: \*\*\* \[.*\] Error \d+|ninja: build stopped: .*"
    r"|cc1(?:plus)?: all warnings being treated as errors|collect2: error: ld returned \d+ exit status"
    r"|error: could not compile .*|error: test failed, to rerun pass .*"
    r"|error Command failed with exit code \d+\.?"
    r"|info Visit https?://\S+ for documentation about this command\.?"
    r"|(?:Error: )?Process completed with exit code \d+\.?|exit status \d+|FAIL(?:\s+\S+\s+[\d.]+s)?"
    r"|npm (?:ERR!|error\b).*|ERROR: Command errored out with exit status \d+.*"
)
_WRAPPER_LINES = 16  # an npm failure ends in a dozen such lines


# What the MCP fetch server writes before a page's body: "Contents of <url>:", after "Content type
# application/json cannot be simplified to markdown, but here is the raw content:" for JSON. The body
# is the answer (a job's JSON status, its request id masked as any JSON answer's).
_FETCHED = re.compile(
    r"(?:Content type [^\n]{1,200} cannot be simplified to markdown, but here is the raw content:\n)?"
    r"Contents of \S{1,2000}:(?:\n|\Z)"
)


def fetched_body(stripped: str) -> str:
    """A fetched page's body without the fetch server's lines before it; any other text as it is."""
    found = _FETCHED.match(stripped)
    return stripped if found is None else stripped[found.end() :].lstrip()


# A raw HTTP response (``curl -i``, an HTTP tool answering with its status line and headers)
# whose body is a JSON envelope around nothing: the answer of nothing it is. Its headers (a
# request's id, the rate limit left, the date) are the transport's, new at every call. Any other
# response is kept whole: a page's headers are part of the document read, a failure's and a
# redirect's (its Location) say what happened.
_HTTP_OK = re.compile(r"HTTP/\d(?:\.\d)? 2\d\d\b[^\n]*\n(?:[!-9;-~]+:[^\n]*\n)*\s*\n")


def http_body(stripped: str) -> str:
    """A successful raw HTTP response's body when it is a JSON envelope around nothing (see
    :func:`empty_envelope`), without its status line and headers; any other text as it is."""
    found = _HTTP_OK.match(stripped)
    if found is None:
        return stripped
    body = stripped[found.end() :].lstrip()
    return body if body[:1] == "{" and len(body) <= ENVELOPE_LONGEST and empty_envelope(body) else stripped


def unwrapped(stripped: str) -> str:
    """A failed output without the runner's closing lines that only say it failed (see
    _WRAPPER); as it is when nothing else is left."""
    end = len(stripped)
    for _ in range(_WRAPPER_LINES):
        start = stripped.rfind("\n", 0, end) + 1
        if _WRAPPER.fullmatch(stripped, start, end) is None:
            break
        if start == 0:
            return stripped
        end = start - 1
    return stripped if end == len(stripped) else stripped[:end].rstrip()


# An MCP tool's result as the SDK dumps it whole (``result.model_dump_json()``): its text blocks are
# what the tool answered, the envelope around them the protocol's. Its keys come first or after a
# ``"_meta": null``, so a result's ``"content"`` sits within its first characters.
_MCP_KEYS = frozenset(["content", "isError", "structuredContent", "_meta", "meta"])
_MCP_HEAD = 40


def mcp_texts(result: Mapping[str, Any]) -> list[str]:
    """The text blocks of an MCP tool ``result``'s content, in order."""
    content = result.get("content")
    return [
        block["text"]
        for block in (content if isinstance(content, list) else ())
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    ]


def mcp_text(output: str) -> str | None:
    """The text a successful MCP tool result dumped as JSON carries (its text blocks, one per line,
    else its structured content); None for any other output: a result flagged ``isError`` (a
    failure, see :func:`.failures.answered_failure`), or one holding more than text (an image is
    no text to compare)."""
    if output.find('"content"', 0, _MCP_HEAD) < 0:
        return None
    result = json_object(output.strip())
    if result is None or not result.keys() <= _MCP_KEYS or result.get("isError") is True:
        return None
    content = result.get("content")
    texts = mcp_texts(result)
    if not isinstance(content, list) or len(texts) < len(content):
        return None
    structured = result.get("structuredContent")
    if not texts and structured is not None:
        return json.dumps(structured, ensure_ascii=False)
    return "\n".join(texts)


def answer_text(output: str) -> str:
    """What ``output`` tells, without what wrapped it on its way: an MCP result kept whole as JSON
    is its text (:func:`mcp_text`), and the stamps a logger put at its lines' starts are left out
    (:func:`.volatile.unstamped`). Every detector reads an output so (see
    :meth:`heartbeat.detect.monitor.Monitor.record`)."""
    first = output[:1]
    if first == "{":
        text = mcp_text(output)
        if text is not None:
            output, first = text, text[:1]
    # A stamp opens with "[", a digit or the spaces before them: most answers open otherwise.
    return unstamped(output) if first == "[" or first.isdigit() or first in " \t" else output
