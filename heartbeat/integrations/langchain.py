"""heartbeat for LangChain and LangGraph: a callback handler that stops, a ToolNode wrapper that redirects.

:class:`HeartbeatCallbackHandler` goes in ``config={"callbacks": [...]}`` of
any runnable (a LangGraph graph, an agent, a tool). It records every tool
call with its arguments and result or error, and every model call's tokens
(``usage_metadata``, else ``llm_output``), and raises :class:`Stopped` out
of ``invoke`` when the KILL file appears or a budget is spent (both checked
before every tool call and every model call) or a detector fires. Callbacks
cannot change a tool's answer, so a handler can only stop.

:class:`HeartbeatToolWrapper` is for ``ToolNode(tools, wrap_tool_call=w,
awrap_tool_call=w.acall)``: it can answer the model with recovery
instructions instead of the tool's result, so a stuck agent is redirected
mid-run and only stopped once it ignores them; it records the tokens of the
model message that asked for each tool call. Use one or the other on a
graph, not both (each would record every call). Both raise
:class:`GraphStopped`, which no ``ToolNode(handle_tool_errors=...)`` turns
into an error message: a stop ends the run.

Needs ``pip install -e '.[langchain]'`` in the heartbeat checkout (langchain-core, langgraph).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import ToolMessage
from langgraph.errors import GraphBubbleUp

from .guard import Guard, Stopped, Verdict


class GraphStopped(Stopped, GraphBubbleUp):
    """:class:`Stopped` as LangGraph's bubble-up kind: no ``handle_tool_errors`` or retry keeps it.

    A ``ToolNode(handle_tool_errors=True)`` turns any other exception of a tool
    (or of its wrapper) into an error message and the graph calls the model
    again; LangGraph lets its own interrupts through untouched, and so this.
    """


def _stopped(verdict: Verdict) -> GraphStopped:
    return verdict.error(GraphStopped)


__all__ = [
    "GraphStopped",
    "HeartbeatCallbackHandler",
    "HeartbeatToolWrapper",
    "Stopped",
    "message_usage",
    "result_usage",
]


Usage = tuple[str, int, int, int]
"""One model call's (model, input tokens, output tokens, cached input tokens)."""


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def message_usage(message: object, model: str | None = None) -> Usage | None:
    """An AI message's ``usage_metadata`` as usage (the model from its ``response_metadata``), else None."""
    meta = getattr(message, "usage_metadata", None)
    if not isinstance(meta, Mapping):
        return None
    details = meta.get("input_token_details")
    cached = _int(details.get("cache_read")) if isinstance(details, Mapping) else 0
    info = getattr(message, "response_metadata", None)
    named = (info.get("model_name") or info.get("model")) if isinstance(info, Mapping) else None
    name = named if isinstance(named, str) and named else model or "unknown"
    return name, _int(meta.get("input_tokens")), _int(meta.get("output_tokens")), cached


def result_usage(response: Any, model: str | None = None) -> list[Usage]:
    """The usage of an ``LLMResult``: each generation's message's ``usage_metadata``, else ``llm_output``."""
    found = []
    for generations in getattr(response, "generations", None) or ():
        for generation in generations:
            usage = message_usage(getattr(generation, "message", None), model)
            if usage is not None:
                found.append(usage)
    if found:
        return found
    output = getattr(response, "llm_output", None)
    if not isinstance(output, Mapping):
        return []
    tokens = output.get("token_usage") or output.get("usage")
    if not isinstance(tokens, Mapping):
        return []
    named = output.get("model_name") or output.get("model")
    name = named if isinstance(named, str) and named else model or "unknown"
    given = _int(tokens.get("prompt_tokens")) or _int(tokens.get("input_tokens"))
    made = _int(tokens.get("completion_tokens")) or _int(tokens.get("output_tokens"))
    details = tokens.get("prompt_tokens_details")
    cached = _int(details.get("cached_tokens")) if isinstance(details, Mapping) else 0
    return [(name, given, made, cached)] if given or made else []


def _model_name(kwargs: Mapping[str, Any]) -> str | None:
    """The model a chat model start names (LangSmith metadata, or the invocation parameters)."""
    for source in (kwargs.get("metadata"), kwargs.get("invocation_params")):
        if isinstance(source, Mapping):
            for key in ("ls_model_name", "model_name", "model"):
                value = source.get(key)
                if isinstance(value, str) and value:
                    return value
    return None


def _output(result: object) -> tuple[object, str | None]:
    """A tool's result as (output, error): a ToolMessage with status "error" is an error."""
    if isinstance(result, ToolMessage):
        text = result.content if isinstance(result.content, str) else str(result.content)
        return (None, text or "error") if result.status == "error" else (text, None)
    return result, None


