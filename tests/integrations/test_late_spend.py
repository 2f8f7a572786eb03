"""Spend after a stop: a model call that completes once its run is stopping is still counted and journaled.

Every model call here reports 120 tokens (100 in, 40 of them cached, 20 out)
on ``gpt-4o-mini``. The stop (KILL, the fleet stop, a person's pause, the
budget) comes while the second call runs, and that call's heartbeat has
ended before its answer arrives. The call was paid for all the same:
``state.json``'s spend (today's budget and the totals) holds both calls,
and the journal holds the late one as a ``spend`` event marked
``after_stop``. Each adapter is bound to a state folder (a Session) and runs
on its framework's own test model; the model call itself waits for the stop.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _integrations import folder_session, model_and_tools, pause_by_hand
from conftest import make_agent, wait_until

from heartbeat.integrations import Stopped
from heartbeat.integrations.session import Session
from heartbeat.state.store import StateStore
from heartbeat.tick.late import INTERRUPTED

INPUT, OUTPUT, CACHED = 100, 20, 40
PER_CALL = INPUT + OUTPUT
MODEL = "gpt-4o-mini"


def saved(folder: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads((folder / "state" / "state.json").read_text())
    return state


def assert_accounted_once(folder: Path) -> None:
    """The step's one call is journaled as interrupted and its spend counted, once each."""
    events = journal(folder)
    assert [(e["tool"], e["after_stop"]) for e in events if e["event"] == "action"] == [
        ("search", "interrupted")
    ]
    spends = [e for e in events if e["event"] == "spend"]
    assert [(e["after_stop"], e["tokens"]) for e in spends] == [("interrupted", PER_CALL)]
    assert saved(folder)["budget"]["tokens"] == PER_CALL


def sigterm_tick(folder: Path, source: str, waits_for: str, *args: str, release: str | None = None) -> str:
    """`heartbeat tick` on the agent ``source`` in ``folder``, sent SIGTERM once the file ``waits_for``
    appears, exits 143; its stderr. The file ``release`` (if any) is written after the signal."""
    proc = make_agent(folder, source).spawn("tick", *args)
    try:
        wait_until(lambda: (folder / waits_for).exists(), what=f"{waits_for} to appear", proc=proc)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 143
    finally:
        if release is not None:
            (folder / release).write_text("")
        if proc.poll() is None:
            proc.kill()
        _, err = proc.communicate()
    return str(err)


def journal(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "state" / "journal.jsonl").read_text().splitlines()]


def assert_both_calls_counted(folder: Path, why: str) -> None:
    """state.json's spend holds the two calls; the journal holds the late one, marked ``after_stop``."""
    state = saved(folder)
    assert state["budget"]["tokens"] == 2 * PER_CALL, "the late call's tokens are missing from the budget"
    today = state["budget"]["models"][MODEL]
    assert (today["calls"], today["input"], today["output"], today["cached"]) == (2, 200, 40, 80)
    assert today["cost"] > 0 and not today["unpriced"]  # priced as a call in a heartbeat is
    assert state["spend_totals"][MODEL]["calls"] == 2
    spends = [e for e in journal(folder) if e["event"] == "spend"]
    assert sum(e["tokens"] for e in spends) == 2 * PER_CALL
    late = [e for e in spends if e.get("after_stop")]
    assert [e["after_stop"] for e in late] == [why]
    assert late[0]["tokens"] == PER_CALL and late[0]["models"][MODEL]["calls"] == 1
    assert late[0]["cost"] == pytest.approx(today["cost"] / 2)


def stop_during(kind: str, folder: Path, session: Session) -> None:
    """What a slow model call sees: the stop comes while it runs, and its heartbeat ends first."""
    if kind == "kill":
        (folder / "KILL").write_text("stop mid-call\n")
    elif kind == "fleet":
        (folder / "fleet" / "STOP").write_text("fleet-wide stop\n")
    else:  # a real `heartbeat pause`, which returns once the pause is saved
        pause_by_hand(folder, "--config", "heartbeat.toml")
    wait_until(lambda: not session.is_open, what="the heartbeat to end on the stop")


