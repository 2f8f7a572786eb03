"""Session: a long-running process records live calls into an agent's state folder, heartbeat by stretch."""

from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli
from _integrations import pause_by_hand
from conftest import wait_until

from heartbeat.base.errors import StateLocked
from heartbeat.config.file import HeartbeatConfig
from heartbeat.integrations.session import Session, Stopped
from heartbeat.replay.play import replay
from heartbeat.state.journal import Journal
from heartbeat.state.store import StateStore

# Healthy work: a new query and a new answer each time (numbers would be masked as the same).
WORDS = ["heartbeats", "loops", "cycles", "agents", "recovery", "budgets", "journals", "locks"]


def make_session(folder: Path, **options: Any) -> Session:
    config = HeartbeatConfig.model_validate(
        {
            "agent": {"state_dir": str(folder / "state"), "kill_file": str(folder / "KILL")},
            "base_dir": folder,
            **options.pop("config", {}),
        }
    )
    options.setdefault("idle", 30.0)  # boundaries only where a test asks for them
    return Session(config, **options)


def state(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "state" / "state.json").read_text())
    return data


def events(folder: Path) -> list[dict[str, Any]]:
    return list(Journal(folder / "state" / "journal.jsonl").read())


def test_healthy_calls_land_in_state_and_journal_at_close(tmp_path: Path) -> None:
    with make_session(tmp_path) as session:
        assert session.check() is None
        for i in range(4):
            assert (
                session.record("search", {"q": WORDS[i]}, output=f"pages about {WORDS[i]}", cost=0.5) is None
            )
        assert session.is_open
    saved = state(tmp_path)
    assert saved["ticks"] == 1 and saved["actions_total"] == 4 and saved["stuck_streak"] == 0
    assert [a["summary"] for a in saved["history"]] == [f'search({{"q":"{w}"}})' for w in WORDS[:4]]
    assert saved["budget"]["cost"] == 2.0
    kinds = [e["event"] for e in events(tmp_path)]
    assert kinds.count("action") == 4 and kinds[-1] == "tick"
    assert session.last is not None and session.last.outcome == "ran" and session.last.actions == 4


def test_repeat_is_answered_at_once_with_the_policys_instructions(tmp_path: Path) -> None:
    session = make_session(tmp_path)
    hits = [session.record("get_page", {"url": "a"}, output="same page text") for _ in range(3)]
    assert hits[:2] == [None, None]
    assert hits[2] is not None and hits[2].kind == "repeat"
    # The anomaly ended the heartbeat: the decision is saved and its text is ready for the model.
    assert not session.is_open
    assert session.instructions is not None and "get_page" in session.instructions
    saved = state(tmp_path)
    assert saved["stuck_streak"] == 1 and saved["recovery"]["mode"] == "try_alternative"
    assert saved["instructions"] == session.instructions
    # The next call opens the next heartbeat, which carries the instructions on.
    assert session.check() is None
    assert session.instructions == saved["instructions"]
    session.close()


def test_escalation_stops_calls_until_a_human_resumes(tmp_path: Path) -> None:
    session = make_session(tmp_path)
    hits = []
    while session.stopped is None and len(hits) < 6:  # the agent ignores every recovery
        hits.append(session.record("get_page", {"url": "a"}, output="same page text"))
    assert [h.kind if h else None for h in hits[:3]] == [None, None, "repeat"]
    assert all(h is not None for h in hits[2:]) and len(hits) <= 5  # a human within the streak limit
    stop = session.check()
    assert stop is not None and stop.kind == "needs_human" and stop.exit_code == 4
    assert "heartbeat resume" in stop.message
    with pytest.raises(Stopped) as caught:
        session.record("get_page", {"url": "b"}, output="x")
    assert caught.value.stop.kind == "needs_human"
    assert (tmp_path / "state" / "ESCALATION.md").is_file()
    ticks = state(tmp_path)["ticks"]
    # Waiting costs no tick per call: nothing on disk changed.
    for _ in range(3):
        assert session.check() == stop
    assert state(tmp_path)["ticks"] == ticks
    assert session.take_note() is None  # the recovery texts came with the anomalies
    session.heartbeat.resume("use the cached copy")
    assert session.check() is None
    assert session.instructions == "use the cached copy"
    note = session.take_note()
    assert note == "use the cached copy" and note is not None and note.by_person
    assert session.take_note() is None  # handed over once
    assert session.record("read_cache", {"key": "a"}, output="cached page text") is None
    session.close()
    assert state(tmp_path)["status"] == "active"


