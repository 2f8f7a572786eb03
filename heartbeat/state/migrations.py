"""Migrations of ``state.json``: named steps that bring an older ``schema_version`` up to date."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.models import SCHEMA_VERSION

__all__ = ["MIGRATIONS", "Migration", "MigrationError", "check_migrations", "migrate"]


@dataclass(frozen=True)
class Migration:
    """One named step that turns a ``schema_version`` N state dict into N + 1."""

    from_version: int
    name: str
    apply: Callable[[dict[str, Any]], dict[str, Any]]

    def __repr__(self) -> str:
        return f"Migration({self.from_version} -> {self.from_version + 1}: {self.name})"


def _detection_v2(state: dict[str, Any]) -> dict[str, Any]:
    """1 -> 2: nothing moves; the fields detection v2 added take their defaults when absent.

    Version 2 adds the records' ``shape`` and ``result``, the recovery's
    ``quiet``, ``anomaly_totals`` and ``notices``. The number
    changes so that a release that knows only version 1 refuses this file as
    newer (what it is) instead of calling its new fields corrupt.
    """
    return state


MIGRATIONS: tuple[Migration, ...] = (Migration(1, "detection v2 fields", _detection_v2),)
"""Every migration this release knows, oldest first."""


class MigrationError(ValueError):
    """A state dict that the migrations cannot bring to the current version."""

    def __init__(self, message: str, *, missing_step: bool = False) -> None:
        super().__init__(message)
        self.missing_step = missing_step


def check_migrations(migrations: Sequence[Migration], current: int) -> None:
    """Raise TypeError/ValueError if ``migrations`` is not a registry leading to ``current``."""
    seen: set[int] = set()
    for step in migrations:
        if not isinstance(step, Migration):
            raise TypeError(f"not a Migration: {step!r}")
        if not 0 <= step.from_version < current:
            raise ValueError(f"{step!r} does not lead up to schema_version {current}")
        if step.from_version in seen:
            raise ValueError(f"two migrations from schema_version {step.from_version}")
        seen.add(step.from_version)


def migrate(
    raw: dict[str, Any],
    migrations: Sequence[Migration] = MIGRATIONS,
    current: int = SCHEMA_VERSION,
) -> dict[str, Any]:
    """Bring a state dict from its ``schema_version`` to ``current``, one named step at a time.

    ``raw`` is not changed. Each step gets a copy and its result is stamped
    with the next version number, so a step only has to move the data.
    Raises :class:`MigrationError` when a step is missing, fails, or returns
    something that is not a dict.
    """
    by_version = {step.from_version: step for step in migrations}
    version = raw["schema_version"]
    data = raw
    while version < current:
        step = by_version.get(version)
        if step is None:
            known = sorted(by_version)
            have = f"known steps start at {known}" if known else "this release has no migrations"
            raise MigrationError(
                f"schema_version {version} cannot be migrated to {current}: "
                f"no migration from {version} to {version + 1} ({have})",
                missing_step=True,
            )
        try:
            result = step.apply(copy.deepcopy(data))
        except Exception as exc:  # a failing step is reported as a bad state file
            raise MigrationError(
                f"migration {step.name!r} ({version} -> {version + 1}) failed: {exc!r}"
            ) from exc
        if not isinstance(result, dict):
            raise MigrationError(f"migration {step.name!r} returned {type(result).__name__}, not a dict")
        version += 1
        data = {**result, "schema_version": version}
    return data if data is not raw else copy.deepcopy(raw)
