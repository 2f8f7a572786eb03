"""One agent's plug-ins: its step, progress metric, notifiers and model prices, each built on first use.

They are named and loaded as :mod:`heartbeat.config.plugins` says.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.errors import ConfigError
from ..config.notify import PluginNotifierConfig
from ..config.plugins import load_plugin

if TYPE_CHECKING:
    from ..config.file import AgentConfig, HeartbeatConfig
    from ..core.prices import Pricer
    from ..detect.progress import ProgressMetric
    from ..notify.notifiers import Notifier
    from .context import Step

__all__ = ["AgentPlugins", "build_step"]


def build_step(agent: AgentConfig, base_dir: Path) -> Step:
    """The agent's step: its ``exec`` program, else its ``step`` plug-in; ConfigError when neither."""
    if agent.exec:
        from .execstep import ExecStep

        return ExecStep(agent.exec, timeout=agent.exec_timeout.total_seconds())
    if not agent.step:
        raise ConfigError(
            "no step configured: set [agent] step = 'module:attr' or exec, or pass --step/--exec"
        )
    found = load_plugin("step", agent.step, search_path=base_dir)
    if not callable(found):
        raise ConfigError(f"step {agent.step!r} is not callable")
    step: Step = found
    return step


class AgentPlugins:
    """One agent's step, progress metric, notifiers and model prices: each built on first use, then kept.

    One given to the constructor (a library caller's, or a test's) is used as
    it is. Loading late keeps a tick from importing what it never uses: most
    ticks of a healthy agent never build the notifiers (and so never import httpx).
    """

    def __init__(
        self,
        config: HeartbeatConfig,
        agent: AgentConfig,
        *,
        step: Step | None = None,
        progress: ProgressMetric | None = None,
        notifiers: Sequence[Notifier] | None = None,
    ) -> None:
        self._config, self._agent = config, agent
        self._step = step
        self._metric = progress
        self._metric_loaded = progress is not None
        self._notifiers = list(notifiers) if notifiers is not None else None
        self.unbuilt: list[str] = []
        """Why each notifier that could not be built was not (see :meth:`notifiers`)."""
        self._found = False  # the notifier plug-ins' classes were found (find_notifiers)
        self._pricer: Pricer | None = None

    def check_configured(self) -> None:
        """ConfigError when there is nothing to run: no heartbeat.toml and no --step or --exec."""
        if self._step is None and self._config.file is None and not (self._agent.exec or self._agent.step):
            raise ConfigError(
                f"no heartbeat.toml here ({self._config.base_dir}) and no --step or --exec: "
                "`heartbeat init` writes a starter, or give --config FILE"
            )

    def step(self) -> Step:
        """The agent's step (see :func:`build_step`)."""
        if self._step is None:
            self.check_configured()
            self._step = build_step(self._agent, self._config.base_dir)
        return self._step

    def metric(self) -> ProgressMetric | None:
        """The progress metric, or None when none is configured."""
        if not self._metric_loaded:
            if self._agent.progress or self._config.progress:
                from ..detect.progress import build_metric

                self._metric = build_metric(self._config, self._agent)
            self._metric_loaded = True
        return self._metric

    def notifiers(self) -> list[Notifier]:
        """The configured notifiers; one that cannot be built is an ``Unbuilt`` whose sends fail,
        so the others still get every message, and :attr:`unbuilt` says why."""
        if self._notifiers is None:
            from ..notify.notifiers import build_notifiers

            config = self._config
            self._notifiers = build_notifiers(config.notify, base_dir=config.base_dir, unbuilt=self.unbuilt)
        return self._notifiers

    def find_notifiers(self) -> None:
        """ConfigError when a notifier plug-in's class cannot be found (its module missing, say): looked
        up, never built (building may reach a vault), so a tick fails before its step as it does for a
        misspelt metric. Once per process; notifiers given to the constructor are used as they are."""
        if self._found or self._notifiers is not None:
            return
        for table in self._config.notify:
            if isinstance(table, PluginNotifierConfig):
                found = load_plugin("notifier", table.type, search_path=self._config.base_dir)
                if not callable(found):
                    raise ConfigError(f"notifier {table.name}: {table.type!r} is not callable")
        self._found = True

    def check_notifiers(self) -> None:
        """ConfigError when a notifier cannot be built (``validate``, and ``run`` before it starts)."""
        self.notifiers()
        if self.unbuilt:
            raise ConfigError(self.unbuilt[0])

    def pricer(self) -> Pricer:
        """Prices model calls (``[budget.prices]``, then genai-prices), made at the first model call."""
        if self._pricer is None:
            from ..core.prices import Pricer

            self._pricer = Pricer(self._config.budget.prices)
        return self._pricer
