"""``empty``: calls that ask for something get nothing back, N times in a row.

Two kinds of answer count:

* an *empty* one (``""``, whitespace, ``[]``, ``{}``, ``null``, ``None``,
  ``n/a``, "no results", "not found", ...) to a call that asks for
  something, whatever it answered before: a chat tool answering nothing, a
  listing tool answering ``[]`` to filter after filter, a shell gone dark;
* a short one (at most C characters) from a call of a shape (see
  :mod:`.fingerprints`: the call with its digits left out) that has
  answered with more than C characters before in the kept history: a poll
  or a paged read that went quiet.

A run of calls whose arguments differ only in their numbers (each call a
new one: a flight search date after date, direct or with a stop, a page
after the last, a poll ``since=<timestamp>``) needs two more: "none that
day", "no page 7" and "nothing new" answer what was asked, and a working
agent tries a few. Asking again (one call twice) or asking differently
(other words: another filter, another prompt, another command) keeps the
run at N.

Silent by design is normal and never counts: a call that writes or acts
(``sed -i``, a heredoc or ``>`` write, ``rm``, ``mv``, ``git checkout``, a
tool whose first verb is ``write``, ``save``, ``delete``, ``think``...,
``slack_post_message`` and ``queue_delete`` too; see :func:`silent_by_design`),
a calculator's ``300.0``, a flight status ``available``. Short outputs that
are neither are skipped (they neither count nor break a run); a failed
action is left to the error detectors.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache

from ...core.models import Anomaly
from .contract import ActionTracker, ActionView, History, StepTracker, frozen_names, make_anomaly, need_int
from .fingerprints import prints

__all__ = [
    "EMPTY_ANSWERS",
    "NUMBERED_EXTRA",
    "Empty",
    "EmptyTracker",
    "acts_by_name",
    "is_empty_answer",
    "silent_by_design",
    "speaks",
    "waits",
]

EMPTY_ANSWERS = (
    "",
    "[]",
    "{}",
    "()",
    "null",
    "none",
    "nil",
    "n/a",
    "na",
    "-",
    "no results",
    "no results found",
    "no more results",
    "no result",
    "no matches",
    "no matches found",
    "no match",
    "not found",
    "nothing found",
    "no data",
    "empty",
    "no output",
)
"""What an empty answer looks like (any case, a trailing period allowed)."""


def _variants(text: str) -> set[str]:
    found = {text, text.upper(), text.capitalize(), text.title()}
    return found | {f"{t}." for t in found if t}


# A run of calls that differ only in their numbers needs this many more (see the module docstring).
NUMBERED_EXTRA = 2
_NO_DIGITS = str.maketrans("", "", "0123456789")

# The result keys of the empty answers: an action record keeps its output's key, not its
# text, so an empty answer is told by its key (the same live, in replay and after a save).
_EMPTY_RESULTS: frozenset[str | None] = frozenset(
    prints("t", None, text).result for answer in EMPTY_ANSWERS for text in _variants(answer)
)
_EMPTY_LONGEST = max(len(answer) for answer in EMPTY_ANSWERS) + 1


def is_empty_answer(length: int | None, result: str | None) -> bool:
    """Whether an output of ``length`` stripped characters and result key ``result`` is empty."""
    return length is not None and length <= _EMPTY_LONGEST and result in _EMPTY_RESULTS


# Calls that write or act, whose answer is silent by design: by the tool's first word
# (write_section, save, delete_item, think) or, for a command, by what it runs.
_SILENT_VERBS = frozenset(
    [
        "write",
        "save",
        "store",
        "put",
        "set",
        "update",
        "edit",
        "create",
        "delete",
        "remove",
        "rm",
        "del",
        "drop",
        "insert",
        "append",
        "add",
        "apply",
        "patch",
        "move",
        "mv",
        "copy",
        "cp",
        "rename",
        "mkdir",
        "touch",
        "chmod",
        "chown",
        "ln",
        "think",
        "note",
        "log",
        "record",
        "send",
        "post",
        "notify",
        "publish",
        "upload",
        "cancel",
        "book",
        "transfer",
        "submit",
        "exit",
        "finish",
        "quit",
        "stop",
        "start",
        "kill",
        "sleep",
        "wait",
        "reset",
        "clear",
        "commit",
        "push",
        "install",
        "configure",
        "enable",
        "disable",
        "close",
        "open",
        "mark",
        "assign",
        "click",
        "type",
        "press",
        "select",
        # an API's verbs for marking, sorting and answering things (a mail's labels, a ticket's state)
        "modify",
        "archive",
        "label",
        "tag",
        "merge",
        "approve",
        "reply",
        "forward",
        "respond",  # a message to a person (tau-bench's): the answer is theirs, in their words
        "resolve",
        "upsert",
    ]
)
_SILENT_COMMAND = re.compile(
    r"(?<![\w-])(?:sed\s+-i|perl\s+-pi|rm|rmdir|mv|cp|mkdir|touch|cd|export|chmod|chown|ln|truncate"
    r"|git\s+(?:add|checkout|apply|stash|reset|restore|commit|switch|rm|mv)|pip\s+install"
    r"|str_replace_editor\s+(?:create|str_replace|insert|undo_edit))(?![\w-])"
    r"|<<|(?<![-=<>2&])>{1,2}\s*[\w./\\\"'$~-]|\btee\b"
)
# Every match of _SILENT_COMMAND (case-sensitive) holds one of these pieces: a summary without
# any is no such command, told by a few substring searches instead of the regex, which tries
# each alternative at each position (tens of microseconds over a long summary).
_SILENT_PIECES = (
    *("sed", "perl", "rm", "mv", "cp", "mkdir", "touch", "cd", "export", "chmod", "chown"),
    *("ln", "truncate", "git", "pip", "str_replace_editor", "<<", ">", "tee"),
)


# Verbs that only read: the first verb of a name says what the tool does, and these say it acts on
# nothing (``get_post``: a post read, not one posted).
_READ_VERBS = frozenset(
    [
        *("get", "read", "list", "fetch", "search", "find", "query", "lookup", "look", "show", "view"),
        *("describe", "check", "count", "inspect", "browse", "retrieve", "poll", "peek"),
    ]
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@lru_cache(maxsize=1024)
def _verb(tool: str) -> str | None:
    """The first word of ``tool``'s name that is a verb known here: an MCP server's namespace or a
    noun may come before it (``slack_post_message``, ``gmail.modify_message``, ``queue_delete``,
    ``sendMessage``); None when there is none."""
    for word in re.split(r"[\s_.:/-]+", _CAMEL.sub("_", tool.strip()).lower()):
        if word in _KNOWN_VERBS:
            return word
    return None


@lru_cache(maxsize=1024)
def acts_by_name(tool: str) -> bool:
    """Whether ``tool``'s name says it writes or acts (``write_file``, ``finish``, ``send``,
    ``slack.post``, ``queue_delete``...): its first verb (see :func:`_verb`)."""
    return _verb(tool) in _SILENT_VERBS


# A message to a person: the answer is theirs, in their own words each time.
_MESSAGE_VERBS = frozenset(["respond", "reply", "send", "post", "notify", "forward"])
# A call that waits: a poller's pause between its rounds.
_WAIT_VERBS = frozenset(["sleep", "wait"])
_WAIT_COMMAND = re.compile(r"(?<![\w-])sleep\s+\d")
_KNOWN_VERBS = _SILENT_VERBS | _READ_VERBS | _MESSAGE_VERBS | _WAIT_VERBS


@lru_cache(maxsize=1024)
def speaks(tool: str) -> bool:
    """Whether ``tool``'s name says it sends a message to a person (``respond``, ``slack.post``)."""
    return _verb(tool) in _MESSAGE_VERBS


