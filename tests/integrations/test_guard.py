"""The shared core of the framework adapters (Guard), and a cold start that imports no framework."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from _integrations import NOT_RUN, WITHHELD
from conftest import wait_until

from heartbeat.core.models import REFUSED
from heartbeat.detect.monitor import Monitor
from heartbeat.integrations import GO, Guard, MonitorRecorder, Stopped
from heartbeat.testing import make_heartbeat

FRAMEWORKS = ("langchain_core", "langgraph", "agents", "pydantic_ai", "openai")


def test_stop_mode_stops_at_the_repeat_and_stays_stopped() -> None:
    """The third identical call is a stop naming the repeat; every later call (any tool) is stopped too."""
    guard = Guard(Monitor())
    assert [guard.after("search", {"q": "x"}, output="3 hits").action for _ in range(2)] == ["go", "go"]
    verdict = guard.after("search", {"q": "x"}, output="3 hits")
    assert verdict.action == "stop" and verdict.cause == "stuck"
    assert verdict.anomaly is not None and verdict.anomaly.kind == "repeat"
    error = verdict.error()
    assert isinstance(error, Stopped) and "repeat" in str(error) and 'search({"q":"x"})' in str(error)
    assert guard.before("read", {"path": "other"}).action == "stop"
    assert guard.check().action == "stop"


def test_redirect_mode_answers_with_instructions_then_stops_an_ignoring_model() -> None:
    """Redirect on the tripping call and on the same call again; other calls go; stop after max_redirects."""
    guard = Guard(Monitor(), on_stuck="redirect", max_redirects=2)
    for _ in range(2):
        assert guard.after("search", {"q": "x"}, output="3 hits") is GO
    first = guard.after("search", {"q": "x"}, output="3 hits")
    assert first.action == "redirect" and first.instructions is not None
    assert 'do not call search({"q":"x"}) again' in first.instructions
    assert guard.before("search", {"q": "y"}) is GO
    again = guard.before("search", {"q": "x"})
    assert again.action == "redirect" and guard.redirects == 2 and again.instructions is not None
    # The first ran (its result withheld), the one asked again was refused before running.
    assert WITHHELD in first.instructions and NOT_RUN not in first.instructions
    assert NOT_RUN in again.instructions and WITHHELD not in again.instructions
    last = guard.before("search", {"q": "x"})
    assert last.action == "stop" and "2 redirection(s) ignored" in last.reason


def test_a_redirection_says_what_to_avoid_in_words_that_fit_the_hint() -> None:
    """A hint naming a call reads "do not call X again"; one saying what to stop in words reads
    "avoid ..." (a newcomer's model was told "do not call kb_search calls that keep failing again",
    live round 40)."""
    guard = Guard(Monitor(), on_stuck="redirect", max_redirects=5)
    verdicts = [
        guard.after("kb_search", {"q": f"vpn renewal {n}"}, error="503: index unavailable") for n in range(3)
    ]
    said = [v.instructions for v in verdicts if v.instructions]
    assert said and "avoid kb_search calls that keep failing" in said[0]
    assert "do not call kb_search calls" not in said[0]


def test_a_redirection_counts_once_the_model_reads_it() -> None:
    """Regression: a cancelled call that tripped a detector counted a redirection nothing said to the
    model. Now a redirect answered ``read_later`` counts only through ``delivered``, a cancelled call's
    never; the stop says how many the model read."""
    guard = Guard(Monitor(), on_stuck="redirect", max_redirects=1)
    for _ in range(2):
        guard.cancelled("search", {"q": "x"}, TimeoutError())
    guard.cancelled("search", {"q": "x"}, TimeoutError())  # the third trips repeat; nothing said
    assert guard.anomalies and guard.redirects == 0
    unread = guard.before("search", {"q": "x"}, read_later=True)
    assert unread.action == "redirect" and guard.redirects == 0  # its run may end before a request
    again = guard.before("search", {"q": "x"}, read_later=True)
    assert again.action == "redirect"
    guard.delivered()  # a model request carried this one
    last = guard.before("search", {"q": "x"}, read_later=True)
    assert last.action == "stop" and "1 redirection(s) ignored" in last.reason


def test_a_failed_call_redirected_is_said_to_have_failed_not_withheld() -> None:
    """Regression: a call that ran and failed, redirected, was said to have its result withheld, as
    if it had worked; there was no result. Now the model reads that it failed, and its error."""
    guard = Guard(Monitor(), on_stuck="redirect")
    for _ in range(2):
        assert guard.after("search", {"q": "x"}, error="ValueError: the index is gone") is GO
    told = guard.after("search", {"q": "x"}, error=ValueError("the index is gone"))
    assert told.action == "redirect" and told.instructions is not None
    assert WITHHELD not in told.instructions and NOT_RUN not in told.instructions
    assert "This call ran and failed, so there is no result" in told.instructions
    assert "ValueError: the index is gone" in told.instructions
    again = guard.before("search", {"q": "x"})
    assert again.instructions is not None and NOT_RUN in again.instructions


def test_kill_file_stops_before_the_next_call(tmp_path: Path) -> None:
    """A Monitor-bound guard reads the KILL file before each call (never cached) and quotes it."""
    guard = Guard(Monitor(), kill_file=tmp_path / "KILL")
    assert guard.before("search", {"q": "x"}) is GO and guard.check() is GO
    (tmp_path / "KILL").write_text("deploy in progress\n")
    verdict = guard.before("search", {"q": "y"})
    assert verdict.action == "stop" and verdict.cause == "killed"
    assert "deploy in progress" in verdict.reason and verdict.error().exit_code == 3  # as the CLI's
    (tmp_path / "KILL").unlink()
    assert guard.before("search", {"q": "z"}).action == "stop"  # a stopped run stays stopped


def test_inside_a_heartbeat_the_budget_stops_the_run(tmp_path: Path) -> None:
    """Bound to ctx: past actions_per_tick the verdict is a budget stop, and the tick pauses."""
    verdicts: list[Any] = []

    def step(ctx: Any) -> None:
        guard = Guard(ctx)
        verdicts.extend(guard.after("search", {"q": q}, output="3 hits for it") for q in "abc")

    result = make_heartbeat(step, tmp_path, budget={"actions_per_tick": 2}).tick()
    assert [v.action for v in verdicts] == ["go", "go", "stop"]
    assert verdicts[2].cause == "budget" and result.outcome == "paused"


def test_errors_and_outputs_are_recorded_as_the_context_would() -> None:
    """An exception becomes 'Type: message'; a non-string output is recorded by its text length."""
    monitor = Monitor()
    guard = Guard(MonitorRecorder(monitor))
    guard.after("search", {"q": "a"}, error=ValueError("backend down"))
    guard.after("count", None, output=12345)
    first, second = monitor.history
    assert first.error == "ValueError: backend down" and second.output_len == 5


def test_bad_bindings_and_options_are_refused(tmp_path: Path) -> None:
    """Clear errors for what cannot be bound or configured."""
    with pytest.raises(TypeError, match="bind a guard"):
        Guard(object())
    with pytest.raises(ValueError, match="on_stuck"):
        Guard(Monitor(), on_stuck="retry")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_redirects"):
        Guard(Monitor(), max_redirects=0)

    def step(ctx: Any) -> None:
        with pytest.raises(TypeError, match="already knows its KILL file"):
            Guard(ctx, kill_file=tmp_path / "KILL")

    assert make_heartbeat(step, tmp_path).tick().exit_code == 0


def test_parallel_calls_are_all_recorded() -> None:
    """Eight threads recording at once (parallel tool calls): no action lost, the index stays dense."""
    monitor = Monitor()
    guard = Guard(monitor)

    def work(n: int) -> None:
        for i in range(200):
            guard.after("fetch", {"thread": n, "i": i}, output="page text here")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert monitor.actions_total == 1600


def test_a_tick_imports_no_framework(tmp_path: Path) -> None:
    """`heartbeat tick` as a fresh process (python -X importtime): no framework module is loaded."""
    (tmp_path / "agent.py").write_text(
        "def step(ctx):\n    ctx.record('noop', {'n': ctx.tick}, output='ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "heartbeat", "tick", "--step", "agent:step"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = {
        line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")
    }
    assert "heartbeat.tick.runner" in loaded  # the parse works: the tick's own modules are listed
    assert not {m for m in loaded if m.split(".")[0] in FRAMEWORKS}
    assert not {m for m in loaded if m.startswith("heartbeat.integrations")}


def test_importing_the_integrations_core_imports_no_framework() -> None:
    """`import heartbeat.integrations` (the core every adapter shares) loads none of the frameworks."""
    code = (
        "import sys, heartbeat.integrations\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {FRAMEWORKS!r}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_state_folder_binding_escalates_stops_and_shows_in_status(tmp_path: Path) -> None:
    """Bound to a heartbeat.toml (a Session): an escalation stops the run; `heartbeat status` sees it."""
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstate_dir = "state"\nkill_file = "KILL"\n\n[policy]\nescalate_after = 1\n'
    )
    with Guard(tmp_path / "heartbeat.toml", on_stuck="redirect") as guard:
        assert guard.before("search", {"q": "x"}) is GO
        verdicts = [guard.after("search", {"q": "x"}, output="3 hits for x") for _ in range(3)]
        assert [v.action for v in verdicts] == ["go", "go", "stop"]
        assert verdicts[2].cause == "needs_human" and verdicts[2].anomaly is not None
        assert guard.before("search", {"q": "other"}).cause == "needs_human"
    assert (tmp_path / "state" / "ESCALATION.md").exists()
    done = subprocess.run(
        [sys.executable, "-m", "heartbeat", "status", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert '"needs_human"' in done.stdout, done.stdout + done.stderr


def test_a_call_asked_again_after_a_redirection_is_journaled_refused_and_keeps_the_stretch_stuck(
    tmp_path: Path,
) -> None:
    """Bound to a state folder, a model asking again for the call it was redirected from: the call
    does not run, it is journaled as refused (its error says so) and is a repeat at once, so the
    heartbeat holding it is stuck: the policy calls a human, the run stops. Before, a slow model's
    refused calls each opened a heartbeat of no action, quiet, and two of them cleared the recovery
    (live round 40)."""
    ran: list[str] = []
    with Guard(tmp_path / "state", on_stuck="redirect", max_redirects=5) as guard:
        verdicts = []
        for _ in range(3):
            assert guard.before("search", {"q": "x"}) is GO
            ran.append("search")
            verdicts.append(guard.after("search", {"q": "x"}, output="3 hits for x"))
        assert [v.action for v in verdicts] == ["go", "go", "redirect"]  # its heartbeat ended, stuck
        again = guard.before("search", {"q": "x"})  # the next model turn: a new heartbeat
        assert again.action == "stop" and again.cause == "needs_human", again
        assert "did again what the recovery said to avoid" in again.reason
    lines = [json.loads(line) for line in (tmp_path / "state" / "journal.jsonl").read_text().splitlines()]
    actions = [line for line in lines if line["event"] == "action"]
    assert len(actions) == len(ran) + 1 and actions[-1]["error"] == REFUSED
    assert [line["decision"] for line in lines if line["event"] == "decision"][-1] == "escalate"


def test_a_refused_call_is_recorded_into_a_monitor_too() -> None:
    """Bound to a Monitor, the refused call is in its history, failed with the refusal."""
    monitor = Monitor()
    guard = Guard(monitor, on_stuck="redirect", max_redirects=5)
    for _ in range(3):
        guard.after("search", {"q": "x"}, output="3 hits")
    assert guard.before("search", {"q": "x"}).action == "redirect"
    assert monitor.history[-1].error == REFUSED and len(monitor.history) == 4


def test_a_state_folder_binding_refuses_calls_after_kill(tmp_path: Path) -> None:
    """Bound to a state folder: KILL ends the open heartbeat (journaled) and stops the next call."""
    guard = Guard(tmp_path / "state", kill_file=tmp_path / "KILL")
    assert guard.before("search", {"q": "a"}) is GO
    assert guard.after("search", {"q": "a"}, output="3 hits for a") is GO
    (tmp_path / "KILL").write_text("maintenance\n")
    verdict = guard.before("search", {"q": "b"})
    assert verdict.cause == "killed" and "maintenance" in verdict.reason
    guard.close()
    journal = (tmp_path / "state" / "journal.jsonl").read_text()
    assert '"event":"kill"' in journal.replace(" ", "") and 'search({\\"q\\":\\"a\\"})' in journal


def test_a_fleet_stop_seen_before_a_model_call_is_journaled_and_named(tmp_path: Path) -> None:
    """Regression: the check before a model call stopped the run unjournaled, saying "KILL file present"."""
    (tmp_path / "fleet").mkdir()
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstate_dir = "state"\nkill_file = "KILL"\n[stop]\npath = "fleet/STOP"\n'
    )
    with Guard(tmp_path / "heartbeat.toml") as guard:
        assert guard.before("search", {"q": "a"}) is GO
        assert guard.after("search", {"q": "a"}, output="3 hits for a") is GO
        (tmp_path / "fleet" / "STOP").write_text("all hands\n")
        session: Any = guard.recorder
        wait_until(lambda: session.killed, what="the fleet stop to be read")
        verdict = guard.check()  # what an adapter asks before each model call
        assert verdict.action == "stop" and verdict.cause == "killed"
        assert "the fleet stop" in verdict.reason and "all hands" in verdict.reason
        assert "KILL file" not in verdict.reason
    events = [json.loads(line) for line in (tmp_path / "state" / "journal.jsonl").read_text().splitlines()]
    assert [e["reason"] for e in events if e["event"] == "kill"] == ["all hands"]
    assert [e["tool"] for e in events if e["event"] == "action"] == ["search"]


def test_the_first_model_call_of_a_run_started_under_the_fleet_stop_is_stopped(tmp_path: Path) -> None:
    """The fleet stop engaged before the process started: the check before the run's first model call
    stops it (it said go: no reading of the stop existed yet, and one paid model call went ahead)."""
    (tmp_path / "fleet").mkdir()
    (tmp_path / "fleet" / "STOP").write_text("all hands\n")
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstate_dir = "state"\nkill_file = "KILL"\n[stop]\npath = "fleet/STOP"\n'
    )
    with Guard(tmp_path / "heartbeat.toml") as guard:
        verdict = guard.check()  # what an adapter asks before each model call: here the first one
        assert verdict.action == "stop" and verdict.cause == "killed", verdict
        assert verdict.reason.startswith("stopped by the fleet stop") and "all hands" in verdict.reason
    events = [json.loads(line) for line in (tmp_path / "state" / "journal.jsonl").read_text().splitlines()]
    assert [e["reason"] for e in events if e["event"] == "kill"] == ["all hands"]


def test_inside_a_heartbeat_the_fleet_stop_is_named_as_such(tmp_path: Path) -> None:
    """Bound to ``ctx``: a fleet stop is not reported to the model as a KILL file."""
    (tmp_path / "fleet").mkdir()
    seen: list[str] = []

    def step(ctx: Any) -> None:
        guard = Guard(ctx)
        assert guard.check() is GO
        (tmp_path / "fleet" / "STOP").write_text("all hands\n")
        wait_until(lambda: ctx.killed, what="the fleet stop to be read")
        seen.append(guard.check().reason)

    hb = make_heartbeat(step, tmp_path, stop={"path": str(tmp_path / "fleet" / "STOP")})
    hb.tick()
    assert len(seen) == 1 and seen[0].startswith("stopped by the fleet stop") and "all hands" in seen[0]


def test_a_call_that_ran_after_its_heartbeat_ended_is_stopped_as_journaled(tmp_path: Path) -> None:
    """Regression: the Session said the call was journaled (after_stop), the guard's stop said it was not."""
    with Guard(tmp_path / "state", kill_file=tmp_path / "KILL") as guard:
        session: Any = guard.recorder
        assert guard.before("search", {"q": "slow"}) is GO  # the call starts ...
        (tmp_path / "KILL").write_text("stop mid-call\n")
        wait_until(lambda: not session.is_open, what="the heartbeat to end on KILL")
        verdict = guard.after("search", {"q": "slow"}, output="a late answer")  # ... and comes back
        assert verdict.action == "stop" and verdict.cause == "killed" and verdict.journaled
        error = verdict.error()
        assert error.journaled and "journaled only" in str(error)
        assert guard.stopped is not None and guard.stopped.journaled
        later = guard.before("search", {"q": "next"})  # refused before it ran: nothing journaled
        assert later.action == "stop" and not later.journaled and not later.error().journaled
    events = [json.loads(line) for line in (tmp_path / "state" / "journal.jsonl").read_text().splitlines()]
    assert [(e["tool"], e["after_stop"]) for e in events if e["event"] == "action"] == [("search", "killed")]


def test_a_tool_name_that_could_forge_a_line_is_escaped_in_the_stop_a_person_reads() -> None:
    """Regression: a call made again after its redirection stopped the run with the model's tool
    name as it came, line break, escape code and a key included, in the message logs print."""
    guard = Guard(Monitor(), on_stuck="redirect", max_redirects=1)
    tool = "search\nERROR all agents down\x1b[2J sk-proj-abcdefghijklmnopqrstuv"
    verdicts = [guard.after(tool, {"q": "x"}, output="the same page") for _ in range(3)]
    assert verdicts[-1].action == "redirect"
    again = guard.before(tool, {"q": "x"})
    assert again.action == "stop" and "again after being told not to" in again.reason
    message = str(again.error())
    assert "\n" not in message and "\x1b" not in message
    assert "search\\nERROR all agents down\\x1b[2J ***" in message and "sk-proj" not in message
