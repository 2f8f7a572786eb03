"""The one plug-in registry: steps, progress metrics, detectors and notifiers load through here.

A plug-in is named in ``heartbeat.toml`` (or a flag) in one of three ways:

* a **built-in name** the caller knows (``"repeat"`` for a detector);
* ``"package.module:attr"``: attr may be dotted; the config's folder is on
  the import path, so ``"agent:step"`` works beside ``heartbeat.toml``;
* an **entry point name**: a third-party package ships it under the group
  of its kind (:data:`GROUPS`), e.g. in its ``pyproject.toml``::

      [project.entry-points."heartbeat.notifiers"]
      pager = "heartbeat_pager:PagerNotifier"

Import paths come only from the config file or flags, never from
``state.json``, so a tampered state file cannot make heartbeat import anything.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ConfigError

if TYPE_CHECKING:
    from .config import AgentConfig, HeartbeatConfig
    from .context import Step
    from .notifiers import Notifier
    from .progress import ProgressMetric

__all__ = ["GROUPS", "AgentPlugins", "build_step", "load_object", "load_plugin"]

GROUPS: Mapping[str, str] = {
    "step": "heartbeat.steps",
    "progress metric": "heartbeat.metrics",
    "detector": "heartbeat.detectors",
    "notifier": "heartbeat.notifiers",
}
"""The entry-point group of each kind of plug-in."""


def load_plugin(
    kind: str, spec: str, *, builtins: Mapping[str, Any] | None = None, search_path: Path | None = None
) -> Any:
    """Find the plug-in ``spec`` of ``kind``: a built-in name, ``module:attr`` or an entry point.

    Raises :class:`ConfigError` with one line naming what was tried.
    """
    if builtins and spec in builtins:
        return builtins[spec]
    if ":" in spec:
        return load_object(spec, what=kind, search_path=search_path)
    from importlib.metadata import entry_points  # ~10 ms: only for a name that is not module:attr

    group = GROUPS.get(kind, f"heartbeat.{kind.replace(' ', '_')}s")
    found = [ep for ep in entry_points(group=group) if ep.name == spec]
    if found:
        try:
            return found[0].load()
        except (Exception, SystemExit) as exc:  # the third-party package failed at import: one line
            reason = f"loading entry point {found[0].value!r} failed: {exc!r}"
            raise ConfigError(f"{kind} {spec!r}: {reason}") from None
    known = f"built-in: {', '.join(sorted(builtins))}; " if builtins else ""
    raise ConfigError(
        f"{kind} {spec!r} is not of the form 'package.module:attr' ({known}no entry point "
        f"of that name in group {group!r})"
    )


def load_object(spec: str, *, what: str, search_path: Path | None = None) -> Any:
    """Import ``module:attr`` (attr may be dotted) and return it, or raise ConfigError.

    A ``spec`` without a colon is looked up as an entry point of ``what``'s
    group (see :func:`load_plugin`).
    """
    module_name, sep, attr = spec.partition(":")
    if not sep:
        return load_plugin(what, spec, search_path=search_path)
    if not module_name or not attr:
        raise ConfigError(f"{what} {spec!r} is not of the form 'package.module:attr'")
    if search_path is not None:
        folder = str(search_path)
        if folder not in sys.path:
            # The config's folder, so "examples.agent:step" works beside heartbeat.toml.
            sys.path.insert(0, folder)
    try:
        obj: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise ConfigError(f"{what} {spec!r}: no module named {exc.name!r}") from None
    except SyntaxError as exc:  # where, and what: "a.py line 1: expected ':'", not the exception's tuple
        where = f"{exc.filename} line {exc.lineno}" if exc.filename else f"line {exc.lineno}"
        raise ConfigError(f"{what} {spec!r}: {module_name} does not compile: {where}: {exc.msg}") from None
    except (Exception, SystemExit) as exc:  # the user's module failed (or exited) at import: one line
        raise ConfigError(f"{what} {spec!r}: importing {module_name} failed: {exc!r}") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(f"{what} {spec!r}: {module_name} has no attribute {attr!r}") from None
    return obj


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
    """One agent's step, progress metric and notifiers: each built from the config on first use, then kept.

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

    def step(self) -> Step:
        """The agent's step (see :func:`build_step`)."""
        if self._step is None:
            if self._config.file is None and not (self._agent.exec or self._agent.step):
                raise ConfigError(
                    f"no heartbeat.toml here ({self._config.base_dir}) and no --step or --exec: "
                    "`heartbeat init` writes a starter, or give --config FILE"
                )
            self._step = build_step(self._agent, self._config.base_dir)
        return self._step

    def metric(self) -> ProgressMetric | None:
        """The progress metric, or None when none is configured."""
        if not self._metric_loaded:
            if self._agent.progress or self._config.progress:
                from .progress import build_metric

                self._metric = build_metric(self._config, self._agent)
            self._metric_loaded = True
        return self._metric

    def notifiers(self) -> list[Notifier]:
        """The configured notifiers."""
        if self._notifiers is None:
            from .notifiers import build_notifiers

            self._notifiers = build_notifiers(self._config.notify, base_dir=self._config.base_dir)
        return self._notifiers
