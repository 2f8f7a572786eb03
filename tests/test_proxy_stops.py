"""``heartbeat mcp-proxy`` when a stop meets a call: what the model is told, what the journal keeps.

Real processes: the proxy in front of ``raw_mcp_server.py`` (whose ``slow`` tool
runs until a file appears), a person's ``heartbeat pause`` and ``heartbeat
resume`` as commands. Each test made the race deterministic with files: the
stop or the heartbeat's end is waited for, then the call is released.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli as cli
from _mcp_pipe import journal, paused_mid_call, proxy, running, server_log, texts
from conftest import wait_until


def test_a_protocol_error_of_a_call_in_flight_at_a_pause_says_the_agent_is_paused(tmp_path: Path) -> None:
    """Regression: the bare server error reached the model, with no word that the agent is paused."""
    via = proxy(tmp_path)
    try:
        paused, answer, refused = paused_mid_call(via, {"fail": "the index is rebuilding"})
    finally:
        via.close()
    assert paused.returncode == 0, paused.stderr
    assert "error" not in answer, f"the bare protocol error: {answer}"
    said = texts(answer)
    assert answer["result"]["isError"]
    # The server's error as it sent it (no result came, none is withheld), then the pause.
    assert "MCP error -32603: the index is rebuilding" in said and "withheld" not in said
    assert "paused" in said and "lunch" in said and "No further tool will be called" in said
    assert "paused" in texts(refused) and "not called" in texts(refused)
    actions = [e for e in journal(tmp_path) if e["event"] == "action"]
    assert [(a["tool"], a.get("after_stop")) for a in actions] == [("slow", "paused")]
    assert "the index is rebuilding" in actions[0]["error"]


def saved(folder: Path) -> dict[str, Any]:
    return dict(json.loads((folder / "state" / "state.json").read_text()))


def test_a_resume_note_reaches_the_model_after_a_call_that_outlasted_its_heartbeat(tmp_path: Path) -> None:
    """Regression: the heartbeat that held the note idled out while the call ran, and the note
    never reached the model (state.json no longer had it either)."""
    via = proxy(tmp_path, "--idle", "0.2s")
    try:
        assert "result" in via.ask("tools/call", {"name": "fast", "arguments": {"q": "a"}})
        resumed = cli(tmp_path, "resume", "--state-dir", "state", "--note", "use the archive")
        assert resumed.returncode == 0, resumed.stderr
        number = running(via, {})
        wait_until(lambda: saved(tmp_path)["instructions"] is None, what="the note's heartbeat to end")
        (tmp_path / "release").write_text("")
        answer = via.wait(number)
        after = via.ask("tools/call", {"name": "fast", "arguments": {"q": "b"}})
    finally:
        via.close()
    assert answer["result"]["content"][0]["text"] == "slow answer"
    assert texts(answer).endswith("a note from the person watching you: use the archive")
    assert "note" not in texts(after)  # once


def test_recovery_instructions_an_earlier_proxy_left_are_not_said_to_come_from_a_person(
    tmp_path: Path,
) -> None:
    """Regression: a new proxy handed the recovery text its predecessor's last heartbeat left as
    "a note from the person watching you"; no person wrote it. A person's note is still said to
    be one."""
    first = proxy(tmp_path)
    try:
        answers = [first.ask("tools/call", {"name": "fast", "arguments": {"q": "a"}}) for _ in range(3)]
    finally:
        first.close()
    assert "you look stuck" in texts(answers[-1])  # a repeat: redirected, the instructions saved
    assert saved(tmp_path)["instructions"] and saved(tmp_path)["recovery"]
    second = proxy(tmp_path)
    try:
        handed = second.ask("tools/call", {"name": "fast", "arguments": {"q": "b"}})
    finally:
        second.close()
    assert "heartbeat: instructions from your last heartbeat: heartbeat: you look stuck" in texts(handed)
    assert "person" not in texts(handed)


def test_a_call_in_flight_when_the_proxy_is_terminated_is_journaled(tmp_path: Path) -> None:
    """Regression: SIGTERM saved the open heartbeat and exited, and the call the server was
    running (it may have run in full) was in neither state.json nor the journal."""
    via = proxy(tmp_path)
    try:
        running(via, {"q": "long"})
        via.process.send_signal(signal.SIGTERM)
        assert via.process.wait(timeout=30) == 0
    finally:
        via.close()
    actions = [e for e in journal(tmp_path) if e["event"] == "action"]
    assert [a["tool"] for a in actions] == ["slow"]
    assert "the proxy was stopped (SIGTERM) while the call ran" in actions[0]["error"]
    assert "may have run" in actions[0]["error"]
    assert [a["tool"] for a in saved(tmp_path)["history"]] == ["slow"]


def test_a_call_in_flight_when_the_server_exits_is_journaled(tmp_path: Path) -> None:
    """Regression: the proxy saved the open heartbeat and exited 1 with its server, and the call
    the server was running when it died was in neither state.json nor the journal."""
    via = proxy(tmp_path)
    try:
        running(via, {"exit": True})
        (tmp_path / "release").write_text("")
        assert via.process.wait(timeout=30) == 1
    finally:
        stderr = via.close()
    assert "exited; the proxy stops with it" in stderr
    actions = [e for e in journal(tmp_path) if e["event"] == "action"]
    assert [a["tool"] for a in actions] == ["slow"]
    assert "the MCP server exited while the call ran (it may have run)" in actions[0]["error"]


# -- SIGTERM while the proxy's own thread is recording a call (it holds the session's condition)

GATE = '''
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


class Gate:
    """A detector (a plug-in as any user's) that holds the first call of `fast` asking for "gate":
    it says so in `gate-inside` and returns once `gate-open` appears. It runs while the session
    records that call, on the proxy's own thread, holding the session's condition."""

    kind = "gate"
    held = False

    def check(self, history, now):
        last = history.last
        if not Gate.held and last.tool == "fast" and "gate" in last.summary:
            Gate.held = True
            (HERE / "gate-inside").write_text("")
            while not (HERE / "gate-open").exists():
                time.sleep(0.01)
        return None
'''


def gated(folder: Path) -> None:
    """A heartbeat.toml whose agent runs the Gate detector (``gate.py`` beside it)."""
    (folder / "gate.py").write_text(GATE)
    (folder / "heartbeat.toml").write_text(
        '[agent]\nstate_dir = "state"\nkill_file = "KILL"\n\n[detectors]\ncustom = ["gate:Gate"]\n'
    )


def held_mid_record(folder: Path) -> tuple[Any, int]:
    """A proxy with one call recorded in its open heartbeat, one running on the server, and one
    whose recording the Gate holds; the pipe and the running call's id."""
    gated(folder)
    via = proxy(folder, "--idle", "60s")  # one heartbeat for the whole test: nothing saved before the end
    assert "result" in via.ask("tools/call", {"name": "fast", "arguments": {"q": "first"}})
    number = running(via, {"q": "long"})
    via.start("tools/call", {"name": "fast", "arguments": {"q": "gate"}})
    wait_until(lambda: (folder / "gate-inside").exists(), what="the gate to hold the recording")
    return via, number


def test_sigterm_while_a_call_is_recorded_ends_the_proxy_and_records_every_call(tmp_path: Path) -> None:
    """Regression: the SIGTERM handler recorded the calls in flight and closed the session in the
    interrupted code itself; when that code was recording a call it held the session's condition,
    the close waited for the heartbeat's worker, which waited for that condition: the proxy never
    exited, and an operator's `kill` did nothing."""
    via, _ = held_mid_record(tmp_path)
    try:
        via.process.send_signal(signal.SIGTERM)
        assert via.said("stopping (SIGTERM)"), "the signal was not taken"
        (tmp_path / "gate-open").write_text("")  # the recording goes on, outside the signal's path
        assert via.process.wait(timeout=30) == 0
    finally:
        (tmp_path / "gate-open").write_text("")
        via.close()
    history = [(a["tool"], a["summary"]) for a in saved(tmp_path)["history"]]
    assert [tool for tool, _ in history] == ["fast", "fast", "slow"]  # every call, in state.json
    actions = {e["summary"]: e for e in journal(tmp_path) if e["event"] == "action"}
    slow = next(e for summary, e in actions.items() if summary.startswith("slow"))
    assert "the proxy was stopped (SIGTERM) while the call ran (it may have run)" in slow["error"]
    assert len(actions) == 3 and not any(e.get("after_stop") for e in actions.values())


def test_sigterm_ends_the_proxy_even_when_the_recording_never_returns(tmp_path: Path) -> None:
    """An operator's `kill` always works: with the recording held for good (a detector that hangs),
    the proxy still exits promptly, and every call of the open heartbeat is journaled (it cannot be
    saved): the one recorded, the one held, and the one the server was running, as interrupted."""
    via, _ = held_mid_record(tmp_path)
    try:
        via.process.send_signal(signal.SIGTERM)
        assert via.process.wait(timeout=15) == 0
    finally:
        (tmp_path / "gate-open").write_text("")
        stderr = via.close()
    assert "Traceback" not in stderr
    actions = [e for e in journal(tmp_path) if e["event"] == "action"]
    assert sorted(a["summary"].split("(")[0] for a in actions) == ["fast", "fast", "slow"]
    assert all(a["after_stop"] == "interrupted" for a in actions)
    [slow] = [a for a in actions if a["tool"] == "slow"]
    assert "the proxy was stopped (SIGTERM) while the call ran (it may have run)" in slow["error"]
    answered = [a for a in actions if a["tool"] == "fast"]  # the held one as its answer came
    assert [a["error"] for a in answered] == [None, None] and all(a["output_len"] for a in answered)
    assert any(e["event"] == "interrupted" for e in journal(tmp_path))


def test_a_call_whose_record_meets_a_busy_lock_is_not_told_that_no_tool_will_be_called(
    tmp_path: Path,
) -> None:
    """Regression: a call that outlasted its heartbeat, whose record then found the state folder's
    lock held for a moment (another heartbeat of the agent), was answered "meanwhile the agent is
    stopped ... No further tool will be called: stop here": untrue, the next call went ahead as soon
    as the lock was free. The call is journaled; its answer goes on as the server sent it."""
    from heartbeat.state.store import StateStore

    via = proxy(tmp_path, "--idle", "0.2s")
    try:
        number = running(via, {})
        wait_until(lambda: any(e["event"] == "tick" for e in journal(tmp_path)), what="the heartbeat to end")
        with StateStore(tmp_path / "state").lock():  # held as another heartbeat of the agent holds it
            (tmp_path / "release").write_text("")
            answer = via.wait(number)
        after = via.ask("tools/call", {"name": "fast", "arguments": {"q": "next"}})
    finally:
        via.close()
    assert answer["result"] == {"content": [{"type": "text", "text": "slow answer"}]}
    assert texts(after).startswith("fast answer")  # the next call did go ahead
    actions = [(e["tool"], e.get("after_stop")) for e in journal(tmp_path) if e["event"] == "action"]
    assert actions == [("slow", "locked"), ("fast", None)]


# -- what reaches the server besides tool calls: resource reads and prompts

HOLD = '''
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def progress(ctx):
    """A metric (a plug-in as any user's) that holds the end of a heartbeat while `hold` exists: it
    says so in `held` and returns once `let-go` appears. A proxy told to stop ends its open
    heartbeat before it exits, so meanwhile it is stopping, and still answers requests."""
    if (HERE / "hold").exists():
        (HERE / "held").write_text("")
        while not (HERE / "let-go").exists():
            time.sleep(0.01)
    return None
'''


def forwarded(folder: Path, *methods: str) -> list[str]:
    """The requests of ``methods`` that reached the server, in order."""
    return [e["method"] for e in server_log(folder) if e.get("method") in methods]


def fleet_stopped(folder: Path) -> None:
    """A heartbeat.toml whose agent also obeys the fleet stop ``folder/fleet/STOP`` (its folder made)."""
    (folder / "fleet").mkdir()
    stop = folder / "fleet" / "STOP"
    (folder / "heartbeat.toml").write_text(
        f'[agent]\nstate_dir = "state"\nkill_file = "KILL"\n\n[stop]\npath = "{stop}"\n'
    )


def test_requests_that_reach_the_server_are_refused_once_the_proxy_is_stopping(tmp_path: Path) -> None:
    """Regression: after SIGTERM, while the proxy saved its open heartbeat, a resource read and a
    prompt were still forwarded and answered by the server (only tool calls were refused), and a
    tool call waited on the closing heartbeat instead of being refused. The lists stay answered."""
    (tmp_path / "holdmetric.py").write_text(HOLD)
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nstate_dir = "state"\nkill_file = "KILL"\nprogress = "holdmetric:progress"\n'
    )
    via = proxy(tmp_path, "--idle", "60s")  # one heartbeat, open until the proxy ends it
    try:
        assert "result" in via.ask("tools/call", {"name": "fast", "arguments": {"q": "before"}})
        (tmp_path / "hold").write_text("")
        via.process.send_signal(signal.SIGTERM)
        assert via.said("stopping (SIGTERM)"), "the signal was not taken"
        wait_until(lambda: (tmp_path / "held").exists(), what="the proxy to be ending its heartbeat")
        numbers = {
            "read": via.start("resources/read", {"uri": "raw://notes"}),
            "prompt": via.start("prompts/get", {"name": "hello"}),
            "call": via.start("tools/call", {"name": "fast", "arguments": {"q": "after"}}),
            "list": via.start("tools/list", {}),
        }
        answers = {what: via.wait(number, timeout=10) for what, number in numbers.items()}
        (tmp_path / "let-go").write_text("")
        assert via.process.wait(timeout=30) == 0
    finally:
        (tmp_path / "let-go").write_text("")
        via.close()
    read, prompt = answers["read"]["error"]["message"], answers["prompt"]["error"]["message"]
    assert read.startswith("heartbeat: the resource was not read: the proxy in front of this MCP server")
    assert prompt.startswith("heartbeat: the prompt was not fetched: the proxy in front of this MCP server")
    assert answers["call"]["result"]["isError"]
    assert texts(answers["call"]).startswith("heartbeat: the tool was not called: the proxy in front")
    for said in (read, prompt, texts(answers["call"])):
        assert "is shutting down" in said and "state folder" not in said and "recorded" not in said
    assert [t["name"] for t in answers["list"]["result"]["tools"]] == ["fast", "odd", "slow", "bare"]
    assert forwarded(tmp_path, "resources/read", "prompts/get") == []
    assert [e.get("name") for e in server_log(tmp_path) if e.get("method") == "tools/call"] == ["fast"]


