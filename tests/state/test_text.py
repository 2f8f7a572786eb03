"""state.json's text with reused record texts is byte for byte pydantic's indent=2 dump."""

from __future__ import annotations

import random
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from heartbeat.core.models import ActionRecord, AgentState, ProgressSample
from heartbeat.state.text import StateText

TEXTS = [
    "plain",
    'quote " and \\ backslash',
    "line\nbreak\ttab",
    "ünïcödé ✓",
    "\u2028",
    "}, {",
    ',\n    {"x": 1}',  # what the splice cuts at, inside a value
]


def record(rng: random.Random, index: int) -> ActionRecord:
    return ActionRecord(
        index=index,
        tick=index // 2,
        at=datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=index, microseconds=rng.randrange(10**6)),
        tool=rng.choice(["search", "read", "a b"]),
        fingerprint=f"{rng.getrandbits(64):016x}",
        summary=rng.choice(TEXTS),
        output_len=rng.choice([None, 0, 12]),
        error=rng.choice([None, None, rng.choice(TEXTS)]),
        cost=rng.choice([0.0, 0.5, 1e-9, 3.0]),
        shape=rng.choice([None, "a970d932"]),
        result=rng.choice([None, "a22c6827"]),
    )


def test_reused_record_texts_give_the_same_bytes_as_a_full_dump(rng: random.Random) -> None:
    """Over random saves (items added, dropped, assigned to, replaced), every text equals pydantic's."""
    texts = StateText()
    state = AgentState(data={"history": [1, 2], "k": {"progress": "x"}}, instructions=rng.choice(TEXTS))
    index = 0
    reused = 0
    for _ in range(300):
        for _ in range(rng.choice([0, 1, 1, 2, 7])):
            index += 1
            state.history.append(record(rng, index))
        state.history = state.history[-rng.choice([30, 30, 30, 5, 2]) :]
        if state.history and rng.random() < 0.2:  # an assignment to a kept record is seen
            victim = rng.choice(state.history)
            victim.summary = rng.choice(TEXTS) + str(rng.random())
        if state.history and rng.random() < 0.1:  # an equal record, another object
            at = rng.randrange(len(state.history))
            state.history[at] = state.history[at].model_copy()
        if rng.random() < 0.7:
            value = rng.choice([None, 1.5, -0.0, 1e300, float(index)])
            error = None if value is not None else rng.choice(TEXTS)
            at = datetime(2026, 1, 2, tzinfo=UTC) + timedelta(microseconds=rng.randrange(10**9))
            state.progress.append(ProgressSample(tick=index, at=at, value=value, error=error))
            state.progress = state.progress[-rng.choice([20, 20, 3]) :]
        if state.progress and rng.random() < 0.1:
            rng.choice(state.progress).value = rng.random()
        state.ticks += 1
        before = len(texts)
        assert texts.dump(state) == state.model_dump_json(indent=2)
        reused += before > 0
    assert reused > 100  # the reuse path really ran


def test_a_full_dump_keeps_the_item_texts_for_the_next(rng: random.Random) -> None:
    """The first dump is pydantic's, cut into the item texts the next dump reuses."""
    texts = StateText()
    state = AgentState(history=[record(rng, i) for i in range(1, 31)])
    assert texts.dump(state) == state.model_dump_json(indent=2)
    assert len(texts) == 30  # and no progress samples: there are none
    state.history.append(record(rng, 31))
    assert texts.dump(state) == state.model_dump_json(indent=2)
    assert len(texts) == 31


def test_a_store_makes_its_state_text_at_its_second_save(tmp_path: Path) -> None:
    """A cron tick saves once: heartbeat.state.text is not even imported there (a fresh process)."""
    code = (
        "import sys; from heartbeat.state.store import StateStore\n"
        "from heartbeat.core.models import AgentState\n"
        f"store = StateStore({str(tmp_path)!r}); store.save(AgentState())\n"
        "first = 'heartbeat.state.text' in sys.modules; store.save(AgentState())\n"
        "print(first, 'heartbeat.state.text' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]
