"""``run --metrics-port`` under idle clients (issue 24, item 10): bounded threads, idlers dropped."""

from __future__ import annotations

import re
import socket
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import spawn_heartbeat, wait_until

NOOP = """
def step(ctx):
    ctx.record("read", {"page": ctx.tick}, output="page %d says something new" % ctx.tick)
"""


def _threads(pid: int) -> int:
    """The threads of process ``pid``, from /proc."""
    return int(re.search(r"^Threads:\s+(\d+)", Path(f"/proc/{pid}/status").read_text(), re.M).group(1))  # type: ignore[union-attr]


def _closed(sock: socket.socket) -> bool:
    """Whether the server closed ``sock`` (a read gives EOF or an error, without waiting)."""
    sock.setblocking(False)
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def test_a_hundred_idle_clients_hold_no_hundred_threads_and_kill_still_ends_the_run(tmp_path: Path) -> None:
    """100 idle connections: a few served, the rest closed, idlers dropped; scrapes and KILL work."""
    pytest.importorskip("prometheus_client")
    from heartbeat.cli.metricserver import MAX_CONNECTIONS, READ_TIMEOUT_SECONDS

    (tmp_path / "agent.py").write_text(NOOP)
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "agent:step"\n')
    proc = spawn_heartbeat(tmp_path, "run", "--every", "1h", "--metrics-port", "127.0.0.1:0")
    idle: list[socket.socket] = []
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        port = int(re.search(r"127\.0\.0\.1:(\d+)/metrics", line).group(1))  # type: ignore[union-attr]
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(100)]
        closed: set[int] = set()

        def count_closed() -> int:
            closed.update(i for i, s in enumerate(idle) if i not in closed and _closed(s))
            return len(closed)

        # All but the served ones are closed by the server at once...
        wait_until(
            lambda: count_closed() >= 100 - MAX_CONNECTIONS, what="the ones past the cap closed", timeout=20
        )
        assert _threads(proc.pid) < MAX_CONNECTIONS + 12
        # ...and the served ones, silent, are dropped after the read timeout; then a scrape works.
        started = time.monotonic()
        wait_until(lambda: count_closed() == 100, what="the idle clients dropped", timeout=30, proc=proc)
        assert time.monotonic() - started < READ_TIMEOUT_SECONDS + 10
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
            assert b"heartbeat_up" in answer.read()
        (tmp_path / "KILL").write_text("enough")
        proc.wait(timeout=30)
        assert proc.returncode == 3
    finally:
        for s in idle:
            s.close()
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
