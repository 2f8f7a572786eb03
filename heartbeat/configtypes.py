"""The building blocks of every config table: durations, paths and the strict base model."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict

__all__ = ["ConfigModel", "ConfigPath", "Duration", "parse_duration"]

_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(value: object) -> timedelta:
    """Read ``"90s"``, ``"30m"``, ``"1h30m"``, ``"1d"`` or a number of seconds."""
    if isinstance(value, timedelta):
        return value
    if isinstance(value, bool):
        raise ValueError("a duration is a number of seconds or a text like '30m'")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip().lower().replace(" ", "")
        if text.replace(".", "", 1).isdigit():
            seconds = float(text)
        else:
            pos, seconds = 0, 0.0
            for match in _DURATION.finditer(text):
                if match.start() != pos:
                    break
                seconds += float(match.group(1)) * _UNITS[match.group(2)]
                pos = match.end()
            if pos != len(text) or not text:
                raise ValueError(f"{value!r} is not a duration (try '90s', '30m', '1h30m', '1d')")
    else:
        raise ValueError("a duration is a number of seconds or a text like '30m'")
    if not 0 < seconds < 10 * 365 * 86400:
        raise ValueError(f"{value!r}: a duration must be positive and under ten years")
    return timedelta(seconds=seconds)


Duration = Annotated[timedelta, BeforeValidator(parse_duration)]


def _to_path(value: object) -> object:
    return Path(value) if isinstance(value, str) else value


# Strict types (no "3" for 3): a path is still written as a string in TOML.
ConfigPath = Annotated[Path, BeforeValidator(_to_path)]


class ConfigModel(BaseModel):
    """The base of every config table: unknown keys and loose types are errors."""

    # strict: `escalate_after = "3"` is a typo of a number, refused rather than guessed.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
