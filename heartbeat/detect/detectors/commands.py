"""What a command a call carries does: writes or acts, runs a SQL write, steps a bisect.

A call carries a command in an argument named for one (``cmd``, ``command``,
``script``), in any argument of a tool named for a shell, or as the arguments
of a tool named for its program (``kubectl(args="apply -f x")``, ``git_bisect``
with ``"good"``). Read by :mod:`.calls` and the detectors.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["copies_sql", "names_shell", "probes_inline", "steps_bisect", "writes_by_command", "writes_sql"]

# A `cd` or an `export` is silent, but not before a command (`cd /testbed && ls -la`): that says.
_SILENT_COMMAND = re.compile(
    r"(?<![\w-])(?:sed\s+-i|perl\s+-pi|rm|rmdir|mv|cp|mkdir|touch|(?:cd|export)(?!\s+[^\s;&|]+\s*(?:&&|;))"
    r"|chmod|chown|ln|truncate|rsync|rclone\s+(?:sync|copy|move|delete|purge)|s3\s+sync|gsutil\s+(?:-m\s+)?rsync"
    r"|git\s+(?:add|checkout|apply|stash|reset|restore|commit|switch|rm|mv|merge|rebase|cherry-pick|revert|push)"
    r"|pip\s+install"
    r"|str_replace_editor\s+(?:create|str_replace|insert|undo_edit)"
    r"|kubectl\s+(?:(?:-n|--namespace)[=\s]\S+\s+)?(?:apply|patch|delete|create|replace|scale|set|annotate"
    r"|label|edit|cordon|drain|uncordon|taint|rollout\s+(?:restart|undo))"
    r"|helm\s+(?:install|upgrade|uninstall|rollback)|terraform\s+(?:apply|destroy|import)"
    r"|systemctl\s+(?:start|stop|restart|reload|enable|disable)"
    r"|docker\s+(?:run|rm|stop|start|restart|kill|build|push|compose\s+(?:up|down|restart))"
    # the AWS CLI's verbs that change things: aws sqs change-message-visibility, aws ecs update-service
    r"|aws\s+(?:--\S+\s+\S+\s+)*[a-z0-9-]+\s+(?:put|create|delete|update|send|change|set|start|stop|tag|untag"
    r"|modify|attach|detach|invoke|terminate|reboot|restore|enable|disable|register|deregister|purge|publish"
    r"|remove|add|associate|disassociate|run|cancel|reset|import)(?:-[a-z0-9-]+)?)(?![\w-])"
    # a redirect, not a comparison with a number (a query's ``WHERE n_dead_tup > 500000``)
    r"|<<|(?<![-=<>2&:])>{1,2}\s*(?!/dev/null\b)(?![\d.]+(?:[\s)\\\"';]|$))[\w./\\\"'$~-]|\btee\b"
)
# Every match of _SILENT_COMMAND (case-sensitive) holds one of these pieces: a summary without
# any is no such command, told by a few substring searches instead of the regex, which tries
# each alternative at each position (tens of microseconds over a long summary).
_SILENT_PIECES = (
    *("sed", "perl", "rm", "mv", "cp", "mkdir", "touch", "cd", "export", "chmod", "chown"),
    *("ln", "truncate", "git", "pip", "str_replace_editor", "<<", ">", "tee", "sync", "rclone"),
    *("kubectl", "helm", "terraform", "systemctl", "docker", "aws"),
)


# Where a call carries a shell command: an argument named for one (its value, as the canonical
# JSON of a summary gives it, perhaps cut short), or any argument of a tool named for a shell. A
# ``>`` in a SQL filter or the word "export" in a search is no redirect and no command.
_COMMAND_VALUE = re.compile(r'"(?:cmd|command|commands|script|keystrokes|code|shell)":"((?:[^"\\]|\\.)*)')
_SHELL_TOOL = re.compile(r"(?:^|[_.\s-])(?:bash|sh|zsh|shell|terminal|console)(?:$|[_.\s-])", re.IGNORECASE)


# A tool named for the program it runs (``kubectl``, ``run_kubectl``, ``git``): its arguments are
# the program's, whatever they are called (``kubectl(args="-n shop set image ...")``).
_PROGRAM_TOOL = re.compile(
    r"(?:^|[_.\s-])(kubectl|helm|terraform|systemctl|docker|git)(?:$|[_.\s-])", re.IGNORECASE
)
_STRING_VALUE = re.compile(r'":"((?:[^"\\]|\\.)*)')
_SEPARATORS = re.compile(r"[_.\s-]+")


@lru_cache(maxsize=1024)
def writes_by_command(tool: str, summary: str) -> bool:
    """Whether the call ``summary`` of ``tool`` runs a command that writes or acts (see
    :data:`_SILENT_COMMAND`)."""
    if not any(piece in summary for piece in _SILENT_PIECES):
        return False
    return _runs(_SILENT_COMMAND, tool, summary)


# A bisect's step: git checks out the next commit to test, so what a check answers next is that
# commit's answer, not the last one's again.
_BISECT_STEP = re.compile(r"(?<![\w-])git\s+bisect\s+(?:(?:good|bad|skip|old|new)(?![\w-])|start\s+[^\s-])")


@lru_cache(maxsize=1024)
def steps_bisect(tool: str, summary: str) -> bool:
    """Whether the call ``summary`` of ``tool`` marks a commit in a ``git bisect`` (``git bisect
    good``, a ``git_bisect`` tool's ``"bad"``) or starts one between two (``start v2.1 v2.0``),
    which checks out the next one."""
    if "bisect" not in summary and "bisect" not in tool.lower():
        return False
    return _runs(_BISECT_STEP, tool, summary)


# Code given to an interpreter on its command line (python -c "...", node -e "..."): a probe of the
# program it runs, whose values are what it asks (another input to the function under test).
_INLINE_CODE = re.compile(r"(?<![\w-])(?:python[\d.]*|node|deno|bun)\s+(?:-[A-Za-z]+\s+)*-[ce]\s")


@lru_cache(maxsize=1024)
def probes_inline(tool: str, summary: str) -> bool:
    """Whether the call ``summary`` of ``tool`` runs code given inline to Python's or Node's
    interpreter (``python -c "..."``, ``node -e "..."``; see :data:`_INLINE_CODE`)."""
    if "-c" not in summary and "-e" not in summary:
        return False
    return _runs(_INLINE_CODE, tool, summary)


def names_shell(tool: str) -> bool:
    """Whether ``tool`` is named for a shell (``bash``, ``run_shell``, ``terminal``)."""
    return _SHELL_TOOL.search(tool) is not None


def _runs(command: re.Pattern[str], tool: str, summary: str) -> bool:
    """Whether a command the call ``summary`` of ``tool`` carries matches ``command``: in an argument
    named for a command, any argument of a shell, or the arguments of a tool named for its program."""
    if _SHELL_TOOL.search(tool):
        return command.search(summary) is not None
    if any(command.search(value) for value in _COMMAND_VALUE.findall(summary)):
        return True
    program = _PROGRAM_TOOL.search(tool)
    if program is None:
        return False
    # The program and what the tool's name says after it: git_bisect's "good" is git bisect good.
    name = _SEPARATORS.sub(" ", tool[program.start(1) :]).strip().lower()
    return any(command.search(f"{name} {value}") for value in _STRING_VALUE.findall(summary))


# A SQL statement that changes rows or the schema, as the value of an argument named for one
# (``run_sql(sql="UPDATE orders SET ...")``, ``db_execute(query="INSERT INTO ...")``): a write,
# whatever the tool is called. A SELECT reads.
_SQL_WRITE = re.compile(
    r'"(?:sql|query|statement|stmt)":"\s*(?:UPDATE\s+\S+(?:\s+(?:AS\s+)?\w+)?\s+SET'
    r"|(?:INSERT(?:\s+OR\s+\w+)?|MERGE|UPSERT|REPLACE)\s+INTO|DELETE\s+FROM|TRUNCATE|COPY\s+\S+\s+FROM"
    r"|(?:CREATE|ALTER|DROP)\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+|UNIQUE\s+|MATERIALIZED\s+)?"
    r"(?:TABLE|INDEX|VIEW|SCHEMA|DATABASE|SEQUENCE|FUNCTION|TRIGGER|TYPE|EXTENSION))\b",
    re.IGNORECASE,
)


def writes_sql(summary: str) -> bool:
    """Whether the call ``summary`` runs a SQL statement that writes (see :data:`_SQL_WRITE`)."""
    return _names_statement(summary) and _SQL_WRITE.search(summary) is not None


def _names_statement(summary: str) -> bool:
    """Whether the call ``summary`` has an argument named for a SQL statement: cheap tests, most
    calls have none."""
    return 'sql":"' in summary or 'query":"' in summary or 'tatement":"' in summary or 'stmt":"' in summary


# A SQL write that copies what a query finds (``INSERT INTO dw.orders SELECT ... WHERE updated_at >
# ...``, a ``MERGE``): an incremental sync, whose "no row" is nothing new to copy.
_SQL_COPY = re.compile(
    r'"(?:sql|query|statement|stmt)":"\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO\s[^"]*?\bSELECT\s|MERGE\s+INTO\s)',
    re.IGNORECASE,
)


def copies_sql(summary: str) -> bool:
    """Whether the call ``summary`` runs a SQL write that copies a query's rows (see
    :data:`_SQL_COPY`)."""
    return _names_statement(summary) and _SQL_COPY.search(summary) is not None