def waits(tool: str, summary: str) -> bool:
    """Whether the call ``summary`` of ``tool`` waits: a tool named for it, or a ``sleep 30`` command."""
    return _verb(tool) in _WAIT_VERBS or ("sleep" in summary and _WAIT_COMMAND.search(summary) is not None)


@lru_cache(maxsize=1024)
def _silent_command(summary: str) -> bool:
    return any(piece in summary for piece in _SILENT_PIECES) and _SILENT_COMMAND.search(summary) is not None


def silent_by_design(tool: str, summary: str) -> bool:
    """Whether the call ``summary`` of ``tool`` writes or acts: its empty answer says nothing."""
    return acts_by_name(tool) or _silent_command(summary)


def _asks_in_vain(action: ActionView, length: int | None) -> bool:
    """An empty answer to a call that asks for something (a rare case: the cheap test first)."""
    return (
        is_empty_answer(length, action.result)
        and action.error is None
        and not silent_by_design(action.tool, action.summary)
    )


@dataclass(frozen=True)
class Empty:
    """``empty``: N empty answers to calls that ask, or short ones from calls that answered at length
    before, in a row."""

    threshold: int = 3
    max_chars: int = 10
    exempt: Collection[str] = frozenset()
    kind: str = field(default="empty", init=False, repr=False)

    def __post_init__(self) -> None:
        need_int("empty", "threshold", self.threshold)
        need_int("empty", "max_chars", self.max_chars)
        object.__setattr__(self, "exempt", frozen_names(self.exempt))

    @property
    def history_needed(self) -> int:
        """Past actions this detector needs to see."""
        return self.threshold + NUMBERED_EXTRA

    def check(self, history: History, now: datetime) -> Anomaly | None:
        """Whether the newest action's short output completes a run of N."""
        last = history.last
        if last is None:
            return None
        state = _Run(self)
        for action in history.actions[:-1]:
            state.take(action, action.output_len)
        if not state.take(last, last.output_len):
            return None
        return self._report(last, state, history.tick, now)

    def tracker(self, history: History) -> ActionTracker:
        """An incremental ``check`` seeded from ``history``."""
        return EmptyTracker(self, history.actions)

    def _report(self, action: ActionView, state: _Run, tick: int, at: datetime) -> Anomaly | None:
        """The anomaly of a run that reached its threshold, None for a shorter one."""
        run = state.run
        numbered = state.numbered and run > 1  # one call alone is no series
        threshold = self.threshold + NUMBERED_EXTRA if numbered else self.threshold
        if run < threshold:
            return None
        what = "empty" if self.max_chars == 0 else f"empty or at most {self.max_chars} characters"
        calls = (
            "calls with only their numbers changed"
            if numbered
            else "calls that ask for something or answered at length before"
        )
        return make_anomaly(
            "empty",
            f"{run} outputs in a row were {what}, from {calls}; last: {action.summary}",
            tick=tick,
            at=at,
            action=action,
            evidence={
                "count": run,
                "threshold": threshold,
                "max_chars": self.max_chars,
                "last": action.summary,
                "avoid": action.summary,
            },
        )


