"""Tests of heartbeat.base.commandline: a command heartbeat runs itself is split, never run by a shell."""

from __future__ import annotations

import shlex

import pytest

from heartbeat.base.commandline import shell_problem, split_command
from heartbeat.base.errors import ConfigError


@pytest.mark.parametrize(
    ("command", "word"),
    [
        ("python3 p.py >> out.txt", "'>>'"),
        # A shell as the program reads its script file, not these words: b.sh would get them.
        ("sh b.sh >> out.txt", "'>>'"),
        ("sh b.sh | cat", "'|'"),
        ("bash b.sh > out.txt", "'>'"),
        ("sh b.sh && true", "'&&'"),
        ("/bin/sh b.sh 2>&1", "'2>&1'"),
        ("sh b.sh $HEARTBEAT_ACTIONS", "$HEARTBEAT_ACTIONS"),
        ("bash -e b.sh --out=${HEARTBEAT_ACTIONS}", "$HEARTBEAT_ACTIONS"),
        ("busybox sh b.sh >> out.txt", "'>>'"),
        # After the script, its $0 and $1 are words like any other: not expanded.
        ("sh -c 'echo \"$1\"' sh $HOME", "$HOME"),
        ("bash -o pipefail -c 'a | b' x >> out.txt", "'>>'"),
    ],
)
def test_shell_syntax_outside_a_shell_script_is_refused(command: str, word: str) -> None:
    """An operator word or a `$VAR` that no shell will read is refused, whatever the program."""
    with pytest.raises(ConfigError) as caught:
        split_command(command, "--exec")
    message = str(caught.value)
    assert word in message and "not run by a shell" in message and "\n" not in message
    assert f"sh -c {shlex.quote(' '.join(shlex.split(command)))}" in message


@pytest.mark.parametrize(
    "command",
    [
        "sh -c 'sh b.sh >> out.txt'",
        "sh -c 'echo {} >> \"$HEARTBEAT_ACTIONS\"'",
        "bash -lc 'pytest -q | tail -1'",
        "sh -ec 'make && make test'",
        "bash -o pipefail -c 'a | b && echo \"$X\"' name arg",
        "busybox sh -c 'cat >> \"$FILE\"'",
        "/usr/bin/zsh -c 'print $HOME'",
        "sh b.sh --flag value",
        "python3 agent.py --out actions.txt",
    ],
)
def test_a_shell_script_after_c_and_plain_words_pass(command: str) -> None:
    """A shell reads the script after its -c itself, operators and variables included."""
    assert split_command(command, "--exec") == shlex.split(command)


def test_a_braced_name_passes_when_heartbeat_expands_it_itself() -> None:
    """`${NAME}` in a notifier's command is heartbeat's own (expanded at load), even after a shell."""
    assert shell_problem(["sh", "notify.sh", "${TOKEN}"], braced=False) is None
    assert shell_problem(["sh", "notify.sh", "$TOKEN"], braced=False) is not None
