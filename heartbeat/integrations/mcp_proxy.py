"""``heartbeat mcp-proxy -- SERVER_CMD ARGS...``: heartbeat in front of any stdio MCP server.

The proxy is itself a stdio MCP server. It starts the real server as a child
process, lists its tools unchanged (names, descriptions, input and output
schemas, pages) and forwards every ``tools/call`` and its result unchanged,
while each call is recorded as an action of the configured agent through a
:class:`~heartbeat.integrations.session.Session` (``state.json``, journal, detectors,
policy, KILL, escalation; ``heartbeat status``/``log``/``resume``/``kill``
work on it as on any agent). Then:

- when a call trips a detector, that call is answered with an error result
  whose text is the recovery instructions, so the model reads them at once
  (its result is withheld: it has seen it already, or it was empty);
- on escalation, a pause or a KILL file, nothing more is forwarded: every
  call is answered with an error saying why and how a person goes on;
- after ``heartbeat resume --note TEXT``, the next result carries TEXT as
  one more text block (the only time a result is changed).

Any MCP client gets this without code; wrap the server in its config, e.g.
``claude_desktop_config.json``::

    {"mcpServers": {"library": {
        "command": "heartbeat",
        "args": ["mcp-proxy", "--state-dir", "/home/me/agents/library/state",
                 "--kill-file", "/home/me/agents/library/KILL",
                 "--", "npx", "-y", "@acme/library-mcp"]}}}

Built on the ``mcp`` package, major version 2 (``mcp>=2,<3``): 2.x renamed
the server classes and made every model field snake_case (``input_schema``,
``is_error``), so code written for 1.x fails at import and the other way
round; the proxy uses the low-level ``Server`` (one handler per method, the
upstream's result objects returned as they are, pagination cursors passed
through) and the ``ClientSession`` over ``stdio_client``.

The server's resources and prompts (when it offers them) pass through
unchanged and unrecorded: they are not tool calls. Not passed through:
completions, subscriptions, and notifications from the server (a changed
tool list, progress of a long call). stdout is the protocol; every
diagnostic goes to stderr.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from ..base.errors import HeartbeatError
from ..core.models import Anomaly
from .session import Session, Stop, Stopped

__all__ = ["ServerGone", "ToolProxy", "redirect_text", "refusal_text", "result_text", "serve"]

_STOPPED = {
    "needs_human": "the agent now waits for a human",
    "paused": "the agent is now paused",
    "killed": "the agent was stopped by its KILL file",
}
# What the recorded output of a non-text content block says (only its length matters to detectors).
_BLOCK_LABELS = {"image": "[image]", "audio": "[audio]", "resource_link": "[resource link]"}


def refusal_text(stop: Stop) -> str:
    """The error text of a call that was not forwarded, and why."""
    if stop.kind == "killed":
        return (
            f"heartbeat: the tool was not called: this agent was {stop.message}. "
            "No tool will be called until a person removes that KILL file. "
            "Stop here and tell the user what you were doing."
        )
    if stop.kind == "needs_human":
        return (
            "heartbeat: this agent is waiting for a human, so the tool was not called. "
            f"{stop.message}\nStop calling tools; tell the user what you were trying to do and where "
            "you are stuck."
        )
    if stop.kind == "paused":
        return (
            f"heartbeat: this agent is paused ({stop.message}); the tool was not called. "
            "Stop calling tools until a person resumes it."
        )
    return f"heartbeat: the call could not be recorded, so it was not made: {stop.message}"


def redirect_text(anomaly: Anomaly, session: Session) -> str:
    """The error text that replaces the result of a call that tripped a detector."""
    stop = session.stopped
    if stop is not None:  # that heartbeat escalated or paused (or a KILL came meanwhile): say so
        now = _STOPPED.get(stop.kind, "the agent is stopped")
        return (
            f"heartbeat: you look stuck: {anomaly.message}. The result of this call is withheld, "
            f"and {now}: {stop.message}\n"
            "Stop calling tools; tell the user what you were trying to do and where you are stuck."
        )
    instructions = session.instructions
    if instructions:
        return f"The result of this call is withheld.\n{instructions}"
    return (
        f"heartbeat: {anomaly.message}. The result of this call is withheld. "
        "Try a different approach: another tool, other arguments or another source."
    )


def result_text(result: types.CallToolResult) -> str:
    """What a result says, as one text: its text blocks, else labels, else its structured content."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.EmbeddedResource):
            resource = block.resource
            parts.append(resource.text if isinstance(resource, types.TextResourceContents) else "[resource]")
        else:
            parts.append(_BLOCK_LABELS.get(str(getattr(block, "type", "")), "[content]"))
    if not parts and result.structured_content is not None:
        return json.dumps(result.structured_content, sort_keys=True, default=str)
    return "\n".join(parts)


