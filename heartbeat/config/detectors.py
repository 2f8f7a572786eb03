"""``[detectors]``: the config tables of the stuck detectors and their parameter bounds."""

# No `from __future__ import annotations`: pydantic would compile each annotation string
# back into a type when the class is made, which every cron tick pays for (as in models.py).
from typing import Annotated, Any, Literal

from pydantic import Field

from .types import TABLE, ConfigModel, defaults, new_dict, new_list

__all__ = [
    "DETECTOR_BOUNDS",
    "CycleConfig",
    "DetectorsConfig",
    "EmptyConfig",
    "ErrorRateConfig",
    "LoopConfig",
    "NearRepeatConfig",
    "NoProgressConfig",
    "RecurringConfig",
    "RecurringErrorConfig",
    "RepeatConfig",
    "ToolThreshold",
]


ToolThreshold = int | Literal["off"]
"""A per-tool threshold: a number, or "off" to leave the tool out."""

DETECTOR_BOUNDS: dict[str, tuple[int, int]] = {
    "repeat.threshold": (2, 10_000),
    "repeat.tools": (2, 10_000),
    "loop.window": (4, 10_000),
    "loop.repeats": (2, 1_000),
    "empty.threshold": (1, 10_000),
    "empty.max_chars": (0, 1_000_000),
    "error_rate.window": (1, 10_000),
    "near_repeat.threshold": (2, 10_000),
    "near_repeat.window": (2, 10_000),
    "recurring.threshold": (2, 10_000),
    "recurring.window": (2, 10_000),
    "recurring.min_chars": (0, 1_000_000),
    "recurring_error.threshold": (2, 10_000),
    "recurring_error.window": (2, 10_000),
    "cycle.threshold": (2, 9_999),  # the window must be larger, and windows top out at 10,000
    "cycle.window": (3, 10_000),
    "no_progress.samples": (2, 1_000),
}
"""The one copy of the detectors' whole-number bounds: the config fields and the
detectors' own checks (heartbeat.detect.detectors) both read it. Relations between two
parameters (a window at least its threshold) are checked by the detector."""


def _bounded(key: str, default: int, description: str | None = None) -> Any:
    """A config field for the detector parameter ``key`` with its bounds from DETECTOR_BOUNDS."""
    low, high = DETECTOR_BOUNDS[key]
    return Field(default=default, ge=low, le=high, description=description)


class RepeatConfig(ConfigModel):
    """``repeat``: the last N actions have one fingerprint."""

    enabled: bool = True
    threshold: int = _bounded("repeat.threshold", 3)
    tools: dict[str, ToolThreshold] = Field(
        default_factory=new_dict, description="Per-tool threshold, or 'off' to exempt a tool."
    )


class LoopConfig(ConfigModel):
    """``loop``: a cycle of 2+ fingerprints repeats back to back at the tail of the window."""

    enabled: bool = True
    window: int = _bounded("loop.window", 20)
    repeats: int = _bounded("loop.repeats", 2)
    exempt: list[str] = Field(default_factory=new_list, description="Tools left out of loops.")


class EmptyConfig(ConfigModel):
    """``empty``: the last N reported outputs are each at most C characters."""

    enabled: bool = True
    threshold: int = _bounded("empty.threshold", 3)
    max_chars: int = _bounded("empty.max_chars", 10)
    exempt: list[str] = Field(default_factory=new_list)


class ErrorRateConfig(ConfigModel):
    """``error_rate``: errors / W >= T over the last W actions."""

    enabled: bool = True
    window: int = _bounded("error_rate.window", 10)
    threshold: float = Field(default=0.5, gt=0, le=1)


class NearRepeatConfig(ConfigModel):
    """``near_repeat``: one masked call shape N times in the last W actions, not all one call."""

    enabled: bool = True
    threshold: int = _bounded("near_repeat.threshold", 12)
    window: int = _bounded("near_repeat.window", 15)


class RecurringConfig(ConfigModel):
    """``recurring``: the same call+result (or long output) N times in the last W actions."""

    enabled: bool = True
    threshold: int = _bounded("recurring.threshold", 5)
    window: int = _bounded("recurring.window", 30)
    min_chars: int = _bounded(
        "recurring.min_chars", 10, "Outputs this long or shorter never match by output alone."
    )


class RecurringErrorConfig(ConfigModel):
    """``recurring_error``: the same error fingerprint N times in the last W actions."""

    enabled: bool = True
    threshold: int = _bounded("recurring_error.threshold", 3)
    window: int = _bounded("recurring_error.window", 10)


class CycleConfig(ConfigModel):
    """``cycle``: N of the last W actions revisit a call+result seen earlier in the window."""

    enabled: bool = True
    threshold: int = _bounded("cycle.threshold", 10)
    window: int = _bounded("cycle.window", 30)


class NoProgressConfig(ConfigModel):
    """``no_progress``: the last N progress samples differ by less than D."""

    enabled: bool = True
    samples: int = _bounded("no_progress.samples", 4)
    min_delta: float = Field(default=0.01, ge=0, allow_inf_nan=False)


class DetectorsConfig(ConfigModel):
    """The stuck detectors and what every fingerprint leaves out."""

    volatile_args: list[str] = Field(default_factory=new_list)
    polling: list[str] = Field(
        default_factory=new_list,
        description="Tools whose result is part of their fingerprint: polling is fine "
        "until the result stops changing.",
    )
    exempt: list[str] = Field(default_factory=new_list, description="Tools no detector looks at.")
    custom: list[str] = Field(default_factory=new_list, description="Your detectors as 'module:attr'.")
    repeat: Annotated[RepeatConfig, TABLE] = Field(default_factory=defaults(RepeatConfig))
    loop: Annotated[LoopConfig, TABLE] = Field(default_factory=defaults(LoopConfig))
    empty: Annotated[EmptyConfig, TABLE] = Field(default_factory=defaults(EmptyConfig))
    error_rate: Annotated[ErrorRateConfig, TABLE] = Field(default_factory=defaults(ErrorRateConfig))
    no_progress: Annotated[NoProgressConfig, TABLE] = Field(default_factory=defaults(NoProgressConfig))
    near_repeat: Annotated[NearRepeatConfig, TABLE] = Field(default_factory=defaults(NearRepeatConfig))
    recurring: Annotated[RecurringConfig, TABLE] = Field(default_factory=defaults(RecurringConfig))
    recurring_error: Annotated[RecurringErrorConfig, TABLE] = Field(
        default_factory=defaults(RecurringErrorConfig)
    )
    cycle: Annotated[CycleConfig, TABLE] = Field(default_factory=defaults(CycleConfig))

    def history_needed(self) -> int:
        """The number of past actions the detectors need to see."""
        repeat = max([self.repeat.threshold, *(t for t in self.repeat.tools.values() if t != "off")])
        windows = [self.loop.window, self.empty.threshold, self.error_rate.window]
        for part in (self.near_repeat, self.recurring_error, self.cycle):
            if part.enabled:
                windows.append(part.window)
        if self.recurring.enabled:
            windows.append(self.recurring.window + 1)  # and the action before: did it wait?
        return max(repeat, *windows)
