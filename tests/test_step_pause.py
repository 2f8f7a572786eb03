"""A person's ``heartbeat pause`` wins against a framework run inside a ``heartbeat tick`` step.

The adapter is bound to the step's ``ctx``: the tick holds the state folder's
lock for as long as the run lasts, and ``pause`` waits for it. Real processes
(``heartbeat tick`` and ``heartbeat pause``), PydanticAI with its own offline
``FunctionModel``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from _cli import run_cli as cli
from conftest import wait_until

# A run of many model turns, one search each (a new query and a new answer every time: healthy),
# paced like a live agent; it ends on its own only once the test says ``enough``.
AGENT = '''
import time
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.usage import UsageLimits

from heartbeat.integrations import Stopped
from heartbeat.integrations.pydantic_ai import HeartbeatCapability


def word(n):
    return "".join(chr(97 + int(d)) for d in str(n))


def step(ctx):
    def search(q: str) -> str:
        """Search."""
        with open("ran.log", "a") as log:
            log.write(q + "\\n")
        time.sleep(0.05)
        return "hits about " + q

    turns = [0]

    def model(messages, info):
        turns[0] += 1
        if Path("enough").exists() or turns[0] > 2000:
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("search", {"q": "topic " + word(turns[0])})])

    agent = Agent(FunctionModel(model), tools=[search])
    try:
        agent.run_sync(
            "research",
            capabilities=[HeartbeatCapability(ctx)],
            usage_limits=UsageLimits(request_limit=None),
        )
    except Stopped as stop:
        Path("stopped.txt").write_text(stop.cause + ": " + stop.reason)
'''


def test_a_pause_stops_an_adapter_bound_to_a_busy_steps_ctx_within_seconds(tmp_path: Path) -> None:
    """Regression: the step held the lock for its whole run, and ``pause`` gave up with exit 5."""
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "agent:step"\n')
    ran = tmp_path / "ran.log"
    tick = subprocess.Popen(
        [sys.executable, "-m", "heartbeat", "tick"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: ran.exists() and len(ran.read_text().splitlines()) >= 3, what="the run", proc=tick)
        began = time.monotonic()
        paused = cli(tmp_path, "pause", "--reason", "lunch")
        took = time.monotonic() - began
    finally:
        (tmp_path / "enough").write_text("")  # the run ends on its own now, whatever happened
        out, err = tick.communicate(timeout=120)
    assert paused.returncode == 0, paused.stderr
    assert took < 6.0  # a fresh CLI process and its wait; it was exit 5 after 15 s
    assert tick.returncode == 0, (out, err)
    said = (tmp_path / "stopped.txt").read_text()
    assert said == "paused: a person is pausing this agent: lunch"
    state = json.loads((tmp_path / "state" / "state.json").read_text())
    assert state["status"] == "paused" and state["status_reason"] == "lunch"
    journal = [json.loads(line) for line in (tmp_path / "state" / "journal.jsonl").read_text().splitlines()]
    actions = [e for e in journal if e["event"] == "action"]
    assert len(actions) == len(ran.read_text().splitlines())  # every call that ran, saved with its tick
    assert not (tmp_path / "state" / ".pause-request").exists()