def fleet_session(folder: Path) -> Session:
    """A Session whose agent also obeys a fleet stop at ``folder/fleet/STOP``."""
    (folder / "fleet").mkdir(parents=True)  # the stop's folder: one that is not there fails closed
    config = folder / "heartbeat.toml"
    config.write_text(
        f'[agent]\nstate_dir = "state"\nkill_file = "KILL"\n\n[stop]\npath = "{folder / "fleet" / "STOP"}"\n'
    )
    return Session.from_files(config, idle=30.0)


# -- the Session itself


@pytest.mark.parametrize("kind", ["kill", "fleet", "pause"])
def test_a_model_call_that_ends_after_a_stop_is_counted_and_journaled(tmp_path: Path, kind: str) -> None:
    """Regression: record_usage raised Stopped (journaled False) and the call's tokens were lost."""
    session = fleet_session(tmp_path) if kind == "fleet" else folder_session(tmp_path, idle=30.0)
    try:
        assert session.check() is None
        assert session.record_usage(MODEL, INPUT, OUTPUT, CACHED) is None
        stop_during(kind, tmp_path, session)
        with pytest.raises(Stopped) as stopped:
            session.record_usage(MODEL, INPUT, OUTPUT, CACHED)
    finally:
        session.close()
    assert stopped.value.journaled and stopped.value.cause == ("killed" if kind != "pause" else "paused")
    assert_both_calls_counted(tmp_path, stopped.value.cause)
    # Regression: it said "(the call ran: journaled only)" while state.json's spend counts it too.
    assert str(stopped.value).endswith("(the call ran: its spend counted in state.json and journaled)")


def test_a_model_call_whose_spend_cannot_be_saved_says_it_is_journaled_only(tmp_path: Path) -> None:
    """The state folder stays busy past the late spend's wait: the spend is journaled only, and the
    stop says that, not that state.json counts it."""
    session = folder_session(tmp_path, idle=30.0)
    try:
        assert session.record_usage(MODEL, INPUT, OUTPUT, CACHED) is None
        stop_during("kill", tmp_path, session)
        other = StateStore(tmp_path / "state")  # another process's hold on the folder, as flock sees it
        with other.lock(timeout=30), pytest.raises(Stopped) as stopped:
            session.record_usage(MODEL, INPUT, OUTPUT, CACHED)
    finally:
        session.close()
    assert stopped.value.journaled and saved(tmp_path)["budget"]["tokens"] == PER_CALL
    assert str(stopped.value).endswith("(the call ran: its spend journaled only, not counted in state.json)")
    assert [e["unsaved"] for e in journal(tmp_path) if e.get("after_stop")] != []


def test_a_model_call_that_ends_after_the_budget_paused_the_agent_is_counted(tmp_path: Path) -> None:
    """Two model calls at once: the first past the limit pauses the agent, the other ends after it."""
    folder = tmp_path
    folder.mkdir(exist_ok=True)
    (folder / "heartbeat.toml").write_text(
        '[agent]\nstate_dir = "state"\nkill_file = "KILL"\n\n[budget]\ntokens_per_day = 100\n'
    )
    session = Session.from_files(folder / "heartbeat.toml", idle=30.0)
    try:
        hit = session.record_usage(MODEL, INPUT, OUTPUT, CACHED)
        assert hit is not None and hit.kind == "budget" and not session.is_open
        with pytest.raises(Stopped) as stopped:
            session.record_usage(MODEL, INPUT, OUTPUT, CACHED)
    finally:
        session.close()
    assert stopped.value.journaled and stopped.value.cause == "paused"
    assert saved(folder)["status"] == "paused"
    assert_both_calls_counted(folder, "paused")


# -- each adapter, on its framework's test model


def usage_of_pydantic_ai() -> Any:
    from pydantic_ai.usage import RequestUsage

    return RequestUsage(input_tokens=INPUT, output_tokens=OUTPUT, cache_read_tokens=CACHED)


