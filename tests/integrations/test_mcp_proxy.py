"""``heartbeat mcp-proxy``: a real MCP client, the real proxy process, a real MCP server behind it."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parents[2]
SERVER = REPO / "examples" / "mcp" / "server.py"
RAW_SERVER = REPO / "tests" / "raw_mcp_server.py"  # answers a call of an unknown tool with a JSON-RPC error


def env(log: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "EXAMPLE_MCP_CALL_LOG": str(log)}


@asynccontextmanager
async def connect(argv: list[str], folder: Path, log: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env(log), cwd=str(folder))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        INIT.append(await session.initialize())
        yield session


INIT: list[Any] = []  # what each connection's initialize answered


def direct() -> list[str]:
    return [sys.executable, str(SERVER)]


def proxied(*flags: str) -> list[str]:
    return [sys.executable, "-m", "heartbeat", "mcp-proxy", "--state-dir", "state", *flags, "--", *direct()]


def received(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


def heartbeat_cli(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "heartbeat", *args],
        cwd=folder,
        env=env(folder / "unused.log"),
        capture_output=True,
        text=True,
        timeout=60,
    )


HEALTHY = [
    ("search", {"query": "heartbeats"}),
    ("read_page", {"title": "Recovery", "page": 2}),
    ("read_page", {"title": "no such book"}),  # an error result, passed on as it is
    ("count_pages", {"title": "Recovery"}),  # a structured result
]


def test_tools_and_healthy_calls_are_identical_to_a_direct_connection(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"

    async def extras(session: ClientSession) -> list[Any]:
        """Resources and prompts: passed through as they are, not recorded."""
        return [
            await session.list_resources(),
            await session.read_resource("library://opening-hours"),
            await session.list_prompts(),
            await session.get_prompt("find_a_book", {"topic": "loops"}),
        ]

    async def main() -> tuple[list[Any], list[Any], list[Any], list[Any], list[Any], list[Any]]:
        INIT.clear()
        async with connect(direct(), tmp_path, log) as plain:
            tools = (await plain.list_tools()).tools
            results = [await plain.call_tool(name, args) for name, args in HEALTHY]
            more = await extras(plain)
        async with connect(proxied(), tmp_path, log) as via:
            tools_via = (await via.list_tools()).tools
            results_via = [await via.call_tool(name, args) for name, args in HEALTHY]
            more_via = await extras(via)
        return tools, tools_via, results, results_via, more, more_via

    tools, tools_via, results, results_via, more, more_via = anyio.run(main)
    assert [m.model_dump() for m in more_via] == [m.model_dump() for m in more]
    assert more[1].contents[0].text == "Monday to Friday, 9:00 to 17:00"
    plain_init, via_init = INIT
    assert via_init.server_info.name == plain_init.server_info.name == "library"
    assert via_init.instructions == plain_init.instructions
    assert [t.model_dump() for t in tools_via] == [t.model_dump() for t in tools]
    assert [t.name for t in tools] == ["search", "read_page", "count_pages"]
    assert [r.model_dump() for r in results_via] == [r.model_dump() for r in results]
    assert results[2].is_error and results[3].structured_content == {"result": 48}
    # Each call reached the server once per connection.
    assert [c["tool"] for c in received(log)] == [name for name, _ in HEALTHY] * 2
    # ... and every proxied one is an action of the agent, in order, the error as an error.
    state = json.loads((tmp_path / "state" / "state.json").read_text())
    assert state["actions_total"] == 4 and state["stuck_streak"] == 0
    assert [a["tool"] for a in state["history"]] == [name for name, _ in HEALTHY]
    assert state["history"][2]["error"].startswith("Error executing tool read_page")
    assert [a["error"] for a in state["history"] if a["index"] != 3] == [None, None, None]


def test_repeats_get_instructions_then_escalation_then_kill_stops_all_forwarding(tmp_path: Path) -> None:
    # Three stuck heartbeats to a human, not two: the repeat the recovery named would
    # escalate at the second (that rule is tested in test_policy).
    (tmp_path / "heartbeat.toml").write_text("[policy]\nescalate_on_ignored = false\n")
    log = tmp_path / "calls.log"
    same = {"query": "the same thing"}
    answers: dict[str, Any] = {}

    async def main() -> None:
        async with connect(proxied("--kill-file", "KILL"), tmp_path, log) as via:
            answers["repeats"] = [await via.call_tool("search", same) for _ in range(3)]
            # The model ignores the instructions: the policy calls a human within a few more calls.
            more = []
            while len(more) < 5 and (not more or "waits for a human" not in text(more[-1])):
                more.append(await via.call_tool("search", same))
            answers["more"] = more
            before = len(received(log))
            answers["refused"] = await via.call_tool("search", {"query": "something new"})
            answers["forwarded_while_waiting"] = len(received(log)) - before
            answers["status"] = heartbeat_cli(tmp_path, "status", "--state-dir", "state", "--json")
            # The person resumes it as the refusal says, from wherever they read it.
            (told,) = re.findall(r"`(heartbeat resume [^`]*)`", text(answers["refused"]))
            argv = shlex.split(told)
            argv[argv.index("--note") + 1] = "search for something else"
            (tmp_path / "elsewhere").mkdir()
            answers["resume"] = heartbeat_cli(tmp_path / "elsewhere", *argv[1:])
            answers["after_resume"] = await via.call_tool("search", {"query": "something else"})
            (tmp_path / "KILL").write_text("the operator pulled the plug\n")
            before = len(received(log))
            answers["killed"] = [
                await via.call_tool(name, args) for name, args in [*HEALTHY, ("search", same)]
            ]
            answers["forwarded_after_kill"] = len(received(log)) - before

    anyio.run(main)
    repeats = answers["repeats"]
    # Threshold 3: the third identical call is answered with an error carrying the instructions.
    assert [r.is_error for r in repeats] == [False, False, True]
    assert "you look stuck" in text(repeats[2]) and "Do not repeat: search" in text(repeats[2])
    assert "withheld" in text(repeats[2])
    more = answers["more"]
    assert all(r.is_error for r in more) and "waits for a human" in text(more[-1])
    assert "repeat" in text(more[-1])
    # Told not to make that call again, the model asks for it anyway: refused before it reaches
    # the server, and said so (live round 48: the proxy forwarded it, a message sent again).
    assert all("This call did not run" in text(r) and "withheld" not in text(r) for r in more)
    refused = answers["refused"]
    assert refused.is_error and "waiting for a human" in text(refused) and "heartbeat resume" in text(refused)
    assert answers["forwarded_while_waiting"] == 0
    status = answers["status"]
    assert status.returncode == 4 and json.loads(status.stdout)["status"] == "needs_human"
    assert answers["resume"].returncode == 0, answers["resume"].stderr
    after_resume = answers["after_resume"]
    assert not after_resume.is_error
    assert after_resume.content[-1].text.endswith(
        "note from the person watching you: search for something else"
    )
    assert len(after_resume.content) == 2  # the result's own block, then the note (once)
    assert all(r.is_error and "KILL file" in text(r) for r in answers["killed"])
    assert "the operator pulled the plug" in text(answers["killed"][0])
    assert answers["forwarded_after_kill"] == 0
    # Every call that reached the server is in the state, in order, and so is each one refused
    # after the redirection (its error says it never ran); those refused while stopped are not.
    calls = received(log)
    assert len(calls) == 3 + 1  # the repeats up to the redirection, one after the resume
    state = json.loads((tmp_path / "state" / "state.json").read_text())
    assert state["actions_total"] == 3 + len(more) + 1
    assert [a["summary"] for a in state["history"]] == [
        *['search({"query":"the same thing"})'] * (3 + len(more)),
        'search({"query":"something else"})',
    ]
    assert [a["error"] is not None and "not run" in a["error"] for a in state["history"]] == [
        *[False] * 3,
        *[True] * len(more),
        False,
    ]
    events = [
        json.loads(line)["event"] for line in (tmp_path / "state" / "journal.jsonl").read_text().splitlines()
    ]
    assert "escalation" in events and "resume" in events and "kill" in events


def test_a_call_past_the_budget_is_told_the_budget_is_spent_not_that_it_is_stuck(tmp_path: Path) -> None:
    (tmp_path / "heartbeat.toml").write_text("[budget]\nactions_per_day = 2\n")
    log = tmp_path / "calls.log"
    answers: list[Any] = []

    async def main() -> None:
        async with connect(proxied("--kill-file", "KILL"), tmp_path, log) as via:
            for word in ("heartbeats", "loops", "cycles", "agents"):
                answers.append(await via.call_tool("search", {"query": word}))

    anyio.run(main)
    assert len(received(log)) == 3  # the third call ran: the budget is checked as it is recorded
    over, refused = text(answers[2]), text(answers[3])
    assert answers[2].is_error and "withheld" in over and "budget" in over and "paused" in over
    assert "stuck" not in over  # it was "you look stuck: budget: 3 actions today, limit 2"
    assert answers[3].is_error and "not called" in refused and "paused" in refused


def test_a_corrupt_state_refuses_every_request_naming_what_was_not_done(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / "state.json").write_text('{"schema_version": 1, "ticks": ')
    log = tmp_path / "calls.log"
    said: dict[str, str] = {}

    async def main() -> None:
        from mcp.shared.exceptions import MCPError

        async with connect(proxied("--kill-file", "KILL"), tmp_path, log) as via:
            said["call"] = text(await via.call_tool("search", {"query": "heartbeats"}))
            for what, request in (
                ("read", via.read_resource("library://opening-hours")),
                ("prompt", via.get_prompt("find_a_book", {"topic": "loops"})),
            ):
                try:
                    await request
                except MCPError as exc:
                    said[what] = exc.error.message

    anyio.run(main)
    assert received(log) == []  # nothing reached the server
    assert (state / "state.json").read_text() == '{"schema_version": 1, "ticks": '  # left as it is
    assert "the call could not be recorded, so it was not made" in said["call"]
    assert "the resource was not read" in said["read"] and "the prompt was not fetched" in said["prompt"]
    for refusal in (said["read"], said["prompt"]):
        assert "not valid JSON" in refusal and "call" not in refusal  # it said "the call ... was not made"


def test_usage_errors_are_one_line_and_exit_2(tmp_path: Path) -> None:
    done = heartbeat_cli(tmp_path, "mcp-proxy", "--state-dir", "state")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "after --" in done.stderr
    done = heartbeat_cli(tmp_path, "mcp-proxy", "--state-dir", "state", "--", "no-such-mcp-server-xyz")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "no-such-mcp-server-xyz" in done.stderr and done.stdout == ""
    done = heartbeat_cli(tmp_path, "mcp-proxy", "--idle", "soon", "--", *direct())
    assert done.returncode == 2 and "soon" in done.stderr
    done = heartbeat_cli(tmp_path, "mcp-proxy", "--", sys.executable, "-c", "raise SystemExit(3)")
    assert done.returncode == 1 and done.stderr.strip().endswith("did not start: Connection closed")
    assert "Traceback" not in done.stderr


class RawClient:
    """The proxy as a subprocess spoken to in raw JSON-RPC lines, so a test can signal or starve it."""

    def __init__(self, folder: Path, log: Path, server: list[str] | None = None) -> None:
        argv = proxied("--idle", "600s")
        if server is not None:
            argv = [*argv[: argv.index("--") + 1], *server]
        self.process = subprocess.Popen(
            argv,
            cwd=folder,
            env=env(log),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        hello = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        assert "result" in (self.ask({"id": 1, "method": "initialize", "params": hello}) or {})
        self.ask({"method": "notifications/initialized"})

    def ask(self, message: dict[str, Any]) -> dict[str, Any] | None:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        stdin.flush()
        return json.loads(stdout.readline()) if "id" in message else None

    def call(self, number: int, query: str) -> dict[str, Any]:
        params = {"name": "search", "arguments": {"query": query}}
        answer = self.ask({"id": number, "method": "tools/call", "params": params})
        assert answer is not None
        return answer

    def end(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate()


def test_sigterm_saves_the_open_heartbeat_and_the_server_behind_stops(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    client = RawClient(tmp_path, log)
    try:
        assert client.call(2, "x")["result"]["isError"] is False
        server_pid = received(log)[0]["pid"]
        client.process.send_signal(signal.SIGTERM)
        assert client.process.wait(timeout=30) == 0
    finally:
        client.end()
    # The heartbeat was still open (idle 600 s): SIGTERM saved it.
    state = json.loads((tmp_path / "state" / "state.json").read_text())
    assert state["actions_total"] == 1 and state["ticks"] == 1
    # The server read end-of-file on its stdin and stopped.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and alive(server_pid):
        time.sleep(0.05)
    assert not alive(server_pid)


def _server_killed(tmp_path: Path, server: list[str] | None = None) -> str:
    """One call through the proxy, then its server killed: the proxy exits 1; what it wrote to stderr."""
    log = tmp_path / "calls.log"
    client = RawClient(tmp_path, log, server) if server else RawClient(tmp_path, log)
    try:
        assert client.call(2, "x")["result"]["isError"] is False
        os.kill(received(log)[0]["pid"], signal.SIGKILL)
        assert client.process.wait(timeout=30) == 1
        _, stderr = client.process.communicate()
    finally:
        client.end()
    return str(stderr)


def test_a_server_that_exits_ends_the_proxy_with_its_state_saved(tmp_path: Path) -> None:
    assert _server_killed(tmp_path).strip().splitlines()[-1].endswith("exited; the proxy stops with it")
    assert json.loads((tmp_path / "state" / "state.json").read_text())["actions_total"] == 1


def test_the_server_exited_message_shows_no_credential_and_no_escape_code(tmp_path: Path) -> None:
    """The message names the server command, which the client's config gives and its log keeps:
    an --api-key, a TOKEN=... and an escape code in it are masked and escaped."""
    label = "\x1b]0;owned\x07\x1b[2J"
    server = ["env", "TOKEN=tok-abcdef123", *direct(), "--api-key", "sekrit-42", "--label", label]
    stderr = _server_killed(tmp_path, server)
    said = stderr.strip().splitlines()[-1]
    assert said.endswith("exited; the proxy stops with it") and "--api-key *** --label" in said
    assert "TOKEN=***" in said and "\\x1b]0;owned\\x07" in said
    assert "sekrit-42" not in stderr and "tok-abcdef123" not in stderr and "\x1b" not in stderr


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its new parent to reap it has stopped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_cron_tick_imports_neither_mcp_nor_opentelemetry(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(
        "def step(ctx):\n    ctx.record('noop', {}, output='fine output text')\n"
    )
    code = (
        "import sys\n"
        "from heartbeat.cli.main import main\n"
        "code = main(['tick', '--step', 'agent:step', '--state-dir', 'state'])\n"
        "heavy = {'mcp', 'mcp_types', 'anyio', 'opentelemetry'}\n"
        "loaded = sorted({m.split('.')[0] for m in sys.modules} & heavy)\n"
        "print(code, loaded)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env(tmp_path / "x.log"),
        capture_output=True,
        text=True,
    )
    assert done.stdout.splitlines()[-1] == "0 []", done.stdout + done.stderr


def test_a_protocol_error_that_trips_a_detector_reaches_the_model_with_the_instructions(
    tmp_path: Path,
) -> None:
    """Regression: the third call of an unknown tool tripped `repeat`, and the client got the bare
    protocol error, never the instructions; now it gets both, as a normal result's instructions come."""
    from mcp.shared.exceptions import MCPError

    argv = [*proxied()[: -len(direct())], sys.executable, str(RAW_SERVER)]
    answers: list[Any] = []

    async def main() -> None:
        params = StdioServerParameters(
            command=argv[0],
            args=argv[1:],
            env={**env(tmp_path / "unused.log"), "RAW_MCP_LOG": str(tmp_path / "server.log")},
            cwd=str(tmp_path),
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as via:
            await via.initialize()
            for _ in range(3):
                try:
                    answers.append(await via.call_tool("lookup", {"id": 7}))
                except MCPError as exc:
                    answers.append(exc)

    anyio.run(main)
    first, second, third = answers
    for plain in (first, second):  # nothing found yet: the server's own error, as it sent it
        assert isinstance(plain, MCPError) and plain.error.code == -32602
        assert "Unknown tool or method: tools/call 'lookup'" in plain.error.message
    assert not isinstance(third, MCPError), f"the bare protocol error: {third}"
    said = text(third)
    assert third.is_error
    # The error, truthfully: what the server answered, and that no result came ...
    assert "MCP error -32602: Unknown tool or method: tools/call 'lookup'" in said
    assert "withheld" not in said  # no result was withheld: there was none
    # ... and the instructions a normal result's call gets.
    assert "Do not repeat: lookup" in said
    calls = [json.loads(line) for line in (tmp_path / "server.log").read_text().splitlines()]
    assert [c.get("name") for c in calls if c.get("method") == "tools/call"] == ["lookup"] * 3
    state = json.loads((tmp_path / "state" / "state.json").read_text())
    unknown = "MCP error -32602: Unknown tool or method: tools/call 'lookup'"
    assert [a["error"] for a in state["history"]] == [unknown] * 3
