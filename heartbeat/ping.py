"""The ``ping`` notifier's old home: it lives in :mod:`heartbeat.notifiers.ping` now."""

from __future__ import annotations

from .notifiers.ping import PingNotifier

__all__ = ["PingNotifier"]
