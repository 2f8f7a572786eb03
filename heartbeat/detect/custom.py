"""Custom trackers called as the :class:`~heartbeat.detect.monitor.Monitor` calls the built-in ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from ..core.models import ActionRecord, Anomaly
from .detectors import ActionView, BuiltinStep

__all__ = ["always_report", "as_step"]


def always_report(push: Callable[[Any], Anomaly | None]) -> Callable[[Any, bool], Anomaly | None]:
    """A custom tracker's push, called like a built-in one (it always builds its anomaly)."""

    def call(entry: Any, report: bool) -> Anomaly | None:
        return push(entry)

    return call


def as_step(push: Callable[[ActionRecord], Anomaly | None]) -> BuiltinStep:
    """A custom action tracker's push, called like a built-in tracker's step."""

    def call(
        action: ActionView, tool: str, fp: str, length: int | None, error: str | None, report: bool
    ) -> Anomaly | None:
        # A Monitor with a custom detector records real ActionRecords (see LightAction).
        return push(cast(ActionRecord, action))

    return call
