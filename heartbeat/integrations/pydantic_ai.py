"""heartbeat for PydanticAI: a capability that watches every model request and tool call of a run.

``agent.run_sync(prompt, capabilities=[HeartbeatCapability(ctx)])`` (or
``Agent(..., capabilities=[...])``) is the whole adapter. Every tool of the
agent (``tools=``, ``@agent.tool``, ``toolsets=``) is wrapped in a
:class:`HeartbeatToolset`: each call is recorded with its arguments and
result or error; when a detector fires, the model gets the recovery
instructions as the tool's answer ("try an alternative: do not call X
again") instead of the result, mid-run, and the same call made again is
answered with them without running the tool; after ``max_redirects`` (or
with ``on_stuck="stop"``) the run is stopped. Every model request's tokens
(its ``RequestUsage``, the final answer's too) are recorded once, after the
request (``after_model_request``); KILL, a stop and a spent budget are
checked before each model request (``before_model_request``) and each tool
call, and stop the run there: :class:`Stopped` leaves ``agent.run`` as is,
and one request over the budget is the most a run spends.

:func:`guarded` wraps one toolset alone (``Agent(model,
toolsets=[guarded([search], ctx)])``), for an agent that should watch some
of its tools only: its tool calls are watched the same way, but it sees the
run's tokens only before each model request and tool call
(``RunContext.usage``), so the tokens of a run's last answer are not seen.
Use one of the two on an agent, not both: the capability refuses a run
whose toolsets already hold a :class:`HeartbeatToolset`.

The answer is a plain tool result, not a ``ModelRetry``: a retry counts
against the tool's ``retries`` (default 1) and would end the run with
``UnexpectedModelBehavior`` on the second redirection. A redirection counts
toward ``max_redirects`` once the next model request carries it: one whose
run ended first (an output tool in the same turn, another call's exception,
a stop) was never read, and is not held against the model.

Needs ``pip install -e '.[pydantic-ai]'`` in the heartbeat checkout (pydantic-ai-slim).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_ai import ModelRetry
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ToolReturnPart
from pydantic_ai.toolsets import AbstractToolset, FunctionToolset, WrapperToolset

from .guard import Guard, OnStuck, Stopped, Verdict

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelResponse
    from pydantic_ai.models import ModelRequestContext
    from pydantic_ai.tools import RunContext

__all__ = ["HeartbeatCapability", "HeartbeatToolset", "Stopped", "guarded"]


@dataclass
class HeartbeatToolset(WrapperToolset[Any]):
    """Wraps a toolset: each call recorded; stuck -> the recovery instructions as the answer; KILL -> stop.

    ``guard`` is a :class:`~heartbeat.integrations.Guard` or anything it binds
    to (the step's ``ctx``, a :class:`heartbeat.Monitor`); :func:`guarded`
    builds one with options. The guard is shared by the copies PydanticAI
    makes per run, so its memory of stuck calls spans them.
    """

    guard: Any = field(default=None)
    counted: dict[object, tuple[int, int, int]] = field(default_factory=dict, repr=False)
    """Per run (its id): the run's tokens already recorded (shared by the per-run copies)."""
    standalone: bool = True
    """Read the run's tokens (``RunContext.usage``) and check before each model request; False
    under a :class:`HeartbeatCapability`, which does both at each model request itself."""
    redirected: dict[tuple[object, str], str] = field(default_factory=dict, repr=False)
    """The redirections answered and not read yet, by (run id, tool call id): counted once a
    model request carries them (:func:`_read`). Shared with the capability and the per-run copies."""

    def __post_init__(self) -> None:
        if self.guard is None:
            raise TypeError("HeartbeatToolset needs guard= (a Guard, the step's ctx or a heartbeat.Monitor)")
        if not isinstance(self.guard, Guard):
            self.guard = Guard(self.guard, on_stuck="redirect")

    async def _count(self, ctx: Any) -> None:
        """Record the run's tokens since the last look (``ctx.usage``, the run's running total)."""
        usage = getattr(ctx, "usage", None)
        if usage is None:
            return
        now = (
            _tokens(usage, "input_tokens"),
            _tokens(usage, "output_tokens"),
            _tokens(usage, "cache_read_tokens"),
        )
        key = getattr(ctx, "run_id", None) or id(usage)
        before = self.counted.get(key, (0, 0, 0))
        if now == before:
            return
        self.counted[key] = now
        if len(self.counted) > 64:  # runs long finished
            del self.counted[next(iter(self.counted))]
        given, made, cached = (max(0, a - b) for a, b in zip(now, before, strict=True))
        model = _model_name(getattr(ctx, "model", None))
        await self.guard.offload(partial(self.guard.usage, model, given, made, cached), records=True)

    async def for_run_step(self, ctx: Any) -> AbstractToolset[Any]:
        """Before each model request (standalone): record the tokens so far; stop when need be."""
        if self.standalone:
            await self._count(ctx)
            verdict = await self.guard.offload(self.guard.check)
            if verdict.action == "stop":
                raise verdict.error()
            _read(self.guard, self.redirected, ctx, getattr(ctx, "messages", None))
        return await super().for_run_step(ctx)

    def _redirect(self, ctx: Any, verdict: Verdict) -> str | None:
        """The instructions to answer with, remembered until a model request carries them."""
        text = verdict.instructions
        call = getattr(ctx, "tool_call_id", None)
        if isinstance(call, str) and text is not None:
            self.redirected[(getattr(ctx, "run_id", None), call)] = text
            while len(self.redirected) > 256:  # runs that ended before their model read them
                del self.redirected[next(iter(self.redirected))]
        else:  # no call id to find it by: counted as answered, as the other adapters count
            self.guard.delivered()
        return text

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: Any, tool: Any) -> Any:
        """Run the tool unless killed, stuck or over budget; record it; redirect once stuck."""
        guard: Guard = self.guard
        if self.standalone:
            await self._count(ctx)
        # Bound to a state folder, a check or a record may wait (a heartbeat to open or end, the
        # fleet stop's first reading): on a worker thread then, never holding the event loop.
        verdict = await guard.offload(partial(guard.before, name, tool_args, read_later=True))
        if verdict.action == "stop":
            raise verdict.error()
        if verdict.action == "redirect":
            return self._redirect(ctx, verdict)
        try:
            result = await super().call_tool(name, tool_args, ctx, tool)
        except ModelRetry as exc:  # the tool asks the model to retry: a failed call, passed on
            failed = f"ModelRetry: {exc.message}"
            verdict = await guard.offload(
                partial(guard.after, name, tool_args, error=failed, read_later=True), records=True
            )
            if verdict.action == "stop":
                raise verdict.error() from exc
            if verdict.action == "redirect":
                return self._redirect(ctx, verdict)
            raise
        except Exception as exc:
            verdict = await guard.offload(
                partial(guard.after, name, tool_args, error=exc, read_later=True), records=True
            )
            if verdict.action == "stop":
                raise verdict.error() from exc
            raise
        except BaseException as exc:  # cancelled mid-run: another call of the turn ended the run
            guard.cancelled(name, tool_args, exc)
            raise
        verdict = await guard.offload(
            partial(guard.after, name, tool_args, output=result, read_later=True), records=True
        )
        if verdict.action == "stop":
            raise verdict.error()
        if verdict.action == "redirect":
            return self._redirect(ctx, verdict)
        return result


