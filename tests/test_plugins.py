"""The one plug-in registry: built-in names, ``module:attr`` and real entry points."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from heartbeat.config import HeartbeatConfig
from heartbeat.errors import ConfigError
from heartbeat.plugins import load_object, load_plugin
from heartbeat.runner import Heartbeat


@pytest.fixture
def installed(tmp_path: Path) -> Iterator[Path]:
    """A real installed distribution (a .dist-info with entry points) on sys.path, as pip leaves one."""
    (tmp_path / "hb_thirdparty.py").write_text(
        "def step(ctx):\n    ctx.data['by'] = 'entry point'\n\n"
        "class TooMany:\n    kind = 'too_many'\n    def check(self, history, now):\n        return None\n"
    )
    info = tmp_path / "hb_thirdparty-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hb-thirdparty\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[heartbeat.steps]\nthird = hb_thirdparty:step\n\n"
        "[heartbeat.detectors]\ntoo_many = hb_thirdparty:TooMany\n"
    )
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("hb_thirdparty", None)


def test_a_step_named_by_entry_point_ticks(installed: Path) -> None:
    """`step = "third"` finds the package's entry point in heartbeat.steps and runs it."""
    config = HeartbeatConfig.model_validate(
        {"base_dir": installed, "agent": {"step": "third", "state_dir": str(installed / "state")}}
    )
    hb = Heartbeat(config)
    assert hb.tick().exit_code == 0
    assert hb.read_state().data == {"by": "entry point"}


def test_each_kind_has_its_own_group(installed: Path) -> None:
    """A detector's entry point is found as a detector, not as a step."""
    assert load_object("too_many", what="detector").__name__ == "TooMany"
    with pytest.raises(ConfigError, match=r"heartbeat\.steps"):
        load_plugin("step", "too_many")


def test_built_in_names_win_and_unknown_names_say_what_was_tried() -> None:
    """A built-in name is found first; an unknown one is one line naming the forms and the group."""
    marker = object()
    assert load_plugin("notifier", "file", builtins={"file": marker}) is marker
    with pytest.raises(ConfigError) as info:
        load_plugin("notifier", "nope", builtins={"file": marker})
    message = str(info.value)
    assert "module:attr" in message and "file" in message and "heartbeat.notifiers" in message
    assert "\n" not in message


def test_module_attr_still_loads_from_the_config_folder(tmp_path: Path) -> None:
    """`module:attr` imports from the given folder, as before."""
    (tmp_path / "hb_local_mod.py").write_text("VALUE = 42\n")
    try:
        assert load_plugin("step", "hb_local_mod:VALUE", search_path=tmp_path) == 42
    finally:
        sys.modules.pop("hb_local_mod", None)
        if str(tmp_path) in sys.path:
            sys.path.remove(str(tmp_path))
