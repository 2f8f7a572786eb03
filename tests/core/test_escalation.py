"""Escalation end to end: ESCALATION.md, a real webhook on 127.0.0.1, the outbox, secrets."""

from __future__ import annotations

import io
import re
import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import WebhookServer, running_webhook_server

from heartbeat.cli.main import main
from heartbeat.core.escalation import escalation_markdown, payload
from heartbeat.core.models import AgentState, Anomaly
from heartbeat.testing import EPOCH, make_heartbeat
from heartbeat.tick.context import StepContext

SECRET = "T000/SECRET123"
TOKEN = "tok-abc-987"


def stuck(ctx: StepContext) -> None:
    """Calls one tool with the same arguments until told it is stuck."""
    ctx.data["calls"] = ctx.data.get("calls", 0) + 1
    for _ in range(3):
        if ctx.record("fetch", {"url": "https://api.example/v1"}, output="the same response body"):
            return


def hook_config(url: str) -> dict[str, Any]:
    return {"notify": [{"type": "webhook", "url": url, "timeout": 2, "retries": 0}]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def every_file_text(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


def test_one_post_after_three_stuck_heartbeats(tmp_path: Path, webhook_server: WebhookServer) -> None:
    """Three stuck ticks: exactly one POST with the reason and a Slack-ready text; exits 0, 0, 4, 4."""
    url = webhook_server.url(f"/hooks/{SECRET}?token={TOKEN}")
    # Three stuck ticks, not two: the repeat the recovery named does not escalate early here.
    hb = make_heartbeat(stuck, tmp_path, policy={"escalate_on_ignored": False}, **hook_config(url))
    codes = [hb.tick().exit_code for _ in range(4)]
    assert codes == [0, 0, 4, 4]
    assert len(webhook_server.requests) == 1
    body = webhook_server.requests[0].json()
    assert body["kind"] == "escalation" and "stuck for 3" in body["reason"]
    assert "repeat" in body["text"] and body["stuck_streak"] == 3
    assert body["last_actions"] and webhook_server.requests[0].headers["Idempotency-Key"]
    state = hb.read_state()
    assert state.data["calls"] == 3  # the fourth tick did not call the step


def test_server_down_then_back_delivers_from_outbox(tmp_path: Path) -> None:
    """Server down: the escalation waits in outbox/; back up, the next due tick delivers it once."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/hooks/{SECRET}?token={TOKEN}"
    now = [datetime.now(UTC)]
    hb = make_heartbeat(
        stuck, tmp_path, clock=lambda: now[0], policy={"escalate_after": 1}, **hook_config(url)
    )
    result = hb.tick()
    assert result.exit_code == 4 and result.undelivered and result.waiting == 1
    assert len(list((tmp_path / "state" / "outbox").glob("*.json"))) == 1
    assert hb.tick().exit_code == 4  # still down: still waiting, nothing lost
    now[0] += timedelta(minutes=11)  # past any back-off
    with running_webhook_server(port) as server:
        again = hb.tick()
        assert again.exit_code == 4 and again.delivered and again.waiting == 0
        hb.tick()
        assert len(server.requests) == 1 and server.requests[0].json()["kind"] == "escalation"
    assert list((tmp_path / "state" / "outbox").glob("*.json")) == []


def test_webhook_secret_never_written_or_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The URL's path and token never reach state, journal, outbox, ESCALATION.md or the output."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/hooks/{SECRET}?token={TOKEN}"
    (tmp_path / "agent_mod.py").write_text(
        "def step(ctx):\n"
        "    for _ in range(3):\n"
        "        if ctx.record('fetch', {'u': 1}, output='the same response body'):\n"
        "            return\n"
    )
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstep = "agent_mod:step"\n[policy]\nescalate_after = 1\n'
        '[[notify]]\ntype = "webhook"\nurl = "${HB_TEST_HOOK}"\nretries = 0\n'
    )
    monkeypatch.setenv("HB_TEST_HOOK", url)
    out = io.StringIO()
    codes = [main(["tick", "--config", str(tmp_path / "heartbeat.toml")], out) for _ in range(2)]
    main(["status", "--config", str(tmp_path / "heartbeat.toml")], out)
    main(["log", "-n", "0", "--config", str(tmp_path / "heartbeat.toml")], out)
    assert codes == [4, 4]
    captured = capsys.readouterr()
    seen = out.getvalue() + captured.out + captured.err + every_file_text(tmp_path / "state")
    assert "outbox" in seen  # the failure was reported...
    assert "SECRET123" not in seen and TOKEN not in seen  # ...without the secret


def test_escalation_markdown_names_evidence_and_resume() -> None:
    """ESCALATION.md says what happened, shows the evidence and how to resume or stop."""
    anomaly = Anomaly(kind="loop", message="search -> read x3", tick=7, at=EPOCH)
    text = escalation_markdown(
        "bot",
        AgentState(ticks=7, stuck_streak=3),
        [anomaly],
        reason="stuck for 3 heartbeats",
        now=EPOCH,
        resume_hint='heartbeat resume --note "x"',
    )
    assert "# Agent `bot` needs a human" in text and "search -> read x3" in text
    assert 'heartbeat resume --note "x"' in text and "KILL" in text


def test_the_last_actions_show_control_and_bidi_characters_escaped() -> None:
    """An action's summary or error holding a right-to-left override or an escape sequence is shown
    escaped in ESCALATION.md and the payload's last actions, as the evidence shows it (the summary
    reached both raw: an override turned the rest of the line round in an editor or a terminal)."""
    from heartbeat.core.models import ActionRecord

    action = ActionRecord(
        index=1, tick=1, at=EPOCH, tool="search", fingerprint="f",
        summary='search({"q":"\u202egnp.exe \x1b[2J"})', error="boom \u202e\x07",
    )  # fmt: skip
    state = AgentState(ticks=1, stuck_streak=1, history=[action])
    text = escalation_markdown("bot", state, [], reason="stuck", now=EPOCH, resume_hint="heartbeat resume")
    lines = payload(state, [])["last_actions"]
    assert isinstance(lines, list)
    for shown in (text, *lines):
        assert not any(c in shown for c in "\u202e\x1b\x07"), repr(shown)
    assert (
        '- #1 (tick 1) search({"q":"\\\\u202egnp.exe \\\\x1b\\[2J"}) -> error: boom \\\\u202e\\\\x07' in text
    )


def test_escalation_md_keeps_its_escapes_and_masks_when_a_notifier_secret_is_known(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: with a notifier secret configured, the secrets were masked after the Markdown
    escaping: a URL cut to its host took the backslash escaping the ``<`` after it (raw
    ``<script>`` in ESCALATION.md), and a secret holding a ``[`` was escaped apart and never masked.
    Now each text is masked, then escaped."""
    header = "Bearer ab[cd]-9f8e7d6c5b4a3210"
    (tmp_path / "hostile_deploy.py").write_text(
        "def step(ctx):\n"
        "    for _ in range(3):\n"
        "        error = 'HTTP 401 for https://u:pw123456@h/x<script>alert(1)</script> as ' + "
        f"{header.split()[1]!r}\n"
        "        if ctx.record('deploy', {'to': 'prod'}, error=error):\n"
        "            return\n"
    )
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstep = "hostile_deploy:step"\n[policy]\nescalate_after = 1\n'
        '[[notify]]\ntype = "webhook"\nurl = "${HB_TEST_HOOK}"\nretries = 0\ntimeout = "1s"\n'
        'headers = {Authorization = "${HB_TEST_AUTH}"}\n'
    )
    monkeypatch.setenv("HB_TEST_HOOK", f"http://127.0.0.1:{free_port()}/hooks/{SECRET}?token={TOKEN}")
    monkeypatch.setenv("HB_TEST_AUTH", header)
    assert main(["tick", "--quiet", "--config", str(tmp_path / "heartbeat.toml")], io.StringIO()) == 4
    text = (tmp_path / "state" / "ESCALATION.md").read_text()
    assert "script>" in text  # the error is shown ...
    assert not re.search(r"(?<!\\)<", text), text  # ... every "<" escaped
    assert "ab[cd]" not in text and "ab\\[cd\\]" not in text and "pw123456" not in text
