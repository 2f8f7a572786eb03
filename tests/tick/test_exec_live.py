"""`--exec`: the program's lines are applied as it writes them; a budget spent mid-run ends it at once.

The program is a real one (``relay.py``, run by a real ``heartbeat tick``): it
copies each line the test writes into a FIFO into its ``HEARTBEAT_ACTIONS``
file, in one write, and notes each copy in an ``acks`` file; between two lines
it waits on the FIFO, so the test decides what it has written when, and nothing
sleeps to win a race.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import spawn_heartbeat, wait_until

RELAY = '''
"""Copies each line of the FIFO (a JSON string) into HEARTBEAT_ACTIONS in one write; acks each."""
import json
import os
import sys

fifo, acks = sys.argv[1], sys.argv[2]
out = os.open(os.environ["HEARTBEAT_ACTIONS"], os.O_WRONLY | os.O_APPEND)


def ack(text):
    with open(acks, "a") as handle:
        handle.write(text + "\\n")


ack(str(os.getpid()))
with open(fifo, encoding="utf-8") as orders:
    for order in orders:
        os.write(out, json.loads(order).encode())
        ack("wrote")
'''


def usage(tokens_in: int, tokens_out: int = 0) -> str:
    """A usage line of ``tokens_in + tokens_out`` tokens on a model priced by hand (no price data needed)."""
    line = {"usage": {"model": "m", "input_tokens": tokens_in, "output_tokens": tokens_out, "cost": 0.001}}
    return json.dumps(line) + "\n"


def tool(name: str) -> str:
    return json.dumps({"tool": "search", "args": {"q": name}, "output": f"hits for {name}"}) + "\n"


class Relay:
    """A `heartbeat tick` whose step is relay.py; ``send`` hands the program text to write."""

    def __init__(self, root: Path, budget: str) -> None:
        self.root = root
        (root / "relay.py").write_text(RELAY)
        self.fifo, self.acks = root / "orders", root / "acks"
        os.mkfifo(self.fifo)
        (root / "heartbeat.toml").write_text(
            f'[agent]\nname = "relay"\nexec = "{sys.executable} relay.py orders acks"\n'
            'state_dir = "state"\nkill_file = "KILL"\nexec_timeout = "60s"\n\n'
            f"[budget]\n{budget}\n\n"
            '[[notify]]\ntype = "file"\nname = "file"\npath = "notes.jsonl"\n'
        )
        self.proc = spawn_heartbeat(root, "tick", "--json")
        self.writer = -1

        def opened() -> bool:  # once the program has the FIFO open for reading
            try:
                self.writer = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                return False
            return True

        wait_until(opened, what="relay.py to open its FIFO", proc=self.proc)
        os.set_blocking(self.writer, True)
        self.pid = int(self.acked()[0])

    def acked(self) -> list[str]:
        return self.acks.read_text().splitlines() if self.acks.exists() else []

    def send(self, text: str, *, wait: bool = True) -> None:
        """Have the program write ``text`` (in one write); with ``wait``, until it says it has."""
        before = len(self.acked())
        os.write(self.writer, (json.dumps(text) + "\n").encode())
        if wait:
            wait_until(lambda: len(self.acked()) > before, what="relay.py to write", proc=self.proc)

    def program_alive(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def finish(self) -> tuple[int, dict[str, Any]]:
        """The tick's exit code and its --json line."""
        out, err = self.proc.communicate(timeout=60)
        assert out.strip(), err
        return self.proc.returncode, json.loads(out.strip().splitlines()[-1])

    def close(self) -> None:
        if self.writer >= 0:
            os.close(self.writer)
            self.writer = -1
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def state(self) -> dict[str, Any]:
        state: dict[str, Any] = json.loads((self.root / "state" / "state.json").read_text())
        return state

    def journal(self) -> list[dict[str, Any]]:
        lines = (self.root / "state" / "journal.jsonl").read_text().splitlines()
        return [json.loads(line) for line in lines]

    def notes(self) -> list[str]:
        path = self.root / "notes.jsonl"
        return [json.loads(line)["kind"] for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def relay(tmp_path: Path) -> Iterator[Any]:
    made: list[Relay] = []

    def make(budget: str) -> Relay:
        made.append(Relay(tmp_path, budget))
        return made[-1]

    yield make
    for one in made:
        one.close()


def test_a_budget_spent_mid_run_ends_the_program_within_a_second(relay: Any) -> None:
    """tokens_per_tick = 250: the third 120-token line goes past it; the program, waiting for its next
    order, is ended within about a second; the agent is paused, notified, the spend journaled."""
    run = relay("tokens_per_tick = 250")
    run.send(usage(100, 20))
    run.send(usage(100, 20))
    assert run.program_alive()
    crossed = time.monotonic()
    run.send(usage(100, 20))
    wait_until(lambda: not run.program_alive(), timeout=10, what="the program to be ended")
    assert time.monotonic() - crossed < 1.5
    code, line = run.finish()
    assert code == 0 and line["outcome"] == "paused", line
    assert "360 tokens in one tick, limit 250" in line["message"] and not line.get("step_error")
    state = run.state()
    assert state["status"] == "paused" and state["budget"]["tokens"] == 360
    assert run.notes() == ["budget"]
    events = run.journal()
    [spent] = [e for e in events if e["event"] == "spend"]
    assert spent["tokens"] == 360 and spent["models"]["m"]["calls"] == 3
    assert [e["reason"] for e in events if e["event"] == "budget"] == [
        "budget: 360 tokens in one tick, limit 250"
    ]
    assert [e["kind"] for e in events if e["event"] == "notify"] == ["budget"]  # queued, then delivered


def test_the_lines_written_before_the_kill_are_all_recorded(relay: Any) -> None:
    """The line that spends the budget, the five calls written with it and half a line cut short: the
    calls are recorded, the half line is dropped (no step error), the usage counted."""
    run = relay("tokens_per_tick = 250")
    run.send(usage(100, 20))
    burst = usage(180, 20) + "".join(tool(f"t{i}") for i in range(5)) + '{"tool": "sea'
    run.send(burst)
    wait_until(lambda: not run.program_alive(), timeout=10, what="the program to be ended")
    code, line = run.finish()
    assert code == 0 and line["outcome"] == "paused" and not line.get("step_error"), line
    events = run.journal()
    assert [e["summary"] for e in events if e["event"] == "action"] == [
        f'search({{"q":"t{i}"}})' for i in range(5)
    ]
    assert run.state()["budget"]["tokens"] == 320 and run.state()["budget"]["actions"] == 5


def test_a_bad_line_mid_run_is_named_as_before(relay: Any) -> None:
    """A bad line while it runs: the same one-line error, the good lines kept, the budget still ends it."""
    run = relay("tokens_per_tick = 250")
    run.send('{"usage": {"model": "m", "input_tokens": -1}}\n')
    run.send(usage(200) + usage(200))
    wait_until(lambda: not run.program_alive(), timeout=10, what="the program to be ended")
    code, line = run.finish()
    assert code == 1, line
    assert line["step_error"] == (
        "ExecStepError: actions.jsonl line 1: 'usage.input_tokens' must be an integer >= 0"
    )
    assert run.state()["budget"]["tokens"] == 400 and run.notes() == ["budget"]


def test_a_last_line_waits_for_its_newline_and_counts_when_the_program_ends(relay: Any) -> None:
    """Half a line is not applied (nor an error) while the program runs; once it exits, a last line
    without a newline is applied, as before."""
    run = relay("tokens_per_tick = 250")
    run.send('{"usage": {"model": "m", "input_tokens": 2')
    run.send('00, "cost": 0.001}}\n' + usage(100))  # the first line, finished: 300 tokens
    wait_until(lambda: not run.program_alive(), timeout=10, what="the program to be ended")
    code, line = run.finish()
    assert code == 0 and line["outcome"] == "paused", line
    assert run.state()["budget"]["tokens"] == 300  # the finished line (200) and the next (100)


def test_a_program_that_ends_by_itself_has_every_line_applied(relay: Any) -> None:
    """Under its budget, the program ends when its orders end: each line applied once, the last one
    (with no newline) too."""
    run = relay("tokens_per_tick = 100000")
    run.send(tool("a") + usage(50))
    run.send(tool("b") + tool("c").rstrip("\n"))
    os.close(run.writer)
    run.writer = -1
    code, line = run.finish()
    assert code == 0 and line["outcome"] == "ran", line
    assert [h["tool"] for h in run.state()["history"]] == ["search"] * 3
    assert run.state()["budget"]["tokens"] == 50
