"""Command-line flags over ``heartbeat.toml``: the config a command works on, and the flags that
name an agent from any folder (:func:`addressed`).

Flags override the file; a flag path is relative to the current folder (a
path in the file is relative to the file's folder). Kept out of the CLI so a
script gets exactly what the command would.
"""

from __future__ import annotations

import shlex
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..base.errors import UsageError
from .cronexpr import cron_problem
from .file import (
    DEFAULT_CONFIG_NAME,
    AgentConfig,
    HeartbeatConfig,
    WebhookNotifierConfig,
    format_validation_error,
    load_config,
    parse_duration,
    read_secret_ref,
)

__all__ = [
    "addressed",
    "check_kill_target",
    "config_with_flags",
    "config_with_overrides",
    "fallback_kill_files",
    "schedule_with_flags",
]


def _absolute(value: str | Path | None) -> Path | None:
    return Path(value).resolve() if value else None


def config_with_flags(
    config_file: str | Path | None = None,
    *,
    agent: str | None = None,
    state_dir: str | Path | None = None,
    kill_file: str | Path | None = None,
    step: str | None = None,
    exec: str | None = None,
    progress: str | None = None,
    webhook: str | None = None,
) -> HeartbeatConfig:
    """The config file (or the defaults) with the command's flags applied."""
    config = load_config(config_file)
    if agent:
        picked = [a for a in config.all_agents() if a.name == agent]
        if not picked:
            names = ", ".join(a.name for a in config.all_agents())
            raise UsageError(f"no agent named {agent!r} (agents: {names})")
        config = config.model_copy(update={"agent": picked[0], "agents": []})
    changes: dict[str, Any] = {
        "state_dir": _absolute(state_dir),
        "kill_file": _absolute(kill_file),
        "step": step,
        "progress": progress,
        "exec": exec,
    }
    if any(v is not None for v in changes.values()):
        if len(config.all_agents()) > 1:
            raise UsageError("flags that change an agent need --agent NAME in a multi-agent config")
        config = config.with_agent(**changes)
    if webhook:
        url = read_secret_ref(webhook, "--webhook")  # env:NAME or file:PATH keep it out of `ps`
        try:
            hook = WebhookNotifierConfig(type="webhook", name="webhook", url=url)
        except ValidationError as exc:
            raise UsageError(f"--webhook: {format_validation_error(exc)}") from None
        config = config.model_copy(
            update={"notify": [*(n for n in config.notify if n.name != "webhook"), hook]}
        )
    return config


def config_with_overrides(
    config_file: str | Path | None = None,
    *,
    state_dir: str | Path | None = None,
    kill_file: str | Path | None = None,
    agent: str | None = None,
) -> tuple[HeartbeatConfig, AgentConfig | None]:
    """A library caller's config (``Session.from_files``): the file, then its overrides; ValueError if bad.

    Returns the config and the agent picked by name (None: the config's only
    agent). The config keeps its other agents unless a path is overridden,
    so messages still name the agent (``heartbeat resume --agent NAME``).
    """
    settings = load_config(config_file)
    picked: AgentConfig | None = None
    if agent is not None:
        found = [a for a in settings.all_agents() if a.name == agent]
        if not found:
            names = ", ".join(a.name for a in settings.all_agents())
            raise ValueError(f"no agent named {agent!r} (agents: {names})")
        picked = found[0]
    changes = {
        "state_dir": Path(state_dir).resolve() if state_dir is not None else None,
        "kill_file": Path(kill_file).resolve() if kill_file is not None else None,
    }
    if any(v is not None for v in changes.values()):
        if picked is not None:
            settings = settings.model_copy(update={"agent": picked, "agents": []})
            picked = None
        elif len(settings.all_agents()) > 1:
            raise ValueError("state_dir/kill_file need agent=NAME in a multi-agent config")
        settings = settings.with_agent(**changes)
    return settings, picked