@pytest.mark.parametrize("from_file", [False, True])
def test_the_resume_command_a_stop_names_works_from_any_folder(tmp_path: Path, from_file: bool) -> None:
    """A session's escalation names `heartbeat resume` with its state folder (and its config file and
    agent, when it has one): run as written from another folder, it resumes this agent. The MCP
    proxy's answers and every adapter's Stopped say it so; the person is not in the agent's folder."""
    if from_file:  # two agents in the file: --state-dir alone would not say which
        (tmp_path / "heartbeat.toml").write_text(
            '[agent]\nkill_file = "KILL"\n[[agents]]\nname = "one"\nstate_dir = "one"\n'
            '[[agents]]\nname = "two"\nstate_dir = "state"\n'
        )
        session = Session.from_files(tmp_path / "heartbeat.toml", agent="two", idle=30.0)
    else:
        session = make_session(tmp_path)
    while session.stopped is None:
        session.record("get_page", {"url": "a"}, output="same page text")
    stop = session.check()
    assert stop is not None and stop.kind == "needs_human"
    told = re.findall(r"`(heartbeat resume [^`]*)`", stop.message)
    assert told and f"--state-dir {tmp_path / 'state'}" in told[0]
    assert told[0] in (tmp_path / "state" / "ESCALATION.md").read_text()
    argv = shlex.split(told[0])
    argv[argv.index("--note") + 1] = "use the cached copy"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = run_cli(elsewhere, *argv[1:])
    assert done.returncode == 0 and "resumed" in done.stdout, done.stderr
    assert session.check() is None and session.take_note() == "use the cached copy"
    session.close()


def test_kill_file_stops_calls_and_is_journaled_once(tmp_path: Path) -> None:
    session = make_session(tmp_path)
    assert session.record("search", {"q": "a"}, output="three results found") is None
    (tmp_path / "KILL").write_text("stop the proxy\n")
    stop = session.check()
    assert stop is not None and stop.kind == "killed" and "stop the proxy" in stop.message
    assert session.killed and not session.is_open
    # The open heartbeat was ended and saved: the call made before the KILL is kept.
    assert state(tmp_path)["actions_total"] == 1
    for _ in range(3):
        assert session.check() is not None
    kills = [e for e in events(tmp_path) if e["event"] == "kill"]
    assert len(kills) == 1 and kills[0]["during_step"] is True
    (tmp_path / "KILL").unlink()
    assert session.check() is None
    session.close()


def test_kill_ends_an_open_heartbeat_without_waiting_for_a_call(tmp_path: Path) -> None:
    session = make_session(tmp_path)  # idle 30 s: only the KILL can end it
    assert session.record("search", {"q": "a"}, output="three results found") is None
    (tmp_path / "KILL").write_text("")
    wait_until(lambda: (tmp_path / "state" / "state.json").exists(), timeout=2, what="the save")
    assert state(tmp_path)["actions_total"] == 1
    wait_until(lambda: any(e["event"] == "kill" for e in events(tmp_path)), timeout=2, what="the kill line")
    stop = session.check()
    assert stop is not None and stop.kind == "killed"
    assert [e.get("during_step") for e in events(tmp_path) if e["event"] == "kill"] == [True]


def test_kill_before_any_heartbeat_is_journaled_and_refused(tmp_path: Path) -> None:
    (tmp_path / "KILL").write_text("")
    session = make_session(tmp_path)
    stop = session.check()
    assert stop is not None and stop.kind == "killed" and stop.exit_code == 3
    with pytest.raises(Stopped):  # a call that ran anyway: journaled, not saved
        session.record("search", {"q": "a"})
    assert [(e["event"], e.get("after_stop")) for e in events(tmp_path)] == [
        ("kill", None),
        ("action", "killed"),
    ]
    assert not (tmp_path / "state" / "state.json").exists()


