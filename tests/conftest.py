"""Shared fixtures for the whole test suite.

``webhook_server``: a real ``http.server.ThreadingHTTPServer`` on
127.0.0.1, port chosen by the OS, that records every request and answers as
each test says. Use it wherever a notification should really go over HTTP::

    def test_escalation_posts(webhook_server):
        webhook_server.respond(500, 200)      # answers in order, then `status`
        webhook_server.delay = 2.0            # seconds before each answer
        webhook_server.headers = {"Location": "/elsewhere"}  # extra answer headers
        webhook_server.body = b"invalid_token"  # answer body (default "ok" / "nope")
        ... notify webhook_server.url("/hooks/SECRET123?token=abc") ...
        assert webhook_server.wait_for(1)     # block (up to 5 s) for N requests
        webhook_server.requests[0].json()["text"]

A delayed answer waits on an event that teardown sets, so a test never
sleeps and no handler thread outlives the test.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import stat
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

# Import every module that defines pydantic models now: a model class built while
# freezegun is active would see FakeDatetime and fail to build.
from heartbeat.core import models as _models

# And build the validators that models.py defers to first use: a test may use one first
# under freezegun (a fresh AgentState builds BudgetCounters), which would fail there.
for _model in (
    _models.ActionRecord,
    _models.ProgressSample,
    _models.Anomaly,
    _models.Recovery,
    _models.BudgetCounters,
    _models.Escalation,
    _models.Notification,
):
    _model.model_rebuild(force=True)


@dataclass(frozen=True)
class RecordedRequest:
    """One request the webhook server received, and the status it answered."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    status: int

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


@dataclass
class WebhookServer:
    """What a test controls and reads: answers, delay, and the recorded requests."""

    base_url: str
    status: int = 200
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    requests: list[RecordedRequest] = field(default_factory=list)
    _queue: list[int] = field(default_factory=list)
    _changed: threading.Condition = field(default_factory=threading.Condition)
    _closing: threading.Event = field(default_factory=threading.Event)

    def url(self, path: str = "/hook") -> str:
        """The server's URL with ``path`` (which may carry a query)."""
        return self.base_url + path

    def respond(self, *statuses: int) -> None:
        """Answer the next requests with these statuses, in order, then with ``status``."""
        with self._changed:
            self._queue.extend(statuses)

    def wait_for(self, count: int, timeout: float = 5.0) -> bool:
        """Block until ``count`` requests arrived (or ``timeout`` passed); True if they did."""
        with self._changed:
            return self._changed.wait_for(lambda: len(self.requests) >= count, timeout)

    def _next_status(self) -> int:
        with self._changed:
            return self._queue.pop(0) if self._queue else self.status

    def _record(self, request: RecordedRequest) -> None:
        with self._changed:
            self.requests.append(request)
            self._changed.notify_all()


def _handler(server: WebhookServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            status = server._next_status()
            server._record(RecordedRequest(self.command, self.path, dict(self.headers.items()), body, status))
            if server.delay and server._closing.wait(server.delay):
                return  # the test is over: do not answer a client that has gone
            self.send_response(status)
            for name, value in server.headers.items():
                self.send_header(name, value)
            answer = server.body if server.body is not None else b"ok" if status < 400 else b"nope"
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        do_POST = _answer
        do_GET = _answer

        def log_message(self, format: str, *args: Any) -> None:
            """Keep test output quiet."""

        def handle(self) -> None:
            # The client may have given up (a timeout test): nothing is left to answer.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                super().handle()

    return Handler


@contextlib.contextmanager
def running_webhook_server(port: int = 0) -> Iterator[WebhookServer]:
    """A real HTTP server on 127.0.0.1 (``port`` 0: a free one), stopped on exit."""
    state = WebhookServer(base_url="")
    ThreadingHTTPServer.allow_reuse_address = True
    httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(state))
    httpd.daemon_threads = True
    state.base_url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield state
    finally:
        state._closing.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


@pytest.fixture
def webhook_server() -> Iterator[WebhookServer]:
    """A real HTTP server on 127.0.0.1:<free port> that records requests (see module doc)."""
    with running_webhook_server() as server:
        yield server


