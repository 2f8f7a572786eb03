"""heartbeat for the OpenAI Agents SDK: run hooks that record and stop, tool guardrails that redirect.

``Runner.run(agent, input, hooks=HeartbeatHooks(ctx))`` records every local
tool call (name, arguments, result) and every model response's ``Usage``,
and raises :class:`AgentStopped` out of the run when the KILL file appears
or a budget is spent (both checked before every tool call and every model
call) or a detector fires.

For redirection instead of a stop, ``hooks = HeartbeatHooks(ctx,
on_stuck="redirect")`` and ``hooks.guard_tools(agent)``: each function tool
of the agent gets a tool input and output guardrail, so a call that trips
a detector is answered with the recovery instructions (the model reads
them instead of the tool's result), and the same call made again is
answered with them without running the tool; after ``max_redirects`` the
run is stopped.

Needs ``pip install -e '.[openai-agents]'`` in the heartbeat checkout.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import Any

from agents import (
    Agent,
    FunctionTool,
    RunContextWrapper,
    RunHooks,
    Tool,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrail,
    ToolInputGuardrailData,
    ToolOutputGuardrail,
    ToolOutputGuardrailData,
)
from agents.exceptions import AgentsException
from agents.tool import default_tool_error_function

from .guard import Guard, OnStuck, Stopped, Verdict

__all__ = ["AgentStopped", "HeartbeatHooks", "Stopped"]

# The SDK hands the model (and on_tool_end) this text instead of a failed tool's exception;
# it is the only sign of a failure the hooks get.
# Asked of the SDK itself, so a new wording in a later release is still recognised.
_DEFAULT_FAILURE = default_tool_error_function(RunContextWrapper(context=None), RuntimeError())


class AgentStopped(Stopped, AgentsException):
    """:class:`~heartbeat.integrations.Stopped`, as an SDK exception (the runner re-raises it unwrapped)."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(
            verdict.cause or "stuck",
            verdict.reason,
            verdict.anomaly,
            journaled=verdict.journaled,
            kept=verdict.kept,
        )
        self.run_data = None  # AgentsException's field; RuntimeError.__init__ does not chain to it


def _arguments(context: RunContextWrapper[Any]) -> dict[str, Any] | None:
    """The call's arguments as a dict (the SDK gives a JSON string), None when it has none."""
    import json

    raw = getattr(context, "tool_arguments", None)
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return {"input": raw}
    return value if isinstance(value, dict) else {"input": value}


def _call_id(context: RunContextWrapper[Any]) -> object:
    """The tool call's id (a ToolContext's), else the context itself: one key per call under way."""
    call_id = getattr(context, "tool_call_id", None)
    return call_id if isinstance(call_id, str) and call_id else id(context)


def _name(context: RunContextWrapper[Any], tool: Tool | None) -> str:
    name = getattr(context, "tool_name", None) or getattr(tool, "name", None)
    return name if isinstance(name, str) and name else "tool"


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _model(agent: Agent[Any]) -> str:
    """The agent's model name: the string it was given, or its Model's ``model``/``model_name``."""
    model = agent.model
    if isinstance(model, str) and model:
        return model
    for attribute in ("model", "model_name", "name"):
        name = getattr(model, attribute, None)
        if isinstance(name, str) and name:
            return name
    return type(model).__name__ if model is not None else "unknown"


def _result(result: object) -> tuple[object, str | None]:
    if isinstance(result, str) and result == _DEFAULT_FAILURE:
        return None, result
    return result, None


def _ours(guardrail: ToolInputGuardrail[Any] | ToolOutputGuardrail[Any]) -> bool:
    """Whether a tool guardrail was put there by a HeartbeatHooks (of this run or an earlier one)."""
    return isinstance(getattr(guardrail.guardrail_function, "__self__", None), HeartbeatHooks)


