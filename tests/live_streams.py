"""A steady stream of tool calls through a long-running path, then a stop: how fast is it refused, what ran.

Shared by ``tests/test_live_stops.py`` (short runs) and ``bench/stress_live.py``
(long runs). Each stream calls a tool every ``pace`` seconds through one path
(a library :class:`~heartbeat.integrations.session.Session`, ``heartbeat mcp-proxy`` in front
of a real MCP server, or a framework adapter bound to a state folder), engages
a stop (the agent's KILL file or the fleet stop, ``[stop] path``) after
``before`` seconds, and keeps calling until ``after`` seconds later. The
report says how long after the stop the first call was refused, how many
calls ran (the tool's own count) and how many the journal holds: a path
that fails closed refuses within about a second and journals every call
that ran.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

REPO = Path(__file__).resolve().parents[1]
StopKind = Literal["kill", "fleet"]


@dataclass
class StreamReport:
    """What one stream showed."""

    path: str
    stop: StopKind
    ran: int = 0  # calls the tool itself executed
    refused_after: float | None = None  # seconds from the stop to the first refused call
    journaled: int = 0  # action events in the journal
    saved: int = 0  # actions_total in state.json
    kills: int = 0  # kill events in the journal
    problems: list[str] = field(default_factory=list)

    def check(self, bound: float) -> StreamReport:
        """Fill ``problems``: refused within ``bound`` seconds, every call that ran journaled."""
        if self.refused_after is None:
            self.problems.append(f"{self.path}/{self.stop}: never refused after the stop")
        elif self.refused_after > bound:
            self.problems.append(
                f"{self.path}/{self.stop}: refused {self.refused_after:.2f} s after the stop"
            )
        if self.journaled != self.ran:
            self.problems.append(
                f"{self.path}/{self.stop}: {self.ran} call(s) ran, {self.journaled} journaled"
            )
        if self.kills < 1:
            self.problems.append(f"{self.path}/{self.stop}: the stop is not journaled")
        return self

    def summary(self) -> str:
        """One line."""
        after = "never" if self.refused_after is None else f"{self.refused_after:.2f} s"
        return (
            f"{self.path:<10} {self.stop:<5} ran {self.ran:>4}  journaled {self.journaled:>4}  "
            f"saved {self.saved:>4}  refused after {after}  kill lines {self.kills}"
        )


def config_text(folder: Path) -> str:
    """A heartbeat.toml with a KILL file and a fleet stop path in ``folder``; no detector gets in the way."""
    return (
        "[agent]\n"
        f'state_dir = "{folder / "state"}"\n'
        f'kill_file = "{folder / "KILL"}"\n'
        "[detectors]\n"
        'exempt = ["search"]\n'
        "[stop]\n"
        f'path = "{folder / "fleet" / "STOP"}"\n'
    )


def prepare(folder: Path) -> Path:
    """Write the config; the fleet stop's folder exists (so it reads *go*). The config's path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "fleet").mkdir(exist_ok=True)
    config = folder / "heartbeat.toml"
    config.write_text(config_text(folder))
    return config


def engage(folder: Path, stop: StopKind) -> None:
    """Pull the stop."""
    target = folder / "KILL" if stop == "kill" else folder / "fleet" / "STOP"
    target.write_text(f"stress: {stop}\n")


def tally(report: StreamReport, folder: Path) -> StreamReport:
    """Count what the journal and state.json hold."""
    journal = folder / "state" / "journal.jsonl"
    lines = [json.loads(line) for line in journal.read_text().splitlines()] if journal.exists() else []
    report.journaled = sum(1 for e in lines if e.get("event") == "action" and e.get("tool") != "step")
    report.kills = sum(1 for e in lines if e.get("event") == "kill")
    state = folder / "state" / "state.json"
    report.saved = json.loads(state.read_text())["actions_total"] if state.exists() else 0
    return report


def _drive(
    call: Callable[[int], bool], report: StreamReport, folder: Path, pace: float, before: float, after: float
) -> None:
    """Call ``call(n)`` (True: it ran, False: refused) every ``pace`` s; the stop at ``before``."""
    began = time.monotonic()
    engaged: float | None = None
    n = 0
    while True:
        now = time.monotonic()
        if engaged is None and now - began >= before:
            engage(folder, report.stop)
            engaged = time.monotonic()
        if engaged is not None and now - engaged >= after:
            break
        n += 1
        ran = call(n)
        if not ran and engaged is not None and report.refused_after is None:
            report.refused_after = time.monotonic() - engaged
        time.sleep(pace)  # the stream's own pace (a model thinking between calls), not a race fix