def pydantic_ai_run(session: Session, slow: Callable[[], None], *, toolset: bool) -> Stopped:
    """A PydanticAI run whose second model request is the slow one, watched by a HeartbeatCapability
    or (``toolset``) by ``guarded()`` around its one tool."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.usage import RequestUsage

    from heartbeat.integrations.pydantic_ai import HeartbeatCapability, guarded

    requests: list[int] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        requests.append(len(messages))
        if len(requests) == 2:
            slow()
        usage = RequestUsage(input_tokens=INPUT, output_tokens=OUTPUT, cache_read_tokens=CACHED)
        return ModelResponse(parts=[ToolCallPart("search", {"q": f"query {len(requests)}"})], usage=usage)

    def search(q: str) -> str:
        """Search."""
        return f"hits for {q}"

    chat = FunctionModel(model, model_name=MODEL)
    with pytest.raises(Stopped) as stopped:
        if toolset:
            Agent(chat, toolsets=[guarded([search], session)]).run_sync("research")
        else:
            Agent(chat, tools=[search]).run_sync("research", capabilities=[HeartbeatCapability(session)])
    assert len(requests) == 2  # no request after the stop
    return stopped.value


@pytest.mark.parametrize(
    ("stop", "toolset", "cause"),
    [("kill", False, "killed"), ("pause", True, "paused")],
    ids=["capability-after-kill", "guarded-toolset-after-a-pause"],
)
def test_pydantic_ai_counts_a_request_that_ends_after_a_stop(
    tmp_path: Path, stop: str, toolset: bool, cause: str
) -> None:
    """The capability (KILL) and the guarded toolset (a pause) each count the request under way."""
    session = folder_session(tmp_path, idle=30.0)
    try:
        stopped = pydantic_ai_run(session, lambda: stop_during(stop, tmp_path, session), toolset=toolset)
    finally:
        session.close()
    assert stopped.cause == cause
    assert_both_calls_counted(tmp_path, cause)


def langgraph_run(session: Session, how: str, slow: Callable[[], None]) -> Any:
    """A LangGraph agent (model node + ToolNode over ``search``) whose second model call is the slow one;
    watched by the callback handler or the ToolNode wrapper."""
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langgraph.prebuilt import ToolNode

    from heartbeat.integrations.langchain import HeartbeatCallbackHandler, HeartbeatToolWrapper

    class Chat(FakeMessagesListChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Chat:
            return self

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            if self.i == 1:
                slow()
            return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)

    usage: Any = {
        "input_tokens": INPUT,
        "output_tokens": OUTPUT,
        "total_tokens": PER_CALL,
        "input_token_details": {"cache_read": CACHED},
    }
    turns = [
        AIMessage(
            content="",
            tool_calls=[{"name": "search", "args": {"q": f"query {i}"}, "id": f"c{i}"}],
            usage_metadata=usage,
            response_metadata={"model_name": MODEL},
            id=f"m{i}",
        )
        for i in range(4)
    ]
    model = Chat(responses=turns)

    @tool
    def search(q: str) -> str:
        """Search."""
        return f"hits for {q}"

    wrapper = HeartbeatToolWrapper(session) if how == "wrapper" else None
    node = ToolNode([search], wrap_tool_call=wrapper, awrap_tool_call=wrapper.acall) if wrapper else None
    app = model_and_tools(
        lambda state: {"messages": [model.invoke(state["messages"])]}, node or ToolNode([search])
    )
    config: Any = {} if wrapper else {"callbacks": [HeartbeatCallbackHandler(session)]}
    with pytest.raises(Stopped) as stopped:
        app.invoke({"messages": [("user", "research")]}, config=config)
    assert model.i == 2  # no model call after the stop
    return stopped.value


@pytest.mark.parametrize("how", ["handler", "wrapper"])
def test_langgraph_counts_a_model_call_that_ends_after_kill(tmp_path: Path, how: str) -> None:
    session = folder_session(tmp_path, idle=30.0)
    try:
        stopped = langgraph_run(session, how, lambda: stop_during("kill", tmp_path, session))
    finally:
        session.close()
    assert stopped.cause == "killed"
    assert_both_calls_counted(tmp_path, "killed")


def test_agents_sdk_counts_a_model_call_that_ends_after_kill(tmp_path: Path) -> None:
    from agents import Agent, Runner, function_tool, set_tracing_disabled
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
    from agents.usage import Usage
    from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

    from heartbeat.integrations.openai_agents import HeartbeatHooks

    set_tracing_disabled(True)
    session = folder_session(tmp_path, idle=30.0)
    usage = Usage(
        requests=1,
        input_tokens=INPUT,
        output_tokens=OUTPUT,
        input_tokens_details=InputTokensDetails(cached_tokens=CACHED, cache_write_tokens=0),
        output_tokens_details=OutputTokensDetails(reasoning_tokens=0),
    )
    answered: list[int] = []

    @function_tool
    def search(q: str) -> str:
        """Search."""
        return f"hits for {q}"

    def step(n: int, item: Any) -> ModelStep:
        def respond(call: Any) -> list[Any]:
            answered.append(n)
            if n == 2:
                stop_during("kill", tmp_path, session)
            return [item]

        return ModelStep(responder=respond)

    class Model(ScriptedModel):
        model = MODEL

    steps = [step(i + 1, function_call("search", {"q": f"q{i + 1}"}, call_id=f"c{i}")) for i in range(3)]
    agent: Agent[Any] = Agent(
        name="researcher",
        model=Model([*steps, step(4, assistant_message("done"))], default_usage=usage),
        tools=[search],
    )
    try:
        with pytest.raises(Stopped) as stopped:
            Runner.run_sync(agent, "research", hooks=HeartbeatHooks(session), max_turns=20)
    finally:
        session.close()
    assert stopped.value.cause == "killed" and answered == [1, 2]
    assert_both_calls_counted(tmp_path, "killed")


def test_an_otel_chat_span_that_ends_after_kill_is_counted(tmp_path: Path) -> None:
    """The OpenTelemetry processor only watches (it never stops the agent): a chat span that ends
    after KILL is spend all the same."""
    from opentelemetry.sdk.trace import TracerProvider

    from heartbeat.integrations.otel import ToolSpanProcessor

    session = folder_session(tmp_path, idle=30.0)
    provider = TracerProvider()
    processor = ToolSpanProcessor(session)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("test")
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": MODEL,
        "gen_ai.usage.input_tokens": INPUT,
        "gen_ai.usage.output_tokens": OUTPUT,
        "gen_ai.usage.cache_read.input_tokens": CACHED,
    }
    try:
        with tracer.start_as_current_span("chat gpt-4o-mini", attributes=attributes):
            pass
        with tracer.start_as_current_span("chat gpt-4o-mini", attributes=attributes):
            stop_during("kill", tmp_path, session)
        provider.shutdown()
    finally:
        session.close()
    assert processor.model_calls == 2
    assert_both_calls_counted(tmp_path, "killed")


# -- a step bound to its tick's ctx, abandoned on KILL, that comes back after a model call


def test_a_step_abandoned_on_kill_keeps_the_spend_of_its_model_calls(tmp_path: Path) -> None:
    """Regression: a step that came back after KILL abandoned it had its actions journaled, but the
    spend of its model calls (the one in flight at KILL too) was dropped with the tick's work.
    What it spent before and after it was abandoned is each counted once."""
    from conftest import heartbeat_over
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.usage import RequestUsage

    from heartbeat.integrations.pydantic_ai import HeartbeatCapability

    def abandoned() -> bool:
        path = tmp_path / "state" / "journal.jsonl"
        return path.exists() and any(e.get("abandoned") for e in journal(tmp_path))

    requests: list[int] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        requests.append(len(messages))
        if len(requests) == 2:  # a slow request: KILL comes, and the watchdog gives up on the step
            (tmp_path / "KILL").write_text("stop mid-call\n")
            wait_until(abandoned, what="the step to be abandoned")
        usage = RequestUsage(input_tokens=INPUT, output_tokens=OUTPUT, cache_read_tokens=CACHED)
        return ModelResponse(parts=[ToolCallPart("search", {"q": f"query {len(requests)}"})], usage=usage)

    def search(q: str) -> str:
        """Search."""
        return f"hits for {q}"

    causes: list[str] = []

    def step(ctx: Any) -> None:
        agent = Agent(FunctionModel(model, model_name=MODEL), tools=[search])
        try:
            agent.run_sync("research", capabilities=[HeartbeatCapability(ctx)])
        except Stopped as exc:
            causes.append(exc.cause)

    result = heartbeat_over(tmp_path, step).tick()
    assert result.outcome == "killed" and "abandoned" in result.message
    assert causes == ["killed"] and len(requests) == 2
    state = saved(tmp_path)
    assert state["ticks"] == 0 and state["data"] == {}  # the tick's own work is still dropped
    assert state["budget"]["tokens"] == 2 * PER_CALL and state["spend_totals"][MODEL]["calls"] == 2
    # Counted once each: what it spent before it was abandoned, then what it spent after.
    late = [(e["after_stop"], e["tokens"]) for e in journal(tmp_path) if e["event"] == "spend"]
    assert late == [("killed", PER_CALL), ("killed", PER_CALL)]
    actions = [(e["tool"], e["after_stop"]) for e in journal(tmp_path) if e["event"] == "action"]
    assert actions == [("search", "killed")]  # journaled as it was abandoned, not again


HANGS_IN_A_MODEL_CALL = '''
import pathlib, time

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.usage import RequestUsage

from heartbeat.integrations.pydantic_ai import HeartbeatCapability


def step(ctx):
    here = pathlib.Path(ctx.base_dir)

    def model(messages, info):
        if len(messages) > 1:  # its second request never comes back (a hung connection)
            (here / "hanging").write_text("")
            while True:
                time.sleep(0.05)
        usage = RequestUsage(input_tokens=100, output_tokens=20, cache_read_tokens=40)
        return ModelResponse(parts=[ToolCallPart("search", {"q": "heartbeat"})], usage=usage)

    def search(q: str) -> str:
        """Search."""
        return f"3 hits for {q}"

    agent = Agent(FunctionModel(model, model_name="gpt-4o-mini"), tools=[search])
    agent.run_sync("research", capabilities=[HeartbeatCapability(ctx)])
'''


def _killed_while_hanging(tmp_path: Path, source: str, what: str) -> tuple[str, str]:
    """`heartbeat tick` of the step ``source``, KILL written once ``what`` hangs (it writes
    ``hanging``): exit 3; the tick's output and errors."""
    agent = make_agent(tmp_path, source)
    proc = agent.spawn("tick")
    try:
        wait_until(lambda: (tmp_path / "hanging").exists(), what=f"{what} to hang", proc=proc)
        agent.kill.write_text("stop now\n")
        assert proc.wait(timeout=30) == 3
    finally:
        if proc.poll() is None:
            proc.kill()
        out, err = proc.communicate()
    return out, err