def test_idle_ends_the_heartbeat_and_frees_the_lock(tmp_path: Path) -> None:
    session = make_session(tmp_path, idle=0.05)
    assert session.record("search", {"q": "a"}, output="three results found") is None
    store = StateStore(tmp_path / "state")

    def lock_is_free() -> bool:
        try:
            with store.lock():
                return True
        except StateLocked:
            return False

    # The idle heartbeat ends by itself, is saved and lets go of the lock.
    wait_until(lock_is_free, timeout=5, what="the lock to be free")
    assert not session.is_open
    assert state(tmp_path)["actions_total"] == 1
    # Another process may now pause the agent; the session sees it at the next call.
    pause_by_hand(tmp_path, "--state-dir", str(tmp_path / "state"))
    stop = session.check()
    assert stop is not None and stop.kind == "paused" and "lunch" in stop.message


def test_every_n_actions_is_a_heartbeat(tmp_path: Path) -> None:
    session = make_session(tmp_path, actions=3)
    for i in range(7):
        assert session.record("search", {"q": WORDS[i]}, output=f"pages about {WORDS[i]}") is None
    session.close()
    saved = state(tmp_path)
    assert saved["ticks"] == 3 and saved["actions_total"] == 7
    assert [a["tick"] for a in saved["history"]] == [1, 1, 1, 2, 2, 2, 3]


def test_a_busy_lock_is_reported_after_lock_wait(tmp_path: Path) -> None:
    session = make_session(tmp_path, lock_wait=0.2)
    store = StateStore(tmp_path / "state")
    store.state_dir.mkdir(mode=0o700)
    with store.lock():
        began = time.monotonic()
        stop = session.check()
        assert time.monotonic() - began >= 0.2
    assert stop is not None and stop.kind == "locked" and stop.exit_code == 5
    assert session.check() is None
    session.close()


def test_budget_breach_pauses_mid_stretch(tmp_path: Path) -> None:
    session = make_session(tmp_path, config={"budget": {"actions_per_day": 2}})
    assert session.record("search", {"q": "a"}, output="three results found") is None
    assert session.record("search", {"q": "b"}, output="three results found") is None
    hit = session.record("search", {"q": "c"}, output="three results found")
    assert hit is not None and hit.kind == "budget"
    stop = session.check()
    assert stop is not None and stop.kind == "paused"


def test_from_files_resolves_like_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "heartbeat.toml").write_text('[agent]\nname = "mcp"\n[detectors.repeat]\nthreshold = 2\n')
    monkeypatch.chdir(tmp_path)
    session = Session.from_files(state_dir="elsewhere", idle=30)
    assert session.name == "mcp"
    assert session.state_dir == tmp_path / "elsewhere"
    assert session.kill_file == tmp_path / "KILL"
    assert session.record("a", {"x": 1}) is None
    hit = session.record("a", {"x": 1})
    assert hit is not None and hit.kind == "repeat"


def test_bad_options_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="actions"):
        make_session(tmp_path, actions=0)
    with pytest.raises(ValueError, match="idle"):
        make_session(tmp_path, idle=0)


def test_a_process_that_exits_without_close_saves_its_open_heartbeat(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from heartbeat.integrations.session import Session\n"
        "s = Session.from_files(state_dir='state', idle=600)\n"
        "s.record('search', {'q': 'a'}, output='three results found')\n"
    )
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - began < 30  # not held open until the idle boundary
    assert state(tmp_path)["actions_total"] == 1


def _terminated_when(folder: Path, argv: list[str], mark: str) -> tuple[int, str]:
    """Run ``argv`` in ``folder``, SIGTERM it once it made the file ``mark``; its exit code, stderr."""
    proc = subprocess.Popen(argv, cwd=folder, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: (folder / mark).exists(), timeout=30, proc=proc)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    return proc.returncode, err


@pytest.mark.parametrize("own_handler", [False, True])
def test_sigterm_saves_the_open_heartbeat_unless_handled_elsewhere(tmp_path: Path, own_handler: bool) -> None:
    """SIGTERM (systemctl stop, docker stop) while a call runs: the five calls that ran are saved and
    journaled, exit 143, as Ctrl-C does (until 2026-12-06 the process died with none of them saved).
    A process with a SIGTERM handler of its own keeps it: the Session does not take it over."""
    own = "signal.signal(signal.SIGTERM, lambda *_: sys.exit(7))\n" if own_handler else ""
    script = (
        "import pathlib, signal, sys, time\n" + own + "from heartbeat.integrations.session import Session\n"
        "s = Session.from_files(state_dir='state', idle=600)\n"
        "for i in range(5):\n"
        "    s.record('send_invoice', {'order': 9000 + i}, output=f'Invoice INV-{9000 + i} sent')\n"
        "pathlib.Path('IN_CALL').touch()\n"
        "time.sleep(60)\n"
    )
    code, err = _terminated_when(tmp_path, [sys.executable, "-c", script], "IN_CALL")
    if own_handler:
        assert code == 7, err  # its own handler ran; what it saves is its business
        return
    assert code == 143, err
    assert state(tmp_path)["actions_total"] == 5
    assert sum(1 for e in events(tmp_path) if e["event"] == "action") == 5


