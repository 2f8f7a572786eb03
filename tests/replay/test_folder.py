"""A folder of framework histories in four formats, labelled, replayed by the real CLI in one go."""

from __future__ import annotations

import json
from pathlib import Path

from _formats import write
from conftest import spawn_heartbeat
from formats.test_anthropic import healthy_messages as anthropic_healthy
from formats.test_anthropic import stuck_messages as anthropic_stuck
from formats.test_langchain import healthy_messages as langchain_healthy
from formats.test_langchain import stuck_messages as langchain_stuck
from formats.test_openai_responses import healthy_items, stuck_items
from formats.test_pydantic_ai import healthy_history, stuck_history
from langchain_core.messages import messages_to_dict


def test_a_labelled_folder_of_the_four_formats_gives_the_confusion_table(tmp_path: Path) -> None:
    """Each file detected on its own; the four stuck runs escalate, the four healthy ones stay silent."""
    runs = tmp_path / "runs"
    runs.mkdir()
    samples = {
        "responses": (stuck_items(), healthy_items()),
        "anthropic": (anthropic_stuck(), anthropic_healthy()),
        "pydantic": (stuck_history(), healthy_history()),
        "langchain": (messages_to_dict(langchain_stuck()), messages_to_dict(langchain_healthy())),
    }
    labels = ["trace,label,onset"]
    for name, (stuck, healthy) in samples.items():
        write(runs / f"stuck-{name}.json", stuck)
        write(runs / f"ok-{name}.json", healthy)
        labels += [f"stuck-{name},stuck,1", f"ok-{name},healthy,"]
    (tmp_path / "labels.csv").write_text("\n".join(labels) + "\n", encoding="utf-8")
    done = spawn_heartbeat(
        tmp_path,
        "replay",
        str(runs),
        "--labels",
        str(tmp_path / "labels.csv"),
        "--per-heartbeat",
        "2",
        "--json",
    )
    out, err = done.communicate(timeout=120)
    assert done.returncode == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    by_trace = {row["trace"]: row for row in rows[:-1]}
    assert len(by_trace) == 8
    for name in samples:
        assert by_trace[f"stuck-{name}"]["escalated"] is not None, name
        assert by_trace[f"ok-{name}"]["first_anomaly"] is None, name
    confusion = rows[-1]["confusion"]
    assert confusion["stuck"] == 4 and confusion["healthy"] == 4 and confusion["stuck_escalated"] == 4
    assert confusion["healthy_escalated"] == 0
