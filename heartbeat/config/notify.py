"""``[[notify]]``: the config tables of the notifiers, built-in and plug-in."""

# No `from __future__ import annotations`: pydantic would compile each annotation string
# back into a type when the class is made, which every cron tick pays for (as in models.py).
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Literal, Self
from urllib.parse import urlsplit

from pydantic import ConfigDict, Discriminator, Field, PrivateAttr, Tag, field_validator, model_validator

from ..base.errors import ConfigError
from .types import TABLE, ConfigModel, ConfigPath, Duration, new_dict

__all__ = [
    "BUILTIN_TYPES",
    "SECRET_FIELDS",
    "CommandNotifierConfig",
    "FileNotifierConfig",
    "NotifierConfig",
    "NotifierConfigBase",
    "PingNotifierConfig",
    "PluginNotifierConfig",
    "WebhookNotifierConfig",
]

# Fields of a notifier whose ${ENV} values are secrets (a path or a timeout is not one).
SECRET_FIELDS = ("url", "headers", "command")


def _url_problem(url: str) -> str | None:
    """What is wrong with a notifier's URL, in words that never echo it (it is a secret), else None."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in ("http", "https") or not rest.strip("/"):
        return "must be an http:// or https:// URL"
    if any(char.isspace() or not char.isprintable() for char in url):
        return "must not hold spaces, line breaks or control characters"  # no client sends it
    try:
        _ = urlsplit(url).port  # an unclosed [IPv6 bracket, a port past 65535: raised at every send
    except ValueError:
        return "has a host or port that cannot be read"
    return None


class NotifierConfigBase(ConfigModel):
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

    def set_env(self, unset: tuple[str, ...], used: tuple[str, ...]) -> None:
        """Record what :func:`heartbeat.config.file.load_config` found when it expanded this table."""
        self._unset, self._env_values = unset, used

    def env_secrets(self) -> tuple[str, ...]:
        """The environment values this notifier's URL, headers or command hold."""
        return self._env_values


class WebhookNotifierConfig(NotifierConfigBase):
    """POST JSON to a URL (Slack and Discord incoming webhooks show its ``text``)."""

    type: Literal["webhook"]
    name: str = Field(default="webhook", min_length=1, max_length=100, pattern=r"\S")
    url: str
    headers: dict[str, str] = Field(default_factory=new_dict)
    timeout: Duration = timedelta(seconds=10)
    retries: int = Field(default=2, ge=0, le=10)
    backoff: Duration = timedelta(seconds=0.5)

    @model_validator(mode="after")
    def _http_only(self) -> Self:
        # The message must not echo the URL: it is a secret.
        if self._unset or "${" in self.url:
            return self  # checked once the variable is there (see require_env)
        problem = _url_problem(self.url)
        if problem:
            raise ValueError(f"the webhook url {problem}")
        for header, value in self.headers.items():
            # HTTP sends header names and values as ASCII; a line break would start another header.
            if not all(" " <= char <= "~" or char == "\t" for char in header + value):
                raise ValueError(f"the value of header {header!r} must be printable ASCII on one line")
        return self


class CommandNotifierConfig(NotifierConfigBase):
    """Run a command with the message on stdin."""

    type: Literal["command"]
    name: str = Field(default="command", min_length=1, max_length=100, pattern=r"\S")
    command: str
    timeout: Duration = timedelta(seconds=30)

    @model_validator(mode="after")
    def _no_shell(self) -> Self:
        import shlex

        from ..base.commandline import shell_problem

        try:
            argv = shlex.split(self.command)
        except ValueError:
            return self  # building the notifier says why
        problem = shell_problem(argv, braced=False)  # ${NAME} is heartbeat's own, expanded at load
        if problem:
            raise ValueError(problem)
        return self


class PingNotifierConfig(NotifierConfigBase):
    """Ping a dead man's switch (healthchecks.io convention) at the start and end of every tick."""

    type: Literal["ping"]
    name: str = Field(default="ping", min_length=1, max_length=100, pattern=r"\S")
    url: str
    timeout: Duration = timedelta(seconds=5)
    fail_on: list[int] = Field(
        default_factory=lambda: [1, 2], description="Exit codes pinged as failures (URL/<code>)."
    )

    @model_validator(mode="after")
    def _http_only(self) -> Self:
        if "${" in self.url:
            return self  # a variable not set: checked once it is there (require_env), as a webhook's
        problem = _url_problem(self.url)
        if problem:
            raise ValueError(f"the ping url {problem}")
        return self


class FileNotifierConfig(NotifierConfigBase):
    """Append each notification as a JSON line to a file."""

    type: Literal["file"]
    name: str = Field(default="file", min_length=1, max_length=100, pattern=r"\S")
    path: ConfigPath = Path("notifications.jsonl")


BUILTIN_TYPES = ("webhook", "command", "file", "ping")
"""The ``type`` names of the built-in notifiers; any other names a plug-in."""


class PluginNotifierConfig(NotifierConfigBase):
    """A plug-in notifier: ``type`` is ``module:Class`` or an entry point; other keys are its options."""

    model_config = ConfigDict(extra="allow", frozen=True, strict=True)

    type: str = Field(min_length=1, max_length=300)
    name: str = Field(min_length=1, max_length=100, pattern=r"\S")

    @model_validator(mode="before")
    @classmethod
    def _named(cls, data: Any) -> Any:
        if isinstance(data, dict) and "name" not in data and isinstance(data.get("type"), str):
            return {**data, "name": data["type"].rpartition(":")[2] or data["type"]}
        return data

    @field_validator("type")
    @classmethod
    def _known(cls, value: str) -> str:
        # A misspelt built-in is caught when the config loads, not when the first page is due.
        if ":" not in value:
            from importlib.metadata import entry_points

            if not any(ep.name == value for ep in entry_points(group="heartbeat.notifiers")):
                raise ValueError(
                    f"unknown notifier type {value!r}: use {', '.join(BUILTIN_TYPES)}, "
                    "'package.module:Class' or an entry point in group 'heartbeat.notifiers'"
                )
        return value

    def options(self) -> dict[str, Any]:
        """The table's keys besides ``type`` and ``name``: the plug-in's keyword arguments."""
        return dict(self.model_extra or {})


def _kind(value: Any) -> str | None:
    """Which model reads a ``[[notify]]`` table: its built-in type, else the plug-in one."""
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    if not isinstance(kind, str):
        return None
    return kind if kind in BUILTIN_TYPES else "plugin"


NotifierConfig = Annotated[
    Annotated[WebhookNotifierConfig, TABLE, Tag("webhook")]
    | Annotated[CommandNotifierConfig, TABLE, Tag("command")]
    | Annotated[FileNotifierConfig, TABLE, Tag("file")]
    | Annotated[PingNotifierConfig, TABLE, Tag("ping")]
    | Annotated[PluginNotifierConfig, TABLE, Tag("plugin")],
    Discriminator(
        _kind,
        custom_error_type="notifier_type",
        custom_error_message="a notifier table needs a type (webhook, command, file, ping or 'module:Class')",
    ),
]