def _assert_five_calls_saved_after_sigterm(folder: Path, script: str) -> None:
    """Run ``script`` in ``folder``, SIGTERM it once it made IN_CALL: exit 143, its five calls saved
    and journaled."""
    code, err = _terminated_when(folder, [sys.executable, "-c", script], "IN_CALL")
    assert code == 143, err
    assert state(folder)["actions_total"] == 5
    assert sum(1 for e in events(folder) if e["event"] == "action") == 5


def test_sigterm_saves_the_calls_a_framework_records_from_its_worker_threads(tmp_path: Path) -> None:
    """A session made in the main thread whose calls come from another thread (PydanticAI and the
    Agents SDK run a sync tool in a thread pool, and their hooks record it there): SIGTERM saves
    and journals the calls that ran, exit 143. Until 2026-12-07 SIGTERM was taken only where the
    first heartbeat opened, a worker thread here, which may set no handler: the process died with
    every call of its open heartbeat (live round 60, a PydanticAI and an Agents SDK run)."""
    script = (
        "import pathlib, threading, time\n"
        "from heartbeat.integrations.session import Session\n"
        "s = Session.from_files(state_dir='state', idle=600)\n"
        "def tools():\n"
        "    for i in range(5):\n"
        "        s.record('fetch_page', {'n': i}, output=f'page {i}: {i * 7} rows')\n"
        "    pathlib.Path('IN_CALL').touch()\n"
        "threading.Thread(target=tools, daemon=True).start()\n"
        "time.sleep(60)\n"
    )
    _assert_five_calls_saved_after_sigterm(tmp_path, script)


def test_sigterm_ends_a_process_whose_worker_thread_holds_its_shutdown(tmp_path: Path) -> None:
    """A framework's worker thread that is no daemon (the Agents SDK's AnyIO worker, waiting for its
    next tool call) holds the interpreter's shutdown after SIGTERM's exit, before the exit hook that
    closes the sessions: the process hung for ever, its calls unsaved (live round 60). It is ended
    ``SHUTDOWN_SECONDS`` into its shutdown, exit 143, the calls that ran saved and journaled."""
    script = (
        "import pathlib, threading\n"
        "from heartbeat.integrations.session import Session\n"
        "s = Session.from_files(state_dir='state', idle=600)\n"
        "def worker():\n"
        "    for i in range(5):\n"
        "        s.record('fetch_page', {'n': i}, output=f'page {i}: {i * 7} rows')\n"
        "    pathlib.Path('IN_CALL').touch()\n"
        "    threading.Event().wait()  # the next call, which never comes\n"
        "threading.Thread(target=worker).start()\n"
        "threading.Event().wait()\n"
    )
    _assert_five_calls_saved_after_sigterm(tmp_path, script)


# A child whose progress metric, at its Nth call, says so in MEASURING and returns only once the
# process is exiting (its own atexit hook, run before the session's, sets the event). So SIGTERM
# lands while the metric is measured, and the save that must follow can only be the close at exit's.
_MEASURED_AT_EXIT = (
    "import atexit, pathlib, sys, threading, time\n"
    "from heartbeat.integrations.session import Session\n"
    "exiting = threading.Event()\n"
    "atexit.register(exiting.set)\n"
    "calls = []\n"
    "def progress(ctx):\n"
    "    calls.append(1)\n"
    "    if len(calls) == int(sys.argv[1]):\n"
    "        pathlib.Path('MEASURING').touch()\n"
    "        exiting.wait()\n"
    "    return 1.0\n"
    "s = Session.from_files(state_dir='state', idle=600, seconds=10**6, progress=progress)\n"
    "for i in range(int(sys.argv[2])):\n"
    "    s.record('copy_chunk', {'chunk': i}, output=f'chunk {i}: copied {i * 13} rows')\n"
    "s.flush()\n"
    "time.sleep(60)\n"
)


