"""Command-line flags over ``heartbeat.toml``: the config a command works on.

Flags override the file; a flag path is relative to the current folder (a
path in the file is relative to the file's folder). Kept out of the CLI so a
script gets exactly what the command would.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .config import HeartbeatConfig, WebhookNotifierConfig, format_validation_error, load_config
from .errors import UsageError

__all__ = ["config_with_flags"]


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
        try:
            hook = WebhookNotifierConfig(type="webhook", name="webhook", url=webhook)
        except ValidationError as exc:
            raise UsageError(f"--webhook: {format_validation_error(exc)}") from None
        config = config.model_copy(
            update={"notify": [*(n for n in config.notify if n.name != "webhook"), hook]}
        )
    return config