def test_a_step_abandoned_on_kill_leaves_its_calls_journaled_and_its_spend_counted(tmp_path: Path) -> None:
    """Regression: `heartbeat tick` exits at once when KILL abandons a step hung in a model call, and
    the tool call and the model call that step had made (recorded in its ctx) were in neither
    state.json nor the journal: they ran, and were paid for, unseen."""
    out, err = _killed_while_hanging(tmp_path, HANGS_IN_A_MODEL_CALL, "the model call")
    assert "abandoned" in out, (out, err)
    actions = [(e["tool"], e["after_stop"]) for e in journal(tmp_path) if e["event"] == "action"]
    assert actions == [("search", "killed")]
    [late] = [e for e in journal(tmp_path) if e["event"] == "spend"]
    assert late["after_stop"] == "killed" and late["tokens"] == PER_CALL
    state = saved(tmp_path)
    assert state["budget"]["tokens"] == PER_CALL and state["spend_totals"][MODEL]["calls"] == 1
    assert state["ticks"] == 0 and state["history"] == []  # the tick itself is still dropped
    # The request it hung in was sent and paid for: journaled, its tokens never known (live round 41).
    sent = [(e["model"], e["after_stop"]) for e in journal(tmp_path) if e["event"] == "model_in_flight"]
    assert sent == [(MODEL, "killed")]