class HeartbeatCapability(AbstractCapability[Any]):
    """The whole adapter as a capability: every tool of the agent watched, every model request counted.

    ``target`` and the options are :func:`guarded`'s (or pass a
    :class:`~heartbeat.integrations.Guard` as ``target``). Before each model
    request: a stop (KILL, the fleet stop, a spent budget, a stuck run)
    raises :class:`Stopped`, so no further request is made; after it: its
    tokens (``ModelResponse.usage``) are recorded on the model that served
    it. The guard lives as long as the capability: given to ``Agent(...)``,
    its memory of stuck calls and its stop span the agent's runs; given to
    ``agent.run(capabilities=[...])``, one run's.
    """

    def __init__(
        self,
        target: object,
        *,
        on_stuck: OnStuck = "redirect",
        max_redirects: int = 3,
        kill_file: str | Path | None = None,
    ) -> None:
        self.guard = Guard.of(target, on_stuck=on_stuck, max_redirects=max_redirects, kill_file=kill_file)
        self._redirected: dict[tuple[object, str], str] = {}  # shared with its toolsets

    def __repr__(self) -> str:
        return f"HeartbeatCapability({self.guard!r})"

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """Not built from an agent spec: it is bound to a live target."""
        return None

    def get_wrapper_toolset(self, toolset: AbstractToolset[Any]) -> AbstractToolset[Any] | None:
        """The run's tools, each call watched by this capability's guard (tokens are counted per request)."""
        if _holds_heartbeat(toolset):
            raise TypeError(
                "a toolset given to guarded() is already watched: give the agent its plain tools "
                "with HeartbeatCapability, or use guarded() without the capability, not both"
            )
        return HeartbeatToolset(toolset, guard=self.guard, standalone=False, redirected=self._redirected)

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """Stop the run before the request when killed, stopped or over budget; else count the
        redirections it carries to the model."""
        verdict = await self.guard.offload(self.guard.check)
        if verdict.action == "stop":
            raise verdict.error()
        _read(self.guard, self._redirected, ctx, request_context.messages)
        # One request at a time per run: a failed one (no hook says so) is replaced by the next.
        self.guard.model_began(_run_of(ctx), _model_name(request_context.model))
        return request_context

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        """Record the request's tokens; past a budget the run's next model or tool call is stopped."""
        self.guard.model_ended(_run_of(ctx))
        usage = response.usage
        model = response.model_name or _model_name(request_context.model)
        counts = (_tokens(usage, n) for n in ("input_tokens", "output_tokens", "cache_read_tokens"))
        await self.guard.offload(partial(self.guard.usage, model, *counts), records=True)
        return response


