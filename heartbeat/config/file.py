"""``heartbeat.toml``: the typed configuration, its loading and ``${ENV}`` secrets.

Every key is optional; flags override the file. Unknown keys are errors that
name the key, because a misspelt threshold silently left at its default is
the worst kind of 3 a.m. surprise. Secrets are written as ``${NAME}`` and
read from the environment when the file is loaded; they live only in memory.
"""

# No `from __future__ import annotations`: pydantic would compile each annotation string
# back into a type when the class is made, which every cron tick pays for (as in models.py).
import os
import re
import tomllib
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import (
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from ..base.errors import ConfigError
from ..base.fsutil import read_regular
from .detectors import (
    DETECTOR_BOUNDS,
    CycleConfig,
    DetectorsConfig,
    EmptyConfig,
    ErrorRateConfig,
    LoopConfig,
    NearRepeatConfig,
    NoProgressConfig,
    RecurringConfig,
    RecurringErrorConfig,
    RepeatConfig,
    ToolThreshold,
)
from .notify import (
    BUILTIN_TYPES,
    SECRET_FIELDS,
    CommandNotifierConfig,
    FileNotifierConfig,
    NotifierConfig,
    PingNotifierConfig,
    PluginNotifierConfig,
    WebhookNotifierConfig,
)
from .policy import BudgetConfig, EscalationConfig, PolicyConfig
from .types import TABLE, ConfigModel, ConfigPath, Duration, defaults, new_list, parse_duration
from .validation import format_validation_error

__all__ = [
    "DETECTOR_BOUNDS",
    "AgentConfig",
    "BudgetConfig",
    "CommandNotifierConfig",
    "CycleConfig",
    "DetectorsConfig",
    "EmptyConfig",
    "ErrorRateConfig",
    "EscalationConfig",
    "FileNotifierConfig",
    "HeartbeatConfig",
    "JournalConfig",
    "LoopConfig",
    "NearRepeatConfig",
    "NoProgressConfig",
    "NotifierConfig",
    "PingNotifierConfig",
    "PluginNotifierConfig",
    "PolicyConfig",
    "ProgressConfig",
    "RecurringConfig",
    "RecurringErrorConfig",
    "RepeatConfig",
    "ScheduleConfig",
    "StopConfig",
    "ToolThreshold",
    "WebhookNotifierConfig",
    "format_validation_error",
    "load_config",
    "parse_duration",
    "read_secret_ref",
]

DEFAULT_CONFIG_NAME = "heartbeat.toml"

_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class AgentConfig(ConfigModel):
    """One agent: its step, its progress metric, its state folder and KILL file."""

    name: str = Field(default="agent", min_length=1, max_length=100)
    step: str | None = Field(default=None, description="The step as 'module:attr'.")
    exec: str | None = Field(default=None, description="A command run as the step instead.")
    exec_timeout: Duration = timedelta(minutes=10)
    progress: str | None = Field(default=None, description="The progress metric as 'module:attr'.")
    state_dir: ConfigPath = Path("state")
    kill_file: ConfigPath = Path("KILL")

    @field_validator("name")
    @classmethod
    def _one_line_name(cls, value: str) -> str:
        # The name starts lines of output, the journal's and notifications' text.
        if any(char < " " or char == "\x7f" for char in value):
            raise ValueError("must not hold line breaks or other control characters")
        return value

    @model_validator(mode="after")
    def _one_step(self) -> Self:
        if self.step and self.exec:
            raise ValueError("give either step or exec, not both")
        return self


class ScheduleConfig(ConfigModel):
    """When ``heartbeat run`` ticks: an interval or a cron expression."""

    every: Duration | None = None
    cron: str | None = None
    timezone: str = "UTC"
    misfire_grace_time: Duration = timedelta(minutes=5)

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        # Checked when the config loads, not when `run` first builds its trigger.
        if value == "UTC":
            return value
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {value!r} (use an IANA name like 'Europe/Paris')") from None
        return value

    @field_validator("cron")
    @classmethod
    def _crontab(cls, value: str | None) -> str | None:
        # Checked when the config loads, by every command alike, without the scheduler (a tick never
        # imports it): a cron that `run` and `status` refuse must not let `tick` run.
        from .cronexpr import cron_problem

        problem = cron_problem(value) if value is not None else None
        if problem:
            raise ValueError(f"{value!r}: {problem}")
        return value

    @model_validator(mode="after")
    def _one_trigger(self) -> Self:
        if self.every and self.cron:
            raise ValueError("give either every or cron, not both")
        return self


class ProgressConfig(ConfigModel):
    """A built-in progress metric, chosen by ``type``; without one, the timeout of the agent's own."""

    type: Literal["list_length", "words", "glob", "json_path", "pytest"] | None = Field(
        default=None, description="The built-in metric; none: [progress] sets agent.progress's timeout."
    )
    key: str | None = Field(default=None, description="list_length: the key in ctx.data.")
    path: ConfigPath | None = Field(
        default=None, description="words/json_path: the file; pytest: the folder."
    )
    pattern: str | None = Field(default=None, description="glob: the pattern, relative to the config.")
    pointer: str | None = Field(default=None, description="json_path: a dotted path like 'a.b.0'.")
    timeout: Duration = timedelta(seconds=60)

    @model_validator(mode="after")
    def _needs(self) -> Self:
        if self.type is None:
            given = [key for key in ("key", "path", "pattern", "pointer") if getattr(self, key) is not None]
            if given:
                raise ValueError(f"'{given[0]}' belongs to a built-in metric: give its type")
            return self
        need = {"list_length": "key", "words": "path", "glob": "pattern", "pytest": "path"}
        field = need.get(self.type)
        if field and getattr(self, field) is None:
            raise ValueError(f"the {self.type} metric needs '{field}'")
        if self.type == "json_path" and (self.path is None or self.pointer is None):
            raise ValueError("the json_path metric needs 'path' and 'pointer'")
        return self


class StopConfig(ConfigModel):
    """A fleet-wide emergency stop that many hosts read: a URL or a file on shared storage."""

    url: str | None = None
    path: ConfigPath | None = None
    on_unreachable: Literal["stop", "go"] = "stop"
    timeout: Duration = timedelta(seconds=5)

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if (self.url is None) == (self.path is None):
            raise ValueError("give either url or path")
        if self.url is not None and self.url.partition("://")[0].lower() not in ("http", "https"):
            raise ValueError("the stop url must be an http:// or https:// URL")
        return self


class JournalConfig(ConfigModel):
    """Rotation of ``journal.jsonl``."""

    max_bytes: int = Field(default=1_000_000, ge=1_000)
    keep: int = Field(default=3, ge=1, le=100)


class HeartbeatConfig(ConfigModel):
    """The whole ``heartbeat.toml``."""

    # Each table is validated by its own model, built only when the file has such a table.
    agent: Annotated[AgentConfig, TABLE] = Field(default_factory=defaults(AgentConfig))
    agents: list[Annotated[AgentConfig, TABLE]] = Field(
        default_factory=new_list, description="Several agents for one run; each inherits [agent]."
    )
    schedule: Annotated[ScheduleConfig, TABLE] = Field(default_factory=defaults(ScheduleConfig))
    detectors: Annotated[DetectorsConfig, TABLE] = Field(default_factory=defaults(DetectorsConfig))
    progress: Annotated[ProgressConfig, TABLE] | None = None
    policy: Annotated[PolicyConfig, TABLE] = Field(default_factory=defaults(PolicyConfig))
    budget: Annotated[BudgetConfig, TABLE] = Field(default_factory=defaults(BudgetConfig))
    escalation: Annotated[EscalationConfig, TABLE] = Field(default_factory=defaults(EscalationConfig))
    notify: list[NotifierConfig] = Field(default_factory=new_list)
    journal: Annotated[JournalConfig, TABLE] = Field(default_factory=defaults(JournalConfig))
    stop: Annotated[StopConfig, TABLE] | None = None
    base_dir: ConfigPath = Field(default=Path("."), exclude=True, description="Where relative paths start.")
    _file: Path | None = PrivateAttr(default=None)

    @property
    def file(self) -> Path | None:
        """The ``heartbeat.toml`` this config was read from; None when there was none (the defaults)."""
        return self._file

    @model_validator(mode="after")
    def _unique_names(self) -> Self:
        for i, entry in enumerate(self.agents):
            if "name" not in entry.model_fields_set:  # it would run under [agent]'s name, or as "agent"
                raise ValueError(f"agents[{i}] has no name: each [[agents]] entry needs its own name")
        for what, names in (
            ("agent", [a.name for a in self.all_agents()]),
            ("notifier", [n.name for n in self.notify]),
        ):
            dupes = sorted({n for n in names if names.count(n) > 1})
            if dupes:
                raise ValueError(f"{what} names must be unique; repeated: {', '.join(dupes)}")
        # "state", "./state" and a symlink to it are one folder: compare where they lead.
        dirs = [os.path.realpath(self.resolve(a.state_dir)) for a in self.all_agents()]
        if len(set(dirs)) != len(dirs):
            raise ValueError("each agent needs its own state_dir (two of them lead to one folder)")
        return self

    def require_env(self) -> None:
        """Raise ConfigError if a notifier needs an environment variable that is not set."""
        for notifier in self.notify:
            notifier.require_env()

    def secrets(self) -> list[str]:
        """Every secret the config holds: webhook URLs and headers, and ``${ENV}`` values of notifiers."""
        found: list[str] = []
        for notifier in self.notify:
            found += notifier.env_secrets()
            if isinstance(notifier, WebhookNotifierConfig) and not notifier.unset_env():
                from ..base.redact import webhook_secrets

                found += webhook_secrets(notifier.url, notifier.headers)
            elif isinstance(notifier, PingNotifierConfig) and not notifier.unset_env():
                from ..base.redact import webhook_secrets

                found += webhook_secrets(notifier.url, {})  # a ping URL's path is its check's secret id
        return found

    def all_agents(self) -> list[AgentConfig]:
        """Every agent, each ``[[agents]]`` entry filled in from ``[agent]``."""
        if not self.agents:
            return [self.agent]
        base = self.agent.model_dump(exclude_unset=False)
        return [AgentConfig.model_validate({**base, **a.model_dump(exclude_unset=True)}) for a in self.agents]

    def resolve(self, path: Path) -> Path:
        """A path from the config, relative to the config file's folder."""
        return path if path.is_absolute() else self.base_dir / path

    def with_agent(self, **changes: Any) -> Self:
        """A copy with ``[agent]`` keys replaced (flags override the file); None means unchanged."""
        changes = {k: v for k, v in changes.items() if v is not None}
        if not changes:
            return self
        # A step given by flag replaces the configured one of either kind.
        if changes.get("exec"):
            changes["step"] = None
        elif changes.get("step"):
            changes["exec"] = None
        agent = AgentConfig.model_validate({**self.agent.model_dump(exclude_unset=True), **changes})
        return self.model_copy(update={"agent": agent, "agents": []})


def _expand_env(value: Any, where: str, unset: list[str] | None = None, used: list[str] | None = None) -> Any:
    """Replace ``${NAME}`` / ``${NAME:-default}`` in every string from the environment.

    A variable that is not set (and has no default) is an error, unless
    ``unset`` is given: then its name is added there and the ``${NAME}`` is
    left as it is (a notifier's secret is needed to send, not to stop an
    agent). The values taken from the environment are added to ``used``.
    """
    if isinstance(value, str):

        def sub(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            found = os.environ.get(name)
            if found is None:
                if default is not None:
                    return default
                if unset is None:
                    raise ConfigError(f"{where}: environment variable {name} is not set")
                unset.append(name)
                return match.group(0)
            if used is not None:
                used.append(found)
            return found

        return _ENV.sub(sub, value)
    if isinstance(value, dict):
        return {k: _expand_env(v, f"{where}.{k}" if where else k, unset, used) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand_env(v, f"{where}[{i}]", unset, used) for i, v in enumerate(value)]
    return value


def _expand_notifiers(tables: Any) -> tuple[Any, list[tuple[tuple[str, ...], tuple[str, ...]]]]:
    """``[[notify]]`` tables expanded leniently; per table, its unset variables and its secret values."""
    if not isinstance(tables, list):
        return _expand_env(tables, "notify"), []
    expanded: list[Any] = []
    extras: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    for i, table in enumerate(tables):
        if not isinstance(table, dict):
            expanded.append(_expand_env(table, f"notify[{i}]"))
            extras.append(((), ()))
            continue
        unset: list[str] = []
        used: list[str] = []
        out = {}
        # A plug-in's keys mean nothing to heartbeat: every ${ENV} value in its table is a secret.
        plugin = table.get("type") not in BUILTIN_TYPES
        for key, value in table.items():
            secret = plugin or key in SECRET_FIELDS
            out[key] = _expand_env(value, f"notify[{i}].{key}", unset, used if secret else None)
        expanded.append(out)
        extras.append((tuple(dict.fromkeys(unset)), tuple(v for v in used if len(v) >= 6)))
    return expanded, extras


def read_secret_ref(value: str, what: str) -> str:
    """``value`` itself, or the text of ``env:NAME`` / ``file:PATH`` (kept out of ``ps``), stripped."""
    if value.startswith("env:"):
        name = value[4:]
        found = os.environ.get(name)
        if not found:
            raise ConfigError(f"{what}: environment variable {name or '(empty name)'} is not set")
        return found.strip()
    if value.startswith("file:"):
        path = Path(value[5:]).expanduser()
        from ..base.fsutil import read_regular

        try:
            text = read_regular(path, limit=64 * 1024).decode("utf-8").strip()
        except UnicodeDecodeError:
            raise ConfigError(f"{what}: {path} is not UTF-8 text") from None
        except OSError as exc:
            raise ConfigError(f"{what}: cannot read {path}: {exc.strerror}") from None
        if not text:
            raise ConfigError(f"{what}: {path} is empty")
        return text.splitlines()[0].strip()
    return value


def load_config(path: Path | str | None = None) -> HeartbeatConfig:
    """Load ``heartbeat.toml`` (default: ``./heartbeat.toml`` when present) or the defaults."""
    if path is None:
        candidate = Path(DEFAULT_CONFIG_NAME)
        # Only a missing one means the defaults: a folder, FIFO or broken link of that name is
        # the user's config gone wrong, said below, never run without.
        if not candidate.is_file() and not os.path.lexists(candidate):
            return HeartbeatConfig(base_dir=Path.cwd())
        path = candidate
    path = Path(path)
    try:
        # Never a plain read: a FIFO would wait for a writer for good, /dev/zero never end.
        raw = tomllib.loads(read_regular(path).decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError("no such file", path=path) from None
    except IsADirectoryError:
        raise ConfigError("is a directory, not a TOML file", path=path) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text (byte {exc.start})", path=path) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", path=path) from None
    except RecursionError:
        raise ConfigError("not valid TOML: nested too deeply", path=path) from None
    except OSError as exc:
        if os.path.isdir(path):
            raise ConfigError("is a directory, not a TOML file", path=path) from None
        raise ConfigError(f"cannot read: {exc.strerror}", path=path) from None
    try:
        # Notifier secrets are expanded leniently: `kill`, `status` or `resume` must work in a
        # shell that lacks them; what sends a notification asks for them (require_env).
        notify, extras = _expand_notifiers(raw.pop("notify")) if "notify" in raw else (None, [])
        data = _expand_env(raw, "")
    except ConfigError as exc:
        raise ConfigError(exc.reason, path=path) from None
    if "base_dir" in data:
        raise ConfigError("unknown key 'base_dir'", path=path)
    if notify is not None:
        data["notify"] = notify
    try:
        config = HeartbeatConfig.model_validate({**data, "base_dir": path.resolve().parent})
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc), path=path) from None
    for notifier, (unset, used) in zip(config.notify, extras, strict=False):
        notifier.set_env(unset, used)
    config._file = path
    return config
