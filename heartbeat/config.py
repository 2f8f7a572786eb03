"""``heartbeat.toml``: the typed configuration, its loading and ``${ENV}`` secrets.

Every key is optional; flags override the file. Unknown keys are errors that
name the key, because a misspelt threshold silently left at its default is
the worst kind of 3 a.m. surprise. Secrets are written as ``${NAME}`` and
read from the environment when the file is loaded; they live only in memory.
"""

from __future__ import annotations

import os
import re
import tomllib
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from .errors import ConfigError

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
    "PolicyConfig",
    "ProgressConfig",
    "RecurringConfig",
    "RecurringErrorConfig",
    "RepeatConfig",
    "ScheduleConfig",
    "StopConfig",
    "WebhookNotifierConfig",
    "format_validation_error",
    "load_config",
    "parse_duration",
    "read_secret_ref",
]

DEFAULT_CONFIG_NAME = "heartbeat.toml"

_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def parse_duration(value: object) -> timedelta:
    """Read ``"90s"``, ``"30m"``, ``"1h30m"``, ``"1d"`` or a number of seconds."""
    if isinstance(value, timedelta):
        return value
    if isinstance(value, bool):
        raise ValueError("a duration is a number of seconds or a text like '30m'")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip().lower().replace(" ", "")
        if text.replace(".", "", 1).isdigit():
            seconds = float(text)
        else:
            pos, seconds = 0, 0.0
            for match in _DURATION.finditer(text):
                if match.start() != pos:
                    break
                seconds += float(match.group(1)) * _UNITS[match.group(2)]
                pos = match.end()
            if pos != len(text) or not text:
                raise ValueError(f"{value!r} is not a duration (try '90s', '30m', '1h30m', '1d')")
    else:
        raise ValueError("a duration is a number of seconds or a text like '30m'")
    if not 0 < seconds < 10 * 365 * 86400:
        raise ValueError(f"{value!r}: a duration must be positive and under ten years")
    return timedelta(seconds=seconds)


Duration = Annotated[timedelta, BeforeValidator(parse_duration)]


def _to_path(value: object) -> object:
    return Path(value) if isinstance(value, str) else value


# Strict types (no "3" for 3): a path is still written as a string in TOML.
ConfigPath = Annotated[Path, BeforeValidator(_to_path)]


class _Config(BaseModel):
    # strict: `escalate_after = "3"` is a typo of a number, refused rather than guessed.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class AgentConfig(_Config):
    """One agent: its step, its progress metric, its state folder and KILL file."""

    name: str = Field(default="agent", min_length=1, max_length=100)
    step: str | None = Field(default=None, description="The step as 'module:attr'.")
    exec: str | None = Field(default=None, description="A command run as the step instead.")
    exec_timeout: Duration = timedelta(minutes=10)
    progress: str | None = Field(default=None, description="The progress metric as 'module:attr'.")
    state_dir: ConfigPath = Path("state")
    kill_file: ConfigPath = Path("KILL")

    @model_validator(mode="after")
    def _one_step(self) -> AgentConfig:
        if self.step and self.exec:
            raise ValueError("give either step or exec, not both")
        return self


class ScheduleConfig(_Config):
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

    @model_validator(mode="after")
    def _one_trigger(self) -> ScheduleConfig:
        if self.every and self.cron:
            raise ValueError("give either every or cron, not both")
        return self


ToolThreshold = int | Literal["off"]
"""A per-tool threshold: a number, or "off" to leave the tool out."""

DETECTOR_BOUNDS: dict[str, tuple[int, int]] = {
    "repeat.threshold": (2, 10_000),
    "repeat.tools": (2, 10_000),
    "loop.window": (4, 10_000),
    "loop.repeats": (2, 1_000),
    "empty.threshold": (1, 10_000),
    "empty.max_chars": (0, 1_000_000),
    "error_rate.window": (1, 10_000),
    "near_repeat.threshold": (2, 10_000),
    "near_repeat.window": (2, 10_000),
    "recurring.threshold": (2, 10_000),
    "recurring.window": (2, 10_000),
    "recurring.min_chars": (0, 1_000_000),
    "recurring_error.threshold": (2, 10_000),
    "recurring_error.window": (2, 10_000),
    "cycle.threshold": (2, 10_000),
    "cycle.window": (3, 10_000),
    "no_progress.samples": (2, 1_000),
}
"""The one copy of the detectors' whole-number bounds: the config fields and the
detectors' own checks (heartbeat.detectors) both read it. Relations between two
parameters (a window at least its threshold) are checked by the detector."""


