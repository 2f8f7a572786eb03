"""What a call does, told by its tool's name and its command: acts, asks, speaks to a person, waits.

A tool's name says what it does by its first verb known here, whatever comes
before it (an MCP server's namespace, a noun: ``slack_post_message``,
``queue_delete``); a command by what it runs (``sed -i``, a heredoc write).
The detectors read these to tell an answer that says nothing (a write's
silence, an act's confirmation, a person's reply, a wait's status) from one
that says something.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from .commands import names_shell, writes_by_command, writes_sql
from .words import bare_name

__all__ = [
    "CONFIRMATION_LONGEST",
    "acts_by_name",
    "call_arguments",
    "changes_something",
    "is_note",
    "keeps_record",
    "looks_up",
    "named_things",
    "passes_silently",
    "pauses",
    "searches",
    "silence_answers",
    "silent_by_design",
    "source_named",
    "speaks",
    "stores_by_name",
    "takes",
    "takes_work",
    "waits",
]


CONFIRMATION_LONGEST = 120
"""Characters: an act's answer at most this long confirms it ("Ticket closed."); a longer one is a page."""

# Calls that write or act, whose answer is silent by design: by the tool's first word
# (write_section, save, delete_item, think) or, for a command, by what it runs.
_SILENT_VERBS = frozenset(
    [
        *("write", "save", "store", "put", "set", "update", "edit", "create", "delete", "remove", "rm"),
        *("del", "drop", "insert", "append", "add"),
        *("draft", "revise", "rewrite", "compose"),  # a writer's (``draft_section``: a draft written)
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
        "ship",  # logs or an order sent on (``ship_lines``)
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
        "trigger",
        "launch",
        "dispatch",
        "kill",
        *("sleep", "wait", "reset", "clear", "commit", "push", "install", "configure"),
        # an operator's verbs for a service or a cache (``restart_resolver``, ``flush_cache``)
        *("restart", "reboot", "reload", "flush", "purge", "invalidate", "rotate", "requeue"),
        *("deploy", "redeploy", "rollback", "scale"),
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
        "comment",  # on a pull request or a ticket (``gh_pr_comment``): a message to its people
        "forward",
        "respond",  # a message to a person (tau-bench's): the answer is theirs, in their words
        "say",  # a message to a person that may answer nothing (``say``, ``tell_user``)
        "tell",
        "resolve",
        "upsert",
        "replace",  # replace_in_file (Cline's edit)
        # a workflow's and a queue's verbs for moving a thing on (``jira.transition_issue``,
        # ``pagerduty.acknowledge``, ``webhooks.redeliver``, ``payments.refund``), or working it
        *("transition", "acknowledge", "nack", "redeliver", "refund", "capture", "fulfill", "promote"),
        *("process", "handle"),  # work done on what was taken (``events.process_batch``)
        # what changes a thing of the agent's work or a person's access (an image resized, a grant);
        # not the words as often a tool's namespace (``migrate.status``, ``build.log``, ``backfill.logs``)
        *("resize", "crop", "rotate", "compress", "transcode", "provision", "grant", "revoke", "ban"),
        # what asks a person or books a time for them (``propose_slot``, ``invite_attendees``)
        *("propose", "invite", "reserve", "reject", "decline"),
    ]
)
# Verbs that only read: the first verb of a name says what the tool does, and these say it acts on
# nothing (``get_post``: a post read, not one posted).
_READ_VERBS = frozenset(
    [
        *("get", "read", "list", "fetch", "search", "find", "query", "lookup", "look", "show", "view"),
        *("describe", "check", "count", "inspect", "browse", "retrieve", "poll", "peek"),
    ]
)
# Verbs as often nouns in a tool's name (``vector_store_search``, ``merge_request_get``,
# ``log_search``): one of them is the verb only when no other verb follows it.
_NOUN_VERBS = frozenset(
    [
        *("store", "post", "note", "log", "record", "book", "label", "tag", "type", "merge"),
        *("commit", "archive", "reply", "patch", "copy", "update", "transfer", "set", "comment"),
    ]
)
# Words that pick one of a kind: a verb as often a noun right after one is the noun
# (``backup.latest_set``, ``last_update``, ``current_post``): a read of that thing.
_PICKS = frozenset(["latest", "last", "current", "previous", "prev", "next", "recent", "active", "default"])
# A plural noun (``orders``, ``incidents``; not ``status``, ``access``, ``class``).
_PLURAL = re.compile(r"[^su]s\Z")
# What a page is worked by: a select there picks an option (``browser_select``).
_PAGES = frozenset(["browser", "page", "form", "ui", "web", "dom"])
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@lru_cache(maxsize=1024)
def _words(tool: str) -> tuple[str, ...]:
    """The words of ``tool``'s own name (see :func:`bare_name`), lowercased (``sendMessage``: send,
    message)."""
    return tuple(re.split(r"[\s_.:/-]+", _CAMEL.sub("_", bare_name(tool).strip()).lower()))


