"""An LLM agent: any OpenAI-compatible chat endpoint, function calling, one note per heartbeat.

Configured from the environment (never from heartbeat.toml, so no secret
lands in a file):

    OPENAI_BASE_URL   default https://api.openai.com/v1 (Ollama, vLLM, LM Studio,
                      llama.cpp and OpenRouter speak the same API)
    OPENAI_API_KEY    sent as a Bearer token; never printed, recorded or saved
    OPENAI_MODEL      default gpt-4o-mini
    LLM_USD_PER_1M_TOKENS  optional price, so heartbeat's [budget] cost_per_day
                      can stop a run-away agent (default 0: costs not tracked)

Each heartbeat is one short conversation: the system prompt carries the goal
and heartbeat's instructions (recovery text, or a human's note after
``heartbeat resume --note``), the user message lists the notes written so far.
The model may call three tools over the library/ folder beside this file:
``search``, ``read_file`` and ``write_note``. Every tool call is recorded with
``ctx.record`` (name, parsed arguments, output or error); when the recorder
says the agent is stuck, the heartbeat ends at once and the next one starts
with recovery instructions. A failing endpoint is an errored action, not a
crash: the next heartbeat is the retry, and heartbeat's ``error_rate``
detector escalates an endpoint that keeps failing.

Try it offline against the fake server::

    python examples/llm_agent/fake_server.py        # prints its URL
    cd examples/llm_agent && OPENAI_BASE_URL=http://127.0.0.1:PORT/v1 heartbeat run --ticks 4
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

if TYPE_CHECKING:
    from heartbeat.tick.context import StepContext

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
LIBRARY = Path("library")  # relative to heartbeat.toml's folder
MAX_TURNS = 8  # model round trips per heartbeat: a hard stop even if no detector fires
# A slow model is normal; a hung connection is not. The heartbeat's exec or
# schedule has its own limits, but an in-process step must bound itself.
TIMEOUT = httpx.Timeout(60.0, connect=10.0)
INSTRUCTIONS_HEADING = "Instructions from the heartbeat supervising you (follow them first):"

SYSTEM_PROMPT = """\
You are a research assistant that wakes up on a schedule. Your goal: build a
set of short notes on keeping scheduled AI agents from getting stuck, using
only the documents in the library. Each time you wake up, add exactly one new
note on a topic not covered yet: find a document (search), read it
(read_file), then save one note (write_note). Then reply with one sentence."""

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search the library; returns matching document paths with their titles.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string", "description": "a few keywords"}},
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a library document by the path search returned.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "write_note",
            "description": "Save one note (a title and a few sentences).",
            "parameters": {
                "type": "object",
                "properties": {"title": {"type": "string"}, "text": {"type": "string"}},
                "required": ["title", "text"],
            },
        },
    },
]


class ChatError(Exception):
    """The endpoint failed or answered something that is not a chat completion."""


class ToolError(Exception):
    """A tool call the agent refuses or cannot do; the model sees the message."""


# -- the endpoint


def endpoint_name(base_url: str) -> str:
    """The base URL with its path and query cut off, safe to show in errors and logs."""
    parts = urlsplit(base_url)
    return f"{parts.scheme}://{parts.hostname or '?'}" + (f":{parts.port}" if parts.port else "")


def chat(
    client: httpx.Client, base_url: str, model: str, messages: list[dict[str, Any]], key: str | None
) -> dict[str, Any]:
    """One chat completion with tools; its ``choices[0].message`` and ``usage``."""
    where = endpoint_name(base_url)
    try:
        response = client.post(
            f"{base_url}/chat/completions",
            json={
                "model": model,
                "messages": messages,
                "tools": TOOLS,
                "tool_choice": "auto",
                "temperature": 0,
            },
        )
    except httpx.TimeoutException:
        raise ChatError(f"{where} did not answer within the timeout") from None
    except httpx.HTTPError as exc:
        raise ChatError(f"cannot reach {where}: {type(exc).__name__}") from None
    if response.status_code >= 400:
        detail = response.text[:200]
        if key:
            detail = detail.replace(key, "***")  # some endpoints echo the key they refused
        raise ChatError(f"HTTP {response.status_code} from {where}: {detail}")
    try:
        body = response.json()
        message = body["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise ChatError(f"{where} answered something that is not a chat completion") from None
    if not isinstance(message, dict):
        raise ChatError(f"{where} answered a message that is not an object")
    return {"message": message, "usage": body.get("usage") or {}}


# -- the tools


def tool_search(library: Path, query: str) -> str:
    """Documents whose text contains the query's words, best first."""
    words = {w for w in re.findall(r"[a-z]{3,}", query.lower())}
    if not words:
        raise ToolError("the query needs at least one word of three letters or more")
    scored = []
    for doc in sorted(library.glob("*.md")):
        text = doc.read_text(encoding="utf-8").lower()
        score = sum(text.count(w) for w in words)
        if score:
            title = doc.read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip()
            scored.append((-score, doc.name, title))
    return "\n".join(f"{name}: {title}" for _, name, title in sorted(scored)[:3]) or "no results"


