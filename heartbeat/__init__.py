"""heartbeat: keep scheduled AI agents from running up bills while making no progress.

The facade loads its parts on first use, so ``import heartbeat.errors`` (or a
cron tick) does not pay for what it does not touch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {  # public name -> the module that defines it
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
    "Notification": "models",
    "Notifier": "notifiers",
    "WebhookNotifier": "notify",
    "ProgressMetric": "progress",
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
    from .config import HeartbeatConfig as HeartbeatConfig
    from .config import load_config as load_config
    from .context import StepContext as StepContext
    from .detectors import Detector as Detector
    from .detectors import History as History
    from .detectors import build_detectors as build_detectors
    from .detectors import fingerprint as fingerprint
    from .errors import ConfigError as ConfigError
    from .errors import HeartbeatError as HeartbeatError
    from .errors import Killed as Killed
    from .errors import StateCorrupt as StateCorrupt
    from .errors import StateLocked as StateLocked
    from .errors import StateVersionError as StateVersionError
    from .errors import StateWriteError as StateWriteError
    from .errors import TraceError as TraceError
    from .journal import Journal as Journal
    from .killswitch import KillSwitch as KillSwitch
    from .models import ActionRecord as ActionRecord
    from .models import AgentState as AgentState
    from .models import Anomaly as Anomaly
    from .models import Decision as Decision
    from .models import Notification as Notification
    from .models import Status as Status
    from .monitor import Monitor as Monitor
    from .notifiers import Notifier as Notifier
    from .notifiers.webhook import WebhookNotifier as WebhookNotifier
    from .policy import decide as decide
    from .progress import ProgressMetric as ProgressMetric
    from .replay import replay as replay
    from .runner import Heartbeat as Heartbeat
    from .runner import TickResult as TickResult
    from .store import StateStore as StateStore
