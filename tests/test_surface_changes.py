"""What wrapped an answer on its way changes no decision.

The bench's runs replayed as they are and again with each action dressed as other harnesses
dress it: a logger's stamp before each line of the output, the output as an MCP result dumped
whole, the tool named as Claude Code names an MCP server's, a fresh idempotency key in every
call. Each change is no part of what the agent did, so every run must be judged as before: the
same anomalies at the same actions, escalated at the same heartbeat. A sample of the runs
(every ninth blind run, every third real one) keeps it quick; replayed whole (3,507 runs with the
corpus's, 2026-12-07), the three changes other than the namespace judged every run the same. A
namespace makes each call's summary longer, and the words of a call near the summary's cut are
read from less of it: such runs (7 of the 3,507, stuck coding runs) are left out of its sample.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from _labelled_runs import BENCH

from heartbeat.config.file import HeartbeatConfig
from heartbeat.core.models import TEXT_LIMIT
from heartbeat.detect.detectors import canonical_args
from heartbeat.replay.folder import summarize_trace

_RUNS = [
    *sorted((BENCH / "blind_agents" / "traces").glob("*.jsonl"))[::9],
    *sorted((BENCH / "real_runs" / "traces").glob("*.jsonl"))[::3],
]

Dress = Callable[[dict[str, Any], random.Random], None]


def _stamped(action: dict[str, Any], rng: random.Random) -> None:
    if isinstance(action.get("output"), str):
        at = datetime(2026, 3, 4, 5, 6, 7) + timedelta(seconds=rng.randrange(86_400))
        action["output"] = "".join(
            f"[{at.isoformat(timespec='milliseconds')}Z] {line}" for line in action["output"].splitlines(True)
        )


def _mcp_result(action: dict[str, Any], rng: random.Random) -> None:
    if isinstance(action.get("output"), str) and action.get("error") is None:
        content = [{"type": "text", "text": action["output"]}]
        action["output"] = json.dumps({"_meta": None, "content": content, "isError": False})


_NAMESPACE = "mcp__agent__"


def _mcp_named(action: dict[str, Any], rng: random.Random) -> None:
    if isinstance(action.get("tool"), str):
        action["tool"] = f"{_NAMESPACE}{action['tool']}"


def _uncut(path: Path) -> bool:
    """Whether every call of the run at ``path``, named in a namespace, still fits the summary a
    call's words are read from (cut at :data:`TEXT_LIMIT` characters, its tool's name counted)."""
    for line in path.read_text(encoding="utf-8").splitlines():
        for action in json.loads(line).get("actions") or []:
            call = f"{_NAMESPACE}{action.get('tool')}({canonical_args(action.get('args'))})"
            if len(call) > TEXT_LIMIT:
                return False
    return True


def _keyed(action: dict[str, Any], rng: random.Random) -> None:
    args = action.get("args")
    if args is None or isinstance(args, dict):
        action["args"] = {**(args or {}), "idempotency_key": f"{rng.getrandbits(128):032x}"}


def _judged(path: Path) -> tuple[object, ...]:
    found = summarize_trace(path, HeartbeatConfig())
    assert found.error is None, found.error
    return found.escalated, [(a["kind"], a.get("action"), a["tick"]) for a in found.anomalies]


def _dressed(path: Path, dress: Dress, folder: Path) -> Path:
    rng = random.Random(f"{dress.__name__}:{path.name}")
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        heartbeat = json.loads(line)
        for action in heartbeat.get("actions") or []:
            dress(action, rng)
        lines.append(json.dumps(heartbeat))
    dressed = folder / path.name
    dressed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dressed


@pytest.mark.parametrize("dress", [_stamped, _mcp_result, _mcp_named, _keyed], ids=lambda d: d.__name__[1:])
def test_a_run_dressed_as_another_harness_dresses_it_is_judged_the_same(dress: Dress, tmp_path: Path) -> None:
    """Every sampled run: the same anomalies, at the same actions, escalated at the same heartbeat."""
    runs = [path for path in _RUNS if dress is not _mcp_named or _uncut(path)]
    changed = [path.stem for path in runs if _judged(_dressed(path, dress, tmp_path)) != _judged(path)]
    assert len(runs) > len(_RUNS) // 3
    assert changed == [], f"{len(changed)} of {len(runs)} runs judged differently"