class HeartbeatHooks(RunHooks[Any]):
    """Run hooks that record every local tool call; stop the run when killed or stuck.

    ``target``: the step's ``ctx``, a :class:`heartbeat.Monitor` (with
    ``kill_file``) or a :class:`~heartbeat.integrations.Guard`.
    ``on_stuck="redirect"`` needs :meth:`guard_tools` on the agent; hooks
    alone can only stop.
    """

    def __init__(
        self,
        target: object,
        *,
        on_stuck: OnStuck = "stop",
        max_redirects: int = 3,
        kill_file: str | Path | None = None,
    ) -> None:
        self.guard = Guard.of(target, on_stuck=on_stuck, max_redirects=max_redirects, kill_file=kill_file)
        self._guarded: set[int] = set()  # id() of the tools whose guardrails record for us
        # The calls under way (started, not yet recorded), by call id: a stop of ours ends the run and
        # the SDK cancels them, after which no hook sees them; and those recorded so (see _stop).
        self._running: dict[object, tuple[str, dict[str, Any] | None]] = {}
        self._settled: set[object] = set()
        self._input: ToolInputGuardrail[Any] = ToolInputGuardrail(
            guardrail_function=self._check_input, name="heartbeat"
        )
        self._output: ToolOutputGuardrail[Any] = ToolOutputGuardrail(
            guardrail_function=self._check_output, name="heartbeat"
        )

    def __repr__(self) -> str:
        return f"HeartbeatHooks({self.guard!r})"

    def guard_tools(self, agent: Agent[Any] | Iterable[Tool]) -> Agent[Any] | Iterable[Tool]:
        """Give each function tool our input and output guardrails (redirection); returns ``agent``.

        The tools are changed in place: the guardrails of an earlier
        HeartbeatHooks on the same tools are replaced, so call it for each
        run with that run's hooks.
        """
        tools = agent.tools if isinstance(agent, Agent) else agent
        for tool in tools:
            if not isinstance(tool, FunctionTool) or id(tool) in self._guarded:
                continue
            inputs = [g for g in tool.tool_input_guardrails or [] if not _ours(g)]
            outputs = [g for g in tool.tool_output_guardrails or [] if not _ours(g)]
            tool.tool_input_guardrails = [*inputs, self._input]
            tool.tool_output_guardrails = [*outputs, self._output]
            self._guarded.add(id(tool))
        return agent

    def _raise(self, verdict: Verdict) -> None:
        if verdict.action != "go":  # hooks cannot answer for a tool: a redirect is a stop here
            raise self._stop(verdict)

    def _stop(self, verdict: Verdict) -> AgentStopped:
        """The stop that ends the run; the calls still running are recorded first.

        The SDK cancels them once a hook or guardrail raises, and they reach no hook after that
        (a call past its tool already, finishing, may still: it is not recorded twice). Each ran,
        in part or in full, so each is recorded as a call the run was stopped under.
        """
        running, self._running = self._running, {}
        for key, (name, arguments) in running.items():
            self._settled.add(key)
            why = f"the run was stopped while the call ran (it may have run): {verdict.cause or 'stuck'}"
            self.guard.after(name, arguments, error=why, read_later=True)  # never read: not counted
        return AgentStopped(verdict)

    def _ended(self, context: RunContextWrapper[Any]) -> bool:
        """A call ends (to be recorded now): False when a stop recorded it already (see :meth:`_stop`)."""
        key = _call_id(context)
        self._running.pop(key, None)
        if key in self._settled:
            self._settled.discard(key)
            return False
        return True

    async def on_llm_start(
        self, context: RunContextWrapper[Any], agent: Agent[Any], system_prompt: str | None, input_items: Any
    ) -> None:
        """Before every model call: stop when killed, stopped or over budget (no tokens after a stop).

        Bound to a state folder, a check or a record that may wait (a heartbeat to open or end, the
        fleet stop's first reading) runs on a worker thread (:meth:`Guard.offload`), here and in every
        hook and guardrail: the run's event loop is never held.
        """
        self._raise(await self.guard.offload(self.guard.check))
        # One model call at a time per agent: a failed one (no hook says so) is replaced by the next.
        self.guard.model_began(id(agent), _model(agent))

    async def on_llm_end(self, context: RunContextWrapper[Any], agent: Agent[Any], response: Any) -> None:
        """After a model call: record its ``Usage`` (past a budget, the next call is stopped)."""
        self.guard.model_ended(id(agent))
        usage = getattr(response, "usage", None)
        if usage is None:
            return
        given, made = _count(getattr(usage, "input_tokens", 0)), _count(getattr(usage, "output_tokens", 0))
        details = getattr(usage, "input_tokens_details", None)
        cached = _count(getattr(details, "cached_tokens", 0))
        if given or made:
            await self.guard.offload(
                partial(self.guard.usage, _model(agent), given, made, cached), records=True
            )

    async def on_tool_start(self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool) -> None:
        """Before a tool runs: stop when killed or already stopped (guarded tools: done by the guardrail)."""
        name, arguments = _name(context, tool), _arguments(context)
        if id(tool) not in self._guarded:
            self._raise(await self.guard.offload(partial(self.guard.before, name, arguments)))
        self._running[_call_id(context)] = (name, arguments)

    async def on_tool_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool, result: object
    ) -> None:
        """Record the finished call; stop when it tripped a detector (guarded tools: recorded already)."""
        if id(tool) in self._guarded or not self._ended(context):
            return
        output, error = _result(result)
        name, arguments = _name(context, tool), _arguments(context)
        after = partial(self.guard.after, name, arguments, output=output, error=error)
        self._raise(await self.guard.offload(after, records=True))

    async def _check_input(self, data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        before = partial(self.guard.before, _name(data.context, None), _arguments(data.context))
        return self._answer(await self.guard.offload(before))

    async def _check_output(self, data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        if not self._ended(data.context):
            return ToolGuardrailFunctionOutput.allow()
        output, error = _result(data.output)
        name, arguments = _name(data.context, None), _arguments(data.context)
        after = partial(self.guard.after, name, arguments, output=output, error=error)
        return self._answer(await self.guard.offload(after, records=True))

    def _answer(self, verdict: Verdict) -> ToolGuardrailFunctionOutput:
        if verdict.action == "stop":
            raise self._stop(verdict)
        if verdict.action == "redirect":
            return ToolGuardrailFunctionOutput.reject_content(verdict.instructions or verdict.reason)
        return ToolGuardrailFunctionOutput.allow()
