"""The one plug-in loader: steps, progress metrics, detectors and notifiers named in the config load here.

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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..base.errors import ConfigError

__all__ = ["GROUPS", "load_object", "load_plugin"]

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
