"""A tool call's round trip through ``heartbeat mcp-proxy`` vs direct to the same MCP server.

Three real MCP client sessions over stdio, open side by side in one run, all
to ``examples/mcp/server.py`` (each its own server process):

- direct: client -> server (the baseline);
- bare forwarder: client -> a minimal proxy that forwards ``tools/call`` and
  nothing else (the same low-level ``Server`` + ``ClientSession`` as the
  heartbeat proxy): the cost of the extra stdio hop alone;
- heartbeat: client -> ``python -m heartbeat mcp-proxy`` -> server, every
  call recorded (detectors, a heartbeat every ``--actions`` calls: tick,
  save with fsync, journal).

Calls go round-robin (direct, bare, heartbeat, then the next order), with
fresh arguments each time so no detector fires. Target: heartbeat <= 2.2x
direct, median round trip (an extra stdio hop is about 2x; recording and
detection should add no more than a tenth on top). The mean is printed too:
it carries the heartbeat boundaries, a tick with its fsyncs every
``--actions`` calls, which the next call waits for.

    python bench/bench_mcp_proxy.py [--calls 600] [--warmup 60] [--actions 50]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
from _common import REPO, machine, median, quantile, table, us, verdict
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

SERVER = REPO / "examples" / "mcp" / "server.py"

_WORDS = [
    "amber",
    "basalt",
    "cedar",
    "delta",
    "ember",
    "fjord",
    "garnet",
    "harbor",
    "indigo",
    "juniper",
    "kestrel",
    "lagoon",
    "meadow",
    "nectar",
    "oriole",
    "prairie",
    "quartz",
    "raven",
    "sierra",
    "tundra",
    "umber",
    "violet",
    "willow",
    "xenon",
    "yarrow",
    "zephyr",
    "acorn",
    "birch",
    "comet",
    "dune",
    "estuary",
    "falcon",
    "glacier",
    "heron",
    "islet",
    "jasper",
    "koala",
    "lichen",
    "marsh",
    "nimbus",
]


def query(i: int) -> str:
    """A new query for call ``i``, in words only: a detector masks numbers, so "topic 7" and
    "topic 8" would look like paging (near_repeat)."""
    n = len(_WORDS)
    return f"{_WORDS[i % n]} {_WORDS[(i // n) % n]} {_WORDS[(i // (n * n)) % n]}"


BARE_FORWARDER = '''\
"""The least a stdio MCP proxy does: forward tools/list and tools/call, record nothing."""
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server


async def main() -> None:
    params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    async with stdio_client(params) as (r, w), ClientSession(r, w) as upstream:
        await upstream.initialize()

        async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
            return await upstream.list_tools(params=params)

        async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
            return await upstream.call_tool(params.name, params.arguments)

        server: Server[Any] = Server("bare", on_list_tools=list_tools, on_call_tool=call_tool)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())


anyio.run(main)
'''


async def bench(calls: int, warmup: int, actions: int, folder: Path) -> dict[str, list[float]]:
    forwarder = folder / "bare_forwarder.py"
    forwarder.write_text(BARE_FORWARDER)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    server = [sys.executable, str(SERVER)]
    commands = {
        "direct": server,
        "bare forwarder": [sys.executable, str(forwarder), *server],
        "heartbeat mcp-proxy": [
            sys.executable,
            "-m",
            "heartbeat",
            "mcp-proxy",
            "--state-dir",
            str(folder / "state"),
            "--kill-file",
            str(folder / "KILL"),
            "--actions",
            str(actions),
            "--",
            *server,
        ],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    async with AsyncExitStack() as stack:
        sessions = {}
        for name, argv in commands.items():
            params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(folder))
            read, write = await stack.enter_async_context(stdio_client(params))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            await session.list_tools()
            sessions[name] = session
        names = list(sessions)
        for i in range(warmup + calls):
            order = names[i % len(names) :] + names[: i % len(names)]
            for name in order:
                args = {"query": query(i), "limit": 3}
                began = time.perf_counter()
                result = await sessions[name].call_tool("search", args)
                elapsed = time.perf_counter() - began
                if result.is_error:
                    raise SystemExit(f"{name}: call {i} answered with an error: {result.content}")
                if i >= warmup:
                    times[name].append(elapsed)
    return times


def recording_cost(folder: Path, actions: int, calls: int = 3000) -> float:
    """Seconds per call of what the proxy adds in process: ``Session.check`` + ``Session.record``."""
    from heartbeat.config.file import HeartbeatConfig
    from heartbeat.integrations.session import Session

    config = HeartbeatConfig.model_validate(
        {"agent": {"state_dir": str(folder / "state"), "kill_file": str(folder / "KILL")}, "base_dir": folder}
    )
    session = Session(config, actions=actions, idle=600, seconds=600)
    output = "1. On Heartbeats (about x)\n2. Loops and Cycles (about x)\n3. Recovery (about x)"
    for i in range(200):  # warm up: the history at its bound
        session.check()
        session.record("search", {"query": query(i + 10_000), "limit": 3}, output=f"{output} {query(i)}")
    began = time.perf_counter()
    for i in range(calls):
        session.check()
        session.record("search", {"query": query(i), "limit": 3}, output=f"{output} {query(i)}")
    elapsed = time.perf_counter() - began
    session.close()
    return elapsed / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=600, help="measured calls per client (600)")
    parser.add_argument("--warmup", type=int, default=60, help="unmeasured calls first (60)")
    parser.add_argument("--actions", type=int, default=50, help="the proxy's --actions (50)")
    opts = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        times = anyio.run(bench, opts.calls, opts.warmup, opts.actions, Path(tmp))
        alone = recording_cost(Path(tmp) / "alone", actions=1_000_000)
        amortized = recording_cost(Path(tmp) / "amortized", actions=opts.actions)
    direct = median(times["direct"])
    direct_mean = statistics.fmean(times["direct"])
    rows = [
        [
            name,
            us(median(t)),
            us(quantile(t, 0.9)),
            us(quantile(t, 0.99)),
            us(statistics.fmean(t)),
            f"{median(t) / direct:.2f}x",
            f"{statistics.fmean(t) / direct_mean:.2f}x",
        ]
        for name, t in times.items()
    ]
    table(
        ["round trip of one tools/call", "median us", "p90 us", "p99 us", "mean us", "median vs", "mean vs"],
        rows,
        title=f"{opts.calls} calls per client, round-robin, heartbeat every {opts.actions} calls",
    )
    bare = median(times["bare forwarder"])
    proxy = median(times["heartbeat mcp-proxy"])
    ratio = proxy / direct
    hop = bare - direct
    print(f"\nthe extra stdio hop (bare forwarder - direct, medians): {us(hop)} us")
    print(f"heartbeat - bare forwarder, medians: {us(proxy - bare)} us per call (noisy: two processes apart)")
    print(
        f"in process, Session.check + Session.record per call: {us(alone)} us without a boundary "
        f"({alone / hop:.1%} of the hop), {us(amortized)} us with a heartbeat every {opts.actions} calls "
        f"({amortized / hop:.1%})"
    )
    # The mean carries the heartbeat boundaries (a tick with its fsyncs every --actions calls).
    mean_ratio = statistics.fmean(times["heartbeat mcp-proxy"]) / direct_mean
    print(f"mean, boundaries included: {mean_ratio:.2f}x direct")
    print(f"RATIO heartbeat mcp-proxy / direct = {ratio:.2f}x ({verdict(ratio, 2.2)})")


if __name__ == "__main__":
    main()