def _terminated_while_measuring(folder: Path, measure: int, calls: int) -> tuple[int, str]:
    """Run the child above, SIGTERM it during its ``measure``-th metric call; its exit code, stderr."""
    return _terminated_when(
        folder, [sys.executable, "-c", _MEASURED_AT_EXIT, str(measure), str(calls)], "MEASURING"
    )


def test_sigterm_while_flush_measures_the_metric_saves_the_calls(tmp_path: Path) -> None:
    """SIGTERM while flush() waits for its heartbeat's end (here, its metric): the three calls are
    saved and journaled, exit 143. Until 2026-12-07 none was: on Python 3.11 the SystemExit that cut
    flush()'s Thread.join() marked the running worker stopped (CPython gh-90882), so the close at
    exit waited for nothing and the process ended with the heartbeat unsaved (live round 56)."""
    code, err = _terminated_while_measuring(tmp_path, measure=2, calls=3)
    assert code == 143, err
    assert state(tmp_path)["actions_total"] == 3
    assert [e["tool"] for e in events(tmp_path) if e["event"] == "action"] == ["copy_chunk"] * 3


def test_sigterm_while_the_first_heartbeat_opens_ends_the_process_and_journals_the_call(
    tmp_path: Path,
) -> None:
    """SIGTERM inside the first record(), while its heartbeat opens (the metric's baseline): exit 143,
    the call that ran journaled (``after_stop: interrupted``), the heartbeat saved. Until 2026-12-07
    the process never ended: the heartbeat opened after the caller was gone, and the close at exit
    waited for it to end, which nothing would ask (live round 56)."""
    code, err = _terminated_while_measuring(tmp_path, measure=1, calls=1)
    assert code == 143, err
    actions = [e for e in events(tmp_path) if e["event"] == "action"]
    assert [(e["tool"], e.get("after_stop")) for e in actions] == [("copy_chunk", "interrupted")]
    assert state(tmp_path)["ticks"] == 1


# A child that records three calls (flushing them if argv[1] is "flush"), says READY and sleeps.
# Each metric call leaves MEASURING<n>; the one SIGTERM is meant to land in (the first heartbeat's
# baseline when argv[1] is "opening", else any after it) takes 3 s, then leaves MEASURED<n>.
_SLOW_METRIC = (
    "import pathlib, sys, time\n"
    "from heartbeat.integrations.session import Session\n"
    "where = sys.argv[1]\n"
    "def progress(ctx):\n"
    "    n = len(list(pathlib.Path('.').glob('MEASURING*')))\n"
    "    pathlib.Path(f'MEASURING{n}').touch()\n"
    "    if n > 0 or where == 'opening':\n"
    "        time.sleep(3)\n"
    "        pathlib.Path(f'MEASURED{n}').touch()\n"
    "    return 1.0\n"
    "s = Session.from_files(state_dir='state', idle=600, seconds=10**6, progress=progress)\n"
    "for i in range(3):\n"
    "    s.record('copy_chunk', {'chunk': i}, output=f'chunk {i}: copied {i * 13} rows')\n"
    "if where == 'flush':\n"
    "    s.flush()\n"
    "pathlib.Path('READY').touch()\n"
    "time.sleep(60)\n"
)


