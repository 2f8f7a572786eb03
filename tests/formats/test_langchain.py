"""The ``langchain`` import format: ``messages_to_dict`` dumps and LangGraph state.

The samples come from a real LangGraph graph (a fake chat model that
scripts its tool calls, a ``ToolNode`` running real tools and turning a
raised exception into a ``ToolMessage`` with status ``error``), dumped
with ``langchain_core.messages.messages_to_dict``, ``dumpd`` and
``model_dump``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from _formats import assert_no_collision, kinds, refused_by_cli, replay_cli, write
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.load import dumpd
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, messages_to_dict
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from heartbeat.formats import detect_format, load_actions

CITIES = ["Paris", "Rome", "Oslo", "Lima", "Cairo"]


@tool
def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"{city}: {len(city) * 4} degrees"


@tool
def book(amount: int) -> str:
    """Book the flight, paying ``amount``."""
    raise ValueError("payment amount does not add up")


class ScriptedChat(FakeMessagesListChatModel):
    """The fake chat model, accepting tools as a real one does."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChat:
        """The same model: the script already knows its tool calls."""
        return self


def run(replies: list[AIMessage], history: list[BaseMessage]) -> list[BaseMessage]:
    """A ReAct graph (model, then tools while it calls some) over scripted replies: the final messages."""
    model = ScriptedChat(responses=list[BaseMessage](replies))

    def think(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", think)
    graph.add_node("tools", ToolNode([weather, book], handle_tool_errors=True))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    start: Any = {"messages": history}
    messages: list[BaseMessage] = graph.compile().invoke(start)["messages"]
    return messages


def calls(name: str, args: list[dict[str, Any]]) -> list[AIMessage]:
    """One AI message per call of ``name``."""
    return [
        AIMessage(content="", tool_calls=[{"name": name, "args": a, "id": f"call_{i}"}])
        for i, a in enumerate(args)
    ]


def healthy_messages() -> list[BaseMessage]:
    """Five lookups, an answer, the user's reply and a second graph run's answer."""
    first = run(
        [*calls("weather", [{"city": c} for c in CITIES]), AIMessage("Lima. Book it?")],
        [HumanMessage("Warm?")],
    )
    return run([AIMessage("Fine.")], [*first, HumanMessage("No.")])


def stuck_messages() -> list[BaseMessage]:
    """The same booking, failing in the tool each time, six times."""
    return run([*calls("book", [{"amount": 900}] * 6), AIMessage("It fails.")], [HumanMessage("Book it.")])


def test_a_real_graph_run_is_detected_and_read(tmp_path: Path) -> None:
    """messages_to_dict: calls paired with tool messages by id, an answer followed by the user is respond."""
    dump = messages_to_dict(healthy_messages())
    assert detect_format(dump) == "langchain"
    actions = load_actions(tmp_path / "x.json", dump, "langchain")
    assert [a["tool"] for a in actions] == ["weather"] * 5 + ["respond"]
    assert actions[2] == {
        "tool": "weather",
        "args": {"city": "Oslo"},
        "output": "Oslo: 16 degrees",
        "error": None,
    }
    assert actions[-1] == {
        "tool": "respond",
        "args": {"content": "Lima. Book it?"},
        "output": "No.",
        "error": None,
    }


def test_a_tool_that_raised_is_an_error_and_so_is_an_invalid_call(tmp_path: Path) -> None:
    """ToolNode's status error fails the call; an invalid_tool_calls entry fails with its own error."""
    actions = load_actions(tmp_path / "x.json", messages_to_dict(stuck_messages()), "langchain")
    assert len(actions) == 6 and {a["error"] for a in actions} == {"tool_error"}
    assert str(actions[0]["output"]).startswith("Error: ValueError('payment amount does not add up')")
    invalid = AIMessage(
        content="",
        invalid_tool_calls=[
            {
                "name": "book",
                "args": '{"amount": 9',
                "id": "x",
                "error": "bad JSON",
                "type": "invalid_tool_call",
            }
        ],
    )
    assert load_actions(tmp_path / "x.json", messages_to_dict([invalid]), "langchain") == [
        {"tool": "book", "args": {"raw": '{"amount": 9'}, "output": "bad JSON", "error": "invalid_tool_call"}
    ]


def test_langgraph_state_and_the_other_dumps_read_the_same(tmp_path: Path) -> None:
    """{"messages": ...}, a server's {"values": {"messages": ...}}, dumpd and model_dump: the same actions."""
    messages = stuck_messages()
    expected = load_actions(tmp_path / "x.json", messages_to_dict(messages), "langchain")
    for data in (
        {"messages": messages_to_dict(messages)},
        {"values": {"messages": [m.model_dump() for m in messages]}, "next": []},
        [dumpd(m) for m in messages],
    ):
        assert detect_format(data) == "langchain"
        assert load_actions(tmp_path / "x.json", data, "langchain") == expected


def test_no_other_format_claims_it_and_it_claims_no_other() -> None:
    """The ai/tool/human message types tell it from every other history."""
    assert_no_collision("langchain", messages_to_dict(healthy_messages()))
    assert_no_collision("langchain", {"messages": [m.model_dump() for m in stuck_messages()]})


def test_the_cli_escalates_the_stuck_run_and_not_the_healthy_one(tmp_path: Path) -> None:
    """heartbeat replay --json --per-heartbeat 2 in a real process, the format detected from the file."""
    stuck = replay_cli(
        tmp_path,
        write(tmp_path / "stuck.json", {"messages": messages_to_dict(stuck_messages())}),
        "--per-heartbeat",
        "2",
    )
    assert "recurring_error" in kinds(stuck) or "repeat" in kinds(stuck)
    assert stuck[-1]["decision"] == "escalate"
    ok = write(tmp_path / "ok.json", messages_to_dict(healthy_messages()))
    healthy = replay_cli(tmp_path, ok, "--per-heartbeat", "2", "--format", "langchain")
    assert kinds(healthy) == [] and {row["decision"] for row in healthy} == {"continue"}
    assert len(healthy) == 3


def test_a_malformed_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """A message of no LangChain type, detected or forced, is refused in one line."""
    dump = messages_to_dict(stuck_messages())
    dump[2] = {"type": "ai", "data": "oops"}
    assert "message 3 is not a LangChain message" in refused_by_cli(
        tmp_path, write(tmp_path / "bad.json", dump)
    )
    other = write(tmp_path / "other.json", [{"role": "user", "content": "hi"}])
    assert "not a langchain file" in refused_by_cli(tmp_path, other, "--format", "langchain")
