"""Command lines heartbeat runs itself (``--exec``, the ``command`` notifier): split, no shell."""

from __future__ import annotations

import re
import shlex
from pathlib import PurePath

from .errors import ConfigError

__all__ = ["SHELLS", "shell_problem", "split_command"]

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "fish", "ash", "busybox"})
"""Programs that read shell syntax themselves: ``sh -c 'cat >> "$FILE"'`` is fine."""

_OPERATORS = frozenset({"|", "||", "&", "&&", ";", ">", ">>", "<", "<<", "2>", "2>>", "2>&1", "&>"})
_VARIABLE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*)")


def shell_problem(argv: list[str], *, braced: bool = True) -> str | None:
    """What in ``argv`` only a shell would understand (``>>``, ``|``, ``$VAR``), or None.

    No shell runs it, so such a word would reach the program as it is
    (``$HEARTBEAT_ACTIONS`` as a file of that very name). A program that is a
    shell itself reads them. ``braced=False`` lets ``${NAME}`` pass (a config
    value heartbeat expands itself).
    """
    if not argv or PurePath(argv[0]).name in SHELLS:
        return None
    line = shlex.quote(" ".join(argv))
    hint = f"it is not run by a shell; to use one: sh -c {line}"
    for arg in argv[1:]:
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
