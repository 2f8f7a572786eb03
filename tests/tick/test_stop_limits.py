"""The fleet stop and the metrics server under load and abuse (issue 24, items 8-10).

Real processes and real servers on 127.0.0.1: a stop URL that counts its
requests, one that trickles its answer a byte at a time, and idle clients
that hold connections to ``run --metrics-port`` open.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import spawn_heartbeat, wait_until

NOOP = """
def step(ctx):
    ctx.record("read", {"page": ctx.tick}, output="page %d says something new" % ctx.tick)
"""


def fleet(root: Path, stop: str, agents: int = 12) -> Path:
    """A config of ``agents`` agents that all read one ``[stop]``."""
    (root / "agent.py").write_text(NOOP)
    tables = "".join(f'[[agents]]\nname = "a{i}"\nstate_dir = "s{i}"\n' for i in range(agents))
    (root / "heartbeat.toml").write_text(f'[agent]\nstep = "agent:step"\n[stop]\n{stop}\n{tables}')
    for i in range(agents):
        (root / f"s{i}").mkdir()
    return root


@pytest.mark.parametrize("command", [["status"], ["status", "--json"], ["metrics"]])
def test_status_and_metrics_read_the_stop_url_once_for_every_agent(
    tmp_path: Path, webhook_server: Any, command: list[str]
) -> None:
    """Twelve agents behind one stop URL: one request per command, not twelve (item 8)."""
    pytest.importorskip("prometheus_client")
    fleet(tmp_path, f'url = "{webhook_server.url("/fleet/STOP")}"')
    webhook_server.status = 404  # go on
    proc = spawn_heartbeat(tmp_path, *command)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert len(webhook_server.requests) == 1
    webhook_server.status, webhook_server.body = 200, b"maintenance window"
    proc = spawn_heartbeat(tmp_path, *command)
    out, err = proc.communicate(timeout=60)
    assert len(webhook_server.requests) == 2  # engaged: still one request, and every agent sees it
    if command == ["status"]:
        assert out.count("KILLED") == 12 and proc.returncode == 3
    elif command == ["status", "--json"]:
        assert out.count("maintenance window") == 12 and proc.returncode == 3


class Trickle:
    """An HTTP server that answers 200 and then sends its body one byte every 0.2 s, for a minute."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = threading.Event()
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.set()
            thread = threading.Thread(target=self._trickle, args=(conn,), daemon=True)
            thread.start()
            self.threads.append(thread)

    def _trickle(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            conn.recv(4096)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 300\r\n\r\n")
            for _ in range(300):
                if self.stop.wait(0.2):
                    return
                conn.sendall(b"x")

    def close(self) -> None:
        self.stop.set()
        self.sock.close()
        for thread in self.threads:
            thread.join(timeout=5)


@pytest.fixture
def trickle() -> Iterator[Trickle]:
    server = Trickle()
    try:
        yield server
    finally:
        server.close()


def test_a_trickling_stop_url_costs_a_tick_its_timeout_not_more(tmp_path: Path, trickle: Trickle) -> None:
    """A stop URL that trickles its answer: `tick` gives up at timeout = 2s and fails closed (item 9)."""
    fleet(tmp_path, f'url = "http://127.0.0.1:{trickle.port}/STOP"\ntimeout = "2s"', agents=1)
    started = time.monotonic()
    proc = spawn_heartbeat(tmp_path, "tick")
    out, err = proc.communicate(timeout=60)
    took = time.monotonic() - started
    assert proc.returncode == 3, err
    assert "no answer within 2s" in out + err and "failing closed" in out + err
    # The trickle lasts a minute (a per-read timeout would wait it out): 2 s, plus a process start.
    assert took < 20, f"tick took {took:.1f} s behind a trickling stop URL"


def test_kill_ends_a_tick_reading_a_trickling_stop_url(tmp_path: Path, trickle: Trickle) -> None:
    """KILL written while the tick reads a slow stop URL ends it at once, with KILL's reason (item 9)."""
    fleet(tmp_path, f'url = "http://127.0.0.1:{trickle.port}/STOP"\ntimeout = "60s"', agents=1)
    proc = spawn_heartbeat(tmp_path, "tick")
    try:
        wait_until(trickle.accepted.is_set, proc=proc, what="the tick reading the stop URL")
        started = time.monotonic()
        (tmp_path / "KILL").write_text("stop now")
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - started
    finally:
        proc.kill()
    assert proc.returncode == 3 and "stop now" in out + err
    assert took < 2.0, f"KILL took {took:.1f} s behind a trickling stop URL"