_VERSION_CONTROL = frozenset(["git", "hg", "svn"])
# What a resolve looks up rather than acts on: a name in the DNS (``resolve_host``, ``dns.resolve``,
# ``resolve(hostname=...)``), not a ticket or an incident resolved.
_RESOLVED = frozenset(["dns", "host", "hostname", "domain", "address", "ip", "fqdn", "srv", "mx", "cname"])
_RESOLVED_ARG = re.compile(r'"(?:host|hostname|domain|fqdn|qname)":')


@lru_cache(maxsize=1024)
def _verb(tool: str) -> str | None:
    """The first word of ``tool``'s name that is a verb known here: an MCP server's namespace or a
    noun may come before it (``slack_post_message``, ``gmail.modify_message``, ``queue_delete``,
    ``sendMessage``), and a verb that is as often a noun yields to a verb after it
    (``vector_store_search`` searches), and is the noun after a word picking one of a kind
    (``backup.latest_set`` reads the latest backup set), as ``log`` is after git (``git_log``); a
    store's ``select`` (``imap.select``) and ``open`` before a plural (``open_orders``: the open
    ones) are no verbs here; None when there is none."""
    found = None
    words = _words(tool)
    for i, word in enumerate(words):
        if word == "replace" and i and words[i - 1] == "str":
            continue  # one command of an editor that also views files (SWE-agent's str_replace_editor)
        if word == "select" and 0 < i == len(words) - 1 and words[i - 1] not in _PAGES:
            continue  # a store's (``imap.select``, ``mysql.select``) reads; an option's or a page's acts
        if word == "open" and i < len(words) - 1 and _PLURAL.search(words[-1]):
            continue  # the open ones (``open_orders``, ``open_pull_requests``) listed; ``open_file`` acts
        if word in _NOUN_VERBS and i and words[i - 1] in _PICKS:
            continue
        if word == "log" and i and words[i - 1] in _VERSION_CONTROL:
            continue  # git's log (the MCP git server's ``git_log``) reads the history
        if word == "resolve" and not _RESOLVED.isdisjoint(words):
            return "lookup"  # a host's name resolved (``dns_resolve``) is looked up; a ticket's is an act
        if word not in _KNOWN_VERBS and word[:2] == "re" and word[2:] in _SILENT_VERBS:
            word = word[2:]  # an act done again is that act (``reassign``, ``resend``, ``reopen``)
        if word in _KNOWN_VERBS:
            if found is not None or word not in _NOUN_VERBS:
                return word
            found = word
    return found


@lru_cache(maxsize=1024)
def acts_by_name(tool: str) -> bool:
    """Whether ``tool``'s name says it writes or acts (``write_file``, ``finish``, ``send``,
    ``slack.post``, ``queue_delete``...): its first verb (see :func:`_verb`)."""
    return _verb(tool) in _SILENT_VERBS


# Verbs that fetch a thing as it is (a style guide, a glossary, a vendor's record): not a check, a
# count, a listing or a search, whose same answer between changes says the changes missed.
_LOOKUP_VERBS = frozenset(["get", "read", "lookup", "look", "fetch", "show", "view", "describe", "retrieve"])


@lru_cache(maxsize=1024)
def looks_up(tool: str) -> bool:
    """Whether ``tool``'s name says it fetches a thing as it is (``style_guide.get``,
    ``glossary.lookup``, ``get_guidelines``): its first verb (see :func:`_verb`)."""
    return _verb(tool) in _LOOKUP_VERBS


@lru_cache(maxsize=1024)
def named_things(tool: str) -> frozenset[str]:
    """The words of ``tool``'s name that are no verb known here: what it acts on or reads
    (``state`` of ``state.get``, ``cursor`` of ``save_cursor``)."""
    return frozenset(_words(tool)) - _KNOWN_VERBS


_STORE_VERBS = frozenset(["set", "put", "save", "store", "write", "update", "commit"])