def tool_read_file(library: Path, path: str) -> str:
    """A library document; nothing outside the library can be read."""
    target = (library / path).resolve()
    if not target.is_relative_to(library.resolve()) or not target.is_file():
        raise ToolError(f"no document {path!r} in the library")
    return target.read_text(encoding="utf-8")[:4000]


def tool_write_note(ctx: StepContext, title: str, text: str) -> str:
    """Save a note in the agent's data (the progress metric counts them)."""
    title, text = title.strip(), text.strip()
    if not title or not text:
        raise ToolError("a note needs a title and a text")
    notes: list[dict[str, str]] = ctx.data.setdefault("notes", [])
    if any(n["title"].lower() == title.lower() for n in notes):
        raise ToolError(f"there is already a note titled {title!r}")
    notes.append({"title": title, "text": text[:1000]})
    # A readable copy for humans; state.json stays the source of truth. Private
    # like every other file in the state folder.
    rendered = "".join(f"## {n['title']}\n\n{n['text']}\n\n" for n in notes)
    copy = ctx.state_dir / "notes.md"
    copy.touch(mode=0o600, exist_ok=True)
    copy.write_text(rendered, encoding="utf-8")
    return f"saved note {len(notes)}: {title}"


def run_tool(ctx: StepContext, name: str, args: dict[str, Any]) -> str:
    """Run one tool call; ToolError for anything the model got wrong."""
    library = ctx.base_dir / LIBRARY
    try:
        if name == "search":
            return tool_search(library, str(args["query"]))
        if name == "read_file":
            return tool_read_file(library, str(args["path"]))
        if name == "write_note":
            return tool_write_note(ctx, str(args["title"]), str(args["text"]))
    except KeyError as exc:
        raise ToolError(f"{name}: missing argument {exc.args[0]!r}") from None
    raise ToolError(f"no tool named {name!r}")


# -- the step


def prompts(ctx: StepContext) -> list[dict[str, Any]]:
    """The system and user messages of this heartbeat's conversation."""
    system = SYSTEM_PROMPT
    if ctx.instructions:
        system += f"\n\n{INSTRUCTIONS_HEADING}\n{ctx.instructions}"
    notes = ctx.data.get("notes", [])
    titles = "".join(f"\n- {n['title']}" for n in notes) or "\n(none yet)"
    user = f"Notes so far: {len(notes)}{titles}\n\nWrite the next note."
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def step(ctx: StepContext) -> None:
    """One heartbeat: one conversation of at most MAX_TURNS model calls."""
    base_url = (os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    key = os.environ.get("OPENAI_API_KEY") or None
    model = os.environ.get("OPENAI_MODEL") or DEFAULT_MODEL
    price = float(os.environ.get("LLM_USD_PER_1M_TOKENS", "0") or 0) / 1_000_000
    if ctx.instructions:
        print(f"  [llm agent] heartbeat instructions go into the prompt: {ctx.instructions.splitlines()[0]}")

    messages = prompts(ctx)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    with httpx.Client(timeout=TIMEOUT, headers=headers) as client:
        for _ in range(MAX_TURNS):
            if ctx.killed:
                return  # a KILL file appeared mid-step: stop spending now
            try:
                reply = chat(client, base_url, model, messages, key)
            except ChatError as exc:
                ctx.record("chat", {"model": model}, error=str(exc))
                return
            message, usage = reply["message"], reply["usage"]
            cost = price * float(usage.get("total_tokens") or 0)
            calls = message.get("tool_calls") or []
            # The assistant turn goes back into the conversation as it came,
            # so every tool result below answers one of its tool_call ids.
            messages.append(
                {
                    "role": "assistant",
                    "content": message.get("content"),
                    **({"tool_calls": calls} if calls else {}),
                }
            )
            if not calls:
                answer = str(message.get("content") or "").strip()
                ctx.record("answer", {}, output=answer, cost=cost)
                print(f"  [llm agent] {answer}")
                return
            for call in calls:
                function = call.get("function") or {}
                name = str(function.get("name") or "?")
                args: dict[str, Any] = {}
                try:
                    parsed = json.loads(function.get("arguments") or "{}")
                    if not isinstance(parsed, dict):
                        raise ToolError("the arguments are not a JSON object")
                    args = parsed
                    output, error = run_tool(ctx, name, args), None
                except (ValueError, ToolError, OSError) as exc:  # bad JSON, a bad call, a bad file
                    output, error = None, str(exc)
                # The completion's cost is charged to the first action it produced.
                hit = ctx.record(name, args, output=output, error=error, cost=cost)
                cost = 0.0
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call.get("id", ""),
                        "content": output if error is None else f"error: {error}",
                    }
                )
                if hit:
                    print(f"  [llm agent] heartbeat flagged {name}: {hit.kind}; ending this heartbeat")
                    return
