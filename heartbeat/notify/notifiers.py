"""Notifiers: the built-in kinds and the ones a ``[[notify]]`` table names by plug-in.

A ``[[notify]]`` table's ``type`` is a built-in name (``webhook``,
``command``, ``file``, ``ping``), a ``package.module:Class`` or the name of
an entry point in the ``heartbeat.notifiers`` group; every kind loads
through :func:`heartbeat.tick.plugins.load_plugin`. A plug-in notifier is called
as ``Class(name, **options)`` with the table's other keys, and must have a
``name`` and a ``send(notification)`` (see :class:`Notifier`).

Each kind's module is imported only when a table uses it, so a tick that
notifies through a file never loads the webhook's machinery.

A notifier that cannot be built (a plug-in whose constructor raises: its
vault is down, say) must not cost the others their message: built with
``unbuilt``, it is replaced by an :class:`Unbuilt` whose every send fails with why,
so its notifications wait in ``outbox/`` like any failed send's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.errors import ConfigError, NotifyError
from ..base.redact import webhook_secrets
from ..config.notify import WebhookNotifierConfig
from .base import Notifier

if TYPE_CHECKING:
    import httpx

    from ..config.file import NotifierConfig
    from ..core.models import Notification

__all__ = ["BUILTIN_NOTIFIERS", "Notifier", "Unbuilt", "build_notifiers"]

Builder = Callable[[Any, Path, "httpx.Client | None"], Notifier]


def _webhook(config: Any, base_dir: Path, client: httpx.Client | None) -> Notifier:
    from .webhook import WebhookNotifier

    return WebhookNotifier(
        config.name,
        config.url,
        headers=config.headers,
        timeout=config.timeout.total_seconds(),
        retries=config.retries,
        backoff=config.backoff.total_seconds(),
        client=client,
    )


def _command(config: Any, base_dir: Path, client: httpx.Client | None) -> Notifier:
    from .command import CommandNotifier

    return CommandNotifier(config.name, config.command, timeout=config.timeout.total_seconds(), cwd=base_dir)


def _file(config: Any, base_dir: Path, client: httpx.Client | None) -> Notifier:
    from .file import FileNotifier

    path = config.path if config.path.is_absolute() else base_dir / config.path
    return FileNotifier(config.name, path)


def _ping(config: Any, base_dir: Path, client: httpx.Client | None) -> Notifier:
    from .ping import PingNotifier

    return PingNotifier(
        config.name, config.url, timeout=config.timeout.total_seconds(), fail_on=frozenset(config.fail_on)
    )


BUILTIN_NOTIFIERS: Mapping[str, Builder] = {
    "webhook": _webhook,
    "command": _command,
    "file": _file,
    "ping": _ping,
}
"""The built-in ``type`` names, each with what builds its notifier from its table."""


def _plugin(config: Any, base_dir: Path) -> Notifier:
    """A notifier named by ``module:Class`` or entry point, built from its table's other keys."""
    from ..config.plugins import load_plugin

    factory = load_plugin("notifier", config.type, search_path=base_dir)
    if not callable(factory):
        raise ConfigError(f"notifier {config.name}: {config.type!r} is not callable")
    try:
        built = factory(config.name, **config.options())
    except ConfigError:
        raise
    except (Exception, SystemExit) as exc:  # the plug-in refused its options (or exited): one line
        raise ConfigError(f"notifier {config.name}: {config.type} failed to start: {exc!r}") from None
    if not callable(getattr(built, "send", None)) or not isinstance(getattr(built, "name", None), str):
        raise ConfigError(f"notifier {config.name}: {config.type} has no name and send(notification)")
    notifier: Notifier = built
    return notifier


class Unbuilt:
    """Stands in for a notifier that could not be built: every send fails with ``error`` (why)."""

    def __init__(self, name: str, error: str) -> None:
        self.name = name
        self.error = error

    def send(self, message: Notification) -> None:
        """Fail: the notification waits in ``outbox/`` until the notifier can be built."""
        raise NotifyError(self.name, f"could not be built: {self.error}")


def build_notifiers(
    configs: Sequence[NotifierConfig],
    *,
    base_dir: Path,
    client: httpx.Client | None = None,
    unbuilt: list[str] | None = None,
) -> list[Notifier]:
    """The notifiers the ``[[notify]]`` tables describe; relative paths start at ``base_dir``.

    A notifier whose ``${ENV}`` secret is not set raises ConfigError here:
    building notifiers is what needs the value. Each notifier masks every
    secret of the whole list (URLs, headers, ``${ENV}`` values) out of what it sends.
    One that cannot be built raises ConfigError too; given ``unbuilt``, it is an
    :class:`Unbuilt` in the list instead, and its error is appended to ``unbuilt``.
    """
    secrets: list[str] = []
    for config in configs:
        config.require_env()
        secrets += config.env_secrets()
        if isinstance(config, WebhookNotifierConfig):
            secrets += webhook_secrets(config.url, config.headers)
    notifiers: list[Notifier] = []
    for config in configs:
        builder = BUILTIN_NOTIFIERS.get(config.type)
        try:
            built = builder(config, base_dir, client) if builder is not None else _plugin(config, base_dir)
        except ConfigError as exc:
            if unbuilt is None:
                raise
            unbuilt.append(str(exc))
            built = Unbuilt(config.name, exc.reason.removeprefix(f"notifier {config.name}: "))
        if hasattr(built, "mask_with"):  # the built-ins but ping, and any plug-in that wants them
            built.mask_with = secrets
        notifiers.append(built)
    return notifiers