def session_stream(
    folder: Path, stop: StopKind, *, pace: float = 0.05, before: float = 1.0, after: float = 2.0
) -> StreamReport:
    """A library Session: ``check()``, the tool, ``record()``; closed at the end."""
    from heartbeat.integrations.session import Session, Stopped

    config = prepare(folder)
    report = StreamReport("session", stop)
    session = Session.from_files(config)

    def call(n: int) -> bool:
        if session.check() is not None:
            return False
        report.ran += 1  # the tool ran
        with contextlib.suppress(Stopped):  # stopped in flight: the call ran, and is still journaled
            session.record("search", {"q": f"query {n}"}, output=f"result {n} of the stream")
        return True

    try:
        _drive(call, report, folder, pace, before, after)
    finally:
        session.close()
    return tally(report, folder)


def proxy_stream(
    folder: Path, stop: StopKind, *, pace: float = 0.05, before: float = 1.5, after: float = 2.0
) -> StreamReport:
    """``heartbeat mcp-proxy`` in front of examples/mcp/server.py, a real MCP client over stdio."""
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    config = prepare(folder)
    log = folder / "calls.log"
    report = StreamReport("mcp-proxy", stop)
    argv = [sys.executable, "-m", "heartbeat", "mcp-proxy", "--config", str(config), "--"]
    argv += [sys.executable, str(REPO / "examples" / "mcp" / "server.py")]
    env = {**os.environ, "PYTHONPATH": str(REPO), "EXAMPLE_MCP_CALL_LOG": str(log)}

    async def main() -> None:
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(folder))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            began = time.monotonic()
            engaged: float | None = None
            n = 0
            while True:
                now = time.monotonic()
                if engaged is None and now - began >= before:
                    engage(folder, stop)
                    engaged = time.monotonic()
                if engaged is not None and now - engaged >= after:
                    break
                n += 1
                result = await client.call_tool("search", {"query": f"query {n}"})
                refused = result.is_error and "not called" in " ".join(
                    getattr(b, "text", "") for b in result.content
                )
                if refused and engaged is not None and report.refused_after is None:
                    report.refused_after = time.monotonic() - engaged
                await anyio.sleep(pace)

    anyio.run(main)
    report.ran = len(log.read_text().splitlines()) if log.exists() else 0
    return tally(report, folder)


def adapter_stream(
    folder: Path, stop: StopKind, *, pace: float = 0.05, before: float = 1.0, after: float = 2.0
) -> StreamReport:
    """A PydanticAI agent with its test model, its toolset guarded by a state folder (a Session)."""
    from pydantic_ai import Agent
    from pydantic_ai.models.test import TestModel

    from heartbeat.integrations import Stopped
    from heartbeat.integrations.pydantic_ai import guarded
    from heartbeat.integrations.session import Session

    session = Session.from_files(prepare(folder))
    report = StreamReport("adapter", stop)
    ran = threading.Lock()

    def search(query: str) -> str:
        """Search for something."""
        with ran:
            report.ran += 1
        return f"results about {query} ({report.ran})"

    def call(n: int) -> bool:
        agent: Agent[None, str] = Agent(
            TestModel(call_tools=["search"]), toolsets=[guarded([search], session)]
        )
        try:
            agent.run_sync(f"find things {n}")
        except Stopped:
            return False
        return True

    try:
        _drive(call, report, folder, pace, before, after)
    finally:
        session.close()
    return tally(report, folder)


STREAMS: dict[str, Callable[..., StreamReport]] = {
    "session": session_stream,
    "mcp-proxy": proxy_stream,
    "adapter": adapter_stream,
}


def everything(root: Path, **timing: Any) -> list[StreamReport]:
    """Every path under both stops."""
    reports = []
    for name, stream in STREAMS.items():
        for stop in ("kill", "fleet"):
            reports.append(stream(root / f"{name}-{stop}", stop, **timing))
    return reports