@pytest.mark.parametrize("stop", ["kill", "fleet"])
@pytest.mark.parametrize("request_", ["resource", "prompt"])
def test_a_resource_read_or_prompt_in_flight_at_a_stop_is_cancelled_and_said_so(
    tmp_path: Path, stop: str, request_: str
) -> None:
    """Regression: a read running on the server when KILL or the fleet stop came went on, and its
    answer reached the model after the stop, as late as the server cared to send it; a tool call
    in flight is cancelled at once. Now the read is cancelled too (the server is told) and the
    model is told why; it is answered within about a second."""
    fleet_stopped(tmp_path)
    method, params = ("resources/read", {"uri": "raw://slow"})
    if request_ == "prompt":
        method, params = ("prompts/get", {"name": "slow"})
    via = proxy(tmp_path)
    try:
        number = via.start(method, params)
        wait_until(lambda: forwarded(tmp_path, method), what="the request to reach the server")
        (tmp_path / ("KILL" if stop == "kill" else "fleet/STOP")).write_text("pull the plug\n")
        began = time.monotonic()
        answer = via.wait(number, timeout=10)
        took = time.monotonic() - began
        wait_until(lambda: any("cancelled" in e for e in server_log(tmp_path)), what="the cancellation")
    finally:
        (tmp_path / "release").write_text("")
        via.close()
    assert took < 2.0, f"answered {took:.2f} s after the stop"
    said = answer["error"]["message"]
    what = "the resource was not read" if request_ == "resource" else "the prompt was not fetched"
    assert said.startswith(f"heartbeat: {what}: it was under way when this agent was stopped by the ")
    assert "pull the plug" in said and "told to cancel it" in said


