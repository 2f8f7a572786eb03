"""Command lines heartbeat runs itself (``--exec``, the ``command`` notifier): split, no shell."""

from __future__ import annotations

import re
import shlex
from pathlib import PurePath

from .errors import ConfigError

__all__ = ["SHELLS", "shell_problem", "split_command"]

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "fish", "ash", "busybox"})
"""Programs that read shell syntax themselves, in the script after ``-c``: ``sh -c 'cat >> "$FILE"'``."""

_OPERATORS = frozenset({"|", "||", "&", "&&", ";", ">", ">>", "<", "<<", "2>", "2>>", "2>&1", "&>"})
_VARIABLE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*)")
_SCRIPT_FLAG = re.compile(r"-[A-Za-z]*c[A-Za-z]*")  # -c, and -c among others: bash -lc, sh -ec
_VALUED = frozenset({"-o", "+o", "-O", "+O"})  # a shell option whose value is the next word: -o pipefail


def _script_at(argv: list[str]) -> int | None:
    """Where the script of ``sh -c SCRIPT`` is in ``argv``, or None (no shell, or no ``-c``).

    A shell reads shell syntax in that one word only: its other words (a script file's
    arguments, ``$0`` and ``$1`` after the script) reach it as they are, like any program's.
    """
    name = PurePath(argv[0]).name
    if name not in SHELLS:
        return None
    at = 2 if name == "busybox" else 1  # `busybox sh -c ...`: the applet comes first
    while at < len(argv) and argv[at][:1] in ("-", "+") and argv[at] != "--":
        if _SCRIPT_FLAG.fullmatch(argv[at]):
            return at + 1
        at += 2 if argv[at] in _VALUED else 1
    return None


def shell_problem(argv: list[str], *, braced: bool = True) -> str | None:
    """What in ``argv`` only a shell would understand (``>>``, ``|``, ``$VAR``), or None.

    No shell runs it, so such a word would reach the program as it is
    (``$HEARTBEAT_ACTIONS`` as a file of that very name); a shell as the program
    is no different (``sh b.sh >> out.txt`` hands ``b.sh`` the words ``>>`` and
    ``out.txt``), except in the script after its ``-c``, which it reads itself.
    ``braced=False`` lets ``${NAME}`` pass (a config value heartbeat expands itself).
    """
    if not argv:
        return None
    script = _script_at(argv)
    line = shlex.quote(" ".join(argv))
    hint = f"it is not run by a shell; to use one: sh -c {line}"
    for at, arg in enumerate(argv[1:], 1):
        if at == script:
            continue
        if arg in _OPERATORS:
            return f"{arg!r} would reach {argv[0]} as an argument: {hint}"
        for found in _VARIABLE.finditer(arg):
            if braced or not found.group(1).startswith("{"):
                name = found.group(1).lstrip("{")
                return f"${name} would reach {argv[0]} as it is, not expanded: {hint}"
    return None


def split_command(command: str, what: str, *, braced: bool = True) -> list[str]:
    """``command`` as an argv; ConfigError when it is empty, cannot be split or is written for a shell."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise ConfigError(f"{what}: cannot split command {command!r}: {exc}") from None
    if not argv:
        raise ConfigError(f"{what}: the command is empty")
    problem = shell_problem(argv, braced=braced)
    if problem:
        raise ConfigError(f"{what}: {problem}")
    return argv
