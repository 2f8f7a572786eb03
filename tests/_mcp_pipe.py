"""A process spoken to in raw JSON-RPC lines: ``heartbeat mcp-proxy`` in front of ``raw_mcp_server.py``.

Shared by the tests of the proxy's stops (``tests/test_live_stops.py``,
``tests/test_proxy_stops.py``): a request is sent, its answer waited for by id,
what reached the server is read from its log, and what the agent's journal kept.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import live_streams
from _cli import run_cli
from conftest import wait_until

RAW_SERVER = [sys.executable, str(Path(__file__).resolve().parent / "raw_mcp_server.py")]
"""The raw server, as a command."""


class Pipe:
    """A process spoken to in raw JSON-RPC lines (the proxy, or the raw server itself); answers by id."""

    def __init__(self, argv: list[str], folder: Path) -> None:
        self.folder = folder
        env = {
            **os.environ,
            "PYTHONPATH": str(live_streams.REPO),
            "RAW_MCP_LOG": str(folder / "server.log"),
            "RAW_MCP_RELEASE": str(folder / "release"),
        }
        self.process = subprocess.Popen(
            argv,
            cwd=folder,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.answers: dict[int, dict[str, Any]] = {}
        self.stderr: list[str] = []  # what it wrote to stderr so far, line by line
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._errors = threading.Thread(target=self._read_errors, daemon=True)
        self._errors.start()
        self.next_id = 1
        hello = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        assert "result" in self.ask("initialize", hello)
        self.send({"method": "notifications/initialized"})

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            message = json.loads(line)
            if "id" in message:
                with self._cond:
                    self.answers[message["id"]] = message
                    self._cond.notify_all()

    def _read_errors(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            with self._cond:
                self.stderr.append(line)
                self._cond.notify_all()

    def said(self, text: str, timeout: float = 30.0) -> bool:
        """Wait until a line of its stderr holds ``text``; whether one did within ``timeout``."""
        with self._cond:
            return self._cond.wait_for(lambda: any(text in line for line in self.stderr), timeout)

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        self.process.stdin.flush()

    def start(self, method: str, params: dict[str, Any]) -> int:
        number, self.next_id = self.next_id, self.next_id + 1
        self.send({"id": number, "method": method, "params": params})
        return number

    def wait(self, number: int, timeout: float = 30.0) -> dict[str, Any]:
        with self._cond:
            assert self._cond.wait_for(lambda: number in self.answers, timeout), f"no answer to {number}"
            return self.answers[number]

    def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return self.wait(self.start(method, params))

    def close(self) -> str:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._errors.join(timeout=30)
        with self._cond:
            return "".join(self.stderr)


def proxy(folder: Path, *flags: str) -> Pipe:
    argv = [sys.executable, "-m", "heartbeat", "mcp-proxy", "--state-dir", "state", "--kill-file", "KILL"]
    return Pipe([*argv, *flags, "--", *RAW_SERVER], folder)


def server_log(folder: Path) -> list[dict[str, Any]]:
    path = folder / "server.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def texts(answer: dict[str, Any]) -> str:
    return "\n".join(b.get("text", "") for b in answer["result"]["content"])


def journal(folder: Path) -> list[dict[str, Any]]:
    """The events of the agent's journal in ``folder`` (none before the first)."""
    path = folder / "state" / "journal.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def running(via: Pipe, arguments: dict[str, Any]) -> int:
    """Start a ``slow`` call and wait until it reached the server; its request id."""
    number = via.start("tools/call", {"name": "slow", "arguments": arguments})
    wait_until(lambda: any(e.get("id") == number for e in server_log(via.folder)), what="the call to run")
    return number


def paused_mid_call(
    via: Pipe, arguments: dict[str, Any]
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], dict[str, Any]]:
    """A ``slow`` call (``arguments``) that a person pauses the agent during, then releases: the
    ``heartbeat pause`` process, the call's answer, and the answer to a ``fast`` call after it."""
    number = running(via, arguments)
    paused = run_cli(via.folder, "pause", "--state-dir", "state", "--reason", "lunch")
    (via.folder / "release").write_text("")
    answer = via.wait(number)
    return paused, answer, via.ask("tools/call", {"name": "fast", "arguments": {}})
