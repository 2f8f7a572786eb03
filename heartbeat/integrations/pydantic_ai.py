"""heartbeat for PydanticAI: a wrapper toolset that records every call and redirects a stuck model.

``Agent(model, toolsets=[HeartbeatToolset(toolset, ctx)])`` (or
:func:`guarded`) records every call of the wrapped toolset's tools with
its arguments and result or error. When a detector fires, the model gets
the recovery instructions as the tool's answer ("try an alternative: do not
call X again") instead of the result, mid-run, and the same call made
again is answered with them without running the tool; after
``max_redirects`` (or with ``on_stuck="stop"``) the run is stopped. A KILL
file, checked before every tool call, stops the run: :class:`Stopped`
leaves ``agent.run`` as is. The run's tokens (``RunContext.usage``) are
recorded before each model request and each tool call, and a spent budget
stops the run there, before the next request: one request over is the most
a run spends. (The tokens of a run's last answer, which calls no tool, are
not seen.)

The answer is a plain tool result, not a ``ModelRetry``: a retry counts
against the tool's ``retries`` (default 1) and would end the run with
``UnexpectedModelBehavior`` on the second redirection.

Needs ``pip install 'heartbeat-watchdog[pydantic-ai]'`` (pydantic-ai-slim).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai import ModelRetry
from pydantic_ai.toolsets import AbstractToolset, FunctionToolset, WrapperToolset

from .guard import Guard, OnStuck, Stopped

__all__ = ["HeartbeatToolset", "Stopped", "guarded"]


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

    def __post_init__(self) -> None:
        if self.guard is None:
            raise TypeError("HeartbeatToolset needs guard= (a Guard, the step's ctx or a heartbeat.Monitor)")
        if not isinstance(self.guard, Guard):
            self.guard = Guard(self.guard, on_stuck="redirect")

    def _count(self, ctx: Any) -> None:
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
        model = getattr(getattr(ctx, "model", None), "model_name", None)
        self.guard.usage(model if isinstance(model, str) and model else "unknown", given, made, cached)

    async def for_run_step(self, ctx: Any) -> AbstractToolset[Any]:
        """Before each model request: record the tokens so far; stop when killed, stopped or over budget."""
        guard: Guard = self.guard
        self._count(ctx)
        verdict = guard.check()
        if verdict.action == "stop":
            raise verdict.error()
        return await super().for_run_step(ctx)

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: Any, tool: Any) -> Any:
        """Run the tool unless killed, stuck or over budget; record it; redirect once stuck."""
        guard: Guard = self.guard
        self._count(ctx)
        verdict = guard.before(name, tool_args)
        if verdict.action == "stop":
            raise verdict.error()
        if verdict.action == "redirect":
            return verdict.instructions
        try:
            result = await super().call_tool(name, tool_args, ctx, tool)
        except ModelRetry as exc:  # the tool asks the model to retry: a failed call, passed on
            verdict = guard.after(name, tool_args, error=f"ModelRetry: {exc.message}")
            if verdict.action == "stop":
                raise verdict.error() from exc
            if verdict.action == "redirect":
                return verdict.instructions
            raise
        except Exception as exc:
            verdict = guard.after(name, tool_args, error=exc)
            if verdict.action == "stop":
                raise verdict.error() from exc
            raise
        verdict = guard.after(name, tool_args, output=result)
        if verdict.action == "stop":
            raise verdict.error()
        if verdict.action == "redirect":
            return verdict.instructions
        return result


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
    guard = (
        target
        if isinstance(target, Guard)
        else Guard(target, on_stuck=on_stuck, max_redirects=max_redirects, kill_file=kill_file)
    )
    return HeartbeatToolset(toolset, guard=guard)
