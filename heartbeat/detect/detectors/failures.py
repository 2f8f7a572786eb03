"""Failures as ``recurring_error`` reads them: what makes two the same, and runs of them.

A failure's key (:func:`failure_key`) is its error text with volatile values
and the call's own values quoted back masked (:func:`~.volatile.unechoed`) and
its result key; one with nothing to show (no output, or a bare
exit code) is told apart by its call as well. The runs over the window's
failures (:func:`chain_length`, :func:`dark_run`) are the module docstring
of :mod:`.recurring_error` in code.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Hashable, Sequence
from functools import lru_cache
from typing import Any, cast

from .calls import acts_by_name
from .commands import probes_inline
from .contract import ActionView
from .envelope import json_object, mcp_texts
from .fingerprints import error_key, failing_run
from .volatile import mask_clock, unechoed
from .words import alike, error_words, reworded, word_print, words

__all__ = [
    "DARK_EXTRA",
    "MCP_TOOL_ERROR",
    "Failure",
    "answered_failure",
    "as_failure",
    "chain_length",
    "dark_run",
    "edit_refused",
    "failure_key",
    "recorded_failure",
    "reports_by_exit",
    "rerun_key",
]


_SHORT = 10  # characters: an output this short (a bare exit code) cannot tell two errors apart
DARK_EXTRA = 3
"""How many more than N silent failures of one tool (nothing to show) make it a tool gone dark."""

_error_key = lru_cache(maxsize=512)(error_key)

# An editing tool (``str_replace_editor``, ``apply_edit``, ``replace_in_file``, ``Edit``, ``patch``)
# saying, as its answer leads, that it changed nothing: the text to replace was not there.
_EDITS = re.compile(r"edit|replace|patch|apply", re.IGNORECASE)
_REFUSED = re.compile(
    r"no\s+replacement\s+was\s+performed|no\s+changes?\s+(?:were\s+|was\s+)?made|did\s+not\s+appear\s+verbatim"
    r"|\b(?:search|string|text|old_str|block|pattern)\b[^.\n]{0,60}\bnot\s+found\b"
    r"|failed\s+to\s+(?:exactly\s+)?match|no\s*exact\s*match|\b0\s+replacements\b",
    re.IGNORECASE,
)
_REFUSED_READ = 200  # characters: an edit's refusal leads its answer (a file's text may say anything)


# An answer checked and refused, as a QA harness says it ("Answer 'New Delhi' is incorrect. You may
# continue searching or answer again.", Reflexion's "Answer is INCORRECT"): the same answer given
# again fails the same way, whatever was read between.
_ANSWER_REJECTED = re.compile(
    r"\s*(?:(?:your\s+)?answer\s+(?:'[^'\n]{0,200}'\s+|\"[^\"\n]{0,200}\"\s+)?is\s+(?:incorrect|wrong|not\s+correct)"
    r"|wrong\s+answer|incorrect\s+answer)\b",
    re.IGNORECASE,
)
_REJECTED_READ = 240  # characters: the verdict leads the answer

# "Error: non-pending order cannot be cancelled", "400 Bad Request: invalid employee_id 'dkwon'", and
# a program's own "pg_restore: error: ...", "fatal: ..." (git's), "psql: FATAL: ...". Matched from
# the answer's start: a first word that is no program's name ends the try at once.
_ERROR_OPENS = re.compile(
    r"\s*(?:[\w.-]{1,40}:\s+)?(?:error|ERROR|Error|fatal|FATAL|Fatal|[45]\d\d(?: [A-Z][a-z]+){1,4})\s*:"
)
_OPENS_READ = 60  # characters: a program's name, then its "error:"

# A text world's whole answer to an act that did nothing: ALFWorld's "Nothing happens.", WebShop's
# "Invalid action!" (their harnesses' way to refuse an act, whether or not a trace marks it failed).
_NO_EFFECT = re.compile(r"\s*(?:nothing\s+happen(?:s|ed)|invalid\s+action)\s*[.!]?\s*", re.IGNORECASE)
_NO_EFFECT_LONGEST = 40  # characters: the refusal is all the answer says
_NO_EFFECT_FIRST = frozenset("nNiI")  # what such an answer opens with: a cheap test before the regex


def recorded_failure(tool: str, args: object, output: str | None, error: str | None) -> str | None:
    """The failure an action is recorded with: its ``error``, unless an exit status alone reports
    what the program found (:func:`reports_by_exit`); without one, what its ``output`` says failed
    (:func:`answered_failure`: an edit that changed nothing failed, whatever channel says so), or
    for a command, the test run its output ends with failing (``... | tail`` exits 0 whatever
    pytest said: the summary line is its error)."""
    if not error:
        if not output:
            return None
        failed = answered_failure(tool, output)
        return failing_run(output) if failed is None and _commands(args) else failed
    return None if output and reports_by_exit(args, output, error) else error


def _commands(args: object) -> bool:
    """Whether ``args`` hold a command a shell runs (``cmd``, ``command`` or ``script``)."""
    return args.__class__ is dict and ("cmd" in args or "command" in args or "script" in args)


def answered_failure(tool: str, output: str) -> str | None:
    """The line of ``output`` in which ``tool`` reports that it failed, or None: an answer that
    opens with ``Error:`` (a tool returning its failure as text, as tau-bench's do), an MCP tool's
    result flagged ``"isError": true`` (its text, as the MCP proxy records it), an API's answer
    flagged ``"ok": false`` with its error (Slack's ``{"ok": false, "error": "not_in_channel"}``),
    an answer checked and refused ("Answer 'New Delhi' is incorrect."), or an edit refused
    (:func:`edit_refused`), or a text world's whole answer that the act did nothing ("Nothing
    happens.", "Invalid action!")."""
    if (
        len(output) <= _NO_EFFECT_LONGEST
        and output.lstrip()[:1] in _NO_EFFECT_FIRST
        and _NO_EFFECT.fullmatch(output)
    ):
        return output.strip()
    opens = _ERROR_OPENS.match(output, 0, _OPENS_READ)
    if opens is not None:
        return _line(output, opens.end() - 1, opens.end()).lstrip()
    # Only an act's (an answer given is one: ``finish``, ``submit``), and the word first.
    if acts_by_name(tool) and (
        output.find("nswer", 0, _REJECTED_READ) >= 0 or output.find("NSWER", 0, _REJECTED_READ) >= 0
    ):
        rejected = _ANSWER_REJECTED.match(output, 0, _REJECTED_READ)
        if rejected is not None:
            return _line(output, 0, rejected.end()).lstrip()
    if output[:1] == "{":
        said = None
        if _says_is_error(output) is not None:
            said = _mcp_error(output)
        elif "false" in output and _says_not_ok(output) is not None:
            said = _api_error(output)
        if said is not None:
            return said
    return edit_refused(tool, output)


# An MCP tool's result that failed: ``{"content": [{"type": "text", "text": "..."}], "isError": true}``.
_says_is_error = re.compile(r'"isError"\s*:\s*true').search
MCP_TOOL_ERROR = "the tool reported an error"
"""The error of an MCP tool result flagged ``isError`` with no text: the MCP proxy's too."""


# An API's answer that says it failed: Slack's ``{"ok": false, "error": "not_in_channel"}``,
# Cloudflare's ``{"success": false, "errors": [{"code": 10000, "message": "Authentication error"}]}``.
_says_not_ok = re.compile(r'"(?:ok|success)"\s*:\s*false').search


def _api_error(output: str) -> str | None:
    """What an API's answer flagged ``"ok": false`` or ``"success": false`` gives as its error (its
    ``error``, or the messages of its ``errors``), or None for an output that is no such answer."""
    answer = json_object(output)
    if answer is None or not (answer.get("ok") is False or answer.get("success") is False):
        return None
    errors = answer.get("errors")
    texts = [_said_of(item) for item in [answer.get("error"), *(errors if isinstance(errors, list) else ())]]
    return "\n".join(text for text in texts if text) or None


def _said_of(item: object) -> str | None:
    """An error's text: a string, or an object's ``message`` (else its ``error``)."""
    if isinstance(item, dict):
        item = item.get("message", item.get("error"))
    return item.strip() if isinstance(item, str) and item.strip() else None


def _mcp_error(output: str) -> str | None:
    """The text of an MCP tool result flagged ``isError`` (its text blocks, one per line), or None
    for an output that is no such result."""
    result = json_object(output)
    if result is None or result.get("isError") is not True:
        return None
    return "\n".join(mcp_texts(result)) or MCP_TOOL_ERROR


def edit_refused(tool: str, output: str) -> str | None:
    """The line of ``output`` in which the editing ``tool`` says it changed nothing ("No
    replacement was performed, old_str ... did not appear verbatim", "No changes made: the SEARCH
    block was not found"), or None: such an answer is a failed edit, whichever channel the tool
    reports it on."""
    if not _edits(tool):
        return None
    if _REFUSED.search(output, 0, _REFUSED_READ) is None:
        return None
    # The text it could not find, quoted back in backticks over as many lines as it has, is the
    # call's own: the same refusal whatever the agent tried to replace, one line however long.
    said = _BACKTICKED.sub("`…`", output[:_QUOTED_READ])
    found = _REFUSED.search(said, 0, _REFUSED_READ)
    if found is None:  # the refusal was inside the quote: read as it came
        return None
    return _line(said, found.start(), found.end())[:_REFUSED_READ]


_BACKTICKED = re.compile(r"`[^`]*(?:`|\Z)")
_QUOTED_READ = 20_000  # characters: an old_str quoted back is rarely longer


@lru_cache(maxsize=1024)
def _edits(tool: str) -> bool:
    """Whether ``tool``'s name says it edits (asked of every answer that did not fail: cached)."""
    return _EDITS.search(tool) is not None


def _line(output: str, at: int, end: int) -> str:
    """The line (or lines) of ``output`` holding ``output[at:end]``."""
    start = output.rfind("\n", 0, at) + 1
    stop = output.find("\n", end)
    return output[start : stop if stop >= 0 else len(output)]


def failure_key(action: ActionView) -> Hashable:
    """What makes two failures the same failure (None for a success): see the module's docstring."""
    error = action.error
    if error is None:
        return None
    if _silent(action):
        # "grep" without a match, exit 1 and no output: only the same call counts as the same.
        return (action.tool, _error_key(error), _same_call(action))
    # An error quoting the call's own values back says the same of another try (see unechoed).
    return (_error_key(unechoed(error, action.summary)), action.result)


def _silent(action: ActionView) -> bool:
    """Whether a failed action has nothing to show: no output, or one too short to tell errors apart."""
    length = action.output_len
    return length is not None and length <= _SHORT


def rerun_key(action: ActionView, key: Hashable) -> Hashable:
    """The key of the same call failing the same way; None for a call without arguments (see
    :func:`~.contract.attempted_nothing`; and the runner's record of a step that raised, which
    ``repeat`` judges): nothing was re-run."""
    if action.summary == f"{action.tool}()":
        return None
    return (_same_call(action), key)


def _same_call(action: ActionView) -> str:
    """A failed call's key: its fingerprint, or its call with the times in it masked (see
    :func:`~.volatile.mask_clock`) when it holds one. A channel read since the last wake-up and
    rate-limited at each is one call failing again, not a new one each hour (asked of failures
    only)."""
    summary = action.summary
    timeless = mask_clock(summary)
    return action.fingerprint if timeless == summary else timeless


Failure = tuple[int, str, str, frozenset[str], frozenset[str], bool, Hashable, bool, frozenset[str]]


def chain_length(failures: Sequence[Failure] | deque[Any]) -> int:
    """How many of ``failures`` (position, tool, fingerprint, words, error words, whether the tool
    answered since its failure before, failure key, whether silent; oldest first, the newest last)
    are the newest's tool failing in a row, no success between, each failing like the one before
    and rewording the calls before it in the chain (a question asked again keeps some of its words:
    "Kate Bush home studio", then "Hounds of Love recording studio", then "Kate Bush studio Kent")."""
    newest = reversed(failures)
    _, tool, fp, said, failed, answered, _, _, named = next(newest)
    run = [said]  # the calls' words, newest first
    for _, other, ofp, osaid, ofailed, oanswered, _, _, onamed in newest:
        if other != tool:
            continue
        if answered or ofp == fp or not alike(ofailed, failed):
            break
        if len(named) == len(onamed) == 1 and named | onamed == said ^ osaid:
            break  # one word changed, and each failure names back its own: another thing asked
        run.append(osaid)
        fp, said, failed, answered, named = ofp, osaid, ofailed, oanswered, onamed
    # The longest chain ending at the newest: from its first call on, each call rewords those
    # before it. Few failures in a row: all starts are tried.
    for start in range(len(run) - 1, 0, -1):
        before = chain = run[start]
        for after in reversed(run[:start]):
            if not reworded(before, after, chain):
                break
            before, chain = after, chain | after
        else:
            return start + 1
    return 1


def as_failure(
    position: int, action: ActionView, tool: str, fp: str, error: str, answered: bool, key: Hashable
) -> Failure:
    """A failed action as :func:`chain_length` reads it. A probe (code given inline to an
    interpreter, ``python -c "..."``) says its literal values as things: the same code run with other
    values asks the program something else, no rewording (the same failure recurring is the other
    rules' to see); other code failing alike is the same attempt in other words."""
    said = words(tool, action.summary)
    failed = error_words(error, said, action.failure)
    named = frozenset(w for w in said if word_print(w) in action.failure) if action.failure else frozenset()
    if probes_inline(tool, action.summary) and (code := _INLINE_BODY.search(action.summary)) is not None:
        # Its literals read as one word, "lit", and their values as things: the same code with other
        # values changes only things; a value added or taken away changes the code.
        values = {f"={value}" for value in _LITERAL.findall(code.group(3))}
        plain = (
            action.summary[: code.start(3)]
            + _LITERAL.sub(" lit ", code.group(3))
            + action.summary[code.end(3) :]
        )
        said = words(tool, plain) | values
    return (position, tool, fp, said, failed, answered, key, _silent(action), named)


# The code of a probe (``python -c '...'``, ``node -e \"...\"`` as a summary's JSON escapes it)
# inside its quotes, and the literal values in it: a quoted text, a number.
_INLINE_BODY = re.compile(r"""(-[ce]\s+)(\\?["'])(.*?)\2""", re.S)
_LITERAL = re.compile(r"""'[^'\\]*'|\\"[^"\\]*\\"|\b\d+(?:\.\d+)?\b""")


def dark_run(failures: Sequence[Failure] | deque[Any], tool: str, answered_at: int) -> tuple[int, int]:
    """How many of ``failures`` (the newest one silent) are a tool gone dark, and over how many
    tools: ``tool``'s failing with nothing to show since it last answered, or, when more, the
    newest back to back (no success between) each failing with nothing to show and the newest's
    error text (volatile values masked) over more than one tool: a shell gone dark fails every
    program alike ("container ... is not running"), whatever it is asked to run. The newest not
    silent: the tool failing alike in a row (see :func:`_alike_run`)."""
    if not failures[-1][7]:
        return _alike_run(failures)
    own = sum(1 for f in failures if f[7] and f[1] == tool and f[0] > answered_at)
    error = _silent_error(failures[-1])
    tools: set[str] = set()
    at = failures[-1][0] + 1
    for f in reversed(failures):
        if f[0] != at - 1 or _silent_error(f) != error:
            break
        tools.add(f[1])
        at = f[0]
    run = failures[-1][0] + 1 - at
    return (run, len(tools)) if len(tools) > 1 and run > own else (own, 1)


def _alike_run(failures: Sequence[Failure] | deque[Any]) -> tuple[int, int]:
    """How many of ``failures`` are the newest's tool failing in a row since it last answered, each
    like the one before (see :func:`~.words.alike`), asking three things at least (one call
    retried, backing off from a rate limit, is the re-run rules'); 0 tools: not silent."""
    newest = reversed(failures)
    _, tool, fp, _, failed, answered, _, _, _ = next(newest)
    asked = {fp}
    run = 1
    for _, other, ofp, _, ofailed, oanswered, _, _, _ in newest:
        if other != tool:
            continue
        if answered or not alike(ofailed, failed):
            break
        run, failed, answered = run + 1, ofailed, oanswered
        asked.add(ofp)
    return (run if len(asked) >= 3 else 0), 0


def _silent_error(failure: Failure) -> str | None:
    """The error text key of a failure with nothing to show (its key: tool, error, call), else None."""
    return cast(tuple[str, str, str], failure[6])[1] if failure[7] else None


# A failure said by an exit status alone ("returncode 1", "exit code 1"): a program's status,
# which some programs give to say what they found, not that they failed.
_BARE_EXIT = re.compile(
    r"(?:returncode|return code|exit code|exit status|exited with code)[ :=]*([12])", re.IGNORECASE
)
# The programs that exit 1 (terraform: 2) to report a finding: `npm outdated` when anything is
# outdated, `npm audit`, `pip-audit` and `cargo audit` when an advisory applies, `diff` and `cmp`
# when the files differ, `git diff --exit-code` (or `--quiet`) when there are changes, `terraform
# plan -detailed-exitcode` when the plan changes something. The command's last one, whose status
# the shell returns (`cd app && npm outdated`).
_FINDS_BY_EXIT = re.compile(
    r"(?:[A-Za-z_]\w*=\S*\s+)*(?:"
    r"(?P<one>(?:npm|yarn|pnpm|bundle|composer)\s+(?:outdated|audit)\b|pip-audit\b|cargo\s+audit\b"
    r"|diff\s|cmp\s"
    r"|git\s+(?:-\S+\s+)*diff\b.*\s--(?:exit-code|quiet)\b)"
    r"|(?P<two>terraform\s+(?:-\S+\s+)*plan\b.*\s-detailed-exitcode\b))"
)
_FAILED_OPENINGS = ("npm ERR!", "npm error", "error", "Error", "ERROR", "fatal:", "Traceback")
_FINDS_WORDS = ("outdated", "audit", "diff", "cmp", "plan")  # a cheap test first: most commands hold none
_LAST_COMMAND = re.compile(r".*(?:&&|\|\||;|\|)\s*", re.S)  # a pipeline's status is its last program's


def reports_by_exit(args: object, output: str, error: str) -> bool:
    """Whether ``error``, an exit status alone, is a program's way to say what it found: the
    command (``args``'s ``cmd`` or ``command``) ends in one that exits so when it finds something
    (``npm outdated``: 1 when anything is outdated), and ``output`` holds its report. A daily
    audit hearing the same outdated packages each morning is a watcher seeing nothing new, not a
    command failing again and again."""
    exit_code = _BARE_EXIT.fullmatch(error.strip())
    if exit_code is None or not output.strip() or not isinstance(args, dict):
        return False
    if output.lstrip().startswith(_FAILED_OPENINGS):  # the program failed and says so: no report
        return False
    command = args.get("cmd", args.get("command"))
    if not isinstance(command, str) or not any(word in command for word in _FINDS_WORDS):
        return False
    finds = _FINDS_BY_EXIT.match(_LAST_COMMAND.sub("", command, count=1).strip() + " ")
    if finds is None:
        return False
    return exit_code.group(1) == ("2" if finds.group("two") else "1")