def test_the_first_request_after_the_fleet_stop_is_engaged_is_refused(tmp_path: Path) -> None:
    """Regression: a proxy whose first request was a resource read or a prompt forwarded it although
    the fleet stop was engaged: the stop's shared reading was not made yet, and none was waited for
    (a tool call opens a heartbeat, whose tick reads it fresh, and was refused)."""
    fleet_stopped(tmp_path)
    (tmp_path / "fleet" / "STOP").write_text("fleet-wide stop\n")
    via = proxy(tmp_path)
    try:
        read = via.ask("resources/read", {"uri": "raw://notes"})
        prompt = via.ask("prompts/get", {"name": "hello"})
    finally:
        via.close()
    for answer in (read, prompt):
        assert "error" in answer and "stopped by the fleet stop" in answer["error"]["message"]
        assert "fleet-wide stop" in answer["error"]["message"]
    assert forwarded(tmp_path, "resources/read", "prompts/get") == []
    kills = [e for e in journal(tmp_path) if e["event"] == "kill"]
    assert len(kills) == 1  # the stop journaled once


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("[1, 2]", "not a JSON-RPC object: [1, 2]"),
        ('"a bare string"', 'not a JSON-RPC object: "a bare string"'),
        ("42", "not a JSON-RPC object: 42"),
        ('{"jsonrpc": "2.0", "id": {id}, "result": 42}', "not a JSON-RPC response"),
        ('{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}', "-32700"),
    ],
    ids=["array", "string", "number", "result-not-an-object", "error-with-no-id"],
)
def test_a_server_answer_that_is_no_json_rpc_object_is_an_error_at_once_and_recorded(
    line: str, said: str, tmp_path: Path
) -> None:
    """Regression: the SDK could not read the server's answer and dropped it, so the call waited
    forever (the client with it, recorded only once the client gave up). Now the call is answered
    at once with a JSON-RPC error saying what the server sent, and recorded as failed; the proxy
    goes on."""
    via = proxy(tmp_path)
    try:
        number = via.start("tools/call", {"name": "bare", "arguments": {"line": line}})
        answer = via.wait(number, timeout=10)
        after = via.ask("tools/call", {"name": "fast", "arguments": {"q": "a"}})
    finally:
        via.close()
    assert "result" not in answer and answer["error"]["code"] == -32603, answer
    assert said in answer["error"]["message"]
    assert "fast answer" in texts(after)
    actions = [e for e in journal(tmp_path) if e["event"] == "action"]
    assert [a["tool"] for a in actions] == ["bare", "fast"]
    assert said in actions[0]["error"]


def test_an_answer_naming_no_request_ends_each_request_waiting_saying_which_is_not_known(
    tmp_path: Path,
) -> None:
    """A bare array while two calls wait on the server: it answers one of them, which cannot be told;
    no other answer comes for that one, so each ends at once, told just that, and each is recorded."""
    via = proxy(tmp_path)
    try:
        slow = running(via, {})
        bare = via.start("tools/call", {"name": "bare", "arguments": {"line": "[1, 2]"}})
        answers = [via.wait(slow, timeout=10), via.wait(bare, timeout=10)]
    finally:
        via.close()
    for answer in answers:
        said = answer["error"]["message"]
        assert "one of the 2 requests waiting on it, which one cannot be told" in said, answer
        assert "[1, 2]" in said and "may have run" in said
    actions = [e for e in journal(tmp_path) if e["event"] == "action"]
    assert sorted(a["tool"] for a in actions) == ["bare", "slow"]
    assert all("cannot be told" in a["error"] for a in actions)