class HeartbeatCallbackHandler(BaseCallbackHandler):
    """Records tool calls and stops the run (raises :class:`Stopped`) when killed or stuck.

    ``target``: the step's ``ctx``, a :class:`heartbeat.Monitor` (with
    ``kill_file``) or a :class:`~heartbeat.integrations.Guard` to share.
    """

    raise_error = True  # without it LangChain logs our Stopped and carries on

    @property
    def run_inline(self) -> bool:  # type: ignore[override]
        """Whether an async run calls this handler on its event loop: yes, unless bound to a state
        folder, whose checks may wait (a heartbeat to open, the fleet stop's first reading): LangChain
        then calls it on a worker thread, and waits for its verdict all the same."""
        return not self.guard.waits

    # Events the handler has no use for: LangChain then skips calling it for each graph node.
    # (Tool events are gated by ignore_agent, so that one stays False.)
    @property
    def ignore_chain(self) -> bool:
        """True: chain (graph node) events are not needed."""
        return True

    @property
    def ignore_retriever(self) -> bool:
        """True: retriever events are not needed."""
        return True

    @property
    def ignore_retry(self) -> bool:
        """True: retry events are not needed."""
        return True

    @property
    def ignore_custom_event(self) -> bool:
        """True: custom events are not needed."""
        return True

    def __init__(self, target: object, *, kill_file: str | Path | None = None) -> None:
        super().__init__()
        self.guard = Guard.of(target, kill_file=kill_file)
        self._calls: dict[UUID, tuple[str, dict[str, Any] | None]] = {}
        self._models: dict[UUID, str] = {}  # model calls running: the model their start named

    def __repr__(self) -> str:
        return f"HeartbeatCallbackHandler({self.guard!r})"

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: UUID,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Before a tool runs: stop when killed or already stopped; remember its name and arguments."""
        name = kwargs.get("name") or (serialized or {}).get("name") or "tool"
        args = inputs if isinstance(inputs, Mapping) else {"input": input_str}
        verdict = self.guard.before(name, args)
        if verdict.action != "go":  # a handler cannot answer for the tool: a redirect is a stop here
            raise _stopped(verdict)
        self._calls[run_id] = (name, args)

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Record the call with its result; stop when it tripped a detector."""
        name, args = self._calls.pop(run_id, (kwargs.get("name") or "tool", None))
        result, error = _output(output)
        verdict = self.guard.after(name, args, output=result, error=error)
        if verdict.action != "go":
            raise _stopped(verdict)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Record the failed call; stop when it tripped a detector (e.g. error_rate)."""
        name, args = self._calls.pop(run_id, (kwargs.get("name") or "tool", None))
        if isinstance(error, Stopped):  # our own stop, raised from on_tool_start: not a tool failure
            return
        if not isinstance(error, Exception):  # cancelled mid-run (the run is ending): said as such
            self.guard.cancelled(name, args, error)
            return
        verdict = self.guard.after(name, args, error=error)
        if verdict.action != "go":
            raise _stopped(verdict)

    def on_chat_model_start(self, serialized: dict[str, Any], messages: Any, **kwargs: Any) -> None:
        """Before every model call: stop when killed, stopped or over budget (no tokens after a stop)."""
        verdict = self.guard.check()
        if verdict.action != "go":
            raise _stopped(verdict)
        run_id = kwargs.get("run_id")
        if run_id is not None:
            model = _model_name(kwargs)
            if model is not None:
                self._models[run_id] = model
            self.guard.model_began(run_id, model)

    def on_llm_start(self, serialized: dict[str, Any], prompts: list[str], **kwargs: Any) -> None:
        """Before a completion-style model call: as :meth:`on_chat_model_start`."""
        self.on_chat_model_start(serialized, prompts, **kwargs)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """After a model call: record its tokens (``usage_metadata``, else ``llm_output``).

        A call that goes past a budget is not stopped here (its answer was
        paid for): the next model or tool call is.
        """
        model = self._models.pop(run_id, None)
        self.guard.model_ended(run_id)
        for usage in result_usage(response, model):
            self.guard.usage(*usage)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """A failed model call: forget the model its start named."""
        self._models.pop(run_id, None)
        self.guard.model_ended(run_id)


class HeartbeatToolWrapper:
    """A LangGraph ``ToolNode`` wrapper: records calls, redirects the model when stuck, stops when killed.

    ``ToolNode(tools, wrap_tool_call=w, awrap_tool_call=w.acall)``. A
    stuck call is answered with a ``ToolMessage(status="error")`` holding
    the recovery instructions; after ``max_redirects`` redirections, a KILL
    file or an exhausted budget, the wrapper raises :class:`Stopped` out of
    the graph. ``target`` as for :class:`HeartbeatCallbackHandler`.
    """

    def __init__(
        self, target: object, *, max_redirects: int = 3, kill_file: str | Path | None = None
    ) -> None:
        self.max_redirects = max_redirects
        self._counted: dict[object, object] = {}  # AI messages whose usage is recorded (the last 64)
        self.guard: Guard = self.bind(target, kill_file=kill_file).guard

    def bind(self, target: object, *, kill_file: str | Path | None = None) -> HeartbeatToolWrapper:
        """Bind to ``target`` with a fresh guard; a graph compiled once calls ``bind(ctx)`` in each step."""
        self.guard = Guard.of(
            target, on_stuck="redirect", max_redirects=self.max_redirects, kill_file=kill_file
        )
        return self

    def __repr__(self) -> str:
        return f"HeartbeatToolWrapper({self.guard!r})"

    def _count(self, request: Any) -> Usage | None:
        """The usage of the AI message that asked for this call, to record once per message, else None."""
        state = getattr(request, "state", None)
        messages = state.get("messages") if isinstance(state, Mapping) else getattr(state, "messages", None)
        if not messages or not isinstance(messages, list):
            return None
        message = messages[-1]
        key = getattr(message, "id", None) or id(message)
        if key in self._counted:
            return None
        usage = message_usage(message)
        if usage is None:
            return None
        self._counted[key] = message  # held, so an id() is not reused while it is remembered
        if len(self._counted) > 64:
            del self._counted[next(iter(self._counted))]
        return usage

    def _before(self, request: Any) -> tuple[str, dict[str, Any], ToolMessage | None]:
        call = request.tool_call
        name, args = call["name"], call.get("args") or {}
        usage = self._count(request)
        if usage is not None:
            self.guard.usage(*usage)
        return name, args, self._verdict(call, self.guard.before(name, args))

    async def _abefore(self, request: Any) -> tuple[str, dict[str, Any], ToolMessage | None]:
        """:meth:`_before` on an event loop: what may wait (a state folder's heartbeat to open or end,
        the fleet stop's first reading) on a worker thread (:meth:`Guard.offload`), never on the loop."""
        call = request.tool_call
        name, args = call["name"], call.get("args") or {}
        usage = self._count(request)
        if usage is not None:
            await self.guard.offload(partial(self.guard.usage, *usage), records=True)
        verdict = await self.guard.offload(partial(self.guard.before, name, args))
        return name, args, self._verdict(call, verdict)

    def _verdict(self, call: Mapping[str, Any], verdict: Verdict) -> ToolMessage | None:
        """Raise a stop; the answer for a redirect; None to run the tool."""
        if verdict.action == "stop":
            raise _stopped(verdict)
        if verdict.action == "redirect":
            return self._answer(call, verdict.instructions or verdict.reason)
        return None

    def _after(self, request: Any, name: str, args: dict[str, Any], result: Any) -> Any:
        output, error = _output(result) if isinstance(result, ToolMessage) else (None, None)
        return self._result(request, result, self.guard.after(name, args, output=output, error=error))

    def _result(self, request: Any, result: Any, verdict: Verdict) -> Any:
        if verdict.action == "stop":
            raise _stopped(verdict)
        if verdict.action == "redirect":
            return self._answer(request.tool_call, verdict.instructions or verdict.reason)
        return result

    @staticmethod
    def _answer(call: Mapping[str, Any], text: str) -> ToolMessage:
        return ToolMessage(content=text, tool_call_id=call.get("id") or "", name=call["name"], status="error")

    def __call__(self, request: Any, execute: Callable[[Any], Any]) -> Any:
        """The sync wrapper (``wrap_tool_call``)."""
        name, args, answer = self._before(request)
        if answer is not None:
            return answer
        try:
            result = execute(request)
        except Stopped:
            raise
        except Exception as exc:
            verdict = self.guard.after(name, args, error=exc)
            if verdict.action == "stop":
                raise _stopped(verdict) from exc
            if verdict.action == "redirect":
                return self._answer(request.tool_call, verdict.instructions or verdict.reason)
            raise
        except BaseException as exc:  # cancelled mid-run: another call of the turn ended the run
            self.guard.cancelled(name, args, exc)
            raise
        return self._after(request, name, args, result)

    async def acall(self, request: Any, execute: Callable[[Any], Awaitable[Any]]) -> Any:
        """The async wrapper (``awrap_tool_call``)."""
        name, args, answer = await self._abefore(request)
        if answer is not None:
            return answer
        try:
            result = await execute(request)
        except Stopped:
            raise
        except Exception as exc:
            verdict = await self.guard.offload(partial(self.guard.after, name, args, error=exc), records=True)
            if verdict.action == "stop":
                raise _stopped(verdict) from exc
            if verdict.action == "redirect":
                return self._answer(request.tool_call, verdict.instructions or verdict.reason)
            raise
        except BaseException as exc:  # cancelled mid-run: another call of the turn ended the run
            self.guard.cancelled(name, args, exc)
            raise
        output, error = _output(result) if isinstance(result, ToolMessage) else (None, None)
        after = partial(self.guard.after, name, args, output=output, error=error)
        return self._result(request, result, await self.guard.offload(after, records=True))
