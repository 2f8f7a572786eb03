"""What an agent writes reaches people escaped (issue 24, items 14 and 17).

Real processes, a real webhook server on 127.0.0.1, real report pages: an
agent's text cannot ping a Slack channel, disguise a link, forge a line of
``tick`` or ``status`` output, or break the report's links and layout.
"""

from __future__ import annotations

import itertools
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli as cli
from conftest import WebhookServer

from report.test_browser import _evaluate, _open, chromium, devtools  # noqa: F401 (fixtures)

HOSTILE = (
    "<!channel> <https://evil.example/x|click to resume the agent> @everyone [go](https://evil.example) & co"
)

CHATTY_AGENT = textwrap.dedent(f"""
    def step(ctx):
        for _ in range(3):
            if ctx.record("search", {{"q": {HOSTILE!r}}}, output="the same three results as before"):
                return
""")


def test_agent_text_reaches_a_slack_style_webhook_escaped(
    tmp_path: Path, webhook_server: WebhookServer
) -> None:
    """`<!channel>`, `<url|label>`, `@everyone`, `[label](url)` in an agent's text: no ping, no disguise."""
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


def test_a_model_name_with_a_line_break_forges_no_line_of_output(tmp_path: Path) -> None:
    """A model's name comes from the framework or the API answer: shown escaped by status and log."""
    (tmp_path / "agent.py").write_text(
        "def step(ctx):\n"
        "    ctx.record_usage('gpt\\x1b[2J\\nFORGED: all agents ok', 100, 20)\n"
        "    ctx.record('search', {'q': 'x'}, output='three pages found')\n"
    )
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "agent:step"\n')
    outputs = [cli(tmp_path, "tick"), cli(tmp_path, "status"), cli(tmp_path, "log")]
    for done in outputs:
        assert done.returncode == 0, done.stderr
        lines = (done.stdout + done.stderr).splitlines()
        assert not [line for line in lines if line.lstrip(" -").startswith("FORGED")], done.stdout
        assert "\x1b" not in done.stdout
    assert "gpt\\x1b[2J\\nFORGED" in outputs[1].stdout  # shown, escaped


LONG_STUCK = textwrap.dedent("""
    def step(ctx):
        for _ in range(3):
            if ctx.record("search", {"q": "x" * 600}, output="the same three results as before"):
                return

    def fine(ctx):
        ctx.record("read", {"page": ctx.tick}, output="page %d says something new" % ctx.tick)
""")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two agents, one in a folder named like a URL scheme, escalating to a webhook nobody answers."""
    root = tmp_path_factory.mktemp("fleet")
    (root / "agent.py").write_text(LONG_STUCK)
    (root / "heartbeat.toml").write_text(
        '[agent]\nstep = "agent:step"\n[policy]\nescalate_after = 1\n'
        '[[notify]]\ntype = "webhook"\nurl = "http://127.0.0.1:9/hook"\ntimeout = "1s"\nretries = 0\n'
        '[[agents]]\nname = "web"\nstate_dir = "prod:web"\nkill_file = "KILL.web"\n'
        '[[agents]]\nname = "db"\nstep = "agent:fine"\nstate_dir = "db"\nkill_file = "KILL.db"\n'
    )
    assert cli(root, "tick", "--agent", "web").returncode == 4
    for argv in (["tick"], ["pause"], ["tick"], ["tick"]):
        assert cli(root, *argv, "--agent", "db").returncode == 0
    assert cli(root, "resume", "--agent", "db").returncode == 0
    assert cli(root, "tick", "--agent", "db").returncode == 0
    done = cli(root, "report")
    assert done.returncode == 0, done.stderr
    return root


def test_the_overview_links_a_folder_named_like_a_scheme_as_a_path(fleet: Path) -> None:
    """A state folder `prod:web`: its link is a relative path that opens its page, not a `prod:` URL."""
    from urllib.parse import unquote, urljoin, urlsplit

    root = fleet
    overview = next(p for p in root.glob("*.html"))
    hrefs = re.findall(r'<a href="([^"]+)">web</a>', overview.read_text())
    assert hrefs and urlsplit(hrefs[0]).scheme == ""
    target = urlsplit(urljoin(overview.as_uri(), hrefs[0]))
    assert target.scheme == "file" and Path(unquote(target.path)) == root / "prod:web" / "report.html"
    page = (root / "prod:web" / "report.html").read_text()
    back = re.findall(r'<a href="([^"]+)">← all agents</a>', page)
    assert back and urlsplit(back[0]).scheme == ""


def test_every_marker_the_page_uses_is_defined_and_tick_labels_do_not_repeat(fleet: Path) -> None:
    """Undelivered rows' glyph has its symbol; pause, resume and waiting heartbeats repeat no tick label."""
    root = fleet
    web = (root / "prod:web" / "report.html").read_text()
    assert "not delivered" in web
    used = set(re.findall(r'<use href="#([^"]+)"', web))
    defined = set(re.findall(r'<symbol id="([^"]+)"', web))
    assert "s-undelivered" in used and used <= defined
    db = (root / "db" / "report.html").read_text()
    axis = db[db.index('id="timeline"') : db.index("</svg>", db.index('id="timeline"'))]
    labels = re.findall(r'text-anchor="middle">(\d+)</text>', axis)  # the tick axis
    assert labels and all(a != b for a, b in itertools.pairwise(labels)), labels
    assert '<span class="muted">after</span> 1' in db  # the pause and resume came after tick 1
    assert labels == ["1", "2"], labels


def test_a_long_unbroken_escalation_text_stays_inside_its_table(fleet: Path, devtools: Any) -> None:  # noqa: F811
    """In Chromium at 1100 px: the What happened table is no wider than its box."""
    root = fleet
    session = _open(devtools, (root / "prod:web" / "report.html").as_uri())
    devtools.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1100, "height": 1900, "deviceScaleFactor": 1, "mobile": False},
        session=session,
    )
    box = _evaluate(devtools, session, "document.querySelector('#events').parentNode.clientWidth")
    wide = _evaluate(devtools, session, "document.querySelector('#events').parentNode.scrollWidth")
    assert box > 0 and wide <= box, (wide, box)
