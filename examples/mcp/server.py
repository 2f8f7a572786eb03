"""A small offline MCP server (stdio) to put behind ``heartbeat mcp-proxy``: a fake library catalogue.

Run it directly (``python examples/mcp/server.py``) or behind the proxy
(``heartbeat mcp-proxy --state-dir state -- python examples/mcp/server.py``).
Every answer is computed from the arguments, so runs are repeatable. With
``EXAMPLE_MCP_CALL_LOG=FILE`` set, each call it receives is appended to FILE
as one JSON line: that is how the tests prove that, after a KILL, no call
reached it.
"""

from __future__ import annotations

import hashlib
import json
import os

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("library", instructions="A library catalogue: search it, then read a book's page.")

_TITLES = ["On Heartbeats", "Loops and Cycles", "The Patient Agent", "Stuck in Place", "Recovery"]


def _log(tool: str, args: dict[str, object]) -> None:
    path = os.environ.get("EXAMPLE_MCP_CALL_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"tool": tool, "args": args, "pid": os.getpid()}, sort_keys=True) + "\n")


def _pick(text: str, count: int) -> list[str]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")
    return [_TITLES[(seed + i) % len(_TITLES)] for i in range(count)]


@server.tool()
def search(query: str, limit: int = 3) -> str:
    """Search the catalogue; returns up to `limit` titles, one per line."""
    _log("search", {"query": query, "limit": limit})
    titles = _pick(query, max(0, min(limit, len(_TITLES))))
    return "\n".join(f"{i + 1}. {title} (about {query})" for i, title in enumerate(titles))


@server.tool()
def read_page(title: str, page: int = 1) -> str:
    """Read one page of a book by its title."""
    _log("read_page", {"title": title, "page": page})
    if title not in _TITLES:
        raise ToolError(f"no book titled {title!r}; search first")
    return f"{title}, page {page}: " + " ".join(_pick(f"{title}/{page}", 5)).lower()


@server.tool()
def count_pages(title: str) -> int:
    """How many pages a book has (a structured result)."""
    _log("count_pages", {"title": title})
    return 40 + len(title)


@server.resource("library://opening-hours")
def opening_hours() -> str:
    """When the library is open."""
    return "Monday to Friday, 9:00 to 17:00"


@server.prompt()
def find_a_book(topic: str) -> str:
    """A prompt that asks for a book on a topic."""
    return f"Find a book about {topic} in the library and read its first page."


if __name__ == "__main__":
    server.run()
