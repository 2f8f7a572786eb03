"""``run --metrics-port``: ``/metrics`` over HTTP with bounded connections and read timeouts.

prometheus_client's own server gives every connection a thread with no cap and
no timeout: a hundred idle clients hold a hundred threads, and under a memory
limit the run stops ticking. Here at most :data:`MAX_CONNECTIONS` are served at
once (one more is closed at once, unread), and a client that sends nothing for
:data:`READ_TIMEOUT_SECONDS` is dropped, so the run's own threads, and the KILL
watch among them, never starve. A Prometheus scrape takes milliseconds.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["MAX_CONNECTIONS", "READ_TIMEOUT_SECONDS", "MetricsServer", "start"]

MAX_CONNECTIONS = 8
"""Connections served at once; more are closed as they come."""

READ_TIMEOUT_SECONDS = 5.0
"""How long a connection may send nothing before it is dropped."""


class MetricsServer(ThreadingHTTPServer):
    """A threading HTTP server with at most ``MAX_CONNECTIONS`` handler threads."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], render: Callable[[], tuple[bytes, str]]) -> None:
        self.render = render
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve the connection on a thread of its own, or close it when every slot is taken."""
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        """One connection's thread; its slot is given back when it ends."""
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


class _MetricsServer6(MetricsServer):
    """The same on an IPv6 address."""

    address_family = socket.AF_INET6


class _Handler(BaseHTTPRequestHandler):
    timeout = READ_TIMEOUT_SECONDS  # set on the socket: a silent client is dropped
    server: MetricsServer

    def do_GET(self) -> None:
        if self.path.split("?")[0] not in ("/", "/metrics"):
            self.send_error(404)
            return
        body, content_type = self.server.render()
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Nothing on stderr per request: ``run``'s output is the ticks'."""

    def handle(self) -> None:
        with contextlib.suppress(OSError):  # a client gone or timed out: nothing to say
            super().handle()


def start(
    host: str, port: int, render: Callable[[], tuple[bytes, str]]
) -> tuple[MetricsServer, threading.Thread]:
    """Serve ``render()`` (body, content type) on ``host:port`` from a daemon thread."""
    server = (_MetricsServer6 if ":" in host else MetricsServer)((host, port), render)
    thread = threading.Thread(target=server.serve_forever, name="heartbeat-metrics", daemon=True)
    thread.start()
    return server, thread
