"""Agent modules for the spend tests: one per framework, each on the framework's own offline test model.

Each source defines ``run(target) -> dict`` (the agent run bound to
``target``: a step's ctx or a state folder; how many model calls were
answered, and the ``Stopped`` cause if stopped) and ``step(ctx)`` (a
heartbeat step that runs it and keeps the result in ``ctx.data``). Every
model call reports 100 input tokens (40 of them cached) and 20 output
tokens, on the model ``MODEL`` (default ``gpt-4o-mini``, which genai-prices
knows); each asks for a search with a different query, ``CALLS`` of them,
then answers.
"""

from __future__ import annotations

INPUT, OUTPUT, CACHED = 100, 20, 40
CALLS = 8
WORDS = ["heartbeat", "loop", "cron", "budget", "escalation", "journal", "detector", "policy", "recovery"]

_COMMON = f"""
import os
from heartbeat.integrations import Stopped

MODEL = os.environ.get("SPEND_MODEL", "gpt-4o-mini")
INPUT, OUTPUT, CACHED, CALLS = {INPUT}, {OUTPUT}, {CACHED}, {CALLS}
WORDS = {WORDS!r}


def step(ctx):
    ctx.data["run"] = run(ctx)
"""

LANGGRAPH = (
    _COMMON
    + '''
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from heartbeat.integrations.langchain import HeartbeatCallbackHandler


class Chat(FakeMessagesListChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


def _said(i, calls):
    usage = {"input_tokens": INPUT, "output_tokens": OUTPUT, "total_tokens": INPUT + OUTPUT,
             "input_token_details": {"cache_read": CACHED}}
    meta = {"model_name": MODEL}
    return AIMessage(content="", tool_calls=calls, usage_metadata=usage, response_metadata=meta, id=f"m{i}")


def run(target):
    responses = [_said(i, [{"name": "search", "args": {"q": WORDS[i]}, "id": f"c{i}"}]) for i in range(CALLS)]
    model = Chat(responses=[*responses, _said(CALLS, [])])
    ran = []

    @tool
    def search(q: str) -> str:
        """Search."""
        ran.append(q)
        return f"3 hits for {q}"

    graph = StateGraph(MessagesState)
    graph.add_node("model", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("tools", ToolNode([search]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    handler = HeartbeatCallbackHandler(target)
    cause = None
    try:
        graph.compile().invoke({"messages": [("user", "go")]}, config={"callbacks": [handler]})
    except Stopped as exc:
        cause = exc.cause
    finally:
        handler.guard.close()
    return {"cause": cause, "model_calls": model.i, "tools": len(ran)}
'''
)

AGENTS_SDK = (
    _COMMON
    + """
from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call
from agents.usage import Usage
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

from heartbeat.integrations.openai_agents import HeartbeatHooks

set_tracing_disabled(True)


class Model(ScriptedModel):
    model = MODEL


def run(target):
    ran = []

    @function_tool
    def search(q: str) -> str:
        \"\"\"Search.\"\"\"
        ran.append(q)
        return f"3 hits for {q}"

    usage = Usage(requests=1, input_tokens=INPUT, output_tokens=OUTPUT,
                  input_tokens_details=InputTokensDetails(cached_tokens=CACHED, cache_write_tokens=0),
                  output_tokens_details=OutputTokensDetails(reasoning_tokens=0))
    steps = [{"output": [function_call("search", {"q": WORDS[i]}, call_id=f"c{i}")]} for i in range(CALLS)]
    model = Model([*steps, {"output": [assistant_message("done")]}], default_usage=usage)
    hooks = HeartbeatHooks(target)
    cause = None
    try:
        agent = Agent(name="spender", model=model, tools=[search])
        Runner.run_sync(agent, "go", hooks=hooks, max_turns=CALLS + 5)
    except Stopped as exc:
        cause = exc.cause
    finally:
        hooks.guard.close()
    return {"cause": cause, "model_calls": len(model.calls), "tools": len(ran)}
"""
)

PYDANTIC_AI = (
    _COMMON
    + """
from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.usage import RequestUsage

from heartbeat.integrations.pydantic_ai import HeartbeatCapability


def run(target):
    ran, answered = [], []

    def search(q: str) -> str:
        \"\"\"Search.\"\"\"
        ran.append(q)
        return f"3 hits for {q}"

    def script(messages, info):
        turn = len(answered)
        answered.append(turn)
        usage = RequestUsage(input_tokens=INPUT, output_tokens=OUTPUT, cache_read_tokens=CACHED)
        if turn >= CALLS:
            return ModelResponse(parts=[TextPart("done")], usage=usage)
        return ModelResponse(parts=[ToolCallPart("search", {"q": WORDS[turn]}, tool_call_id=f"c{turn}")],
                             usage=usage)

    watch = HeartbeatCapability(target)
    cause = None
    try:
        Agent(FunctionModel(script, model_name=MODEL), tools=[search]).run_sync("go", capabilities=[watch])
    except Stopped as exc:
        cause = exc.cause
    finally:
        watch.guard.close()
    return {"cause": cause, "model_calls": len(answered), "tools": len(ran)}
"""
)

SOURCES = {"langgraph": LANGGRAPH, "agents_sdk": AGENTS_SDK, "pydantic_ai": PYDANTIC_AI}
