"""heartbeat: keep scheduled AI agents from running up bills while making no progress.

The facade loads its parts on first use, so ``import heartbeat.errors`` (or a
cron tick) does not pay for what it does not touch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "AgentState": "models",
    "ActionRecord": "models",
    "Anomaly": "models",
    "Decision": "models",
    "Status": "models",
    "HeartbeatConfig": "config",
    "load_config": "config",
    "HeartbeatError": "errors",
    "ConfigError": "errors",
    "Killed": "errors",
    "StateCorrupt": "errors",
    "StateLocked": "errors",
    "StateVersionError": "errors",
    "StateWriteError": "errors",
    "TraceError": "errors",
    "Detector": "detectors",
    "History": "detectors",
    "build_detectors": "detectors",
    "fingerprint": "detectors",
    "Monitor": "monitor",
    "decide": "policy",
    "replay": "replay",
    "StateStore": "store",
    "Journal": "journal",
    "KillSwitch": "killswitch",
    "StepContext": "context",
    "Heartbeat": "runner",
    "TickResult": "runner",
    "Notification": "notify",
    "Notifier": "notify",
    "WebhookNotifier": "notify",
    "ProgressMetric": "progress",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'heartbeat' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from .config import HeartbeatConfig, load_config
    from .context import StepContext
    from .detectors import Detector, History, build_detectors, fingerprint
    from .errors import (
        ConfigError,
        HeartbeatError,
        Killed,
        StateCorrupt,
        StateLocked,
        StateVersionError,
        StateWriteError,
        TraceError,
    )
    from .journal import Journal
    from .killswitch import KillSwitch
    from .models import ActionRecord, AgentState, Anomaly, Decision, Status
    from .monitor import Monitor
    from .notify import Notification, Notifier, WebhookNotifier
    from .policy import decide
    from .progress import ProgressMetric
    from .replay import replay
    from .runner import Heartbeat, TickResult
    from .store import StateStore
