"""Loading user code named as ``"package.module:attr"`` (steps, metrics, detectors).

Import paths come only from the config file or flags, never from ``state.json``,
so a tampered state file cannot make heartbeat import anything.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from .errors import ConfigError

__all__ = ["load_object"]


def load_object(spec: str, *, what: str, search_path: Path | None = None) -> Any:
    """Import ``module:attr`` (attr may be dotted) and return it, or raise ConfigError."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
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
    except Exception as exc:  # the user's module failed at import: say so in one line
        raise ConfigError(f"{what} {spec!r}: importing {module_name} failed: {exc!r}") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(f"{what} {spec!r}: {module_name} has no attribute {attr!r}") from None
    return obj
