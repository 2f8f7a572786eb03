"""``heartbeat mcp-proxy -- SERVER_CMD ARGS...``: heartbeat in front of any stdio MCP server.

The proxy is itself a stdio MCP server. It starts the real server as a child
process and passes ``tools/list`` and every ``tools/call`` through as raw
JSON (extension fields and content types the SDK does not know included),
while each call is recorded as an action of the configured agent through a
:class:`~heartbeat.integrations.session.Session` (``state.json``, journal, detectors,
policy, KILL, the fleet stop, escalation). Then:

- when a call trips a detector, that call is answered with an error result
  whose text is the recovery instructions (its result is withheld; a
  protocol error the server answered with instead is said first); in
  observe mode the result goes on as it is;
- on escalation, a pause, KILL or the fleet stop, and once the proxy is
  exiting (SIGTERM, its server gone), no request reaches the server any more
  (tool calls, resource reads, prompts): each is answered saying why; the
  lists (tools, resources, prompts) stay answered, so a client that connects
  meanwhile still sees what the server offers;
- a call in flight when KILL or the fleet stop comes is cancelled at once
  (``notifications/cancelled`` to the server), recorded, and answered saying
  it may have run; a resource read or a prompt too, answered saying it was
  cancelled; a call in flight at a pause runs to its end, is recorded and
  its result goes on with a note that no further tool will be called;
- after ``heartbeat resume --note TEXT``, the next result carries TEXT as
  one more text block.

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
round; the proxy uses the low-level ``Server`` (one handler per method, and
a middleware that answers the tool methods with raw results) and the
``ClientSession`` over ``stdio_client`` (its raw request channel for the tool
methods: the typed results would drop what they do not declare).

The server's resources and prompts (when it offers them) pass through
unchanged and unrecorded: they are not tool calls. A tool call with an empty
name is refused (invalid params), never forwarded. A server's answer the SDK
cannot read is a protocol error for the request it answered
(:mod:`heartbeat.integrations.mcp_upstream`), never a call left waiting. Not passed through:
completions, subscriptions, and notifications from the server (a changed
tool list, progress of a long call). stdout is the protocol; every
diagnostic goes to stderr.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from ..base.credential_text import mask_credential_text
from ..base.errors import HeartbeatError
from ..core.models import Anomaly, printable
from ..detect.detectors.failures import MCP_TOOL_ERROR
from .filestops import standing_stop
from .leaving import InFlight, Leaver, leave
from .mcp_texts import (
    after_stop_note,
    cancelled_text,
    closing_text,
    error_result,
    redirect_text,
    refusal_text,
    refused_again,
    result_text,
)
from .mcp_upstream import Mending
from .redirects import call_key
from .session import Session, Stop, Stopped

__all__ = ["ServerGone", "ToolProxy", "redirect_text", "refusal_text", "result_text", "serve"]

# How often a call in flight looks for KILL or the fleet stop, to cancel it at once.
_WATCH_SECONDS = 0.05
_INVALID_PARAMS = -32602
_T = TypeVar("_T")


class ToolProxy:
    """The handlers: tools listed and calls forwarded and recorded in ``session``; the rest passed on.

    ``tools/list`` and ``tools/call`` go through :meth:`middleware` as raw JSON both ways, so
    the proxy is a transparent pipe: extension fields and content types this SDK does not
    know reach the client as the server sent them.
    """

    def __init__(self, session: Session, upstream: ClientSession, in_flight: InFlight | None = None) -> None:
        self.session = session
        self.upstream = upstream
        self.in_flight = in_flight if in_flight is not None else InFlight()
        self.told: dict[tuple[str, str], Anomaly] = {}  # the calls the model was redirected from

    async def middleware(self, ctx: ServerRequestContext[Any], call_next: Any) -> Any:
        """Answer ``tools/list`` and ``tools/call`` with the upstream's raw results; the rest as usual."""
        if ctx.method == "tools/call":
            return await self.call_tool_raw(dict(ctx.params or {}))
        if ctx.method == "tools/list":
            return await self._raw("tools/list", dict(ctx.params or {}))
        return await call_next(ctx)

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        """The upstream's page of tools (typed; :meth:`middleware` answers with the raw one)."""
        return await self.upstream.list_tools(params=params)

    async def call_tool(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
        """One call, typed (:meth:`middleware` answers ``tools/call`` raw; this is the same call)."""
        return await self.call_tool_raw(params.model_dump(by_alias=True, mode="json", exclude_none=True))

    async def call_tool_raw(self, params: dict[str, Any]) -> Any:
        """Forward one call unless stopped; record it; answer a stuck call with the instructions."""
        try:
            checked = types.CallToolRequestParams.model_validate(params, by_name=False)
        except ValueError:
            raise MCPError(code=_INVALID_PARAMS, message="Invalid request parameters") from None
        name, arguments = checked.name, checked.arguments
        if not name:  # no server has a tool without a name: refused, never forwarded
            raise MCPError(code=_INVALID_PARAMS, message="Invalid request parameters: the tool name is empty")
        # SIGTERM or the server gone: the proxy is exiting. Asked first: the exit is ending the open
        # heartbeat, and a check would wait for that (and the process may be gone before it answers).
        if self.in_flight.closed:
            return error_result(closing_text())
        session = self.session
        # Inside an open heartbeat the check is a few microseconds; opening one waits for the last
        # one's save and takes the lock: done in a worker thread, so other requests go on meanwhile.
        stop = session.check() if session.is_open else await anyio.to_thread.run_sync(session.check)
        if self.in_flight.closed:  # and again: it may have begun while the check waited
            return error_result(closing_text())
        if stop is not None:
            return error_result(refusal_text(stop))
        if self.told and (refused := refused_again(session, self.told, name, arguments)) is not None:
            return refused
        key = id(params)
        self.in_flight.start(key, name, arguments)
        try:
            return await self._call(params, key, name, arguments)
        finally:  # recorded (or taken by a proxy that exits, which records it)
            self.in_flight.done(key)

    async def _call(
        self, params: dict[str, Any], key: int, name: str, arguments: dict[str, Any] | None
    ) -> Any:
        """Forward one call that may go ahead; record it; its answer (see :meth:`call_tool_raw`)."""
        session = self.session
        try:
            result = await self._watched(partial(self._raw, "tools/call", params))
        except MCPError as exc:  # a protocol-level error (unknown tool, bad params): the client gets it too
            failed = f"MCP error {exc.code}: {exc.message}"
            answer = self._record(key, name, arguments, None, failed, failed=failed)
            if isinstance(answer, Stop):  # it ran, and meanwhile the agent was stopped or paused
                # Only a result carries both: the server's error as it sent it, and the stop.
                return error_result(after_stop_note(answer, failed))
            if answer is not None:
                # It tripped a detector: the model must read the instructions, which only a result
                # carries, so the error comes as a result's text, said as the server sent it.
                return answer
            raise
        except anyio.get_cancelled_exc_class():  # the client cancelled it (or hung up): it reached the server
            self._record(
                key, name, arguments, None, "cancelled by the client while running (it may have run)"
            )
            raise
        if isinstance(result, Stop):  # KILL or the fleet stop while it ran: cancelled, recorded, said so
            self._record(key, name, arguments, None, f"cancelled while running: {result.message}")
            return error_result(cancelled_text(result))
        if result.get("resultType") == "input_required":
            return result  # not a finished call: the client answers and calls again
        text = result_text(result)
        if result.get("isError") is True:
            answer = self._record(key, name, arguments, None, text or MCP_TOOL_ERROR)
        else:
            answer = self._record(key, name, arguments, text, None)
        if isinstance(answer, Stop):  # it ran, and meanwhile the agent was stopped or paused: say both
            return _with_block(result, after_stop_note(answer))
        if answer is not None:
            return answer
        note = session.take_note()
        if note is None:
            return result
        # A person's resume note, or the instructions an earlier process's last heartbeat left: it
        # rides along with the next result, once, said as what it is.
        said = (
            "a note from the person watching you"
            if note.by_person
            else "instructions from your last heartbeat"
        )
        return _with_block(result, f"heartbeat: {said}: {note}")

    async def _watched(self, send: Callable[[], Awaitable[_T]]) -> _T | Stop:
        """What the request ``send()`` gets from the upstream, or the stop (KILL, the fleet stop)
        that cancelled it while it ran (the upstream is told); its protocol error raised."""
        outcome: dict[str, Any] = {}
        async with anyio.create_task_group() as group:

            async def call() -> None:
                try:
                    outcome["result"] = await send()
                except MCPError as exc:
                    outcome["error"] = exc
                finally:
                    group.cancel_scope.cancel()

            async def watch() -> None:
                while True:
                    await anyio.sleep(_WATCH_SECONDS)
                    stop = self.session.stopped
                    if stop is not None and stop.kind == "killed":
                        outcome["stop"] = stop  # the SDK tells the server: notifications/cancelled
                        group.cancel_scope.cancel()
                        return

            group.start_soon(watch)
            group.start_soon(call)
        if "result" in outcome:
            result: _T = outcome["result"]
            return result
        if "stop" in outcome:
            stop: Stop = outcome["stop"]
            return stop
        raise outcome["error"]

    async def _raw(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request upstream as the SDK would (its version's headers and ``_meta``); the raw result.

        Raw on purpose: the SDK's typed results drop fields they do not declare and refuse
        content types they do not know, and the proxy must change neither.
        """
        data: dict[str, Any] = {"method": method, "params": params}
        options: dict[str, Any] = {}
        upstream: Any = self.upstream
        upstream._stamp(data, options)
        raw: dict[str, Any] = await upstream._dispatcher.send_raw_request(method, data.get("params"), options)
        return raw

    async def _gate(self, what: str) -> None:
        """Refuse a request bound for the server (a resource read, a prompt) once the proxy is exiting,
        or while the agent is stopped, paused or waiting for a human (``what``: what did not happen)."""
        if self.in_flight.closed:  # as for a tool call: SIGTERM or the server gone
            raise MCPError(code=_INVALID_PARAMS, message=closing_text(what))
        session = self.session
        # An open heartbeat read the fleet stop fresh as it opened, and KILL and a pause end it.
        stop = session.stopped if session.is_open else await anyio.to_thread.run_sync(self._standing)
        if stop is not None:
            raise MCPError(code=_INVALID_PARAMS, message=refusal_text(stop, what))

    def _standing(self) -> Stop | None:
        """Why not to go on while no heartbeat is open, the fleet stop included (a worker thread)."""
        session = self.session
        # session.stopped looks at the fleet stop's latest reading, which is none at all before the
        # first: one at most a second old is made now (shared, so the stop is not read per request).
        session.heartbeat.shared_stop_reason()
        return session.stopped or standing_stop(session.heartbeat)

    async def _cancellable(self, what: str, send: Callable[[], Awaitable[_T]]) -> _T:
        """A resource read or a prompt (``what``: said if it does not happen), gated, and cancelled
        by KILL or the fleet stop while it runs, as a tool call is."""
        await self._gate(what)
        answer = await self._watched(send)
        if isinstance(answer, Stop):
            raise MCPError(code=_INVALID_PARAMS, message=cancelled_text(answer, what))
        return answer

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
        """One resource from the upstream, as it is; refused while the agent is stopped or waiting."""
        read = partial(
            self.upstream.read_resource,
            params.uri,
            input_responses=params.input_responses,
            request_state=params.request_state,
            allow_input_required=True,
        )
        return await self._cancellable("the resource was not read", read)

    async def list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        """The upstream's prompts, as they are."""
        return await self.upstream.list_prompts(params=params)

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        """One prompt from the upstream, as it is; refused while the agent is stopped or waiting."""
        fetch = partial(
            self.upstream.get_prompt,
            params.name,
            params.arguments,
            input_responses=params.input_responses,
            request_state=params.request_state,
            allow_input_required=True,
        )
        return await self._cancellable("the prompt was not fetched", fetch)

    def _record(
        self,
        key: int,
        name: str,
        arguments: dict[str, Any] | None,
        output: str | None,
        error: str | None,
        *,
        failed: str | None = None,
    ) -> types.CallToolResult | Stop | None:
        """Record the call: None to pass its result on, the answer that replaces it, or the stop
        that came meanwhile (the call ran and is journaled; the result goes on with a note).

        ``failed``: the protocol error the server answered with instead of a result.
        """
        session = self.session
        if not self.in_flight.claim(key, output, error):
            return None  # the proxy is exiting and recorded it already (interrupted)
        try:
            anomaly = session.record(name, arguments, output=output, error=error)
        except Stopped as exc:  # the heartbeat ended meanwhile and cannot reopen (KILL, a pause, a human)
            # A lock busy for a moment (another heartbeat of the agent) stops nothing: the call is
            # journaled and its answer goes on as it is; saying no tool will be called is untrue.
            return None if exc.stop.kind == "locked" else exc.stop
        finally:
            self.in_flight.done(key)
        if anomaly is None or (session.observing and anomaly.kind != "budget"):
            # Recorded in a heartbeat that a stop is ending now (KILL or a pause that came as the
            # answer did, before the heartbeat saw it): the model hears it with this answer.
            return session.stopped  # else None: observe mode's finding is journaled, the result goes on
        if anomaly.kind != "budget":
            self.told[call_key(name, arguments)] = anomaly
        return error_result(redirect_text(anomaly, session, failed))


def _with_block(result: dict[str, Any], text: str) -> dict[str, Any]:
    """``result`` with one more text block at the end (the rest of it as the server sent it)."""
    content = result.get("content")
    blocks = content if isinstance(content, list) else []
    return {**result, "content": [*blocks, {"type": "text", "text": text}]}


class ServerGone(HeartbeatError, RuntimeError):
    """The MCP server behind the proxy did not start, or exited."""

    exit_code = 1

    def __init__(self, command: Sequence[str], what: str) -> None:
        # The command comes from the client's config and may carry an --api-key or a TOKEN=...;
        # this text reaches the client's log: masked, and escaped as any text shown to a person.
        said = mask_credential_text(f"the MCP server '{shlex.join(command)}' {what}")
        super().__init__(f"mcp-proxy: {printable(said)}")


async def serve(
    session: Session,
    command: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    read_stream: Any = None,
    write_stream: Any = None,
    on_server_exit: Callable[[], object] | None = None,
    in_flight: InFlight | None = None,
) -> None:
    """Run the proxy until the client hangs up: ``command`` is the real server.

    Without ``read_stream``/``write_stream`` it speaks MCP on this process's
    stdin/stdout. The server gets this process's whole environment (a client
    config's ``env``, API keys included, is meant for it), updated by ``env``;
    its stderr is passed to ours. :class:`ServerGone` when the server does
    not answer ``initialize``; ``on_server_exit`` is called if it exits (its
    output ends) while the client is still connected. ``in_flight`` holds the calls
    running at any moment (for a caller that ends the proxy to record them).
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
    # closed" forever: its output stream is watched for its end (no extra task or hop), and an
    # answer the SDK cannot read is mended into an error for the request it answered.
    async with stdio_client(params, errlog=sys.stderr) as (up_read, up_write):
        incoming = Mending(up_read, ended)
        async with ClientSession(incoming, up_write) as upstream:
            incoming.waiting = partial(_waiting, upstream)
            try:
                init = await upstream.initialize()
            except MCPError as exc:
                raise ServerGone(command, f"did not start: {exc.message}") from None
            server = _server(ToolProxy(session, upstream, in_flight), init)
            serving = True
            if read_stream is None or write_stream is None:
                async with stdio_server() as (read_stream, write_stream):
                    await server.run(read_stream, write_stream, server.create_initialization_options())
            else:
                await server.run(read_stream, write_stream, server.create_initialization_options())
            serving = False  # the client hung up: the server's end that follows is ours


def _waiting(upstream: ClientSession) -> list[Any]:
    """The ids of the requests waiting on the server (the SDK's dispatcher keeps them)."""
    pending = getattr(getattr(upstream, "_dispatcher", None), "_pending", None)
    return list(pending) if isinstance(pending, dict) else []


def _server(proxy: ToolProxy, init: types.InitializeResult) -> Server[Any]:
    """The proxy's own MCP server: the upstream's name, instructions, and what it offers."""
    info, offers = init.server_info, init.capabilities
    # Offer what the upstream offers: its resources and prompts pass through unrecorded.
    resources, prompts = offers.resources is not None, offers.prompts is not None
    server: Server[Any] = Server(
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
    server.middleware.append(proxy.middleware)  # innermost: tools/list and tools/call pass raw
    return server


def run_proxy(session: Session, command: Sequence[str]) -> int:
    """The ``heartbeat mcp-proxy`` command: serve on stdio, then end the open heartbeat. Exit code.

    SIGTERM or SIGINT records the calls still running (interrupted: the server may have run
    them), ends the open heartbeat (saved, journaled) and exits 0 at once, from a thread of its
    own (:mod:`heartbeat.integrations.leaving`): the MCP SDK reads stdin in a worker thread that
    no cancellation can interrupt. The server behind the proxy then reads end-of-file on its
    stdin, the stdio transport's way of telling a server to stop. A server that exits
    mid-session ends the proxy too (exit 1), so the client sees its server gone and may start
    it again.
    """
    in_flight = InFlight()
    Leaver(session, in_flight).install()
    gone = ServerGone(command, "exited; the proxy stops with it")
    said = f"heartbeat: error: {gone}"
    ended = partial(leave, session, in_flight, gone.exit_code, "the MCP server exited", said)
    try:
        anyio.run(partial(serve, session, command, on_server_exit=ended, in_flight=in_flight))
    except BaseExceptionGroup as group:  # anyio's task groups wrap what a task raised
        raise _first_leaf(group) from None
    finally:
        session.close()
    return 0


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first exception inside (nested) exception groups."""
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first
