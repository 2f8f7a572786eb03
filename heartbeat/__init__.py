"""heartbeat: keep scheduled AI agents from running up bills while making no progress."""

from __future__ import annotations

__version__ = "0.1.0"
