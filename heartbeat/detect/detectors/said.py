"""What an answer says of itself: nothing new came, nothing needs doing, every test passed, or a wait.

A short answer that says, in so many words, that nothing new came ("No new
messages.", "0 new items", "nothing to process", "Inbox empty", "No new
entries since 2026-11-20T03:00:00Z") is :data:`NOTHING_NEW`, an empty answer
as well: an inbox or a feed polled and found quiet (:func:`nothing_new`). One
that says nothing needs doing ("0 broken anchors of 214 links", "All 37
packages are up to date.", "No issues found.", "All systems operational",
"status: ok", "backup ok", "spend within budget: $41.20 of $100.00") is an
all-clear report (:func:`all_clear`), its result key marked
(:data:`ALL_CLEAR_MARK`): a watcher's answer, not an empty one (a linter
passing file after file asks in no vain), but a quiet wake-up's all the
same (see :mod:`..idle`); so is a report of several parts naming each thing
that went wrong at 0 ("Crawled 58 pages. 0 broken anchors of 214."), a health
check's "200 OK 126ms", or a JSON report whose fields named for it are 0 or
empty. Neither reading takes a
count above 0 of what went wrong ("0 failed, 3 errors"), a "not", a state
still on its way ("running 42%", "pending") or a test run's report; "nothing
new" takes no second sentence.

An answer naming a state still on its way ("state": "RUNNING", "pending",
"in progress") has its result key marked too (:data:`UNDERWAY_MARK`): a watch
that hears it again and again waits on something that froze, no watcher's
quiet round (see :mod:`..idle`). It is read in an answer of up to
:data:`UNDERWAY_LONGEST` characters (a status), and in a longer JSON answer's
``"state"`` or ``"status"`` field (Livy's batch, its URLs and logs after). A
job queued or waiting for its turn is marked apart (:data:`QUEUED_MARK`): it
stays as it is until its turn comes, and a watch hearing so is a quiet round,
for a while (see :mod:`..idle`).
"""

from __future__ import annotations

import re

from .envelope import NONE_WENT_WRONG, json_object

__all__ = [
    "ALL_CLEAR_MARK",
    "CLEAR_LONGEST",
    "MARKS",
    "NOTHING_NEW",
    "PASSED_MARK",
    "PASSED_READ",
    "QUEUED_MARK",
    "REREAD_MARK",
    "UNDERWAY_LONGEST",
    "UNDERWAY_MARK",
    "all_clear",
    "all_clear_result",
    "nothing_new",
    "passing_run",
    "queued_result",
    "rereads",
    "said_of",
    "underway_result",
]


