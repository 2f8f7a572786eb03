"""A scripted, offline MCP client that gets stuck, talking to server.py through ``heartbeat mcp-proxy``.

    cd examples/mcp && python client.py

It starts ``heartbeat mcp-proxy --state-dir state --kill-file KILL -- python
server.py`` exactly as a desktop assistant would from its config
(``claude_desktop_config.json`` beside this file), lists the tools, makes two
healthy calls, then calls ``search`` with the same arguments over and over,
as a stuck model does. It prints the first lines of every answer: the third
repeat is answered with the recovery instructions instead of the result;
the model ignores them, so the next repeat escalates to a human, and from
then on nothing reaches the server. Afterwards
``heartbeat status --state-dir state`` shows the agent waiting for a human
(exit 4) and ``heartbeat resume --state-dir state`` lets it go on.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

HERE = Path(__file__).resolve().parent

PROXY = ["-m", "heartbeat", "mcp-proxy", "--state-dir", "state", "--kill-file", "KILL"]

PLAN = [
    ("search", {"query": "agents that get stuck"}),
    ("read_page", {"title": "Stuck in Place", "page": 1}),
    *[("search", {"query": "how to get unstuck"})] * 6,
]


def first_lines(text: str, count: int = 3) -> str:
    lines = text.splitlines()
    more = f"\n      ... ({len(lines) - count} more lines)" if len(lines) > count else ""
    return "\n      ".join(lines[:count]) + more


async def main() -> None:
    proxy = StdioServerParameters(
        command=sys.executable,
        args=[*PROXY, "--", sys.executable, "server.py"],
        cwd=str(HERE),
        env=dict(os.environ),  # the SDK would start it with a minimal environment otherwise
    )
    async with stdio_client(proxy) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        tools = (await session.list_tools()).tools
        print(f"connected to {init.server_info.name!r} through heartbeat: tools {[t.name for t in tools]}")
        for number, (tool, args) in enumerate(PLAN, 1):
            result = await session.call_tool(tool, args)
            label = "ERROR" if result.is_error else "ok"
            text = "\n".join(getattr(block, "text", "") for block in result.content)
            print(f"{number}. {tool}({args}) -> {label}\n      {first_lines(text)}")


if __name__ == "__main__":
    anyio.run(main)