HANGS_IN_A_LANGCHAIN_MODEL_CALL = """
import pathlib, time

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

from heartbeat.integrations.langchain import HeartbeatCallbackHandler


class Slow(FakeMessagesListChatModel):
    def _generate(self, messages, stop=None, run_manager=None, **kw):
        (pathlib.Path(self.responses[0].content) / "hanging").write_text("")
        while True:  # the call is sent and never answers (a hung connection)
            time.sleep(0.05)


def step(ctx):
    model = Slow(responses=[AIMessage(content=str(ctx.base_dir))])
    model.invoke("hello", config={"callbacks": [HeartbeatCallbackHandler(ctx)]})
"""


def test_a_step_abandoned_on_kill_journals_the_langchain_model_call_it_was_in(tmp_path: Path) -> None:
    """Regression (live round 41): KILL abandoned a LangGraph step while its model call was under
    way, and nothing in the journal or the spend said a call had been sent. It is journaled now."""
    out, err = _killed_while_hanging(tmp_path, HANGS_IN_A_LANGCHAIN_MODEL_CALL, "the model call")
    sent = [e for e in journal(tmp_path) if e["event"] == "model_in_flight"]
    assert [e["after_stop"] for e in sent] == ["killed"], (out, err)


HANGS_IN_A_TOOL_CALL = '''
import pathlib, time

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel

from heartbeat.integrations.pydantic_ai import HeartbeatCapability


def step(ctx):
    here = pathlib.Path(ctx.base_dir)

    def model(messages, info):
        if len(messages) > 3:
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("fetch", {"record_id": len(messages) // 2 + 1})])

    def fetch(record_id: int) -> str:
        """Fetch one record."""
        if record_id == 2:  # the second call never comes back (a hung connection)
            (here / "hanging").write_text("")
            while True:
                time.sleep(0.05)
        return f"record {record_id}"

    agent = Agent(FunctionModel(model, model_name="gpt-4o-mini"), tools=[fetch])
    agent.run_sync("crawl", capabilities=[HeartbeatCapability(ctx)])
'''


