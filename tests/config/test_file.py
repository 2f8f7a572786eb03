"""heartbeat.toml: loading, defaults, ${ENV} secrets and one-line errors."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from heartbeat.base.errors import ConfigError
from heartbeat.config.file import HeartbeatConfig, load_config, parse_duration


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "heartbeat.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("30m", 1800), ("1h30m", 5400), ("1d", 86400), ("250ms", 0.25), (45, 45), ("12", 12)],
)
def test_durations(text: object, seconds: float) -> None:
    """Durations read as numbers of seconds or unit texts."""
    assert parse_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("bad", ["", "soon", "10 parsecs", "-5s", 0, True, "5m garbage"])
def test_bad_durations(bad: object) -> None:
    """Anything else is a clear error."""
    with pytest.raises(ValueError):
        parse_duration(bad)


def test_defaults_without_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No heartbeat.toml gives the documented defaults."""
    monkeypatch.chdir(tmp_path)
    config = load_config()
    assert config.detectors.repeat.threshold == 3
    assert config.detectors.loop.window == 20 and config.detectors.loop.repeats == 2
    assert config.detectors.error_rate.threshold == 0.5
    assert config.detectors.no_progress.samples == 4
    assert config.policy.escalate_after == 3
    assert config.base_dir == tmp_path


def test_relative_paths_start_at_the_config(tmp_path: Path) -> None:
    """state_dir and kill_file resolve against the config file's folder."""
    config = load_config(write(tmp_path, '[agent]\nstate_dir = "s"\n'))
    assert config.resolve(config.agent.state_dir) == tmp_path / "s"
    assert config.resolve(config.agent.kill_file) == tmp_path / "KILL"


def test_unknown_key_is_named(tmp_path: Path) -> None:
    """A misspelt key is an error naming it, not a silently ignored default."""
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, "[detectors.repeat]\nthreshhold = 5\n"))
    assert "detectors.repeat.threshhold" in str(info.value)
    assert "\n" not in str(info.value)


def test_bad_value_names_key_and_problem(tmp_path: Path) -> None:
    """A wrong type points at the key."""
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, "[policy]\nescalate_after = 'often'\n"))
    assert "policy.escalate_after" in str(info.value)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[stop]\npath = ''\n", "stop.path"),
        ("[agent]\nkill_file = ' '\n", "agent.kill_file"),
        ("[agent]\nstate_dir = ''\n", "agent.state_dir"),
    ],
)
def test_an_empty_path_is_refused(tmp_path: Path, text: str, key: str) -> None:
    """An empty path is the config's own folder: a fleet stop or a KILL file there is always
    present (live round 55: ``[stop] path = ""`` passed ``validate`` and stopped every tick)."""
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    assert key in str(info.value) and "must not be empty" in str(info.value)


@pytest.mark.parametrize(
    "content",
    [b"[agent\n", b"\xff\xfe not utf-8", b"[schedule]\nevery = '1s'\ncron = '* * * * *'\n"],
)
def test_unreadable_configs(tmp_path: Path, content: bytes) -> None:
    """Broken TOML, bad bytes and contradictions are one-line ConfigErrors."""
    path = tmp_path / "heartbeat.toml"
    path.write_bytes(content)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert "\n" not in str(info.value)


def test_config_path_that_is_a_directory(tmp_path: Path) -> None:
    """A folder where the config should be is a clear error."""
    with pytest.raises(ConfigError, match="directory"):
        load_config(tmp_path)


def test_env_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """${NAME} comes from the environment; a missing notifier secret is named when it is needed."""
    path = write(tmp_path, '[[notify]]\ntype = "webhook"\nurl = "${HOOK_URL}"\n')
    monkeypatch.setenv("HOOK_URL", "https://hooks.example/T0/SECRET")
    assert load_config(path).notify[0].url == "https://hooks.example/T0/SECRET"  # type: ignore[union-attr]
    monkeypatch.delenv("HOOK_URL")
    config = load_config(path)  # loads: `kill` or `status` need no notifier secret
    with pytest.raises(ConfigError, match="notifier webhook: environment variable HOOK_URL is not set"):
        config.require_env()
    agent_path = write(tmp_path, '[agent]\nstate_dir = "${NO_SUCH_DIR_VAR}"\n')
    with pytest.raises(ConfigError, match="NO_SUCH_DIR_VAR"):
        load_config(agent_path)  # everything else is needed by every command: strict


def test_env_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """${NAME:-default} falls back when the variable is unset."""
    monkeypatch.delenv("HB_NAME", raising=False)
    config = load_config(write(tmp_path, '[agent]\nname = "${HB_NAME:-fallback}"\n'))
    assert config.agent.name == "fallback"


def test_several_agents_inherit_agent_table(tmp_path: Path) -> None:
    """[[agents]] entries take what they do not set from [agent]."""
    config = load_config(
        write(
            tmp_path,
            """
[agent]
step = "mod:step"
[[agents]]
name = "a"
state_dir = "state/a"
[[agents]]
name = "b"
state_dir = "state/b"
step = "other:step"
""",
        )
    )
    a, b = config.all_agents()
    assert (a.name, a.step, b.step) == ("a", "mod:step", "other:step")


def test_agents_need_their_own_state_dir() -> None:
    """Two agents sharing a state folder would share a lock and a history: refused."""
    with pytest.raises(ValueError, match="state_dir"):
        HeartbeatConfig.model_validate({"agents": [{"name": "a"}, {"name": "b"}]})


def test_history_needed_covers_every_window() -> None:
    """The persisted history must hold the largest detector window."""
    config = HeartbeatConfig.model_validate(
        {"detectors": {"loop": {"window": 500}, "repeat": {"tools": {"poll": 40}}}}
    )
    assert config.detectors.history_needed() == 500


def test_only_the_tables_a_file_has_build_their_validators(tmp_path: Path) -> None:
    """A fresh process loading [agent] and one webhook builds those validators only (cold start).

    The other tables get their defaults without validation; a table given later is
    validated as usual (and named in its errors, as the other tests here check).
    """
    (tmp_path / "heartbeat.toml").write_text(
        '[agent]\nname = "a"\n[[notify]]\ntype = "webhook"\nurl = "http://127.0.0.1:9/x"\n'
    )
    script = (
        "from heartbeat.config import file as c\n"
        "cfg = c.load_config('heartbeat.toml')\n"
        "assert cfg.detectors.repeat.threshold == 3 and cfg.policy.escalate_after == 3\n"
        "names = ['HeartbeatConfig', 'AgentConfig', 'WebhookNotifierConfig', 'DetectorsConfig',\n"
        "         'RepeatConfig', 'PolicyConfig', 'ScheduleConfig', 'CommandNotifierConfig']\n"
        "print(' '.join(n for n in names if getattr(c, n).__pydantic_complete__))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["HeartbeatConfig", "AgentConfig", "WebhookNotifierConfig"]


def test_a_progress_table_may_only_time_the_agents_own_metric(tmp_path: Path) -> None:
    """``[progress] timeout`` alone sets the timeout of ``agent.progress`` (live round 52: refused,
    "progress.type: required"); a built-in's key without its type is a one-line error."""
    config = load_config(write(tmp_path, '[agent]\nprogress = "m:p"\n\n[progress]\ntimeout = "120s"\n'))
    assert config.progress is not None and config.progress.type is None
    assert config.progress.timeout == timedelta(seconds=120)
    with pytest.raises(ConfigError, match="'path' belongs to a built-in metric: give its type"):
        load_config(write(tmp_path, '[progress]\npath = "report.md"\n'))
