"""Issue 27, the first hour: what a newcomer meets, run as a newcomer runs it (a real process)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def hb(cwd: Path, *argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m heartbeat ARGV`` in ``cwd``, output captured."""
    return subprocess.run(
        [sys.executable, "-m", "heartbeat", *argv],
        cwd=cwd,
        text=True,
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=60,
    )


def write(path: Path, text: str) -> Path:
    """``text`` dedented into ``path``."""
    path.write_text(textwrap.dedent(text))
    return path


# 2. Every install hint names the distribution.


def test_no_install_hint_names_the_unrelated_heartbeat_package() -> None:
    """README, package docstrings and errors, and examples say `heartbeat-watchdog[extra]`."""
    files = [ROOT / "README.md", *ROOT.glob("heartbeat/**/*.py"), *ROOT.glob("examples/**/*.py")]
    wrong = [
        f"{path.relative_to(ROOT)}: {line.strip()}"
        for path in files
        for line in path.read_text(encoding="utf-8").splitlines()
        if re.search(r"(?<![\w-])heartbeat\[", line)
    ]
    assert not wrong


def test_mcp_proxy_without_mcp_names_the_distribution(tmp_path: Path) -> None:
    """mcp-proxy with no `mcp` installed: exit 2, one line that says pip install 'heartbeat-watchdog[mcp]'."""
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "mcp.py").write_text("raise ImportError('No module named mcp')\n")
    env = {"PYTHONPATH": os.pathsep.join([str(fake), str(ROOT)])}
    done = hb(tmp_path, "mcp-proxy", "--", "true", env=env)
    assert done.returncode == 2, done.stderr
    assert "pip install 'heartbeat-watchdog[mcp]'" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


# 3. The Frameworks table: kill_file belongs to the adapter.


def _readme_section(title: str) -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return readme.split(f"\n## {title}", 1)[1].split("\n## ", 1)[0]


def test_the_frameworks_table_monitor_row_runs_as_written() -> None:
    """The Monitor row's code runs; `Monitor(kill_file=...)` itself is refused, so the row must not say it."""
    from heartbeat import Monitor

    row = next(line for line in _readme_section("Frameworks").splitlines() if "heartbeat.Monitor" in line)
    code = re.findall(r"`([^`]*kill_file=[^`]*\))`", row)
    assert code, row
    from heartbeat.integrations.langchain import HeartbeatCallbackHandler

    eval(code[0], {"Monitor": Monitor, "HeartbeatCallbackHandler": HeartbeatCallbackHandler})
    with pytest.raises(TypeError):
        Monitor(kill_file="KILL")  # type: ignore[call-arg]


# 6. The MCP section: a client passes its environment only when given env=.


def test_the_mcp_section_names_what_the_python_client_passes() -> None:
    """The README lists the variables the Python mcp client passes without env= (the SDK's own list)."""
    from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS

    section = _readme_section("MCP servers: `heartbeat mcp-proxy`")
    assert "`env=`" in section
    for name in DEFAULT_INHERITED_ENV_VARS:
        assert f"`{name}`" in section, name


# 4. --exec and the command notifier are not run by a shell.


def test_exec_with_a_shell_variable_is_refused_and_writes_no_such_file(tmp_path: Path) -> None:
    """`--exec 'python a.py $HEARTBEAT_ACTIONS'`: exit 2, one line saying no shell runs it; no `$...` file."""
    done = hb(tmp_path, "tick", "--exec", "python agent.py --out $HEARTBEAT_ACTIONS")
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1
    assert "$HEARTBEAT_ACTIONS" in done.stderr and "not run by a shell" in done.stderr
    assert "sh -c" in done.stderr
    assert not list(tmp_path.rglob("$*"))


def test_exec_with_a_redirection_is_refused(tmp_path: Path) -> None:
    """`>>` in --exec would reach the program as an argument: exit 2."""
    done = hb(tmp_path, "tick", "--exec", "echo {} >> actions.txt")
    assert done.returncode == 2
    assert "'>>' would reach echo as an argument" in done.stderr


def test_exec_through_a_shell_reads_the_variable(tmp_path: Path) -> None:
    """A shell as the program expands $HEARTBEAT_ACTIONS itself: the action is recorded."""
    line = '{"tool": "grep", "args": {}, "output": "3 matches"}'
    script = f'echo {shlex.quote(line)} >> "$HEARTBEAT_ACTIONS"'
    done = hb(tmp_path, "tick", "--exec", f"sh -c {shlex.quote(script)}")
    assert done.returncode == 0, done.stderr
    assert "1 action(s)" in done.stdout


def test_a_command_notifier_written_for_a_shell_is_a_config_error_for_every_command(tmp_path: Path) -> None:
    """`command = "cat >> notes.txt"`: tick, status and validate all refuse it, exit 2, before any step."""
    (tmp_path / "agent.py").write_text("def step(ctx):\n    open('ran', 'w').close()\n")
    write(
        tmp_path / "heartbeat.toml",
        """
        [agent]
        step = "agent:step"
        [[notify]]
        type = "command"
        command = "cat >> notes.txt"
        """,
    )
    for command in ("tick", "validate", "status"):
        done = hb(tmp_path, command)
        assert done.returncode == 2, (command, done.stderr)
        assert "not run by a shell" in done.stderr and "sh -c 'cat >> notes.txt'" in done.stderr
    assert not (tmp_path / "ran").exists()


# 18. The command notifier masks configured secrets, not every word.


def test_a_failing_command_notifier_shows_its_words_and_masks_its_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`cat: /…/no-such-notes.txt: No such file`, readable; a `${ENV}` secret in the command still `***`."""
    from datetime import UTC, datetime

    from heartbeat.config import load_config
    from heartbeat.errors import NotifyError
    from heartbeat.models import Notification
    from heartbeat.notifiers import build_notifiers

    monkeypatch.setenv("NOTES_TOKEN", "s3cr3t-t0ken-value")
    write(
        tmp_path / "heartbeat.toml",
        """
        [[notify]]
        type = "command"
        name = "words"
        command = "cat ${NOTES_TOKEN} no-such-notes.txt"
        [[notify]]
        name = "secret"
        type = "command"
        command = "cat no-such-notes.txt ${NOTES_TOKEN}"
        """,
    )
    config = load_config(tmp_path / "heartbeat.toml")
    words, secret = build_notifiers(config.notify, base_dir=tmp_path)
    message = Notification(
        key="k", kind="escalation", agent="agent", reason="r", text="t", created_at=datetime.now(UTC)
    )
    with pytest.raises(NotifyError, match=r"cat: no-such-notes\.txt: No such file"):
        words.send(message)
    with pytest.raises(NotifyError) as caught:
        secret.send(message)
    assert "s3cr3t-t0ken-value" not in str(caught.value) and "cat: ***: No such file" in str(caught.value)