# What a watcher looks for: a count of it at 0, or none of it, says nothing needs doing.
_WRONG = (
    r"(?:broken|errors?|errored|issues?|problems?|warnings?|vulnerabilit(?:y|ies)|violations?|alerts?"
    r"|incidents?|failures?|failed|failing|outages?|anomal(?:y|ies)|regressions?|drift|discrepanc(?:y|ies)"
    r"|mismatch(?:es)?|conflicts?|outdated|expired|expiring|unhealthy|dead|findings?|changes?|updates?"
    r"|differences?|down|offline|unreachable|breach(?:es)?|crash(?:es)?|exceptions?|timeouts?|rejections?)"
)
NOTHING_NEW = "nothing new"
"""The text every "nothing new" answer is read as (one result, an empty answer)."""
CLEAR_LONGEST = 120
"""The longest output read as "nothing new" or as an all-clear report (characters, stripped)."""
# The rest of one sentence (no ". " inside): "since <time>", "in the queue", "(checked 3 feeds)".
_REST = r"(?:(?!\.\s)[^\n]){0,60}"
_NOTHING_NEW = re.compile(
    r"(?:there\s+(?:are|is|were)\s+)?(?:no|0|zero)\s+(?:new|unread|pending|unprocessed|queued|incoming"
    r"|unseen|fresh|further|outstanding)\b"
    + _REST
    + r"|nothing\s+(?:new|pending|(?:left\s+)?to\s+(?:do|process|review|triage|handle|sync|import|fetch"
    r"|send|reply\s+to))\b"
    + _REST
    + r"|(?:the\s+)?(?:inbox|queue|feed|mailbox|backlog)\s+(?:is\s+)?empty\b"
    + _REST
    # A read that took in none of what it reads: "read 0 lines (0 bytes) from access.log, EOF",
    # "fetched 0 rows". Not a verb of doing ("processed 0 records", "deleted 0 rows": an act's).
    + r"|(?:read|fetched|received|pulled|got|downloaded|found|returned|retrieved|collected|polled)\s+"
    r"(?:0|no|zero)\s+(?:new\s+)?[a-z][\w-]*[^\Wsu]s\b(?:\s*\([^()\n]{0,40}\))?"
    + _REST
    # None of what is asked for, in a few words: "No jobs.", "0 tasks in the queue", "no messages
    # right now". A plural named, not what went wrong ("no errors" is an all-clear) nor a lone
    # word ending in s ("no access", "0 status").
    + r"|(?:there\s+(?:are|is|were)\s+)?(?:no|0|zero)\s+(?!"
    + _WRONG
    + r"\b)[a-z][\w-]*[^\Wsu]s"
    r"(?:\s+(?:found|available|pending|queued|waiting|left|remaining|yet|(?:right\s+)?now|today"
    r"|at\s+(?:the|this)\s+(?:moment|time)|to\s+(?:do|process|handle|run|send|sync|review|fetch)"
    r"|in\s+(?:the\s+)?(?:queue|inbox|backlog|feed|folder|bucket|mailbox)))*"
    r"(?:\s*\([^()\n]{0,60}\))?[.!]?",  # and an aside: "0 messages available (queue=mail, consumers=1)"
    re.IGNORECASE,
)
_FINE = (
    r"(?:up[\s-]to[\s-]date|healthy|passing|passed|ok|okay|green|up|operational|valid|current|in\s+sync"
    r"|clean|fine|nominal|reachable|online|within\s+(?:budget|limits?|thresholds?|range))"
)
_ALL_CLEAR = re.compile(
    # No count above 0 of what went wrong anywhere in it ("0 failed, 3 errors"); "not" is _NOT_CLEAR's.
    r"(?![^\n]*\b[1-9][\d,]*\s+(?:[\w-]+\s+)?" + _WRONG + r"\b)"
    r"(?:(?:no|0|zero)\s+(?:[\w-]+\s+){0,2}?"
    + _WRONG
    + r"\b"
    + _REST
    # What was watched, then how it is: "backup ok", "certificate valid for 47 days", "spend within
    # budget: $41.20 of $100.00"; words, not a count ("28 passed": a test run's result), and neither
    # "up" ("price up 5%" is news) nor "passed" (a test run rerun is judged as one).
    + r"|(?:[a-z][\w.-]*[ \t]+){1,3}?(?:(?:is|are|looks?)\s+)?(?!up\b(?![\s-]to)|pass)"
    + _FINE
    + r"\b"
    + _REST
    + r"|(?:all|everything)\s+(?:\d[\d,]*\s+)?(?:[\w-]+\s+){0,3}?(?:(?:are|is|were|looks?)\s+)?"
    + _FINE
    + r"\b"
    + _REST
    + r"|(?:already\s+)?up[\s-]to[\s-]date\b"
    + _REST
    + r"|(?:all\s+clear|no\s+action\s+(?:needed|required)|nothing\s+to\s+(?:fix|change|update|report)"
    r"|unchanged|in\s+sync)\b"
    + _REST
    + r"|(?:status:?\s*)?(?:ok|okay|healthy|green|operational)[.!]?"
    # A health check's HTTP verdict, its timing after: "200 OK 126ms", "HTTP/1.1 200 OK (43 ms)".
    + r"|(?:https?(?:/[\d.]+)?\s+)?200\s+ok\b"
    + _REST
    # A verdict, then what was found fine: "OK: checksum matches", "OK - 200 in 12ms" (what went
    # wrong named in it, "OK: 2 mismatches", is no all-clear).
    + r"|(?:ok|okay)\s*[:,\u2013-]\s+(?![^\n]*\b"
    + _WRONG
    + r"\b)"
    + _REST
    + r")",
    re.IGNORECASE,
)


