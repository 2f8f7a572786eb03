"""The package itself: build_detectors from the config, custom detectors loaded by name, the registries."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from heartbeat.base.errors import ConfigError
from heartbeat.config.file import DetectorsConfig, LoopConfig, RepeatConfig, ToolThreshold
from heartbeat.core.models import ActionRecord
from heartbeat.detect.detectors import (
    BUILT_IN,
    LAZY_TRACKERS,
    SPARSE_TRACKERS,
    STEP_TRACKERS,
    Cycle,
    Empty,
    ErrorRate,
    History,
    Loop,
    NearRepeat,
    NoProgress,
    Recurring,
    RecurringError,
    Repeat,
    build_detectors,
    load_detector,
)
from heartbeat.detect.detectors.no_progress import NoProgressTracker

from .helpers import T0, Call, actions, trips


def test_build_detectors_follows_the_config() -> None:
    """Disabled detectors are left out; thresholds and exempt tools are passed on."""
    cfg = DetectorsConfig(exempt=["log"], loop=LoopConfig(enabled=False), repeat=RepeatConfig(threshold=5))
    found = build_detectors(cfg)
    assert [d.kind for d in found] == [
        "repeat",
        "empty",
        "error_rate",
        "near_repeat",
        "recurring",
        "recurring_error",
        "cycle",
        "no_progress",
    ]
    repeat = found[0]
    assert isinstance(repeat, Repeat) and repeat.threshold == 5 and "log" in repeat.exempt


def test_globally_exempt_tools_are_seen_by_no_detector() -> None:
    """An exempt tool's calls never trip anything and do not break other runs."""
    cfg = DetectorsConfig(exempt=["log"])
    calls: list[Call] = [("search", {"q": "x"}), ("log", None), ("search", {"q": "x"})]
    calls += [("log", None), ("log", None), ("log", None), ("search", {"q": "x"})]
    records = actions(calls)
    for detector in build_detectors(cfg):
        found = trips(detector, records)
        assert all(f is None for f, r in zip(found, records, strict=True) if r.tool == "log")
    assert trips(build_detectors(cfg)[0], records)[-1] is not None


_CUSTOM = textwrap.dedent(
    '''
    from heartbeat.core.models import Anomaly

    class Costly:
        """Trips on any action whose cost is over 1."""
        kind = "costly"

        def check(self, history, now):
            last = history.last
            if last is not None and last.cost > 1:
                return Anomaly(kind=self.kind, message="too costly", tick=history.tick,
                               action=last.index, at=now, tool=last.tool)
            return None

    def writes(history, now):
        return None

    NOT_A_DETECTOR = 3
    '''
)


@pytest.fixture
def custom_module(tmp_path: Path) -> Iterable[str]:
    """A module of custom detectors importable from ``tmp_path``."""
    name = f"custom_detectors_{abs(hash(tmp_path)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(_CUSTOM)
    yield name
    sys.modules.pop(name, None)


def test_custom_detectors_load_from_module_attr(custom_module: str, tmp_path: Path) -> None:
    """A class is instantiated, a function wrapped, both appended after the built-ins."""
    cfg = DetectorsConfig(custom=[f"{custom_module}:Costly", f"{custom_module}:writes"])
    found = build_detectors(cfg, search_path=tmp_path)
    assert [d.kind for d in found][-2:] == ["costly", "writes"]
    record = ActionRecord(index=1, tick=1, at=T0, tool="gpt", fingerprint="f", summary="gpt()", cost=2.0)
    anomaly = found[-2].check(History([record], tick=1), T0)
    assert anomaly is not None and anomaly.kind == "costly"


def test_custom_detector_that_is_not_one_is_a_config_error(custom_module: str, tmp_path: Path) -> None:
    """An attribute that neither has check nor is callable is refused, by name."""
    spec = f"{custom_module}:NOT_A_DETECTOR"
    with pytest.raises(ConfigError, match="NOT_A_DETECTOR"):
        build_detectors(DetectorsConfig(custom=[spec]), search_path=tmp_path)
    with pytest.raises(ConfigError, match="nowhere"):
        build_detectors(DetectorsConfig(custom=[f"{custom_module}:nowhere"]), search_path=tmp_path)