def _error_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


class ToolProxy:
    """The handlers: tools listed and calls forwarded and recorded in ``session``; the rest passed on."""

    def __init__(self, session: Session, upstream: ClientSession) -> None:
        self.session = session
        self.upstream = upstream

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        """The upstream's page of tools, as it is (a cursor is passed through)."""
        return await self.upstream.list_tools(params=params)

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Forward one call unless stopped; record it; answer a stuck call with the instructions."""
        session = self.session
        # Inside an open heartbeat the check is a few microseconds; opening one waits for the last
        # one's save and takes the lock: done in a worker thread, so other requests go on meanwhile.
        stop = session.check() if session.is_open else await anyio.to_thread.run_sync(session.check)
        if stop is not None:
            return _error_result(refusal_text(stop))
        name, arguments = params.name, params.arguments
        try:
            result = await self.upstream.call_tool(
                name,
                arguments,
                input_responses=params.input_responses,
                request_state=params.request_state,
                allow_input_required=True,
            )
        except MCPError as exc:  # a protocol-level error (unknown tool, bad params): the client gets it too
            answer = self._record(name, arguments, None, f"MCP error {exc.code}: {exc.message}")
            if answer is not None:
                return answer
            raise
        if isinstance(result, types.InputRequiredResult):
            return result  # not a finished call: the client answers and calls again
        text = result_text(result)
        if result.is_error:
            answer = self._record(name, arguments, None, text or "the tool reported an error")
        else:
            answer = self._record(name, arguments, text, None)
        if answer is not None:
            return answer
        note = session.take_note()
        if note is None:
            return result
        # A person resumed the agent with a note: it rides along with the next result, once.
        told = types.TextContent(type="text", text=f"heartbeat: a note from the person watching you: {note}")
        return result.model_copy(update={"content": [*result.content, told]})

    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        """The upstream's resources, as they are (not recorded: reading is not a tool call)."""
        return await self.upstream.list_resources(params=params)

    async def list_resource_templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        """The upstream's resource templates, as they are."""
        return await self.upstream.list_resource_templates(params=params)

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult | types.InputRequiredResult:
        """One resource from the upstream, as it is."""
        return await self.upstream.read_resource(
            params.uri,
            input_responses=params.input_responses,
            request_state=params.request_state,
            allow_input_required=True,
        )

    async def list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        """The upstream's prompts, as they are."""
        return await self.upstream.list_prompts(params=params)

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        """One prompt from the upstream, as it is."""
        return await self.upstream.get_prompt(
            params.name,
            params.arguments,
            input_responses=params.input_responses,
            request_state=params.request_state,
            allow_input_required=True,
        )

    def _record(
        self, name: str, arguments: dict[str, Any] | None, output: str | None, error: str | None
    ) -> types.CallToolResult | None:
        """Record the call: None to pass its result on, else the answer that replaces it."""
        try:
            anomaly = self.session.record(name, arguments, output=output, error=error)
        except Stopped as exc:  # the heartbeat ended meanwhile and cannot reopen (KILL, a human)
            return _error_result(refusal_text(exc.stop))
        if anomaly is None:
            return None
        return _error_result(redirect_text(anomaly, self.session))


class ServerGone(HeartbeatError, RuntimeError):
    """The MCP server behind the proxy did not start, or exited."""

    exit_code = 1

    def __init__(self, command: Sequence[str], what: str) -> None:
        super().__init__(f"mcp-proxy: the MCP server {shlex.join(command)!r} {what}")


