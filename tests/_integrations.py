"""Shared by the framework integration tests: run a body bound to a heartbeat tick, a Session or a Monitor.

Every binding uses a repeat threshold of :data:`REPEAT` (not the default 3),
so a test that stops at call REPEAT shows the configured value is honoured.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _cli import run_cli
from conftest import wait_until

from heartbeat.config.file import DetectorsConfig
from heartbeat.detect.monitor import Monitor
from heartbeat.integrations import MonitorRecorder
from heartbeat.integrations.session import Session
from heartbeat.testing import make_heartbeat
from heartbeat.tick.runner import TickResult

REPEAT = 4
MODES = ("ctx", "session", "monitor")
# What a redirect tells the model became of its call (heartbeat.integrations.redirects), as written.
WITHHELD = "The result of this call is withheld."
NOT_RUN = "This call did not run: it was refused before the tool was called."

NOTHING = (
    "Search returned 0 documents from the index (archive, news, wiki). Similar searches that found "
    "documents: 'latest report', 'annual summary', 'press releases'."
)
"""What the tools answer to each of :data:`WANDERING`: the same page (longer than a line) whatever
the query."""
_WORDS = (
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
)
WANDERING = [f"nothing about {word}" for word in _WORDS]
"""Twelve different queries a stuck model tries, each answered :data:`NOTHING`: no call repeats,
the result does (``recurring`` at the fifth); a redirection ignored again and again."""


class Bound:
    """What one bound run left behind: the body's return value, the tick result (ctx) or the monitor."""

    def __init__(
        self, value: Any, tick: TickResult | None, monitor: Monitor | None, folder: Path | None = None
    ) -> None:
        self.value = value
        self.tick = tick
        self.monitor = monitor
        self.folder = folder


def run_bound(mode: str, folder: Path, body: Callable[[Any, Path], Any]) -> Bound:
    """Call ``body(target, kill_path)`` with a StepContext inside one heartbeat, a Session, or a Monitor.

    The Session is opened from a ``heartbeat.toml`` in ``folder`` (state in
    ``folder/state``) and closed after the body; its last heartbeat is the tick.
    """
    kill = folder / "KILL"
    if mode == "session":
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "heartbeat.toml").write_text(
            f'[agent]\nstate_dir = "state"\nkill_file = "KILL"\n\n[detectors.repeat]\nthreshold = {REPEAT}\n'
        )
        session = Session.from_files(folder / "heartbeat.toml", idle=30.0)
        try:
            value = body(session, kill)
        finally:
            session.close()
        return Bound(value, session.last, None, folder)
    if mode == "ctx":
        seen: list[Any] = []
        heartbeat = make_heartbeat(
            lambda ctx: seen.append(body(ctx, kill)), folder, detectors={"repeat": {"threshold": REPEAT}}
        )
        result = heartbeat.tick()
        return Bound(seen[0] if seen else None, result, None, folder)
    monitor = Monitor(DetectorsConfig.model_validate({"repeat": {"threshold": REPEAT}}))
    monitor.start_tick(1)
    return Bound(body(MonitorRecorder(monitor, kill_file=kill), kill), None, monitor)


def folder_session(folder: Path, **options: Any) -> Session:
    """A Session on ``folder/state`` (KILL file ``folder/KILL``), from a ``heartbeat.toml`` written there."""
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "heartbeat.toml"
    config.write_text('[agent]\nstate_dir = "state"\nkill_file = "KILL"\n')
    return Session.from_files(config, **options)


def kill_mid_call(session: Session, folder: Path) -> None:
    """What a slow tool sees: KILL is written while it runs, and its heartbeat ends before it returns."""
    (folder / "KILL").write_text("stop mid-call\n")
    wait_until(lambda: not session.is_open, what="the heartbeat to end on KILL")


def late_actions(folder: Path) -> list[tuple[str, str | None]]:
    """(tool, after_stop) of each action event in the journal."""
    lines = (folder / "state" / "journal.jsonl").read_text().splitlines()
    return [(e["tool"], e.get("after_stop")) for e in map(json.loads, lines) if e["event"] == "action"]


def saved_actions(folder: Path) -> tuple[list[str], list[str]]:
    """The action summaries in state.json's history and in the journal's action events."""
    state = json.loads((folder / "state" / "state.json").read_text())
    journal = [json.loads(line) for line in (folder / "state" / "journal.jsonl").read_text().splitlines()]
    return (
        [a["summary"] for a in state["history"]],
        [e["summary"] for e in journal if e["event"] == "action"],
    )


def assert_boom_failed_and_slow_cancelled(folder: Path) -> None:
    """state.json's history holds the two calls of a turn: ``boom`` failed with "the index is gone",
    and ``slow``, cancelled while it ran, is recorded as a call that may have run."""
    history = json.loads((folder / "state" / "state.json").read_text())["history"]
    errors = {a["tool"]: a["error"] for a in history}
    assert errors["boom"] == "RuntimeError: the index is gone"
    assert errors["slow"] == "cancelled while running (it may have run): CancelledError"
    assert len(history) == 2


def anomalies(bound: Bound) -> list[str]:
    """The anomaly kinds the run left: in the journal (every heartbeat of it), or the monitor's."""
    if bound.folder is not None:
        lines = (bound.folder / "state" / "journal.jsonl").read_text().splitlines()
        return [e["kind"] for e in map(json.loads, lines) if e["event"] == "anomaly"]
    assert bound.monitor is not None
    return [a.kind for a in bound.monitor.tick_anomalies]


def decisions(folder: Path) -> list[str]:
    """The policy's decisions in the journal, one per heartbeat."""
    lines = (folder / "state" / "journal.jsonl").read_text().splitlines()
    return [e["decision"] for e in map(json.loads, lines) if e["event"] == "decision"]


def pause_by_hand(cwd: Path, *where: str, reason: str = "lunch") -> None:
    """A person's ``heartbeat pause`` (a real process, run in ``cwd``) of the agent ``where`` names
    (``--config heartbeat.toml``, ``--state-dir state``); it must succeed."""
    done = run_cli(cwd, "pause", *where, "--reason", reason)
    assert done.returncode == 0, done.stderr


def model_and_tools(call_model: Callable[..., Any], tools: Any) -> Any:
    """The compiled LangGraph agent every LangGraph test builds: a model node (``call_model``) and
    a ToolNode (``tools``), the model deciding whether the tools run, their answers back to it.
    langgraph is imported here, not with this module: the other frameworks' tests share it."""
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import tools_condition

    graph = StateGraph(MessagesState)
    graph.add_node("model", call_model)
    graph.add_node("tools", tools)
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile()
