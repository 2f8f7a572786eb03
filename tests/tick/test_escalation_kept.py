"""An escalation is kept whatever befalls its delivery (live round 53's fail-closed checks).

Real ``python -m heartbeat`` processes over real files: a notifier plug-in
whose constructor raises beside a working ``file`` notifier, and a webhook
(a real HTTP server on 127.0.0.1) that accepts and never answers while the
tick is stopped by SIGTERM, SIGINT or KILL.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli

# Four identical calls: with escalate_after = 1 the first tick escalates.
STUCK = """
def step(ctx):
    for _ in range(4):
        ctx.record("search", {"q": "same"}, output="same 3 hits")
"""

# A notifier plug-in that cannot be built: its vault is down.
UNBUILDABLE = """
class Boom:
    def __init__(self, name, **options):
        raise RuntimeError("cannot build: vault unreachable")

    def send(self, notification):
        pass
"""


def journal(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / "state" / "journal.jsonl").read_text().splitlines()]


def errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("heartbeat: [nb] error: ")]


@pytest.fixture
def beside_a_broken_notifier(tmp_path: Path) -> Path:
    """An agent that escalates at once, a working `file` notifier and one that cannot be built."""
    (tmp_path / "agent.py").write_text(STUCK)
    (tmp_path / "mynotify.py").write_text(UNBUILDABLE)
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nname = "nb"\nstep = "agent:step"\n[policy]\nescalate_after = 1\n'
        '[[notify]]\ntype = "file"\nname = "file"\npath = "state/notifications.jsonl"\n'
        '[[notify]]\ntype = "mynotify:Boom"\nname = "vaultpager"\n'
    )
    return tmp_path


@pytest.mark.parametrize("flags", [[], ["--quiet"]], ids=["plain", "quiet"])
def test_a_notifier_that_cannot_be_built_costs_the_escalation_nothing(
    beside_a_broken_notifier: Path, flags: list[str]
) -> None:
    """Regression: a notifier plug-in whose constructor raised lost the escalation: state.json said
    needs_human, but no ESCALATION.md, no journal, nothing in outbox/, and the working `file`
    notifier was never called. Now the escalation is written and journaled, the other notifier
    gets it, the broken one's message waits in outbox/, and one error line names it (exit 2)."""
    root = beside_a_broken_notifier
    done = run_cli(root, "tick", *flags)
    assert done.returncode == 2, (done.stdout, done.stderr)
    (line,) = errors(done.stderr)
    assert "notifier vaultpager: mynotify:Boom failed to start" in line and "vault unreachable" in line
    assert "Traceback" not in done.stderr
    assert json.loads((root / "state" / "state.json").read_text())["status"] == "needs_human"
    assert (root / "state" / "ESCALATION.md").is_file()
    (sent,) = (json.loads(s) for s in (root / "state" / "notifications.jsonl").read_text().splitlines())
    assert sent["kind"] == "escalation"
    kept = [json.loads(p.read_text()) for p in (root / "state" / "outbox").glob("*.json")]
    assert [(e["notifier"], e["notification"]["kind"]) for e in kept] == [("vaultpager", "escalation")]
    assert "could not be built" in kept[0]["last_error"]
    events = journal(root)
    assert [e["event"] for e in events].count("action") == 4
    assert {"anomaly", "decision", "escalation", "delivery", "tick"} <= {e["event"] for e in events}
    assert events[-1]["event"] == "tick" and events[-1]["exit_code"] == 2


def test_a_notifier_that_cannot_be_built_is_still_refused_before_a_run(
    beside_a_broken_notifier: Path,
) -> None:
    """`validate` (and so `run`) still refuse the config in one line; `notify --test` tests the
    others and says which failed."""
    root = beside_a_broken_notifier
    checked = run_cli(root, "validate")
    assert checked.returncode == 2 and checked.stderr.count("\n") == 1, checked.stderr
    assert "notifier vaultpager: mynotify:Boom failed to start" in checked.stderr
    tested = run_cli(root, "notify", "--test")
    assert tested.returncode == 1, (tested.stdout, tested.stderr)
    assert "nb: file: delivered" in tested.stdout
    assert "nb: vaultpager: FAILED: notifier vaultpager: could not be built" in tested.stdout
