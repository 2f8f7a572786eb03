"""Stuck detectors: pure functions of an agent's recent history, and the configured set.

One module per detector, each with its incremental tracker beside its
reference ``check``; :mod:`.fingerprints` holds what makes two actions
the same, :mod:`.volatile` what in an output is no content, :mod:`.words`
what a call or a failure says, :mod:`.failures` when two failures are
one, :mod:`.promises` when a message to a person promises an act or asks,
:mod:`.retold` when a person's answer says they had already said it,
:mod:`.contract` what every detector is handed and returns.
docs/detectors.md is the reference for what each one catches and its
defaults (the README's "Detectors" section, the short one).
"""

from __future__ import annotations

from pathlib import Path

from ...base.errors import ConfigError
from ...config.file import DetectorsConfig
from ...config.plugins import load_object
from .canonical import canonical_args
from .contract import (
    ActionTracker,
    ActionView,
    BuiltinStep,
    Detector,
    FunctionDetector,
    History,
    ProgressTracker,
    as_detector,
)
from .cycle import Cycle, CycleTracker
from .empty import Empty, EmptyTracker
from .error_rate import ErrorRate, ErrorRateTracker
from .fingerprints import Prints, fingerprint, mask, prints, summarize
from .loop import Loop, LoopTracker
from .near_repeat import NearRepeat, NearRepeatTracker
from .no_progress import NoProgress, NoProgressTracker
from .recurring import Recurring, RecurringTracker
from .recurring_error import RecurringError, RecurringErrorTracker
from .repeat import Repeat, RepeatTracker

__all__ = [
    "BUILT_IN",
    "LAZY_TRACKERS",
    "SLIDING_TRACKERS",
    "SPARSE_TRACKERS",
    "STEP_TRACKERS",
    "ActionTracker",
    "ActionView",
    "BuiltinStep",
    "Cycle",
    "Detector",
    "Empty",
    "ErrorRate",
    "FunctionDetector",
    "History",
    "Loop",
    "NearRepeat",
    "NoProgress",
    "Prints",
    "ProgressTracker",
    "Recurring",
    "RecurringError",
    "Repeat",
    "as_detector",
    "build_detectors",
    "canonical_args",
    "fingerprint",
    "load_detector",
    "mask",
    "prints",
    "summarize",
]

BUILT_IN: tuple[type, ...] = (
    Repeat,
    Loop,
    Empty,
    ErrorRate,
    NoProgress,
    NearRepeat,
    Recurring,
    RecurringError,
    Cycle,
)
"""The built-in detector classes: they read only an :class:`ActionView` of each action."""

STEP_TRACKERS: tuple[type, ...] = (
    RepeatTracker,
    LoopTracker,
    EmptyTracker,
    ErrorRateTracker,
    NearRepeatTracker,
    RecurringTracker,
    RecurringErrorTracker,
    CycleTracker,
)
"""The built-in action trackers: each has ``step`` (see :data:`BuiltinStep`)."""

SPARSE_TRACKERS: tuple[type, ...] = (ErrorRateTracker, RecurringErrorTracker)
"""The built-in action trackers that look at failed actions alone: ``errors_only(index, successes)``."""

LAZY_TRACKERS: tuple[type, ...] = (*STEP_TRACKERS, NoProgressTracker)
"""The built-in trackers whose push takes ``report=False`` (move on, build no Anomaly)."""

SLIDING_TRACKERS: tuple[type, ...] = (RepeatTracker, EmptyTracker, NoProgressTracker)
"""The built-in trackers that look past a window and can ``slide(kept)``: become what one seeded
from ``kept`` (the end of what they took) would be, or say they cannot (False)."""


def load_detector(spec: str, *, search_path: Path | None = None) -> Detector:
    """Load a custom detector named ``"module:attr"``; a class is instantiated with no arguments."""
    obj = load_object(spec, what="detector", search_path=search_path)
    if isinstance(obj, type):
        try:
            obj = obj()
        except Exception as exc:  # the user's constructor: one config line, any error
            raise ConfigError(f"detector {spec!r}: {obj.__name__}() failed: {exc!r}") from None
    try:
        return as_detector(obj)
    except TypeError as exc:
        raise ConfigError(f"detector {spec!r}: {exc}") from None


def build_detectors(cfg: DetectorsConfig, *, search_path: Path | None = None) -> list[Detector]:
    """The enabled built-in detectors in a fixed order, then the custom ones from ``cfg.custom``."""
    exempt = frozenset(cfg.exempt)
    polling = frozenset(cfg.polling)
    found: list[Detector] = []
    if cfg.repeat.enabled:
        found.append(Repeat(cfg.repeat.threshold, cfg.repeat.tools, exempt=exempt, polling=polling))
    if cfg.loop.enabled:
        found.append(Loop(cfg.loop.window, cfg.loop.repeats, exempt=exempt | set(cfg.loop.exempt)))
    if cfg.empty.enabled:
        # A polling tool's short status ("running") is its normal answer, not an empty one.
        found.append(
            Empty(cfg.empty.threshold, cfg.empty.max_chars, exempt=exempt | set(cfg.empty.exempt) | polling)
        )
    if cfg.error_rate.enabled:
        found.append(ErrorRate(cfg.error_rate.window, cfg.error_rate.threshold, exempt=exempt))
    if cfg.near_repeat.enabled:
        # A polling tool's calls differ only in their cursor or timestamp: that is its job.
        found.append(
            NearRepeat(
                cfg.near_repeat.threshold,
                cfg.near_repeat.window,
                exempt=exempt | polling,
                tools=cfg.repeat.tools,
            )
        )
    if cfg.recurring.enabled:
        found.append(
            Recurring(
                cfg.recurring.threshold,
                cfg.recurring.window,
                cfg.recurring.min_chars,
                exempt=exempt,
                tools=cfg.repeat.tools,
            )
        )
    if cfg.recurring_error.enabled:
        found.append(RecurringError(cfg.recurring_error.threshold, cfg.recurring_error.window, exempt=exempt))
    if cfg.cycle.enabled:
        found.append(Cycle(cfg.cycle.threshold, cfg.cycle.window, exempt=exempt | set(cfg.loop.exempt)))
    if cfg.no_progress.enabled:
        found.append(NoProgress(cfg.no_progress.samples, cfg.no_progress.min_delta))
    found.extend(load_detector(spec, search_path=search_path) for spec in cfg.custom)
    return found
