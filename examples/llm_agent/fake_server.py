"""A small fake of an OpenAI-compatible chat endpoint, for trying llm_agent.py offline.

    python examples/llm_agent/fake_server.py [--port 8000]

prints its base URL; point the agent at it with ``OPENAI_BASE_URL``. It
speaks just enough of ``POST /v1/chat/completions`` (and ``GET /v1/models``):
answers with ``tool_calls`` and ``usage``, deterministically, like a model
with temperature 0 and a fixed habit:

- it writes one note per conversation: search -> read_file -> write_note ->
  a one-sentence answer, on the topic after the notes already written;
- once two notes exist it gets *stuck*: it calls ``search`` with the same
  query over and over, which heartbeat's ``repeat`` detector catches;
- when the system prompt carries heartbeat's instructions (see
  ``llm_agent.INSTRUCTIONS_HEADING``) it tries a different approach: it reads
  the next document directly instead of searching.

The model name ``fail-500`` makes it answer HTTP 500, to see how the agent
records a failing endpoint. Tests start it in-process with :func:`start`
and read what it received from ``server.requests``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# Topics in the order the fake model covers them, with the document of each.
TOPICS = [
    ("Scheduled agents", "cron.md"),
    ("Loops and repeats", "loops.md"),
    ("Progress metrics", "metrics.md"),
    ("Escalation", "escalation.md"),
]
STUCK_AFTER = 2  # notes written before the fake model falls into its search loop
INSTRUCTIONS_MARKER = "Instructions from the heartbeat"


@dataclass
class FakeServer:
    """A running fake endpoint: its base URL and every request it received."""

    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    httpd: ThreadingHTTPServer | None = None
    thread: threading.Thread | None = None
    log: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, request: dict[str, Any]) -> None:
        """Keep one received request (method, path, headers, body)."""
        with self._lock:
            self.requests.append(request)

    def chat_requests(self) -> list[dict[str, Any]]:
        """The bodies of the chat completion requests received, oldest first."""
        with self._lock:
            return [r["body"] for r in self.requests if r["path"].endswith("/chat/completions")]

    def close(self) -> None:
        """Stop serving and free the port."""
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
        if self.thread is not None:
            self.thread.join(5)


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def next_message(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The fake model's deterministic next assistant message for a conversation."""
    system = next((_text(m) for m in messages if m.get("role") == "system"), "")
    user = next((_text(m) for m in messages if m.get("role") == "user"), "")
    found = re.search(r"Notes so far: (\d+)", user)
    notes = int(found.group(1)) if found else 0
    tool_results = [_text(m) for m in messages if m.get("role") == "tool"]
    instructed = INSTRUCTIONS_MARKER in system
    turn = len(tool_results)

    if notes >= len(TOPICS):
        return {"role": "assistant", "content": "Every topic in the library has a note; nothing left to add."}
    title, document = TOPICS[notes]
    if notes >= STUCK_AFTER and not instructed:
        # The habit heartbeat is there to catch: the same search, again and again.
        return _call(turn, "search", {"query": "more about agents"})
    plan = ["read_file", "write_note"] if instructed else ["search", "read_file", "write_note"]
    if turn >= len(plan):
        return {"role": "assistant", "content": f"I saved a note on {title.lower()}."}
    tool = plan[turn]
    if tool == "search":
        return _call(turn, "search", {"query": title.lower()})
    if tool == "read_file":
        if not instructed:
            # Read what the search returned ("cron.md: Scheduled agents"), as a model would.
            hit = re.match(r"(\S+\.md):", tool_results[-1]) if tool_results else None
            document = hit.group(1) if hit else document
        return _call(turn, "read_file", {"path": document})
    body = tool_results[-1] if tool_results else ""
    prose = " ".join(body.split("\n", 1)[-1].split())  # the document without its title line
    sentences = [s for s in re.split(r"(?<=[.!?]) ", prose) if s]
    return _call(turn, "write_note", {"title": title, "text": " ".join(sentences[:2]) or title})


def _call(turn: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{turn + 1}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
        ],
    }


def completion(body: dict[str, Any]) -> dict[str, Any]:
    """A chat.completion object answering ``body``."""
    messages = body.get("messages") or []
    message = next_message(messages)
    prompt_tokens = len(json.dumps(messages)) // 4  # a rough, deterministic count
    completion_tokens = len(json.dumps(message)) // 4
    return {
        "id": f"chatcmpl-fake-{len(messages)}",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _handler(server: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            server.record({"method": "GET", "path": self.path, "headers": dict(self.headers), "body": None})
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                self._send(400, {"error": {"message": "the body is not JSON"}})
                return
            server.record({"method": "POST", "path": self.path, "headers": dict(self.headers), "body": body})
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            if body.get("model") == "fail-500":
                self._send(500, {"error": {"message": "the fake server was asked to fail"}})
                return
            answer = completion(body)
            if server.log:
                message = answer["choices"][0]["message"]
                what = ", ".join(
                    c["function"]["name"] + c["function"]["arguments"]
                    for c in message.get("tool_calls") or []
                ) or repr(message["content"])
                print(f"fake model -> {what}", file=sys.stderr, flush=True)
            self._send(200, answer)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: one line per answer is printed by do_POST when logging."""

    return Handler


def start(host: str = "127.0.0.1", port: int = 0, *, log: bool = False) -> FakeServer:
    """Serve in a background thread; port 0 lets the OS pick a free one."""
    server = FakeServer(url="", log=log)
    httpd = ThreadingHTTPServer((host, port), _handler(server))
    httpd.daemon_threads = True
    server.httpd = httpd
    server.url = f"http://{host}:{httpd.server_address[1]}/v1"
    server.thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    server.thread.start()
    return server


def main() -> int:
    """Run until Ctrl-C, printing the URL to use."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    args = parser.parse_args()
    server = start(port=args.port, log=True)
    print(f"fake OpenAI-compatible endpoint at {server.url}", flush=True)
    print(f"  export OPENAI_BASE_URL={server.url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
