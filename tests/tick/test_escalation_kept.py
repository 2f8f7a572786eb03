"""An escalation is kept whatever befalls its delivery (live round 53's fail-closed checks).

Real ``python -m heartbeat`` processes over real files: a notifier plug-in
whose constructor raises beside a working ``file`` notifier, and a webhook
(a real HTTP server on 127.0.0.1) that accepts and never answers while the
tick is stopped by SIGTERM, SIGINT or KILL.
"""

from __future__ import annotations

import contextlib
import json
import signal
from collections.abc import Iterator
from pathlib import Path
from subprocess import Popen
from typing import Any

import pytest
from _cli import run_cli
from conftest import WebhookServer, spawn_heartbeat, wait_until

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


@contextlib.contextmanager
def delivering(root: Path, webhook: WebhookServer, command: str = "tick") -> Iterator[Popen[str]]:
    """A real ``heartbeat COMMAND`` whose first tick escalates to ``webhook``, which never answers,
    yielded once the escalation reached it (the tick delivers); ended if still running after. Its
    fleet stop is the file ``FLEET-STOP``."""
    webhook.delay = 60.0
    (root / "agent.py").write_text(STUCK)
    (root / "heartbeat.toml").write_text(
        '[agent]\nname = "nb"\nstep = "agent:step"\n[policy]\nescalate_after = 1\n'
        f'[[notify]]\ntype = "webhook"\nurl = "{webhook.url()}"\ntimeout = "60s"\nretries = 0\n'
        '[stop]\npath = "FLEET-STOP"\n'
    )
    proc = spawn_heartbeat(root, command, *(["--every", "1h"] if command == "run" else []))
    try:
        assert webhook.wait_for(1, timeout=30), "the escalation never reached the webhook"
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_a_notifier_plug_in_that_is_not_there_stops_the_tick_before_its_step(tmp_path: Path) -> None:
    """Regression: a `[[notify]]` type naming a module that does not exist went unseen until an
    escalation needed it: every tick called the step and exited 0. It is looked up (not built)
    before the step now, as a misspelt metric is: one line, exit 2, the step not called."""
    (tmp_path / "agent.py").write_text(
        "import pathlib\n\ndef step(ctx):\n    pathlib.Path('stepped').write_text('')\n"
    )
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nname = "nb"\nstep = "agent:step"\n[[notify]]\ntype = "nosuchmod53:Notifier"\n'
    )
    done = run_cli(tmp_path, "tick")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, (done.stdout, done.stderr)
    assert "no module named 'nosuchmod53'" in done.stderr
    assert not (tmp_path / "stepped").exists() and not (tmp_path / "state" / "state.json").exists()


@pytest.mark.parametrize(
    ("command", "stop", "code"),
    [
        ("tick", "SIGTERM", 143),
        ("tick", "SIGINT", 130),
        ("tick", "KILL", 3),
        ("run", "KILL", 3),
        ("tick", "FLEET", 3),
        ("run", "FLEET", 3),
    ],
)
def test_a_tick_stopped_while_it_delivers_keeps_its_journal_and_says_so(
    tmp_path: Path, webhook_server: WebhookServer, command: str, stop: str, code: int
) -> None:
    """Regression: a tick stopped (SIGTERM, SIGINT, KILL) while its escalation went to a webhook
    that never answers lost its whole journal (the step's 4 calls, the anomaly, the decision, the
    escalation) although state.json said needs_human, and after a signal it said "the tick's work
    was not saved". The tick's events are journaled before its delivery now, and the stop closes
    them with the tick event; the message says what was kept; the escalation waits in outbox/.
    Live round 58: the fleet stop (``[stop] path``) engaged then was not seen until the webhook
    answered (20 s); it ends the delivery as KILL does."""
    with delivering(tmp_path, webhook_server, command) as proc:
        if stop in ("KILL", "FLEET"):
            (tmp_path / ("KILL" if stop == "KILL" else "FLEET-STOP")).write_text("stop now")
        else:
            proc.send_signal(getattr(signal, stop))
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert "not saved" not in err, err
    if stop not in ("KILL", "FLEET"):
        assert "during delivery; the tick was saved and journaled" in err, err
    elif stop == "FLEET":
        assert "stopped by the fleet stop" in out + err, (out, err)
    assert json.loads((tmp_path / "state" / "state.json").read_text())["status"] == "needs_human"
    assert (tmp_path / "state" / "ESCALATION.md").is_file()
    (kept,) = (json.loads(p.read_text()) for p in (tmp_path / "state" / "outbox").glob("*.json"))
    assert kept["notification"]["kind"] == "escalation"
    events = journal(tmp_path)
    kinds = [e["event"] for e in events]
    assert kinds.count("action") == 4 and kinds.count("escalation") == 1, kinds
    (ticked,) = (e for e in events if e["event"] == "tick")
    assert (ticked["outcome"], ticked["exit_code"], ticked["actions"]) == ("needs_human", 4, 4)
    stopped = events[-1]
    assert (stopped["event"], stopped["during_delivery"]) == (
        "kill" if stop in ("KILL", "FLEET") else "interrupted",
        True,
    )
    assert kinds.index("tick") < len(kinds) - 1  # the tick's lines first, then the stop
    logged = run_cli(tmp_path, "log", "--event", "escalation", "--json")
    assert logged.returncode == 0 and "nb-escalation-1" in logged.stdout, logged.stderr


