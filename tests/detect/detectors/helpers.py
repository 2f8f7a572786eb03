"""What the detector tests share: histories built by a small factory, and asking detectors about them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from heartbeat.config.file import DetectorsConfig
from heartbeat.core.models import ActionRecord, Anomaly, ProgressSample
from heartbeat.detect.detectors import Detector, History, build_detectors, prints
from heartbeat.detect.detectors.fingerprints import action_keys
from heartbeat.detect.detectors.talk import message_facts

T0 = datetime(2024, 1, 1, tzinfo=UTC)

Call = tuple[str, Mapping[str, Any] | None] | Mapping[str, Any]

PYTEST_FAIL = (
    "============================= test session starts ==============================\n"
    "collected 12 items\n\ntests/test_x.py ....F.......\n\n"
    "FAILED tests/test_x.py::test_parse - AssertionError: assert 'a' == 'b'\n"
    "========================= 1 failed, 11 passed in {t}s =========================="
)
"""A failing pytest run's output; ``{t}`` is its timing, which changes from run to run."""


REJECTED_TURN: Mapping[str, Any] = {
    "tool": "(no_command)",
    "args": {},
    "output": "Please always provide EXACTLY ONE action in triple backticks, found 0 actions.",
    "error": "format_error",
}
"""A turn the harness rejected, as the importers record it: a failed call without arguments."""


def actions(
    calls: Iterable[Call],
    *,
    volatile: Sequence[str] = (),
    polling: Sequence[str] = (),
    tick: int = 1,
) -> list[ActionRecord]:
    """ActionRecords for ``calls``: ``(tool, args)`` pairs or dicts with output/error/tick too."""
    found = []
    for index, call in enumerate(calls, 1):
        spec: dict[str, Any] = {"tool": call[0], "args": call[1]} if isinstance(call, tuple) else dict(call)
        output = spec.get("output")
        keys = prints(
            spec["tool"],
            spec.get("args"),
            output,
            spec.get("error"),
            volatile=volatile,
            polling=spec["tool"] in polling,
        )
        # The output's length as the Monitor keeps it (a shell harness's notices alone: nothing).
        length = action_keys(spec["tool"], spec.get("args"), output, spec.get("error"), volatile, False)[4]
        found.append(
            ActionRecord(
                index=index,
                tick=spec.get("tick", tick),
                at=T0 + timedelta(minutes=index),
                tool=spec["tool"],
                fingerprint=keys.fingerprint,
                summary=keys.summary,
                output_len=length,
                error=spec.get("error"),
                shape=keys.shape,
                result=keys.result,
                failure=keys.failure,
                facts=message_facts(spec["tool"], spec.get("args"), output),
            )
        )
    return found


def trips(detector: Detector, records: Sequence[ActionRecord]) -> list[Anomaly | None]:
    """What ``check`` says after each action, as the monitor would ask it."""
    return [
        detector.check(History(records[: i + 1], tick=records[i].tick), records[i].at)
        for i in range(len(records))
    ]


def samples(values: Iterable[float | None]) -> list[ProgressSample]:
    """One progress sample per heartbeat."""
    return [ProgressSample(tick=i, at=T0 + timedelta(hours=i), value=v) for i, v in enumerate(values, 1)]


def fired(records: Sequence[ActionRecord], config: DetectorsConfig | None = None) -> dict[str, int]:
    """Each default detector kind that fires, with the 1-based action where it first does."""
    found: dict[str, int] = {}
    for detector in build_detectors(config or DetectorsConfig()):
        for i, hit in enumerate(trips(detector, records), 1):
            if hit is not None:
                found.setdefault(detector.kind, i)
                break
    return found


def first(detector: Detector, records: Sequence[ActionRecord]) -> tuple[int, Anomaly] | None:
    """The first (1-based action, anomaly) ``detector`` reports on ``records``."""
    for i, hit in enumerate(trips(detector, records), 1):
        if hit is not None:
            return i, hit
    return None


def import_probe(
    name: str, ending: str = "ModuleNotFoundError: No module named", *, tool: str = "python"
) -> Call:
    """``python -c "import <name>"`` failing (``returncode 1``), its output ``<ending> '<name>'``."""
    return {
        "tool": tool,
        "args": {"cmd": f'python -c "import {name}"'},
        "output": f"Traceback (most recent call last):\n{ending} '{name}'",
        "error": "returncode 1",
    }