def test_a_step_abandoned_on_kill_journals_the_tool_call_it_was_in_as_one_that_may_have_run(
    tmp_path: Path,
) -> None:
    """Regression: KILL abandoned a step whose PydanticAI run bound to ``ctx`` was inside a tool
    call; the finished call was journaled, the one under way was not there at all, though it may
    have acted (live round 40). It is journaled now, its error saying it may have run."""
    out, err = _killed_while_hanging(tmp_path, HANGS_IN_A_TOOL_CALL, "the tool call")
    actions = [e for e in journal(tmp_path) if e["event"] == "action"]
    assert [(e["summary"], e["error"], e["after_stop"]) for e in actions] == [
        ('fetch({"record_id":1})', None, "killed"),
        ('fetch({"record_id":2})', INTERRUPTED, "killed"),
    ], (out, err)


WAITS_AFTER_ITS_CALLS = """
import pathlib, time


def step(ctx):
    ctx.record("search", {"q": "heartbeat"}, output="3 hits")
    ctx.record_usage("gpt-4o-mini", 100, 20, 40)
    (pathlib.Path(ctx.base_dir) / "waiting").write_text("")
    while True:  # a long step, stopped by the signal (it unwinds: no except of its own)
        time.sleep(0.05)
"""


def test_a_tick_ended_by_sigterm_leaves_its_calls_journaled_and_its_spend_counted(tmp_path: Path) -> None:
    """Regression: SIGTERM ended `heartbeat tick` through the step (exit 143, the tick's work not
    saved), and the calls the step had made were in neither state.json nor the journal."""
    sigterm_tick(tmp_path, WAITS_AFTER_ITS_CALLS, "waiting")
    assert_accounted_once(tmp_path)
    assert any(e["event"] == "interrupted" for e in journal(tmp_path))