def _bounded(key: str, default: int, description: str | None = None) -> Any:
    """A config field for the detector parameter ``key`` with its bounds from DETECTOR_BOUNDS."""
    low, high = DETECTOR_BOUNDS[key]
    return Field(default=default, ge=low, le=high, description=description)


class RepeatConfig(_Config):
    """``repeat``: the last N actions have one fingerprint."""

    enabled: bool = True
    threshold: int = _bounded("repeat.threshold", 3)
    tools: dict[str, ToolThreshold] = Field(
        default_factory=dict, description="Per-tool threshold, or 'off' to exempt a tool."
    )


class LoopConfig(_Config):
    """``loop``: a cycle of 2+ fingerprints repeats back to back at the tail of the window."""

    enabled: bool = True
    window: int = _bounded("loop.window", 20)
    repeats: int = _bounded("loop.repeats", 2)
    exempt: list[str] = Field(default_factory=list, description="Tools left out of loops.")


class EmptyConfig(_Config):
    """``empty``: the last N reported outputs are each at most C characters."""

    enabled: bool = True
    threshold: int = _bounded("empty.threshold", 3)
    max_chars: int = _bounded("empty.max_chars", 10)
    exempt: list[str] = Field(default_factory=list)


class ErrorRateConfig(_Config):
    """``error_rate``: errors / W >= T over the last W actions."""

    enabled: bool = True
    window: int = _bounded("error_rate.window", 10)
    threshold: float = Field(default=0.5, gt=0, le=1)


class NearRepeatConfig(_Config):
    """``near_repeat``: one masked call shape N times in the last W actions, not all one call."""

    enabled: bool = True
    threshold: int = _bounded("near_repeat.threshold", 12)
    window: int = _bounded("near_repeat.window", 15)


class RecurringConfig(_Config):
    """``recurring``: the same call+result (or long output) N times in the last W actions."""

    enabled: bool = True
    threshold: int = _bounded("recurring.threshold", 5)
    window: int = _bounded("recurring.window", 30)
    min_chars: int = _bounded(
        "recurring.min_chars", 10, "Outputs this long or shorter never match by output alone."
    )


class RecurringErrorConfig(_Config):
    """``recurring_error``: the same error fingerprint N times in the last W actions."""

    enabled: bool = True
    threshold: int = _bounded("recurring_error.threshold", 3)
    window: int = _bounded("recurring_error.window", 10)


class CycleConfig(_Config):
    """``cycle``: N of the last W actions revisit a call+result seen earlier in the window."""

    enabled: bool = True
    threshold: int = _bounded("cycle.threshold", 10)
    window: int = _bounded("cycle.window", 30)


class NoProgressConfig(_Config):
    """``no_progress``: the last N progress samples differ by less than D."""

    enabled: bool = True
    samples: int = _bounded("no_progress.samples", 5)
    min_delta: float = Field(default=0.01, ge=0, allow_inf_nan=False)


class DetectorsConfig(_Config):
    """The stuck detectors and what every fingerprint leaves out."""

    volatile_args: list[str] = Field(default_factory=list)
    polling: list[str] = Field(
        default_factory=list,
        description="Tools whose result is part of their fingerprint: polling is fine "
        "until the result stops changing.",
    )
    exempt: list[str] = Field(default_factory=list, description="Tools no detector looks at.")
    custom: list[str] = Field(default_factory=list, description="Your detectors as 'module:attr'.")
    repeat: RepeatConfig = RepeatConfig()
    loop: LoopConfig = LoopConfig()
    empty: EmptyConfig = EmptyConfig()
    error_rate: ErrorRateConfig = ErrorRateConfig()
    no_progress: NoProgressConfig = NoProgressConfig()
    near_repeat: NearRepeatConfig = NearRepeatConfig()
    recurring: RecurringConfig = RecurringConfig()
    recurring_error: RecurringErrorConfig = RecurringErrorConfig()
    cycle: CycleConfig = CycleConfig()

    def history_needed(self) -> int:
        """The number of past actions the detectors need to see."""
        repeat = max([self.repeat.threshold, *(t for t in self.repeat.tools.values() if t != "off")])
        windows = [self.loop.window, self.empty.threshold, self.error_rate.window]
        for part in (self.near_repeat, self.recurring, self.recurring_error, self.cycle):
            if part.enabled:
                windows.append(part.window)
        return max(repeat, *windows)


