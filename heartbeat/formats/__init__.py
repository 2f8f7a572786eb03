"""Import formats for ``heartbeat replay``: real agent histories turned into recorded actions.

Each format is one module with a ``NAME``, a ``sniff(data) -> bool`` that
recognises its parsed JSON, and an ``actions(data) -> list[Action]``.
:data:`FORMATS` is the registry (a new format adds one module and one line,
name to module); :func:`load_actions` picks the format (``--format``, else
the first whose ``sniff`` accepts the file: its first line, the whole
document, or the list of its lines for JSON Lines, see
:func:`heartbeat.replay.trace.load_any`). The project's own trace format (one
JSON object per heartbeat) stays in :mod:`heartbeat.replay.trace`. A format
that knows its heartbeats (``otlp``: one per trace) also has ``ticks(data)``,
used unless ``--per-heartbeat`` regroups; the project's own journal is read
as its heartbeats by :mod:`heartbeat.replay.journal`. Used by
:mod:`heartbeat.replay` and :mod:`heartbeat.integrations.otel`; may import
only :mod:`heartbeat.base`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from importlib import import_module
from pathlib import Path
from types import ModuleType
from typing import Any

from ..base.errors import TraceError, UsageError
from ..base.fsutil import read_regular
from .common import Action

__all__ = ["FORMATS", "Action", "detect_format", "load_actions", "misfit", "read_json"]


class _Registry(Mapping[str, ModuleType]):
    """Format modules by name, each imported when first asked for.

    Lazy, so ``python -m heartbeat.formats.otlp`` (a format module run as a
    script) is not imported twice, and a replay of the project's own trace
    format imports no format at all.
    """

    def __init__(self, modules: dict[str, str]) -> None:
        self._modules = modules

    def __getitem__(self, name: str) -> ModuleType:
        return import_module(self._modules[name], __name__)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)


FORMATS: Mapping[str, ModuleType] = _Registry(
    {
        "journal": ".journal",
        "swe-agent": ".swe_agent",
        # JSON Lines sessions of coding agents; codex before openai-responses, which would
        # also take an older rollout (Responses items after a session line) for its own.
        "claude-code": ".claude_code",
        "codex": ".codex",
        # Before mini-swe-agent and openai: a tool-calling history whose text quotes a
        # ```bash block is still a history of tool calls.
        "openai-responses": ".openai_responses",
        "anthropic": ".anthropic",
        "pydantic-ai": ".pydantic_ai",
        "langchain": ".langchain",
        "mini-swe-agent": ".mini_swe_agent",
        "openai": ".openai_chat",
        "otlp": ".otlp",
    }
)
"""Import formats by name (each module's ``NAME``), in the order auto-detection tries them."""


def read_json(path: Path) -> Any:
    """The file's JSON (a whole document, or a list of its lines for JSON Lines); UsageError if neither."""
    try:
        text = read_regular(path).decode("utf-8")  # never a wait on a FIFO
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: cannot read: {exc}") from None
    try:
        return json.loads(text)
    except ValueError:  # not one document (or a number too long to read): try its lines
        pass
    except RecursionError:
        raise TraceError(str(path), 1, "not valid JSON: nested too deeply") from None
    rows: list[Any] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise TraceError(
                    str(path), number, f"not valid JSON: {exc.msg} (column {exc.colno})"
                ) from None
            except ValueError as exc:  # an integer of 5,000 digits: Python's limit on reading one
                raise TraceError(str(path), number, f"not valid JSON: {str(exc).partition(':')[0]}") from None
            except RecursionError:
                raise TraceError(str(path), number, "not valid JSON: nested too deeply") from None
    return rows


def detect_format(data: Any) -> str | None:
    """The name of the first format that recognises ``data``, else None."""
    for name, module in FORMATS.items():
        if module.sniff(data):
            return name
    return None


def misfit(fmt: str, exc: Exception) -> str:
    """Why a file is not of format ``fmt``: a format's own ValueError says it in its words, any
    other error of reading it is named with its type."""
    if type(exc) is ValueError:
        return f"not a {fmt} file: {exc}"
    return f"not a {fmt} file: {type(exc).__name__}: {exc}"


def load_actions(path: Path, data: Any, fmt: str) -> list[Action]:
    """The actions of ``data`` read as format ``fmt``; TraceError when it does not fit."""
    module = FORMATS.get(fmt)
    if module is None:
        raise UsageError(f"unknown format {fmt!r}; known: trace, {', '.join(FORMATS)}")
    try:
        found: list[Action] = module.actions(data)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
        raise TraceError(str(path), 1, misfit(fmt, exc)) from None
    except RecursionError:  # an arguments text nested deeper than Python reads
        raise TraceError(str(path), 1, f"not a {fmt} file: nested too deeply") from None
    return found