def _run_of(ctx: object) -> object:
    """The run a request belongs to: its ``run_id`` (the same object around each of its requests)."""
    return getattr(ctx, "run_id", None) or id(ctx)


def _holds_heartbeat(toolset: object) -> bool:
    """Whether a toolset tree already holds a :class:`HeartbeatToolset` (``apply`` sees only leaves)."""
    if isinstance(toolset, HeartbeatToolset):
        return True
    inner = getattr(toolset, "wrapped", None)
    if isinstance(inner, AbstractToolset):
        return _holds_heartbeat(inner)
    children = getattr(toolset, "toolsets", ())
    return isinstance(children, list | tuple) and any(map(_holds_heartbeat, children))


def _read(guard: Guard, redirected: dict[tuple[object, str], str], ctx: Any, messages: object) -> None:
    """Count the redirections the request about to go out carries (its last message's tool returns)."""
    if not redirected or not isinstance(messages, list) or not messages:
        return
    run = getattr(ctx, "run_id", None)
    read = 0
    for part in getattr(messages[-1], "parts", ()):
        if isinstance(part, ToolReturnPart) and isinstance(part.tool_call_id, str):
            text = redirected.get((run, part.tool_call_id))
            if text is not None and part.content == text:
                del redirected[(run, part.tool_call_id)]
                read += 1
    if read:
        guard.delivered(read)


def _model_name(model: object) -> str:
    name = getattr(model, "model_name", None)
    return name if isinstance(name, str) and name else "unknown"


def _tokens(usage: object, name: str) -> int:
    value = getattr(usage, name, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def guarded(
    tools: AbstractToolset[Any] | Sequence[Callable[..., Any]],
    target: object,
    *,
    on_stuck: OnStuck = "redirect",
    max_redirects: int = 3,
    kill_file: str | Path | None = None,
) -> HeartbeatToolset:
    """``tools`` (a toolset or plain tool functions) in a :class:`HeartbeatToolset` bound to ``target``."""
    toolset = tools if isinstance(tools, AbstractToolset) else FunctionToolset(list(tools))
    guard = Guard.of(target, on_stuck=on_stuck, max_redirects=max_redirects, kill_file=kill_file)
    return HeartbeatToolset(toolset, guard=guard)