class ProgressConfig(_Config):
    """A built-in progress metric, chosen by ``type``."""

    type: Literal["list_length", "words", "glob", "json_path", "pytest"]
    key: str | None = Field(default=None, description="list_length: the key in ctx.data.")
    path: ConfigPath | None = Field(
        default=None, description="words/json_path: the file; pytest: the folder."
    )
    pattern: str | None = Field(default=None, description="glob: the pattern, relative to the config.")
    pointer: str | None = Field(default=None, description="json_path: a dotted path like 'a.b.0'.")
    timeout: Duration = timedelta(seconds=60)

    @model_validator(mode="after")
    def _needs(self) -> ProgressConfig:
        need = {"list_length": "key", "words": "path", "glob": "pattern", "pytest": "path"}
        field = need.get(self.type)
        if field and getattr(self, field) is None:
            raise ValueError(f"the {self.type} metric needs '{field}'")
        if self.type == "json_path" and (self.path is None or self.pointer is None):
            raise ValueError("the json_path metric needs 'path' and 'pointer'")
        return self


class PolicyConfig(_Config):
    """When a stuck streak becomes an escalation, and the recovery texts."""

    escalate_after: int = Field(default=3, ge=1, le=1_000)
    mode: Literal["enforce", "observe"] = Field(
        default="enforce", description="observe: detect and journal, but inject nothing and never escalate."
    )
    recover_after: int = Field(
        default=2, ge=1, le=1_000, description="Quiet heartbeats in a row that end a stuck stretch."
    )
    escalate_on_ignored: bool = Field(
        default=True, description="Escalate when the agent repeats what the last recovery said to avoid."
    )
    templates: dict[Literal["try_alternative", "reassess_goal"], str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _templates_format(self) -> PolicyConfig:
        # A bad placeholder fails here, when the config is loaded, not when the agent is stuck.
        if self.templates:  # policy imports this module: import it only when there is work
            from .policy import check_templates

            check_templates({str(k): v for k, v in self.templates.items()})
        return self


class BudgetConfig(_Config):
    """Spending limits; a breach pauses the agent and notifies."""

    actions_per_tick: int | None = Field(default=None, ge=1)
    actions_per_day: int | None = Field(default=None, ge=1)
    cost_per_day: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    max_ticks: int | None = Field(default=None, ge=1)
    reset_hour: int = Field(default=0, ge=0, le=23, description="UTC hour the day starts.")


class EscalationConfig(_Config):
    """How often a waiting escalation reminds people."""

    reminder_every: Duration = timedelta(hours=6)


# Fields of a notifier whose ${ENV} values are secrets (a path or a timeout is not one).
_SECRET_FIELDS = ("url", "headers", "command")


class _NotifierConfig(_Config):
    """What every notifier table shares: its ``${ENV}`` values, expanded only when needed."""

    _unset: tuple[str, ...] = PrivateAttr(default=())
    _env_values: tuple[str, ...] = PrivateAttr(default=())

    def unset_env(self) -> tuple[str, ...]:
        """The ``${NAME}`` variables this notifier uses that were not set when the config loaded."""
        return self._unset

    def require_env(self) -> None:
        """Raise ConfigError when a variable this notifier needs is not set (to send, not to stop)."""
        if self._unset:
            name = getattr(self, "name", "?")
            raise ConfigError(f"notifier {name}: environment variable {self._unset[0]} is not set")

    def env_secrets(self) -> tuple[str, ...]:
        """The environment values this notifier's URL, headers or command hold."""
        return self._env_values


class WebhookNotifierConfig(_NotifierConfig):
    """POST JSON to a URL (Slack and Discord incoming webhooks show its ``text``)."""

    type: Literal["webhook"]
    name: str = Field(default="webhook", min_length=1, max_length=100, pattern=r"\S")
    url: str
    headers: dict[str, str] = Field(default_factory=dict)
    timeout: Duration = timedelta(seconds=10)
    retries: int = Field(default=2, ge=0, le=10)
    backoff: Duration = timedelta(seconds=0.5)

    @model_validator(mode="after")
    def _http_only(self) -> WebhookNotifierConfig:
        # The message must not echo the URL: it is a secret.
        if self._unset or "${" in self.url:
            return self  # checked once the variable is there (see require_env)
        scheme, sep, rest = self.url.partition("://")
        if not sep or scheme.lower() not in ("http", "https") or not rest.strip("/"):
            raise ValueError("the webhook url must be an http:// or https:// URL")
        return self


class CommandNotifierConfig(_NotifierConfig):
    """Run a command with the message on stdin."""

    type: Literal["command"]
    name: str = Field(default="command", min_length=1, max_length=100, pattern=r"\S")
    command: str
    timeout: Duration = timedelta(seconds=30)


class PingNotifierConfig(_NotifierConfig):
    """Ping a dead man's switch (healthchecks.io convention) at the start and end of every tick."""

    type: Literal["ping"]
    name: str = Field(default="ping", min_length=1, max_length=100, pattern=r"\S")
    url: str
    timeout: Duration = timedelta(seconds=5)
    fail_on: list[int] = Field(
        default_factory=lambda: [1, 2], description="Exit codes pinged as failures (URL/<code>)."
    )

    @model_validator(mode="after")
    def _http_only(self) -> PingNotifierConfig:
        scheme, sep, rest = self.url.partition("://")
        if not sep or scheme.lower() not in ("http", "https") or not rest.strip("/"):
            raise ValueError("the ping url must be an http:// or https:// URL")
        return self


class StopConfig(_Config):
    """A fleet-wide emergency stop that many hosts read: a URL or a file on shared storage."""

    url: str | None = None
    path: ConfigPath | None = None
    on_unreachable: Literal["stop", "go"] = "stop"
    timeout: Duration = timedelta(seconds=5)

    @model_validator(mode="after")
    def _one_source(self) -> StopConfig:
        if (self.url is None) == (self.path is None):
            raise ValueError("give either url or path")
        if self.url is not None and self.url.partition("://")[0].lower() not in ("http", "https"):
            raise ValueError("the stop url must be an http:// or https:// URL")
        return self


class FileNotifierConfig(_NotifierConfig):
    """Append each notification as a JSON line to a file."""

    type: Literal["file"]
    name: str = Field(default="file", min_length=1, max_length=100, pattern=r"\S")
    path: ConfigPath = Path("notifications.jsonl")


NotifierConfig = Annotated[
    WebhookNotifierConfig | CommandNotifierConfig | FileNotifierConfig | PingNotifierConfig,
    Field(discriminator="type"),
]


class JournalConfig(_Config):
    """Rotation of ``journal.jsonl``."""

    max_bytes: int = Field(default=1_000_000, ge=1_000)
    keep: int = Field(default=3, ge=1, le=100)


class HeartbeatConfig(_Config):
    """The whole ``heartbeat.toml``."""

    agent: AgentConfig = AgentConfig()
    agents: list[AgentConfig] = Field(
        default_factory=list, description="Several agents for one run; each inherits [agent]."
    )
    schedule: ScheduleConfig = ScheduleConfig()
    detectors: DetectorsConfig = DetectorsConfig()
    progress: ProgressConfig | None = None
    policy: PolicyConfig = PolicyConfig()
    budget: BudgetConfig = BudgetConfig()
    escalation: EscalationConfig = EscalationConfig()
    notify: list[NotifierConfig] = Field(default_factory=list)
    journal: JournalConfig = JournalConfig()
    stop: StopConfig | None = None
    base_dir: ConfigPath = Field(default=Path("."), exclude=True, description="Where relative paths start.")

    @model_validator(mode="after")
    def _unique_names(self) -> HeartbeatConfig:
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
                from .redact import webhook_secrets

                found += webhook_secrets(notifier.url, notifier.headers)
            elif isinstance(notifier, PingNotifierConfig) and not notifier.unset_env():
                from .redact import webhook_secrets

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

    def with_agent(self, **changes: Any) -> HeartbeatConfig:
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


def format_validation_error(error: ValidationError, *, prefix: str = "") -> str:
    """One line naming the first bad key and what is wrong with it."""
    first = error.errors(include_url=False)[0]
    loc = ".".join(str(part) for part in first["loc"] if not str(part).startswith("function-"))
    where = f"{prefix}{loc}" if loc else prefix.rstrip(".")
    if first["type"] == "extra_forbidden":
        return f"unknown key '{where}'"
    message = str(first["msg"]).removeprefix("Value error, ")
    more = error.error_count() - 1
    text = f"{where}: {message}" if where else message
    return text + (f" (and {more} more problem{'s' * (more > 1)})" if more else "")


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
        for key, value in table.items():
            secret = key in _SECRET_FIELDS
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
        from .fsutil import read_regular

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
        if not candidate.is_file():
            return HeartbeatConfig(base_dir=Path.cwd())
        path = candidate
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_bytes().decode("utf-8"))
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
        notifier._unset, notifier._env_values = unset, used
    return config