async def serve(
    session: Session,
    command: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    read_stream: Any = None,
    write_stream: Any = None,
    on_server_exit: Callable[[], object] | None = None,
) -> None:
    """Run the proxy until the client hangs up: ``command`` is the real server.

    Without ``read_stream``/``write_stream`` it speaks MCP on this process's
    stdin/stdout. The server gets this process's whole environment (a client
    config's ``env``, API keys included, is meant for it), updated by ``env``;
    its stderr is passed to ours. :class:`ServerGone` when the server does
    not answer ``initialize``; ``on_server_exit`` is called if it exits (its
    output ends) while the client is still connected.
    """
    if not command:
        raise ValueError("no MCP server command given (heartbeat mcp-proxy ... -- SERVER_CMD ARGS...)")
    # The SDK starts a server with a minimal environment unless told otherwise: pass ours on.
    environment = {**os.environ, **(env or {})}
    params = StdioServerParameters(command=command[0], args=list(command[1:]), env=environment, cwd=cwd)
    serving = False

    def ended() -> None:
        if serving and on_server_exit is not None:
            on_server_exit()

    # A server that exits mid-session would otherwise leave the proxy answering "Connection
    # closed" forever: its output stream is watched for its end (no extra task or hop).
    async with (
        stdio_client(params, errlog=sys.stderr) as (up_read, up_write),
        ClientSession(_Watched(up_read, ended), up_write) as upstream,
    ):
        try:
            init = await upstream.initialize()
        except MCPError as exc:
            raise ServerGone(command, f"did not start: {exc.message}") from None
        server = _server(ToolProxy(session, upstream), init)
        serving = True
        if read_stream is None or write_stream is None:
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
        else:
            await server.run(read_stream, write_stream, server.create_initialization_options())
        serving = False  # the client hung up: the server's end that follows is ours


class _Watched:
    """The server's message stream as it is, telling ``on_end`` when it ends (the server exited)."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        """The sender's context, as the SDK's own context-aware streams carry it."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        """The next message; at the end of the stream, tell ``on_end`` first."""
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_end()
            raise

    async def aclose(self) -> None:
        """Close the stream."""
        await self._inner.aclose()

    def __aiter__(self) -> _Watched:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _Watched:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _server(proxy: ToolProxy, init: types.InitializeResult) -> Server[Any]:
    """The proxy's own MCP server: the upstream's name, instructions, and what it offers."""
    info, offers = init.server_info, init.capabilities
    # Offer what the upstream offers: its resources and prompts pass through unrecorded.
    resources, prompts = offers.resources is not None, offers.prompts is not None
    return Server(
        info.name,
        version=info.version,
        title=info.title,
        description=info.description,
        instructions=init.instructions,
        website_url=info.website_url,
        icons=info.icons,
        on_list_tools=proxy.list_tools,
        on_call_tool=proxy.call_tool,
        on_list_resources=proxy.list_resources if resources else None,
        on_list_resource_templates=proxy.list_resource_templates if resources else None,
        on_read_resource=proxy.read_resource if resources else None,
        on_list_prompts=proxy.list_prompts if prompts else None,
        on_get_prompt=proxy.get_prompt if prompts else None,
    )


def run_proxy(session: Session, command: Sequence[str]) -> int:
    """The ``heartbeat mcp-proxy`` command: serve on stdio, then end the open heartbeat. Exit code.

    SIGTERM or SIGINT ends the open heartbeat (saved, journaled) and exits 0
    at once: the MCP SDK reads stdin in a worker thread that no cancellation
    can interrupt. The server behind the proxy then reads end-of-file on its
    stdin, the stdio transport's way of telling a server to stop. A server
    that exits mid-session ends the proxy too (exit 1), so the client sees
    its server gone and may start it again.
    """

    def leave(code: int, message: str | None = None) -> None:
        try:
            if message:
                print(f"heartbeat: error: {message}", file=sys.stderr, flush=True)
            session.close()
        finally:
            os._exit(code)

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda signum, frame: leave(0))
    gone = ServerGone(command, "exited; the proxy stops with it")
    try:
        anyio.run(partial(serve, session, command, on_server_exit=lambda: leave(gone.exit_code, str(gone))))
    except BaseExceptionGroup as group:  # anyio's task groups wrap what a task raised
        raise _first_leaf(group) from None
    finally:
        session.close()
    return 0


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first exception inside (nested) exception groups."""
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first