@pytest.mark.parametrize(
    ("where", "mark", "measured", "saved"),
    [
        ("opening", "MEASURING0", ["MEASURING0"], 0),  # the first record()'s heartbeat, its baseline
        ("flush", "MEASURING1", ["MEASURING0", "MEASURING1"], 3),  # flush() waits for the last one
        ("idle", "READY", ["MEASURING0"], 3),  # the caller's own code: the close at exit ends it
    ],
)
def test_sigterm_ends_a_session_without_a_measurement_to_wait_for(
    tmp_path: Path, where: str, mark: str, measured: list[str], saved: int
) -> None:
    """SIGTERM wherever it lands ends the process (143) with every call kept, and no measurement is
    begun after it or waited out (the metric takes 3 s): the heartbeat's sample has no value and says
    why. Until 2026-12-07 the close at exit waited for a running measurement and then measured again:
    1.8 s with a 1 s metric (live c18), a value recorded although measured after the stop."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _SLOW_METRIC, where], cwd=tmp_path, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_until(lambda: (tmp_path / mark).exists(), what=mark, proc=proc)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 143, err
    assert sorted(p.name for p in tmp_path.glob("MEASUR*")) == measured  # no MEASURED: none waited out
    actions = [(e["tool"], e.get("after_stop")) for e in events(tmp_path) if e["event"] == "action"]
    assert actions == ([("copy_chunk", "interrupted")] if where == "opening" else [("copy_chunk", None)] * 3)
    saved_state = state(tmp_path)
    assert saved_state["actions_total"] == saved
    sample = saved_state["progress"][-1]
    assert sample["value"] is None and sample["error"].endswith(": stopped by SIGTERM")


def test_a_call_journaled_after_a_stop_keeps_its_error_as_ctx_record_does(tmp_path: Path) -> None:
    """Regression: the after_stop journal line held the error raw: an escape sequence that drives a
    terminal, a line break that forges a line of `heartbeat log`, a credential the text gives away
    (in the error, and in the tool's name, which the journal keeps on its own too)."""
    error = RuntimeError(
        "Bearer sk-live-0123456789abcdef0123 refused\x1b[2J\nheartbeat: all is well " + "x" * 500
    )
    session = make_session(tmp_path)
    tool = "fetch\x1b[31m ghp_abcdefghijklmnopqrstuvwxyz0123"  # a name the agent chose
    session.record(tool, {"url": "a"}, error=error)  # the same call, inside a heartbeat ...
    (tmp_path / "KILL").write_text("stop\n")
    assert session.check() is not None
    with pytest.raises(Stopped) as stopped:  # ... and after its heartbeat ended on KILL
        session.record(tool, {"url": "a"}, error=error)
    assert stopped.value.journaled
    kept, late = [e for e in events(tmp_path) if e["event"] == "action"]
    assert late["after_stop"] == "killed"
    assert late["error"] == kept["error"] == state(tmp_path)["history"][0]["error"]
    assert "\x1b" not in late["error"] and "\n" not in late["error"] and len(late["error"]) <= 200
    assert "sk-live" not in late["error"]
    assert (
        (late["tool"], late["summary"])
        == (kept["tool"], kept["summary"])
        == ("fetch\\x1b[31m ***", 'fetch\\x1b[31m ***({"url":"a"})')
    )


class _Clock:
    """A clock the test moves: the Session's and its ticks' time."""

    def __init__(self) -> None:
        self.now = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def _ask_again(folder: Path, gap: timedelta) -> tuple[list[Any], list[dict[str, Any]]]:
    """A fact checker's turns, one a heartbeat, ``gap`` apart: a search, then the same lookup
    answered "No more results." again and again; what each ``record`` returned, and the journal."""
    clock = _Clock()
    found: list[Any] = []
    with make_session(folder, clock=clock) as session:
        found.append(session.record("search", {"entity": "Tilda Swinton"}, output="An actress, born 1960."))
        for _ in range(8):
            session.flush()  # the model thinks: the heartbeat ends, as after `idle` seconds
            clock.now += gap
            if session.check() is not None:
                break
            found.append(session.record("lookup", {"keyword": "vegan"}, output="No more results."))
    return found, events(folder)


def test_turns_asking_again_for_nothing_are_found_where_wake_ups_are_idle(tmp_path: Path) -> None:
    """Heartbeats begun seconds after the last call are the agent's next turns (the journal says
    ``"turn": true``): the lookup asked again for nothing is found and the agent told; the same
    calls ten minutes apart are a scheduled agent's quiet wake-ups, never found. Replaying each
    journal gives back its live findings."""
    turns, journal = _ask_again(tmp_path / "turns", timedelta(seconds=5))
    assert any(hit is not None for hit in turns[:6]), turns
    ticks = [e for e in journal if e["event"] == "tick"]
    assert ticks[0].get("turn") is None and all(t.get("turn") is True for t in ticks[1:])
    wakes, journal = _ask_again(tmp_path / "wakes", timedelta(minutes=10))
    assert wakes == [None] * 9
    assert not any(e.get("turn") for e in journal) and not any(e["event"] == "anomaly" for e in journal)
    for folder in ("turns", "wakes"):
        live = [(e["kind"], e["action"]) for e in events(tmp_path / folder) if e["event"] == "anomaly"]
        replayed = replay(tmp_path / folder / "state" / "journal.jsonl", HeartbeatConfig())
        assert [(a.kind, a.action) for tick in replayed for a in tick.anomalies] == live


def test_a_resume_note_outlives_a_heartbeat_that_ended_before_a_caller_took_it(tmp_path: Path) -> None:
    """Regression: a call longer than ``idle`` let the heartbeat holding the note end (and its
    decision clear the saved instructions) before the call came back: the note was lost."""
    session = make_session(tmp_path, idle=0.2)
    assert session.record("search", {"q": "a"}, output="three results found") is None
    session.flush()
    resumed = run_cli(tmp_path, "resume", "--state-dir", "state", "--note", "use the cache")
    assert resumed.returncode == 0, resumed.stderr
    assert session.check() is None  # a slow call starts: its heartbeat holds the note ...
    assert session.instructions == "use the cache"
    wait_until(lambda: not session.is_open, what="the heartbeat to end while the call runs")
    wait_until(lambda: state(tmp_path)["instructions"] is None, what="the heartbeat's save")
    # ... and the call comes back to a new heartbeat: the note, never handed to anyone, is still due.
    assert session.record("search", {"q": "b"}, output="two results found") is None
    assert session.take_note() == "use the cache"
    assert session.take_note() is None  # handed over once
    session.close()


def test_a_pattern_in_the_first_heartbeat_is_told_at_once(tmp_path: Path) -> None:
    """Regression: a fresh session's first heartbeat had no last call, so it was judged a scheduled
    wake-up going round its sources: nine lookups of other orders, each answered the same
    maintenance page, tripped `recurring` at the fifth and no caller was ever told. A live model's
    calls are told of a pattern they make at once, whatever came before."""
    page = "<html><h1>Down for maintenance</h1><p>Order lookups are back at 06:00 UTC.</p></html>" * 3
    session = make_session(tmp_path)
    found = []
    for i in range(9):
        found.append(session.record("lookup_order", {"order_id": f"W{4817420 + i}"}, output=page))
        if found[-1] is not None:
            break
    assert len(found) == 5 and found[-1] is not None and found[-1].kind == "recurring", found
    assert session.instructions is not None and "lookup_order" in session.instructions
    session.close()
    first = next(e for e in events(tmp_path) if e["event"] == "anomaly")
    assert (first["kind"], first["tick"], first["action"]) == ("recurring", 1, 5)


def test_a_pause_asked_for_stops_the_next_call_of_an_open_heartbeat(tmp_path: Path) -> None:
    """Regression (live round 44): a call answered "a person is pausing this agent ... no further
    tool will be called" and the client's next call, made at once, still went ahead: the open
    heartbeat had not ended on the pause request yet (it looks every 50 ms). What ``stopped``
    says, ``check`` says: the open heartbeat ends (saved) and the call is refused."""
    session = make_session(tmp_path)
    assert session.check() is None
    assert session.record("search", {"q": "heartbeats"}, output="pages about heartbeats") is None
    assert session.is_open
    (tmp_path / "state" / ".pause-request").write_text("lunch")  # `heartbeat pause` waits for the lock
    said = session.stopped
    assert said is not None and said.kind == "paused"
    stop = session.check()
    assert stop is not None and stop.kind == "paused" and "lunch" in stop.message
    assert not session.is_open and state(tmp_path)["actions_total"] == 1  # ended, its call saved
    session.close()


def test_instructions_decided_at_a_heartbeats_end_are_handed_to_the_next_caller(tmp_path: Path) -> None:
    """Regression (live round 44): a flat metric is found when a heartbeat ends (idle), not at a
    call, so ``record`` never returned it, the model following the recipe never heard "reassess
    your goal", and the human was paged about recovery attempts the model never got. Now the
    next ``take_note`` hands them over, once, as the heartbeat's (not a person's)."""
    session = make_session(
        tmp_path, idle=0.05, progress=lambda ctx: 0.0, config={"policy": {"escalate_after": 9}}
    )
    hits = []
    for word in WORDS[:5]:  # each heartbeat a test of another part, failing alike, and an edit
        hits.append(session.record("run_tests", {"k": word}, output="2 failed, 5 passed"))
        hits.append(session.record("edit_file", {"path": f"src/{word}.py"}, output="ok"))
        session.flush()
    assert hits == [None] * 10  # no call was told of anything
    assert session.last is not None and [a.kind for a in session.last.anomalies] == ["no_progress"]
    assert session.instructions is not None and "progress metric" in session.instructions
    note = session.take_note()
    assert note == session.instructions and not note.by_person
    assert session.take_note() is None  # once
    session.close()