# A report of several parts ("Crawled 58 pages. 0 broken anchors of 214, 0 redirected. Duration
# 41s") is all clear when it names what went wrong and each time says none did ("0 broken", "no
# errors", "errors: 0"). No report is that says "not", names a state on its way or is a test
# run's ("System check identified no issues ... Ran 629 tests ... OK": a rerun is judged as one).
_WRONG_WORD = re.compile(r"\b" + _WRONG + r"\b", re.IGNORECASE)
_NONE_BEFORE = re.compile(r"\b(?:0|no|zero)\s+(?:[\w-]+\s+){0,2}$", re.IGNORECASE)
_NONE_AFTER = re.compile(r"\s*[:=]\s*0(?!\d|\.\d)")
# A state that moves while it lasts: heard unchanged again and again, it froze. A job queued or
# waiting for its turn stays as it is until its turn comes (a nightly eval pool's slot: blind batch
# 66's training poller was escalated at its fourth hourly look at a queued eval); it is on its way
# all the same, no all-clear.
_ACTIVE = (
    r"running|pending|in[\s_-]progress|processing|starting|building|deploying|retrying"
    r"|provisioning|stalled|stuck|blocked|timed?[\s_-]?out|degraded"
)
_WAITING = r"queued|waiting"
_ON_ITS_WAY = _ACTIVE + "|" + _WAITING
_NOT_CLEAR = re.compile(r"\b(?:not|never|no\s+longer|tests?|" + _ON_ITS_WAY + r")\b", re.IGNORECASE)
# Not when said to be none ("nothing running", "0 pending", "no longer running").
_NOT_NONE = r"(?<!nothing\s)(?<!no\s)(?<!not\s)(?<!none\s)(?<!0\s)(?<!longer\s)"
_UNDERWAY = re.compile(_NOT_NONE + r"\b(?:" + _ACTIVE + r")\b", re.IGNORECASE)
_QUEUED = re.compile(_NOT_NONE + r"\b(?:" + _WAITING + r")\b", re.IGNORECASE)
UNDERWAY_LONGEST = 300  # characters, stripped: a job's status is short
# A longer answer is a job's status when a JSON field named for one says so (Livy's ``"state":
# "running"`` before its app's URLs and logs): looked for in its first characters only.
_STATUS_FIELD = re.compile(r'"(?:state|status)"\s*:\s*"(?:' + _ACTIVE + r')"', re.IGNORECASE)
_QUEUED_FIELD = re.compile(r'"(?:state|status)"\s*:\s*"(?:\w+_)?(?:' + _WAITING + r')"', re.IGNORECASE)
_STATUS_READ = 2000
# Every match of _UNDERWAY holds one of these, lowercased: a few substring tests rule most outputs
# out, where the regex would cost tens of microseconds over a few hundred characters.
_UNDERWAY_PIECES = (
    *("running", "pending", "queued", "progress", "processing", "waiting", "starting", "building"),
    *("deploying", "retrying", "provisioning", "stalled", "stuck", "blocked", "degraded", "timed"),
    *("timeout", "time out", "time_out", "time-out"),
)


def nothing_new(stripped: str) -> bool:
    """Whether ``stripped`` (an output, at most :data:`CLEAR_LONGEST`) says only that nothing new came."""
    return _NOTHING_NEW.fullmatch(stripped) is not None


def said_of(stripped: str) -> str | None:
    """What ``stripped`` (an output) says of itself: up to :data:`CLEAR_LONGEST`, :data:`NOTHING_NEW`
    or :data:`ALL_CLEAR_MARK` (nothing needs doing); longer, :data:`PASSED_MARK` (a test run that
    passed, see :func:`passing_run`); up to :data:`UNDERWAY_LONGEST`, :data:`UNDERWAY_MARK` (a
    state on its way: a job's "RUNNING") or :data:`QUEUED_MARK` (a job waiting its turn); else None."""
    if len(stripped) > UNDERWAY_LONGEST:
        if passing_run(stripped):
            return PASSED_MARK
        # Most outputs: one substring test ('"stat' begins both field names), nothing copied.
        if stripped.find('"stat', 0, _STATUS_READ) >= 0:
            if _STATUS_FIELD.search(stripped, 0, _STATUS_READ):
                return UNDERWAY_MARK
            if _QUEUED_FIELD.search(stripped, 0, _STATUS_READ):
                return QUEUED_MARK
        return None
    if passing_run(stripped):
        return PASSED_MARK
    low = stripped.lower()
    if len(stripped) <= CLEAR_LONGEST and _CLEAR_HINT.search(low) is not None:
        if nothing_new(stripped):
            return NOTHING_NEW
        if all_clear(stripped):
            return ALL_CLEAR_MARK
    if any(piece in low for piece in _UNDERWAY_PIECES):
        if _UNDERWAY.search(stripped) is not None:
            return UNDERWAY_MARK
        if _QUEUED.search(stripped) is not None or _QUEUED_FIELD.search(stripped) is not None:
            return QUEUED_MARK
    return None


def all_clear(stripped: str) -> bool:
    """Whether ``stripped`` (an output, at most :data:`CLEAR_LONGEST`) says only that nothing needs doing."""
    if _NOT_CLEAR.search(stripped) is not None:
        return False
    if stripped[:1] == "{":
        return _clear_report(stripped)
    if _ALL_CLEAR.fullmatch(stripped) is not None:
        return True
    named = list(_WRONG_WORD.finditer(stripped))
    return bool(named) and all(
        _NONE_BEFORE.search(stripped, max(0, m.start() - 40), m.start())
        # A count's name, then 0 ("errors: 0"); not "failed: 0 tests ran".
        or (m.group()[-1] in "sS" and _NONE_AFTER.match(stripped, m.end()))
        for m in named
    )