@lru_cache(maxsize=1024)
def stores_by_name(tool: str) -> bool:
    """Whether ``tool``'s first known verb stores something (``state.set``, ``save_cursor``)."""
    return _verb(tool) in _STORE_VERBS


# A message to a person: the answer is theirs, in their own words each time.
_MESSAGE_VERBS = frozenset(
    ["respond", "reply", "send", "post", "notify", "forward", "say", "tell", "comment"]
)
# A call that waits: a poller's pause between its rounds.
_WAIT_VERBS = frozenset(["sleep", "wait"])
_WAIT_COMMAND = re.compile(r"(?<![\w-])sleep\s+\d")
# An argument naming how long the call waits for something to come (``wait_s``, ``WaitTimeSeconds``,
# ``max_wait``): a long poll. ``waitlist_id`` names no wait, and a wait of 0 is no long poll.
_WAIT_ARG = re.compile(
    r'"(?:\w+_)?(?:wait(?:_\w+|[A-Z]\w*)?|[A-Za-z0-9]*Wait(?:[A-Z0-9]\w*)?)"\s*:\s*"?[1-9]'
)
_KNOWN_VERBS = _SILENT_VERBS | _READ_VERBS | _MESSAGE_VERBS | _WAIT_VERBS


# The agent's own record: a log line, a "last polled" time touched. It changes nothing the agent
# works on, so the same one again is bookkeeping, not the same act redone. A note (``think``) is
# not one: the same thought again is the agent going round.
_RECORD_VERBS = frozenset(["log", "touch"])


# A write to a log file (``append_file(path="restock.log")``): the agent's own record too; but not
# another act on one (``rotate_log(path="big.log")``: a live round's twin rotated one log every night).
_LOG_FILE = re.compile(r'"(?:path|file|filename|file_path|filepath)":"[^"]*\.log"')


# A write named for the log it adds to (``append_log``, ``write_log_entry``, ``add_journal_line``).
_LOG_WRITES = frozenset(["append", "write", "add"])
_LOGS = frozenset(["log", "logs", "journal"])


def keeps_record(tool: str, summary: str = "") -> bool:
    """Whether the call ``summary`` of ``tool`` writes the agent's own record: a tool named for it
    (``log.info``, ``state.touch``, ``append_log``) or a write to a log file
    (``append_file(path="restock.log")``): a line logged, a time kept, nothing acted on."""
    verb = _verb(tool)
    if verb in _RECORD_VERBS:
        return True
    # Written to: another act on a log (``rotate_log``, ``truncate(path="big.log")``) is work.
    return verb in _LOG_WRITES and (
        not _LOGS.isdisjoint(_words(tool)) or (".log" in summary and _LOG_FILE.search(summary) is not None)
    )


# Words that take work from a queue: what such a call answers is work come, not a state looked at.
_TAKE_WORDS = frozenset(["receive", "dequeue", "claim", "pop", "consume", "lease"])


@lru_cache(maxsize=1024)
def takes_work(tool: str) -> bool:
    """Whether ``tool``'s name says it takes work from a queue (``sqs_receive``, ``jobs.claim``)."""
    return not _TAKE_WORDS.isdisjoint(_words(tool))


@lru_cache(maxsize=1024)
def speaks(tool: str) -> bool:
    """Whether ``tool``'s name says it sends a message to a person (``respond``, ``slack.post``)."""
    return _verb(tool) in _MESSAGE_VERBS


@lru_cache(maxsize=1024)
def is_note(tool: str) -> bool:
    """Whether ``tool`` is the agent's own note (``think``): it changes nothing and observes nothing."""
    return bare_name(tool).lower() in _NOTES


_NOTES = frozenset(["think", "thought", "reflect"])


_PAUSE_COMMAND = re.compile(r'"sleep\s+\d+(?:\.\d+)?[smhd]?"')  # an argument's whole value: "sleep 180"


def pauses(tool: str, summary: str) -> bool:
    """Whether the call only pauses: a tool named ``sleep`` (``time.sleep``) or ``wait`` alone, or a
    command that only sleeps; not a long poll (``wait_for_job``). Its answer tells of the pause."""
    words = _words(tool)
    return (
        words[-1] == "sleep"
        or words == ("wait",)
        or ("sleep" in summary and _PAUSE_COMMAND.search(summary) is not None)
    )