IGNORES_SIGTERM = """
import pathlib, time


def step(ctx):
    here = pathlib.Path(ctx.base_dir)
    ctx.record("search", {"q": "heartbeat"}, output="3 hits")
    ctx.record_usage("gpt-4o-mini", 100, 20, 40)
    while True:  # a step that does not unwind: its `except BaseException` swallows the signal
        try:
            # The marker is written inside the `try`: the test signals once it exists, and a
            # signal handled before the `try` would unwind the step after all.
            (here / "waiting").write_text("")
            while True:
                time.sleep(0.05)
        except BaseException:
            (here / "swallowed").write_text("")
"""


def test_a_tick_whose_step_does_not_unwind_on_sigterm_leaves_its_calls_journaled_and_counted(
    tmp_path: Path,
) -> None:
    """Regression: SIGTERM, and a step that swallows it: `heartbeat tick` ends the process half a
    second later (exit 143, "the step did not unwind") and journaled only `interrupted`; the tool
    and model calls the step had made were in neither state.json nor the journal. Now each is
    journaled once, marked `after_stop: interrupted`, and the spend counted, as on KILL."""
    err = sigterm_tick(tmp_path, IGNORES_SIGTERM, "waiting")
    assert (tmp_path / "swallowed").exists() and "the step did not unwind" in err, err
    assert_accounted_once(tmp_path)
    state = saved(tmp_path)
    assert state["budget"]["tokens"] == PER_CALL and state["spend_totals"][MODEL]["calls"] == 1
    assert state["ticks"] == 0 and state["history"] == []  # the tick itself is still dropped
    assert [e["abandoned"] for e in journal(tmp_path) if e["event"] == "interrupted"] == [True]


MEASURED_SLOWLY = """
import pathlib, time


def step(ctx):
    ctx.record("search", {"q": "heartbeat"}, output="3 hits")
    ctx.record_usage("gpt-4o-mini", 100, 20, 40)
    ctx.data["stepped"] = True


def progress(ctx):  # a metric that takes its time (one that runs the test suite, say)
    if not ctx.data.get("stepped"):  # the baseline before the first step: quick
        return 0.0
    here = pathlib.Path(ctx.base_dir)
    (here / "measuring").write_text("")
    while not (here / "measured").exists():
        time.sleep(0.05)
    return 1.0
"""


def test_a_tick_ended_by_sigterm_after_its_step_returned_leaves_its_calls_journaled_and_counted(
    tmp_path: Path,
) -> None:
    """Regression: SIGTERM while the progress metric measured (the step had returned, the tick was
    not saved yet) ended `heartbeat tick` with exit 143, and the calls the step had made were in
    neither state.json nor the journal: only a signal inside the step itself accounted for them."""
    sigterm_tick(
        tmp_path, MEASURED_SLOWLY, "measuring", "--progress", "agent_mod:progress", release="measured"
    )
    assert_accounted_once(tmp_path)
    assert saved(tmp_path)["ticks"] == 0


def test_a_run_aborted_by_a_second_sigterm_leaves_its_running_steps_calls_journaled_and_counted(
    tmp_path: Path,
) -> None:
    """Regression: `heartbeat run` aborted by a second SIGTERM leaves the tick whose step is still
    running behind (exit 143, journaled as left running), and the calls that step had made were in
    neither state.json nor the journal."""
    import subprocess
    import sys

    agent = make_agent(tmp_path, WAITS_AFTER_ITS_CALLS)
    with open(tmp_path / "stderr", "w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "heartbeat", "run", *agent.flags(), "--every", "1h"],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        wait_until(lambda: (tmp_path / "waiting").exists(), what="the step to wait", proc=proc)
        proc.send_signal(signal.SIGTERM)
        wait_until(lambda: "stopping" in (tmp_path / "stderr").read_text(), what="the first SIGTERM")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 143
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert_accounted_once(tmp_path)
    assert [e.get("note") for e in journal(tmp_path) if e["event"] == "kill"] == ["the tick was left running"]