def schedule_with_flags(
    config: HeartbeatConfig, *, every: str | None, cron: str | None
) -> tuple[timedelta | None, str | None]:
    """``run``'s schedule: ``--every`` or ``--cron`` when given, else ``[schedule]``."""
    if every is not None and cron is not None:
        raise UsageError("give --every or --cron, not both")
    if every is None and cron is None:
        return config.schedule.every, config.schedule.cron
    if cron is not None and (problem := cron_problem(cron)) is not None:
        raise UsageError(f"--cron: {problem}")
    try:
        return (parse_duration(every) if every is not None else None), cron
    except ValueError as exc:
        raise UsageError(f"--every: {exc}") from None


def check_kill_target(
    config: HeartbeatConfig,
    *,
    config_file: str | Path | None,
    state_dir: str | Path | None,
    kill_file: str | Path | None,
) -> None:
    """Refuse to write a KILL file the agent would never read (its KILL is set by its config)."""
    if kill_file:
        return  # said explicitly where
    has_config = bool(config_file) or Path(DEFAULT_CONFIG_NAME).is_file()
    if state_dir:
        wanted = Path(state_dir).resolve()
        file_config = load_config(config_file)
        known = [file_config.resolve(a.state_dir).resolve() for a in file_config.all_agents()]
        if not has_config or wanted not in known:
            raise UsageError(
                f"kill --state-dir {state_dir}: the KILL file that agent reads is set by its "
                "heartbeat.toml (kill_file, beside the config); give --config FILE, or --kill-file PATH"
            )
        return
    if not has_config and not any(config.resolve(a.state_dir).is_dir() for a in config.all_agents()):
        raise UsageError(
            "kill: no heartbeat.toml and no state folder here: wrong folder? "
            "give --config FILE, or --kill-file PATH"
        )


def fallback_kill_files(
    config_file: str | Path | None, *, agent: str | None = None, kill_file: str | Path | None = None
) -> tuple[list[Path], str]:
    """Where ``kill`` writes when the config cannot be loaded: the KILL files, and where that came from.

    ``kill`` needs only the KILL file's path, so a config with an error elsewhere must not
    stop it: ``--kill-file``, else each agent's ``kill_file`` as the TOML says it (when
    the file still parses and names it as plain text), else ``KILL`` beside the config
    file, the default.
    """
    if kill_file:
        return [Path(kill_file).resolve()], "--kill-file"
    path = Path(config_file) if config_file else Path(DEFAULT_CONFIG_NAME)
    base = path.resolve().parent
    found: list[Path] = []
    try:
        import tomllib

        from ..base.fsutil import read_regular

        raw = tomllib.loads(read_regular(path).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        raw = {}
    top: dict[str, Any] = raw["agent"] if isinstance(raw.get("agent"), dict) else {}
    tables: list[Any] = raw["agents"] if isinstance(raw.get("agents"), list) else []
    entries: list[dict[str, Any]] = [t for t in tables if isinstance(t, dict)] or [top]
    for entry in entries:
        if agent and entry.get("name", top.get("name", "agent")) != agent:
            continue
        named = entry.get("kill_file", top.get("kill_file"))
        if isinstance(named, str) and named.strip() and "$" not in named:
            where = Path(named)
            found.append(where if where.is_absolute() else base / where)
    if found:
        return list(dict.fromkeys(found)), f"the kill_file {path} names"
    return [base / "KILL"], "the default path beside it"


def addressed(command: str, config: HeartbeatConfig, agent: str, state_dir: Path) -> str:
    """``heartbeat COMMAND`` for ``agent`` as a person runs it from any folder: the config file (and
    the agent's name in it) when there is one, and the state folder, as absolute paths.

    Such a command is read where ESCALATION.md and report.html sit (the state folder), in a
    notification or in an MCP client's answer: the config's folder, where a bare ``heartbeat
    COMMAND`` finds the config, is seldom there.
    """
    verb, _, rest = command.partition(" ")
    where: list[str] = []
    # absolute(), not resolve(): a path is named as it was given, and a symlink loop where the
    # state folder should be is the command's own error to report, not this text's to raise.
    if config.file is not None:
        # --agent too: with --state-dir, a config of several agents needs it to know which one.
        where += ["--config", str(config.file.absolute()), "--agent", agent]
    where += ["--state-dir", str(state_dir.absolute())]
    return " ".join(part for part in ("heartbeat", verb, shlex.join(where), rest) if part)