def test_the_registries_name_every_built_in() -> None:
    """The Monitor's fast paths rely on these lists: every built-in detector and its tracker is in them."""
    built: list[Any] = build_detectors(DetectorsConfig())
    assert {type(d) for d in built} == set(BUILT_IN) and len(built) == len(BUILT_IN)
    trackers = {type(d.tracker(History())) for d in built}
    assert trackers == set(LAZY_TRACKERS)
    assert set(STEP_TRACKERS) == trackers - {NoProgressTracker}
    assert {t for t in trackers if hasattr(t, "errors_only")} == set(SPARSE_TRACKERS)


def test_build_detectors_passes_every_section_on() -> None:
    """Each section reaches its detector; polling, loop.exempt and repeat.tools reach the others too."""
    cfg = DetectorsConfig.model_validate(
        {
            "exempt": ["log"],
            "polling": ["get_status"],
            "repeat": {"threshold": 4, "tools": {"read": 6, "ping": "off"}},
            "loop": {"window": 12, "repeats": 3, "exempt": ["note"]},
            "empty": {"threshold": 2, "max_chars": 4, "exempt": ["think"]},
            "error_rate": {"window": 8, "threshold": 0.75},
            "near_repeat": {"threshold": 6, "window": 9},
            "recurring": {"threshold": 4, "window": 20, "min_chars": 30},
            "recurring_error": {"threshold": 5, "window": 7},
            "cycle": {"threshold": 8, "window": 16},
            "no_progress": {"samples": 4, "min_delta": 0.5},
        }
    )
    found = {d.kind: d for d in build_detectors(cfg)}
    tools: dict[str, ToolThreshold] = {"read": 6, "ping": "off"}
    assert found["repeat"] == Repeat(4, tools, exempt={"log"}, polling={"get_status"})
    assert found["loop"] == Loop(12, 3, exempt={"log", "note"})
    assert found["empty"] == Empty(2, 4, exempt={"log", "think", "get_status"})
    assert found["error_rate"] == ErrorRate(8, 0.75, exempt={"log"})
    assert found["near_repeat"] == NearRepeat(6, 9, exempt={"log", "get_status"}, tools=tools)
    assert found["recurring"] == Recurring(4, 20, 30, exempt={"log"}, tools=tools)
    assert found["recurring_error"] == RecurringError(5, 7, exempt={"log"})
    assert found["cycle"] == Cycle(8, 16, exempt={"log", "note"})
    assert found["no_progress"] == NoProgress(4, 0.5)


def test_with_every_built_in_disabled_only_the_custom_ones_are_left(
    custom_module: str, tmp_path: Path
) -> None:
    """Each ``enabled = false`` removes its detector; custom ones still load."""
    kinds = [d.kind for d in build_detectors(DetectorsConfig())]
    cfg = DetectorsConfig.model_validate(
        {**{kind: {"enabled": False} for kind in kinds}, "custom": [f"{custom_module}:writes"]}
    )
    assert [d.kind for d in build_detectors(cfg, search_path=tmp_path)] == ["writes"]


_BROKEN = textwrap.dedent(
    '''
    class Fails:
        """A detector whose constructor raises."""
        kind = "fails"

        def __init__(self):
            raise RuntimeError("no database")

        def check(self, history, now):
            return None

    class Nameless:
        """A check method but no kind."""

        def check(self, history, now):
            return None
    '''
)


@pytest.fixture
def broken_module(tmp_path: Path) -> Iterable[str]:
    """A module of detectors that cannot be used, importable from ``tmp_path``."""
    name = f"broken_detectors_{abs(hash(tmp_path)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(_BROKEN)
    yield name
    sys.modules.pop(name, None)


def test_a_custom_detector_that_cannot_be_made_is_a_one_line_config_error(
    broken_module: str, tmp_path: Path
) -> None:
    """A constructor that raises, a check without a kind, a module that is not there: each named."""
    with pytest.raises(ConfigError, match=r"Fails\(\) failed: RuntimeError\('no database'\)"):
        load_detector(f"{broken_module}:Fails", search_path=tmp_path)
    with pytest.raises(ConfigError, match="no 'kind' text"):
        build_detectors(DetectorsConfig(custom=[f"{broken_module}:Nameless"]), search_path=tmp_path)
    with pytest.raises(ConfigError, match="no module named 'not_a_module_here'"):
        load_detector("not_a_module_here:x", search_path=tmp_path)