def waits(tool: str, summary: str) -> bool:
    """Whether the call ``summary`` of ``tool`` waits: a tool named for it, a ``sleep 30`` command,
    or a long poll (an argument saying how long it waits: ``{"WaitTimeSeconds": 20}``)."""
    return (
        _verb(tool) in _WAIT_VERBS
        or ("sleep" in summary and _WAIT_COMMAND.search(summary) is not None)
        or (("wait" in summary or "Wait" in summary) and _WAIT_ARG.search(summary) is not None)
    )


# The action a tool of many is asked to do, named in an argument (a computer-use tool's
# ``computer(action="left_click")``, a dispatcher's ``crm(operation="update_contact")``), or a
# command's first word, a word alone, given to a tool that is no shell (``kafka_admin(cmd="reassign
# --group orders")``; a shell's first word is a program, read by :mod:`.commands`).
_ACTION_ARG = re.compile(r'"(?:action|operation|op)":"([A-Za-z][\w .:-]{0,40})"')
_SUBCOMMAND_ARG = re.compile(r'"(?:cmd|command)":"([A-Za-z]+)(?:\s|")')


@lru_cache(maxsize=1024)
def silent_by_design(tool: str, summary: str) -> bool:
    """Whether the call ``summary`` of ``tool`` writes or acts: its empty answer says nothing. A
    ``resolve`` given a host's name to resolve (``resolve(host=...)``) only looks it up. A tool whose
    name holds no verb acts when the action its arguments name does (``computer(action="left_click")``)."""
    if acts_by_name(tool):
        return _verb(tool) != "resolve" or _RESOLVED_ARG.search(summary) is None
    if _verb(tool) is None and '"' in summary:
        named = _ACTION_ARG.search(summary)
        named = named or (None if names_shell(tool) else _SUBCOMMAND_ARG.search(summary))
        if named is not None and named.group(1).lower() != "select" and acts_by_name(named.group(1)):
            return True  # (a query's SELECT reads: a page's select picks)
    return writes_by_command(tool, summary) or writes_sql(summary)


def changes_something(tool: str, summary: str) -> bool:
    """Whether the call ``summary`` of ``tool`` writes, acts or waits: after it, a call that failed
    may rightly be tried again (an edit made, a package installed, time given to a service)."""
    return silent_by_design(tool, summary) or waits(tool, summary)