# A notifier plug-in whose send never ends and swallows what stops it (a signal's exception too).
SWALLOWS = """
import pathlib, time


class Stubborn:
    def __init__(self, name, **options):
        self.name = name

    def send(self, notification):
        while True:
            try:
                # Inside the `try`: the test signals once this exists (see test_late_spend's twin).
                pathlib.Path("sending").write_text("")
                while True:
                    time.sleep(0.05)
            except BaseException:
                pathlib.Path("swallowed").write_text("")
"""


def test_a_delivery_that_does_not_unwind_on_sigterm_still_keeps_the_journal(tmp_path: Path) -> None:
    """SIGTERM while a notifier's send swallows it: the process ends half a second later (143) and
    says the tick was saved (it was), its journal closed with the tick event, the escalation kept."""
    (tmp_path / "agent.py").write_text(STUCK)
    (tmp_path / "stubborn.py").write_text(SWALLOWS)
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nname = "nb"\nstep = "agent:step"\n[policy]\nescalate_after = 1\n'
        '[[notify]]\ntype = "stubborn:Stubborn"\nname = "stubborn"\n'
    )
    proc = spawn_heartbeat(tmp_path, "tick")
    try:
        wait_until(lambda: (tmp_path / "sending").exists(), what="the delivery", proc=proc)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 143 and (tmp_path / "swallowed").exists(), err
    assert "during delivery; the tick was saved and journaled" in err and "did not unwind" in err, err
    assert "not saved" not in err, err
    events = journal(tmp_path)
    assert [e["event"] for e in events].count("action") == 4
    assert [e["event"] for e in events][-2:] == ["tick", "interrupted"]
    assert events[-1]["during_delivery"] and events[-1]["note"] == "the delivery did not unwind"
    assert len(list((tmp_path / "state" / "outbox").glob("*.json"))) == 1


def test_a_persons_pause_is_not_held_up_by_a_tick_delivering(
    tmp_path: Path, webhook_server: WebhookServer
) -> None:
    """Live round 58: `heartbeat pause` while a tick delivered its escalation to a webhook that never
    answers waited 15 s for the lock and exited 5 ("another heartbeat holds the lock"). The tick is
    saved and journaled before it delivers, and lets the lock go first: the pause is saved while
    the delivery still waits, and the tick's journal is whole once it ends."""
    with delivering(tmp_path, webhook_server) as proc:
        paused = run_cli(tmp_path, "pause", "--reason", "looking into it")
        assert paused.returncode == 0, paused.stderr
        assert proc.poll() is None  # the delivery still waits for the webhook
        (tmp_path / "KILL").write_text("done here")  # ends the delivery: what was not sent waits
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 3, (out, err)
    assert json.loads((tmp_path / "state" / "state.json").read_text())["status"] == "paused"
    kinds = [e["event"] for e in journal(tmp_path)]
    assert kinds.count("escalation") == 1 and kinds.count("pause") == 1 and kinds.count("tick") == 1, kinds


def test_a_tick_interrupted_while_it_delivers_journals_without_the_lock(
    tmp_path: Path, webhook_server: WebhookServer
) -> None:
    """A tick delivers with the state lock let go, so another process may hold it when a signal
    ends the delivery: the tick's last lines and the stop are journaled all the same (with the lock
    wanted, they were dropped)."""
    from filelock import FileLock

    # The lock taken once the tick delivers, as a `pause` or the next tick would take it.
    with delivering(tmp_path, webhook_server) as proc, FileLock(str(tmp_path / "state" / ".lock")):
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, (out, err)
    events = journal(tmp_path)
    assert [e["event"] for e in events].count("tick") == 1, events
    assert (events[-1]["event"], events[-1]["during_delivery"]) == ("interrupted", True)