class _Run:
    """The call shapes that answered at length, and the current run of short answers from them."""

    __slots__ = ("answering", "calls", "exempt", "max_chars", "numbered", "run", "seen", "since", "start")

    def __init__(self, det: Empty) -> None:
        self.exempt = det.exempt
        self.max_chars = det.max_chars
        # Each shape that answered at length, by the position of its last such answer, oldest first.
        self.answering: dict[str, int] = {}
        self.run = 0
        self.seen = 0  # actions taken: the position of the newest
        self.since = 0  # the oldest of the long answers the run's short ones count on
        self.start = 0  # the position of the run's first answer
        # Whether the run's calls are new ones whose arguments differ only in their numbers:
        # the arguments with their digits left out, and the calls' fingerprints.
        self.numbered = False
        self.calls: tuple[str, set[str]] = ("", set())

    def take(self, action: ActionView, length: int | None) -> bool:
        """:meth:`step` for a recorded action; True when it extended the run."""
        return self.step(
            action.tool,
            action.shape,
            action.fingerprint,
            action.summary,
            length,
            action.error,
            _asks_in_vain(action, length),
        )

    def step(
        self,
        tool: str,
        shape: str | None,
        fp: str,
        summary: str,
        length: int | None,
        error: str | None,
        empty: bool = False,
    ) -> bool:
        """Take one action (``empty``: an empty answer to a call that asks); True when it extended the run."""
        seen = self.seen = self.seen + 1
        if length is None or error is not None or tool in self.exempt:
            return False
        key = shape if shape is not None else tool  # a state saved before shapes: by tool
        if empty:  # counts whatever answered before: no long answer to rely on
            if not self.run:
                self.since = seen + 1
                self.start = seen
            self._extend(tool, fp, summary)
            return True
        if length > self.max_chars:
            answering = self.answering
            answering.pop(key, None)  # to the end: the order stays that of the last long answers
            answering[key] = seen
            self.run = 0
            return False
        answered = self.answering.get(key)
        if answered is None:
            return False  # silent by design, as far as we know
        if not self.run or answered < self.since:
            self.since = answered
        if not self.run:
            self.start = seen
        self._extend(tool, fp, summary)
        return True

    def _extend(self, tool: str, fp: str, summary: str) -> None:
        """Count one more short answer, from the call ``summary`` of ``tool`` (fingerprint ``fp``)."""
        if not self.run or self.numbered:
            # The tool aside (a search direct or with a stop asks the same), without its numbers.
            asked = summary[len(tool) :].translate(_NO_DIGITS)
            if not self.run:
                self.numbered = True
                self.calls = (asked, {fp})
            else:
                run_asked, fps = self.calls
                if asked != run_asked or fp in fps:
                    self.numbered = False  # asked again, or asked something else
                else:
                    fps.add(fp)
        self.run += 1

    def slide(self, kept: int) -> bool:
        """Forget all but the last ``kept`` actions, as if seeded from those; False when it cannot.

        Shapes whose last long answer is older are dropped. A run that counts
        on one of them, or began before the kept actions, would not have been
        counted so from the kept actions alone.
        """
        oldest = self.seen - kept + 1
        if self.run and (self.since < oldest or self.start < oldest):
            return False
        answering = self.answering
        while answering:
            key = next(iter(answering))  # the oldest long answer
            if answering[key] >= oldest:
                break
            del answering[key]
        return True


class EmptyTracker(StepTracker):
    """:class:`_Run` fed action by action."""

    __slots__ = ("_det", "_run")

    def __init__(self, det: Empty, actions: Iterable[ActionView]) -> None:
        self._det = det
        self._run = _Run(det)
        for action in actions:
            self._run.take(action, action.output_len)

    def step(
        self, action: ActionView, tool: str, fp: str, length: int | None, error: str | None, report: bool
    ) -> Anomaly | None:
        """:meth:`push` with the action's fields already read (see ``BuiltinStep``)."""
        if length is None or error is not None:  # nothing to count, nothing to break
            self._run.seen += 1
            return None
        state = self._run
        if not state.step(
            tool, action.shape, fp, action.summary, length, error, _asks_in_vain(action, length)
        ):
            return None
        if not report or state.run < self._det.threshold:
            return None
        return self._det._report(action, state, action.tick, action.at)

    def slide(self, kept: Sequence[ActionView]) -> bool:
        """Become what a tracker seeded from ``kept``, the end of what it took, would be; False: it cannot."""
        return self._run.slide(len(kept))