@pytest.fixture
def open_umask() -> Iterator[None]:
    """Run the test with umask 0, so only heartbeat's own modes restrict files."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    """The permission bits of ``path``."""
    return stat.S_IMODE(path.stat().st_mode)


def wait_until(
    condition: Callable[[], object],
    *,
    what: str = "the condition",
    timeout: float = 30.0,
    proc: subprocess.Popen[str] | None = None,
) -> None:
    """Poll ``condition`` until it holds, with a deadline (never a sleep that hopes a race is over).

    Fails the test when ``timeout`` passes, or when ``proc`` (if given) ends first.
    """
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc is None or proc.poll() is None, f"the process ended before {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def spawn_heartbeat(cwd: Path, *argv: str, **env: str) -> subprocess.Popen[str]:
    """``python -m heartbeat ARGV`` as a real process in ``cwd``, output captured as text."""
    return subprocess.Popen(
        [sys.executable, "-m", "heartbeat", *argv],
        cwd=cwd,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **env},
    )


@dataclass
class Agent:
    """A throwaway agent project on disk: its module, its state folder, its KILL file.

    One helper for every test that needs an agent in a real ``python -m
    heartbeat`` process (or in this one): ``agent.cli("tick")`` runs a real
    process with the flags that point at this project.
    """

    root: Path
    module: str

    @property
    def state(self) -> Path:
        """The state folder."""
        return self.root / "state"

    @property
    def kill(self) -> Path:
        """The KILL file."""
        return self.root / "KILL"

    def flags(self, attr: str = "step") -> list[str]:
        """``--step MODULE:ATTR --state-dir ... --kill-file ...`` for this project."""
        return [
            "--step",
            f"{self.module}:{attr}",
            "--state-dir",
            str(self.state),
            "--kill-file",
            str(self.kill),
        ]

    def spawn(self, command: str, *argv: str, attr: str = "step", **env: str) -> subprocess.Popen[str]:
        """A real ``python -m heartbeat COMMAND`` process over this project (not waited for)."""
        return subprocess.Popen(
            [sys.executable, "-m", "heartbeat", command, *self.flags(attr), *argv],
            cwd=self.root,
            encoding="utf-8",
            errors="replace",  # what heartbeat prints is checked, not how a terminal would decode it
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **env},
        )

    def cli(
        self, command: str, *argv: str, attr: str = "step", timeout: float = 60, **env: str
    ) -> subprocess.CompletedProcess[str]:
        """Run a real ``python -m heartbeat COMMAND`` over this project to its end."""
        proc = self.spawn(command, *argv, attr=attr, **env)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def journal(self) -> list[dict[str, Any]]:
        """The journal's events, oldest first."""
        from heartbeat.state.journal import Journal

        return list(Journal(self.state / "journal.jsonl").read())

    def load(self) -> Any:
        """The saved state."""
        from heartbeat.state.store import StateStore

        return StateStore(self.state).load()


def make_agent(root: Path, source: str, module: str = "agent_mod") -> Agent:
    """Write ``source`` as ``root/<module>.py`` (importable by a process started in ``root``)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    return Agent(root, module)


@pytest.fixture
def rng() -> random.Random:
    """A random generator whose seed is printed (shown on failure); HEARTBEAT_TEST_SEED=N replays it."""
    seed = int(os.environ.get("HEARTBEAT_TEST_SEED") or int.from_bytes(os.urandom(4), "big"))
    print(f"random seed {seed} (rerun with HEARTBEAT_TEST_SEED={seed})")
    return random.Random(seed)


def heartbeat_over(
    tmp_path: Path,
    step: Any,
    *,
    progress: Any = None,
    clock: Any = None,
    **config: Any,
) -> Any:
    """The one agent helper for in-process tests: a Heartbeat over ``tmp_path/state``.

    Agent ``t``, KILL at ``tmp_path/KILL``, a file notifier named ``file``
    writing ``tmp_path/notes.jsonl``; ``config`` keys are merged in, ``clock``
    is a :class:`heartbeat.testing.FakeClock` or any clock.
    """
    from heartbeat.config.file import HeartbeatConfig
    from heartbeat.tick.runner import Heartbeat

    raw: dict[str, Any] = {
        "agent": {"name": "t", "state_dir": str(tmp_path / "state"), "kill_file": str(tmp_path / "KILL")},
        "notify": [{"type": "file", "name": "file", "path": str(tmp_path / "notes.jsonl")}],
        **config,
    }
    settings = HeartbeatConfig.model_validate({**raw, "base_dir": tmp_path})
    if clock is None:
        return Heartbeat(settings, step=step, progress=progress)
    return Heartbeat(settings, step=step, progress=progress, clock=clock)