# Programs that search, whose silence is their answer: no match.
_SEARCH_TOOLS = frozenset(["grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "locate"])
# A command argument's start, past a ``cd ... &&`` before the program.
_COMMAND_START = r'"(?:cmd|command)":"\s*(?:cd [^&;"]*(?:&&|;)\s*)?'
_SEARCH_COMMAND = re.compile(_COMMAND_START + r"(?:[ef]?grep|rg|ag|ack|find|fd|locate|git grep)\s")


_LIST_COMMAND = re.compile(_COMMAND_START + r'ls(?:\s+-\w+)*\s+[^|;&>"]+"')

# Git asked what is new, which prints nothing when nothing is: ``git fetch`` with no new commits,
# ``git log HEAD..origin/main`` of an empty range; as a command or a tool named for it (the MCP
# git server's ``git_log``).
_NEWS_COMMAND = re.compile(_COMMAND_START + r'git\s+(?:fetch|log)(?:\s|")')
_NEWS_TOOL = re.compile(r"git[_.\s-](?:fetch|log)", re.IGNORECASE)


# A checker that prints nothing when what it checks is clean (flake8, eslint, ``go vet``, ``gofmt
# -l``, ``git diff --check``, ``git status --short``...): its silence is a verdict, not a shell
# gone dark nor an answer of nothing.
_CHECK_COMMAND = re.compile(
    _COMMAND_START + r"(?:python3? -m )?(?:flake8|pyflakes|pycodestyle|pydocstyle|eslint|tsc|go vet|gofmt -l"
    r'|shellcheck|hadolint|yamllint|stylelint|git diff --check|git status (?:--short|-s|--porcelain))(?:\s|")'
)


def passes_silently(arguments: str) -> bool:
    """Whether a call of the canonical ``arguments`` runs a checker whose silence says what it
    checked is clean (read only for a silent answer)."""
    return _CHECK_COMMAND.search(arguments) is not None


# A command taking work from a queue, which prints nothing when it is empty (the AWS CLI's
# ``aws sqs receive-message``, redis-cli's ``LPOP``).
_TAKE_COMMAND = re.compile(r"\b(?:receive-messages?|dequeue|[bB]?[lLrR][pP][oO][pP])\b")


def silence_answers(tool: str, summary: str) -> bool:
    """Whether the call ``summary`` of ``tool`` says "nothing" by its silence: a search finding no
    match (a program, or a tool named for searching: a mail server's ``search_emails``), an ``ls``
    of a folder, alone, that holds nothing (a watcher's ``ls -1 incoming/``), or a queue taken from
    while it is empty (``aws sqs receive-message``, a tool named for it), or git asked what is new
    (``git fetch``, ``git log HEAD..origin/main``: see :data:`_NEWS_COMMAND`)."""
    if (
        searches(tool, summary)
        or searches_by_name(tool)
        or bare_name(tool) == "ls"
        or _LIST_COMMAND.search(summary)
    ):
        return True
    if "git" in summary and (_NEWS_COMMAND.search(summary) or _NEWS_TOOL.fullmatch(bare_name(tool))):
        return True
    return takes(tool, summary)


def takes(tool: str, summary: str) -> bool:
    """Whether the call ``summary`` of ``tool`` takes work from a queue: a tool named for it (see
    :func:`takes_work`) or a command (``aws sqs receive-message``, redis-cli's ``LPOP``)."""
    return takes_work(tool) or _TAKE_COMMAND.search(summary) is not None


_ASKING_VERBS = frozenset(["search", "find", "query"])


def searches_by_name(tool: str) -> bool:
    """Whether ``tool``'s name says it searches (``search``, ``wiki_search``, ``find_flights``):
    each call asks a question of its own, which may find nothing. Not ``lookup``: ReAct's looks
    for a keyword in the page at hand, and keyword after keyword not there is one page read in vain."""
    return _verb(tool) in _ASKING_VERBS


@lru_cache(maxsize=1024)
def searches(tool: str, summary: str) -> bool:
    """Whether the call ``summary`` of ``tool`` runs a search (``grep``, ``rg``, ``find``, ``git grep``):
    its empty answer says "no match", not that the shell went dark."""
    return bare_name(tool) in _SEARCH_TOOLS or _SEARCH_COMMAND.search(summary) is not None


# Arguments naming where a call looks (a channel, a feed, an inbox, a repository, a vendor's status
# page...), not what it looks for: each word of the name, its ``_id``, ``Id``, ``_name`` or ``_url`` left out.
_SOURCE_WORDS = frozenset(
    [
        *("channel", "feed", "inbox", "mailbox", "folder", "repo", "repository", "queue", "topic"),
        *("subreddit", "calendar", "bucket", "stream", "source", "account", "project", "board", "room"),
        *("conversation", "team", "workspace", "namespace", "cluster", "region", "site", "shard"),
        *("vendor", "provider", "service", "host", "server", "endpoint", "label", "list"),
    ]
)
_SOURCE_KEY = re.compile(r"(?:(?<=[a-z])(?=[A-Z])|[_-])(?:id|Id|ID|name|Name|url|Url|URL)\Z")


@lru_cache(maxsize=1024)
def source_named(tool: str, summary: str) -> tuple[str, str] | None:
    """The source the call ``summary`` of ``tool`` reads from, as (argument, value), when one
    argument names where it looks (``{"channel": "C04ENG"}``, ``{"feed_url": "..."}``,
    ``{"repoId": 7}``) rather than what it looks for (a filter, a query, a status); else None.
    A digest's sweep over its channels reads each once, and most are quiet (parsed at an empty
    answer only: rare)."""
    found = call_arguments((tool, summary))
    if not found:
        return None
    named = [
        (key, value)
        for key, value in found.items()
        if isinstance(value, str | int)
        and not isinstance(value, bool)
        and _SOURCE_KEY.sub("", key).lower() in _SOURCE_WORDS
    ]
    if len(named) != 1:
        return None  # none, or several: no one place it reads from
    key, value = named[0]
    return key, str(value)


def call_arguments(call: tuple[str, str]) -> dict[str, object] | None:
    """The arguments of ``call`` (tool, summary ``tool({...})``) as an object, or None when its
    summary holds none or was cut (it is read back from the summary: rare, at a finding)."""
    tool, summary = call
    if not summary.startswith(tool + "({") or not summary.endswith("})"):
        return None
    try:
        found = json.loads(summary[len(tool) + 1 : -1])
    except ValueError:
        return None
    return found if isinstance(found, dict) else None
