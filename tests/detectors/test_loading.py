"""The package itself: build_detectors from the config, custom detectors loaded by name, the registries."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path

import pytest

from heartbeat.config import DetectorsConfig, LoopConfig, RepeatConfig
from heartbeat.detectors import History, Repeat, build_detectors
from heartbeat.errors import ConfigError
from heartbeat.models import ActionRecord

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
    from heartbeat.models import Anomaly

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