def _clear_report(stripped: str) -> bool:
    """Whether ``stripped`` (a JSON object, by its first character) reports that nothing went wrong:
    a field named for what could (``broken``, ``errors``, ``failed_checks``) and each such field
    empty or 0, no ``"ok": false`` (``{"pages": 10, "broken": 0, "broken_links": []}``)."""
    data = json_object(stripped)
    if data is None:
        return False
    named = False
    for key, value in data.items():
        if value is False and isinstance(key, str) and key.lower() in _SAID_OK:
            return False
        if isinstance(key, str) and NONE_WENT_WRONG.search(key) and not isinstance(value, dict):
            if value is False:
                continue  # a flag (Elasticsearch's bulk ``"errors": false``): a write's confirmation
            if value not in (0, "0", [], None, ""):
                return False
            named = True
    return named


# What every "nothing new" and all-clear holds one of, lowercased (a cheap test before the regexes): a
# count at 0, a "no", a "nothing", an "all", a fine state, an empty list. Literals only: no flag, no
# boundary to test.
_CLEAR_HINT = re.compile(
    "0 |: 0|=0|no |zero|nothing|empty|\\[\\]|all|every|ok|date|health|green|operational|valid|within"
    "|clean|fine|nominal|reachable|online|current|sync|unchanged|clear"
)
_SAID_OK = frozenset(["ok", "success", "succeeded", "passed", "healthy", "valid"])


ALL_CLEAR_MARK = "="
"""The first character of an all-clear report's result key (see :mod:`.fingerprints`): a hex digit
never is, and the rest of the key keeps the report's content apart from another's."""


PASSED_MARK = "+"
"""The first character of a passing test run's result key (see :func:`passing_run`)."""
UNDERWAY_MARK = "~"
"""The first character of the result key of an answer naming a state on its way ("RUNNING", "pending")."""
QUEUED_MARK = "&"
"""The first character of the result key of an answer naming a job that waits its turn ("QUEUED")."""
REREAD_MARK = "^"
"""What the result key of a page naming itself as the next to read opens with (see
:func:`.paging.points_at_itself`)."""
MARKS = (ALL_CLEAR_MARK, PASSED_MARK, UNDERWAY_MARK, QUEUED_MARK, REREAD_MARK)  # what a result key opens with
PASSED_READ = 160
"""How much of an output's end is read for a test runner's summary (characters: its last lines)."""
# A test runner's last word on a run where every test it ran passed, on a line of its own: pytest's
# "==== 1 passed, 120 deselected in 0.11s ====" (no "failed", no "error" in it), unittest's "Ran 4
# tests in 0.012s" then "OK", cargo's "test result: ok.", Jest's "Tests: 12 passed, 12 total", the
# kernel selftests' "# Totals: pass:12 fail:0 xfail:0 xpass:0 skip:1 error:0".
_PASSED = re.compile(
    r"(?m)^=*\s*\d+ passed(?:, \d+ (?:deselected|skipped|xfailed|xpassed|warnings?|subtests passed))*"
    r"(?: in [\d.]+s(?: \([^)\n]*\))?)?\s*=*\s*\Z"
    r"|^Ran \d+ tests? in [\d.]+s\s+OK(?: \([^)\n]*\))?\s*\Z"
    r"|^test result: ok\. \d+ passed; 0 failed\b[^\n]*\s*\Z"
    r"|^Tests:\s+(?:\d+ skipped, )?\d+ passed, \d+ total$"
    r"|^# Totals: pass:\d+ fail:0(?: xfail:\d+)?(?: xpass:\d+)?(?: skip:\d+)?(?: error:0)?\s*\Z"
)


def passing_run(stripped: str) -> bool:
    """Whether ``stripped`` (an output) ends with a test runner's summary of a run where every test it
    ran passed: another selection's "1 passed" is a status the run gave, no page landed on again."""
    end = stripped[-PASSED_READ:]
    # The cheap test first: most outputs are no test run.
    return ("pass" in end or "OK" in end) and "FAIL" not in end and _PASSED.search(end) is not None


def underway_result(result: str | None) -> bool:
    """Whether ``result`` is the key of an answer naming a state on its way ("state": "RUNNING")."""
    return result is not None and result[:1] == UNDERWAY_MARK


def queued_result(result: str | None) -> bool:
    """Whether ``result`` is the key of an answer naming a job that waits its turn ("QUEUED")."""
    return result is not None and result[:1] == QUEUED_MARK


def rereads(result: str | None) -> bool:
    """Whether ``result`` is the key of a page naming itself as the next to read (:data:`REREAD_MARK`)."""
    return result is not None and result[:1] == REREAD_MARK


def all_clear_result(result: str | None) -> bool:
    """Whether ``result`` is the key of an all-clear report ("0 broken links", "All systems operational")."""
    return result is not None and result[:1] == ALL_CLEAR_MARK
