"""The ``pydantic-ai`` import format: message histories dumped with ``ModelMessagesTypeAdapter``.

Every sample is made by the real pydantic-ai package: a ``FunctionModel``
scripting the calls of a healthy run, a ``TestModel`` calling a tool that
raises ``ModelRetry`` until the run gives up (the messages kept with
``capture_run_messages``), and the ``RetryPromptPart`` older versions
wrote, all dumped with ``ModelMessagesTypeAdapter.dump_json``.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from _formats import assert_no_collision, kinds, refused_by_cli, replay_cli, write
from pydantic_ai import Agent, ModelRetry, capture_run_messages
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from heartbeat.formats import detect_format, load_actions

CITIES = ["Paris", "Rome", "Oslo", "Lima", "Cairo"]


def dumped(messages: list[ModelMessage]) -> Any:
    """The history as the user's file holds it: ``ModelMessagesTypeAdapter.dump_json``, read back."""
    return json.loads(ModelMessagesTypeAdapter.dump_json(messages))


def agent(model: Any) -> Agent[None, str]:
    """An agent with a tool that returns and a tool that raises ModelRetry."""
    made: Agent[None, str] = Agent(model, retries=6)

    @made.tool_plain
    def weather(city: str) -> str:
        """Today's weather in a city."""
        return f"{city}: {len(city) * 4} degrees"

    @made.tool_plain
    def book(amount: int) -> str:
        """Book the flight, paying ``amount``."""
        raise ModelRetry("payment amount does not add up")

    return made


def healthy_history() -> Any:
    """Five weather lookups by a scripted model, an answer, the user's reply, a second run's answer."""
    turns = iter(
        [
            ModelResponse(parts=[ToolCallPart("weather", {"city": c}, tool_call_id=f"w{i}")])
            for i, c in enumerate(CITIES)
        ]
        + [
            ModelResponse(parts=[TextPart("Lima is warmest. Book it?")]),
            ModelResponse(parts=[TextPart("Done.")]),
        ]
    )

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return next(turns)

    runner = agent(FunctionModel(script))
    first = runner.run_sync("Where is it warm?")
    second = runner.run_sync("No, thanks.", message_history=first.all_messages())
    return dumped(second.all_messages())


def stuck_history() -> Any:
    """TestModel calls both tools, then retries the failing booking until the run gives up."""
    with capture_run_messages() as messages, pytest.raises(UnexpectedModelBehavior):
        agent(TestModel()).run_sync("Book the 3 pm flight.")
    return dumped(messages)


def test_a_real_history_is_detected_and_read(tmp_path: Path) -> None:
    """Calls paired with returns by id, an answer followed by the user's next prompt is respond."""
    history = healthy_history()
    assert detect_format(history) == "pydantic-ai"
    actions = load_actions(tmp_path / "x.json", history, "pydantic-ai")
    assert [a["tool"] for a in actions] == ["weather"] * 5 + ["respond"]
    assert actions[1] == {
        "tool": "weather",
        "args": {"city": "Rome"},
        "output": "Rome: 16 degrees",
        "error": None,
    }
    assert actions[-1] == {
        "tool": "respond",
        "args": {"content": "Lima is warmest. Book it?"},
        "output": "No, thanks.",
        "error": None,
    }


def test_a_retried_call_is_an_error_named_by_its_cause(tmp_path: Path) -> None:
    """ModelRetry is model_retry, arguments that fail validation are validation_error; a return is fine."""
    actions = load_actions(tmp_path / "x.json", stuck_history(), "pydantic-ai")
    assert actions[0]["tool"] == "weather" and actions[0]["error"] is None
    booked = [a for a in actions if a["tool"] == "book"]
    assert len(booked) >= 6
    assert {a["error"] for a in booked[:-1]} == {"model_retry"}
    assert {a["output"] for a in booked[:-1]} == {"payment amount does not add up"}
    assert booked[-1]["output"] is None and booked[-1]["error"] is None  # the run gave up: never answered
    assert booked[0]["args"] == {"amount": 0}

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("weather", '{"city": 5}', tool_call_id="v")])
        return ModelResponse(parts=[TextPart("ok")])

    actions = load_actions(
        tmp_path / "x.json", dumped(agent(FunctionModel(script)).run_sync("x").all_messages()), "pydantic-ai"
    )
    assert actions[0]["error"] == "validation_error" and "valid string" in str(actions[0]["output"])


def test_the_retry_prompt_part_of_older_versions_is_an_error(tmp_path: Path) -> None:
    """A retry-prompt part answering a call fails it; its text or its validation errors are the output."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated, and what older versions wrote
        retry = RetryPromptPart("card declined", tool_name="pay", tool_call_id="p1")
    history = dumped(
        [
            ModelResponse(parts=[ToolCallPart("pay", {"card": "4242"}, tool_call_id="p1")]),
            ModelRequest(parts=[retry]),
        ]
    )
    assert history[1]["parts"][0]["part_kind"] == "retry-prompt"
    assert load_actions(tmp_path / "x.json", history, "pydantic-ai") == [
        {"tool": "pay", "args": {"card": "4242"}, "output": "card declined", "error": "model_retry"}
    ]


def test_a_providers_builtin_tool_is_an_action_too(tmp_path: Path) -> None:
    """A builtin (native) tool's call and return, both in the model's response, pair by id."""
    history = dumped(
        [
            ModelResponse(
                parts=[
                    NativeToolCallPart(
                        "web_search", {"query": "x"}, tool_call_id="s1", provider_name="anthropic"
                    ),
                    NativeToolReturnPart(
                        "web_search", [{"title": "A"}], tool_call_id="s1", provider_name="anthropic"
                    ),
                    TextPart("Found A."),
                ]
            )
        ]
    )
    assert history[0]["parts"][0]["part_kind"] == "builtin-tool-call"
    assert load_actions(tmp_path / "x.json", history, "pydantic-ai") == [
        {"tool": "web_search", "args": {"query": "x"}, "output": '[{"title":"A"}]', "error": None}
    ]


def test_no_other_format_claims_it_and_it_claims_no_other() -> None:
    """kind and parts tell it from every other history."""
    assert_no_collision("pydantic-ai", healthy_history())
    assert_no_collision("pydantic-ai", stuck_history())


def test_the_cli_escalates_the_stuck_run_and_not_the_healthy_one(tmp_path: Path) -> None:
    """heartbeat replay --json --per-heartbeat 2 in a real process, the format detected from the file."""
    stuck = replay_cli(tmp_path, write(tmp_path / "stuck.json", stuck_history()), "--per-heartbeat", "2")
    assert "recurring_error" in kinds(stuck) or "repeat" in kinds(stuck)
    assert stuck[-1]["decision"] == "escalate"
    healthy = replay_cli(
        tmp_path,
        write(tmp_path / "ok.json", healthy_history()),
        "--per-heartbeat",
        "2",
        "--format",
        "pydantic-ai",
    )
    assert kinds(healthy) == [] and {row["decision"] for row in healthy} == {"continue"}
    assert len(healthy) == 3


def test_a_malformed_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """Parts that are not a list, detected or forced, are refused in one line."""
    history = healthy_history()
    history[1]["parts"] = {"part_kind": "tool-call"}
    history[3]["parts"] = "oops"
    assert "no list of parts" in refused_by_cli(tmp_path, write(tmp_path / "bad.json", history))
    other = write(tmp_path / "other.json", [{"role": "user", "content": "hi"}])
    assert "not a pydantic-ai file" in refused_by_cli(tmp_path, other, "--format", "pydantic-ai")
