"""In-process ticks that reuse the last tick's Monitor and state answer exactly as cold ones."""

from __future__ import annotations

import json
import math
import random
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import heartbeat_over

from heartbeat.core.models import AgentState
from heartbeat.state.store import StateStore
from heartbeat.state.warm import plain_copy
from heartbeat.testing import FakeClock
from heartbeat.tick.context import StepContext
from heartbeat.tick.runner import TickResult

TOKEN = "T0KEN-abc123XYZ"
WEBHOOK = {"type": "webhook", "name": "hook", "url": f"http://127.0.0.1:9/hooks/{TOKEN}", "retries": 0}


def plan(rng: random.Random, i: int) -> dict[str, Any]:
    """What the step does in one heartbeat: calm stretches, and stretches likely to look stuck."""
    phase = (i // 8) % 3
    if phase == 0:  # calm: new work, new output, progress
        actions = [
            ("read", {"url": f"u{i}-{j}"}, f"page {i}-{j} " * 3, None, 0.0) for j in range(rng.choice([1, 2]))
        ]
        data = rng.choice(["count"] * 6 + ["nested", "replace", "tuple"])
        return {"actions": actions, "data": data, "progress": float(i), "raise": False}
    if phase == 1:  # one call over and over, a run longer than the kept history
        actions = [("poll", {"q": "same"}, "", None, 0.0)] * rng.choice([4, 5])
        return {"actions": actions, "data": "count", "progress": 1.0, "raise": False}
    tools = ["search", "read", "fetch"] if rng.random() < 0.7 else ["search", "read", "fetch", "write", "ls"]
    actions = []
    for _ in range(rng.choice([0, 1, 1, 2, 3, 5])):
        args = rng.choice([None, {"q": "same"}, {"q": rng.choice("abc")}, {"q": f"x{rng.randrange(50)}"}])
        if rng.random() < 0.1:
            args = {"token": TOKEN}  # masked before it is recorded when the config knows it
        output = rng.choice([None, "", "the same page", f"page {rng.randrange(5)}", "3 results in 0.2 s"])
        error = rng.choice([None, None, None, "timeout after 30 s", f"HTTP 50{rng.randrange(3)}"])
        actions.append((rng.choice(tools), args, output, error, rng.choice([0.0, 0.0, 0.01, 2])))
    data = rng.choice(["count", "count", "count", "tuple", "nested", "replace", "nan", "intkey", "secret"])
    progress = rng.choice([None, 1.0, 1.0, float(i), float(i // 3)])
    return {"actions": actions, "data": data, "progress": progress, "raise": rng.random() < 0.05}


def make_step(plans: list[dict[str, Any]]) -> Any:
    """A step that plays ``plans`` in order, one per call."""
    calls = {"n": 0}

    def step(ctx: StepContext) -> None:
        todo = plans[calls["n"]]
        calls["n"] += 1
        kind = todo["data"]
        # What the step finds in its data, as it finds it (a tuple and a list differ here).
        ctx.data["found"] = repr({k: v for k, v in ctx.data.items() if k != "found"})[:300]
        ctx.data["n"] = ctx.data.get("n", 0) + 1
        if kind == "tuple":
            ctx.data["pair"] = (1, "two")  # a list once it went through JSON
        elif kind == "nested":
            ctx.data["deep"] = {"k": [1.5, None, True, {"s": "x"}]}
        elif kind == "replace":
            ctx.data = {"n": ctx.data["n"], "fresh": True}
        elif kind == "nan":
            ctx.data["bad"] = math.nan
        elif kind == "secret":
            ctx.data["auth"] = TOKEN  # state.json holds *** when the config knows the token
        elif kind == "intkey":
            ctx.data["by_id"] = {7: "seven"}  # a str key once it went through JSON
        for tool, args, output, error, cost in todo["actions"]:
            ctx.record(tool, args, output=output, error=error, cost=cost)
        ctx.report_progress(todo["progress"])
        if todo["raise"]:
            raise RuntimeError("the agent's own bug")

    return step


def outside_edit(root: Path, kind: str) -> None:
    """What another process or a human does to the state folder between two ticks."""
    store = StateStore(root / "state")
    if kind == "resume":
        hb = heartbeat_over(root, lambda ctx: None, clock=FakeClock())
        hb.resume("try something else")
    elif kind == "rewrite":  # the same state, other bytes: a human's editor, say
        path = store.state_path
        path.write_text(json.dumps(json.loads(path.read_text()), indent=4), encoding="utf-8")
    elif kind == "data":
        with store.lock():
            state = store.load()
            state.data["outside"] = state.ticks
            store.save(state)


def same(text: str, root: Path) -> str:
    return text.replace(str(root), "ROOT")


def result_json(result: TickResult, root: Path) -> str:
    return same(json.dumps(result.to_json(), sort_keys=True), root)


@pytest.mark.parametrize(
    ("secrets", "mode"),
    [(False, "enforce"), (True, "enforce"), (False, "observe")],
    ids=["no-secrets", "webhook-secret", "observe"],
)
def test_warm_ticks_equal_cold_ones_over_a_random_run(
    tmp_path: Path, rng: random.Random, secrets: bool, mode: str
) -> None:
    """One Heartbeat ticking on vs a new Heartbeat per tick: the same results, state bytes and journal.

    In observe mode nothing escalates, so a stuck run goes on for many warm
    ticks, past the kept history (where a Monitor carried on without a reseed
    would count differently).
    """
    ticks = 120
    plans = [plan(rng, i) for i in range(ticks * 2)]
    edits = [rng.choice(["resume", "rewrite", "data"]) if rng.random() < 0.08 else "" for _ in range(ticks)]
    config: dict[str, Any] = {"budget": {"actions_per_tick": 5, "cost_per_day": 40}, "policy": {"mode": mode}}
    if secrets:
        config["notify"] = [WEBHOOK]
    warm_root, cold_root = tmp_path / "warm", tmp_path / "cold"
    warm_clock = FakeClock(step=timedelta(seconds=7))
    cold_clock = FakeClock(step=timedelta(seconds=7))
    warm_step, cold_step = make_step(plans), make_step(plans)
    warm = heartbeat_over(warm_root, warm_step, clock=warm_clock, **config)
    reused = {"monitor": 0, "state": 0}
    for i in range(ticks):
        kept = warm.warm.kept
        if kept is not None and kept.saved.data == (warm_root / "state" / "state.json").read_bytes():
            reused["monitor"] += 1
            reused["state"] += kept.state is not None
        got = warm.tick()
        cold = heartbeat_over(cold_root, cold_step, clock=cold_clock, **config)
        want = cold.tick()
        assert result_json(got, warm_root) == result_json(want, cold_root), f"tick {i}"
        warm_bytes = (warm_root / "state" / "state.json").read_text()
        cold_bytes = (cold_root / "state" / "state.json").read_text()
        assert same(warm_bytes, warm_root) == same(cold_bytes, cold_root), f"tick {i}"
        if got.outcome in ("needs_human", "paused") and rng.random() < 0.5:
            edits[i] = "resume"
        if edits[i]:
            outside_edit(warm_root, edits[i])
            outside_edit(cold_root, edits[i])
    journals = [same((r / "state" / "journal.jsonl").read_text(), r) for r in (warm_root, cold_root)]
    assert journals[0] == journals[1]
    print(f"warm ticks: {reused}")
    assert reused["monitor"] > 10 and reused["state"] > 5  # the warm path really ran
    if secrets:
        assert TOKEN not in (warm_root / "state" / "state.json").read_text()


def test_nothing_is_kept_from_a_tick_that_did_not_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed save leaves no cache: the next tick loads the file as a cold one would."""

    def step(ctx: StepContext) -> None:
        ctx.data["n"] = ctx.data.get("n", 0) + 1
        ctx.record("work", {"n": ctx.data["n"]}, output="done")

    hb = heartbeat_over(tmp_path, step, clock=FakeClock())
    assert hb.tick().exit_code == 0
    assert hb.warm.kept is None  # a first tick readies nothing: it may be the only one (cron)
    assert hb.tick().exit_code == 0
    assert hb.warm.kept is not None and hb.warm.kept.state is not None
    real_save = StateStore.save

    def failing_save(self: StateStore, state: AgentState) -> Any:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(StateStore, "save", failing_save)
    failed = hb.tick()
    assert failed.outcome == "error" and failed.exit_code == 2
    assert hb.warm.kept is None
    monkeypatch.setattr(StateStore, "save", real_save)
    assert hb.tick().exit_code == 0
    state = StateStore(tmp_path / "state").load()
    assert state.data == {"n": 3} and state.ticks == 3  # the failed tick's work is not there


def test_a_step_that_records_after_it_returned_starts_the_next_tick_cold(tmp_path: Path) -> None:
    """A context kept and used after the step returned: its Monitor is not reused, its counters not seen."""
    kept: list[StepContext] = []

    def step(ctx: StepContext) -> None:
        kept.append(ctx)
        ctx.record("work", {"n": len(kept)}, output="done")

    hb = heartbeat_over(tmp_path, step, clock=FakeClock())
    hb.tick()
    kept[-1].record("late", {"x": 1}, output="after the heartbeat")
    hb.tick()
    state = StateStore(tmp_path / "state").load()
    assert [a.tool for a in state.history] == ["work", "work"]
    assert state.actions_total == 2 and state.budget.actions == 2


def test_a_masked_secret_keeps_nothing(tmp_path: Path) -> None:
    """state.json holds *** where memory holds the secret: neither the state nor the Monitor is kept."""

    def step(ctx: StepContext) -> None:
        ctx.data["note"] = TOKEN if ctx.tick == 3 else "nothing secret"
        ctx.record("call", {"auth": TOKEN}, output="ok")  # masked before it is recorded

    hb = heartbeat_over(tmp_path, step, clock=FakeClock(), notify=[WEBHOOK])
    hb.tick()
    hb.tick()
    assert hb.warm.kept is not None and hb.warm.kept.state is not None
    hb.tick()
    assert hb.warm.kept is None
    assert TOKEN not in (tmp_path / "state" / "state.json").read_text()
    hb.tick()
    assert StateStore(tmp_path / "state").load().data == {"note": "nothing secret"}


@pytest.mark.parametrize(
    "value",
    [(1, 2), {1: "a"}, {"a": {2}}, [math.inf], {"x": math.nan}, b"x", type("S", (str,), {})("s"), {"d": []}],
    ids=["tuple", "int key", "set", "inf", "nan", "bytes", "str subclass", "ok"],
)
def test_plain_copy_takes_only_what_json_gives_back(value: Any) -> None:
    """A tuple, a non-str key, a set, inf/NaN (null in state.json), bytes, a str subclass: refused."""
    if value == {"d": []}:
        copied = plain_copy(value)
        assert copied == value and copied is not value and copied["d"] is not value["d"]
    else:
        with pytest.raises(ValueError, match="not a plain JSON value"):
            plain_copy(value)
