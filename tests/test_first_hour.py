"""Issue 27, the first hour: what a newcomer meets, run as a newcomer runs it (a real process)."""

from __future__ import annotations

import os
import re
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
