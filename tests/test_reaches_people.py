"""What an agent writes reaches people escaped (issue 24, items 14 and 17).

Real processes, a real webhook server on 127.0.0.1, real report pages: an
agent's text cannot ping a Slack channel, disguise a link, forge a line of
``tick`` or ``status`` output, or break the report's links and layout.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import WebhookServer


def cli(cwd: Path, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """A real ``python -m heartbeat`` process in ``cwd``, run to its end."""
    return subprocess.run(
        [sys.executable, "-m", "heartbeat", *argv],
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1"},
        text=True,
        capture_output=True,
        timeout=timeout,
    )


HOSTILE = "<!channel> <https://evil.example/x|click to resume the agent> @everyone [resume](https://evil.example/y) & co"

CHATTY_AGENT = textwrap.dedent(f"""
    def step(ctx):
        for _ in range(3):
            if ctx.record("search", {{"q": {HOSTILE!r}}}, output="nothing new here, the same as before"):
                return
""")


def test_agent_text_reaches_a_slack_style_webhook_escaped(
    tmp_path: Path, webhook_server: WebhookServer
) -> None:
    """`<!channel>`, `<url|label>`, `@everyone` and `[label](url)` in the agent's words ping no one and hide no link."""
    (tmp_path / "agent.py").write_text(CHATTY_AGENT)
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstep = "agent:step"\n[policy]\nescalate_after = 1\n'
        f'[[notify]]\ntype = "webhook"\nurl = "{webhook_server.url("/hook")}"\n'
    )
    done = cli(tmp_path, "tick")
    assert done.returncode == 4, done.stderr
    assert webhook_server.wait_for(1)
    text = webhook_server.requests[0].json()["text"]
    assert "search" in text and "&lt;!channel&gt;" in text  # the words are there, escaped as Slack asks
    assert "<" not in text and ">" not in text  # no mention, no link of Slack's
    assert "&lt;https://evil.example/x|click to resume the agent&gt;" in text
    assert "@everyone" not in text and "@\u200beveryone" in text  # no mention of Discord's or Mattermost's
    assert "](" not in text  # no markdown link with a label
    assert "&amp; co" in text


FORGER = textwrap.dedent("""
    def step(ctx):
        for _ in range(3):
            tool = "search\\nFORGED: all agents ok\\x1b[2J"
            if ctx.record(tool, {"q": 1}, output="nothing", error="failed\\nFORGED: error line"):
                return
""")


def test_a_tool_name_with_a_line_break_forges_no_line_of_output(tmp_path: Path) -> None:
    """Tool names and errors holding line breaks and escape codes are printed escaped by tick and status."""
    (tmp_path / "agent.py").write_text(FORGER)
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "agent:step"\n')
    outputs = [
        cli(tmp_path, "tick"),
        cli(tmp_path, "status"),
        cli(tmp_path, "status", "--json"),
        cli(tmp_path, "log"),
    ]
    for done in outputs:
        assert done.returncode in (0, 1), done.stderr
        lines = (done.stdout + done.stderr).splitlines()
        assert not [line for line in lines if line.lstrip(" -").startswith("FORGED")], done.stdout
        assert "\x1b" not in done.stdout
    assert "search\\nFORGED: all agents ok\\x1b[2J" in outputs[0].stdout  # shown, escaped
