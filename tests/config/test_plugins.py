"""The one plug-in registry: built-in names, ``module:attr`` and real entry points."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from heartbeat.base.errors import ConfigError
from heartbeat.config.file import HeartbeatConfig, PluginNotifierConfig, load_config
from heartbeat.config.plugins import load_object, load_plugin
from heartbeat.core.models import Notification
from heartbeat.notify.notifiers import build_notifiers
from heartbeat.notify.outbox import Outbox
from heartbeat.tick.plugins import AgentPlugins
from heartbeat.tick.runner import Heartbeat


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
        "[heartbeat.detectors]\ntoo_many = hb_thirdparty:TooMany\n\n"
        "[heartbeat.notifiers]\npager = config.test_plugins:ListNotifier\n"
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


class ListNotifier:
    """A third-party notifier: keeps what it is sent, and takes its table's other keys as options."""

    def __init__(self, name: str, *, channel: str = "general", token: str = "") -> None:
        self.name = name
        self.channel = channel
        self.token = token
        self.sent: list[Notification] = []
        self.mask_with: list[str] = []

    def send(self, message: Notification) -> None:
        """Keep the message."""
        self.sent.append(message)


def _note() -> Notification:
    return Notification(
        key="agent-escalation-3",
        kind="escalation",
        agent="agent",
        reason="stuck",
        text="agent needs a human",
        created_at=datetime(2026, 5, 1, 12, tzinfo=UTC),
    )


def test_a_notifier_named_module_class_is_built_with_its_options_and_delivers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`type = "config.test_plugins:ListNotifier"`: its other keys are its options; the outbox sends."""
    monkeypatch.setenv("HB_PLUGIN_TOKEN", "tok-SECRET-123")
    path = tmp_path / "heartbeat.toml"
    path.write_text(
        '[agent]\nstep = "x:y"\n\n[[notify]]\ntype = "config.test_plugins:ListNotifier"\n'
        'channel = "ops"\ntoken = "${HB_PLUGIN_TOKEN}"\n'
    )
    config = load_config(path)
    (table,) = config.notify
    assert isinstance(table, PluginNotifierConfig)
    assert table.name == "ListNotifier" and table.options() == {"channel": "ops", "token": "tok-SECRET-123"}
    (built,) = build_notifiers(config.notify, base_dir=tmp_path)
    assert isinstance(built, ListNotifier)
    assert (built.name, built.channel) == ("ListNotifier", "ops")
    assert "tok-SECRET-123" in built.mask_with  # an ${ENV} value of the table is a secret to mask
    box = Outbox(tmp_path / "outbox")
    box.put(_note(), built.name, None)
    report = box.deliver([built], _note().created_at)
    assert report.delivered == ["agent-escalation-3 to ListNotifier"]
    assert [n.key for n in built.sent] == ["agent-escalation-3"]


def test_a_notifier_named_by_entry_point_loads(installed: Path) -> None:
    """`type = "pager"` finds the package's entry point in heartbeat.notifiers."""
    config = HeartbeatConfig.model_validate({"notify": [{"type": "pager", "name": "oncall", "channel": "x"}]})
    (built,) = build_notifiers(config.notify, base_dir=installed)
    assert isinstance(built, ListNotifier) and (built.name, built.channel) == ("oncall", "x")


def test_an_unknown_notifier_type_is_a_config_error_at_load(tmp_path: Path) -> None:
    """A misspelt built-in fails when the config loads, in one line naming the accepted forms."""
    path = tmp_path / "heartbeat.toml"
    path.write_text('[[notify]]\ntype = "webhok"\nurl = "https://example.com/h"\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "webhok" in message and "module:Class" in message and "heartbeat.notifiers" in message
    assert "\n" not in message


def test_a_plug_in_notifier_that_refuses_its_options_is_one_line(tmp_path: Path) -> None:
    """Options the class does not take are a ConfigError naming the notifier, not a traceback."""
    config = HeartbeatConfig.model_validate(
        {"notify": [{"type": "config.test_plugins:ListNotifier", "name": "n", "colour": "red"}]}
    )
    with pytest.raises(ConfigError, match=r"^notifier n: config.test_plugins:ListNotifier failed to start"):
        build_notifiers(config.notify, base_dir=tmp_path)


# -- one agent's plug-ins (AgentPlugins)


def test_an_agents_plug_ins_are_built_once_on_first_use(installed: Path) -> None:
    """The configured step and notifiers load when first asked for, then the same objects come back."""
    config = HeartbeatConfig.model_validate(
        {
            "base_dir": installed,
            "agent": {"step": "third", "state_dir": str(installed / "state")},
            "notify": [{"type": "pager", "name": "pager"}],
        }
    )
    plugins = AgentPlugins(config, config.all_agents()[0])
    step = plugins.step()
    assert step.__module__ == "hb_thirdparty"
    assert plugins.step() is step
    notifiers = plugins.notifiers()
    assert [type(n).__name__ for n in notifiers] == ["ListNotifier"]
    assert plugins.notifiers() is notifiers
    assert plugins.metric() is None  # none configured


def test_plug_ins_given_by_the_caller_are_used_as_they_are(tmp_path: Path) -> None:
    """A library caller's step and empty notifier list win over the config, which is never consulted."""
    config = HeartbeatConfig.model_validate(
        {
            "base_dir": tmp_path,
            "agent": {"step": "nowhere:step"},
            "notify": [{"type": "nowhere:Notifier", "name": "x"}],
        }
    )

    def step(ctx: object) -> None:
        return None

    plugins = AgentPlugins(config, config.all_agents()[0], step=step, notifiers=[])
    assert plugins.step() is step
    assert plugins.notifiers() == []
    configured = AgentPlugins(config, config.all_agents()[0])
    for load in (configured.step, configured.check_notifiers):
        with pytest.raises(ConfigError, match="no module named 'nowhere'"):
            load()
    # A tick's notifiers: the one that cannot be built stands in as one whose sends fail.
    (unbuilt,) = configured.notifiers()
    assert unbuilt.name == "x" and "no module named 'nowhere'" in configured.unbuilt[0]
