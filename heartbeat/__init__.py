"""heartbeat: keep scheduled AI agents from running up bills while making no progress.

The facade loads its parts on first use, so ``import heartbeat.base.errors`` (or a
cron tick) does not pay for what it does not touch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {  # public name -> the module that defines it
    "AgentState": "core.models",
    "ActionRecord": "core.models",
    "Anomaly": "core.models",
    "Decision": "core.models",
    "Status": "core.models",
    "HeartbeatConfig": "config.file",
    "load_config": "config.file",
    "HeartbeatError": "base.errors",
    "ConfigError": "base.errors",
    "Killed": "base.errors",
    "StateCorrupt": "base.errors",
    "StateLocked": "base.errors",
    "StateVersionError": "base.errors",
    "StateWriteError": "base.errors",
    "TraceError": "base.errors",
    "Detector": "detect.detectors",
    "History": "detect.detectors",
    "build_detectors": "detect.detectors",
    "fingerprint": "detect.detectors",
    "Monitor": "detect.monitor",
    "decide": "core.policy",
    "replay": "replay.play",
    "StateStore": "state.store",
    "Journal": "state.journal",
    "KillSwitch": "state.killswitch",
    "StepContext": "tick.context",
    "Heartbeat": "tick.runner",
    "TickResult": "tick.runner",
    "Notification": "core.models",
    "Notifier": "notify.notifiers",
    "WebhookNotifier": "notify.webhook",
    "ProgressMetric": "detect.progress",
}

# The one list of public names; the TYPE_CHECKING block below repeats it as imports
# only because type checkers cannot follow __getattr__ (test_package_exports checks they agree).
__all__ = ["__version__", *_EXPORTS]


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
    from .base.errors import ConfigError as ConfigError
    from .base.errors import HeartbeatError as HeartbeatError
    from .base.errors import Killed as Killed
    from .base.errors import StateCorrupt as StateCorrupt
    from .base.errors import StateLocked as StateLocked
    from .base.errors import StateVersionError as StateVersionError
    from .base.errors import StateWriteError as StateWriteError
    from .base.errors import TraceError as TraceError
    from .config.file import HeartbeatConfig as HeartbeatConfig
    from .config.file import load_config as load_config
    from .core.models import ActionRecord as ActionRecord
    from .core.models import AgentState as AgentState
    from .core.models import Anomaly as Anomaly
    from .core.models import Decision as Decision
    from .core.models import Notification as Notification
    from .core.models import Status as Status
    from .core.policy import decide as decide
    from .detect.detectors import Detector as Detector
    from .detect.detectors import History as History
    from .detect.detectors import build_detectors as build_detectors
    from .detect.detectors import fingerprint as fingerprint
    from .detect.monitor import Monitor as Monitor
    from .detect.progress import ProgressMetric as ProgressMetric
    from .notify.notifiers import Notifier as Notifier
    from .notify.webhook import WebhookNotifier as WebhookNotifier
    from .replay.play import replay as replay
    from .state.journal import Journal as Journal
    from .state.killswitch import KillSwitch as KillSwitch
    from .state.store import StateStore as StateStore
    from .tick.context import StepContext as StepContext
    from .tick.runner import Heartbeat as Heartbeat
    from .tick.runner import TickResult as TickResult
