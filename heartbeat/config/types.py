"""The building blocks of every config table: durations, paths and the strict base model.

A cron tick is a fresh process, and building a pydantic validator costs about
half a millisecond a table. So every table's validator is built the first time
such a table is given (``defer_build`` plus :data:`TABLE` on the fields that hold
a table): a config that leaves ``[detectors]`` out never builds the detectors'
validators, and its defaults are made without validation (:func:`defaults`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict
from pydantic_core import CoreSchema, core_schema

from ..base.errors import UsageError

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
    from pydantic.json_schema import JsonSchemaValue

__all__ = [
    "TABLE",
    "ConfigModel",
    "ConfigPath",
    "Duration",
    "defaults",
    "new_dict",
    "new_list",
    "parse_duration",
    "parse_since",
]

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


def parse_since(text: str, now: datetime) -> datetime:
    """``--since`` of ``log`` and ``report``: a duration back from ``now`` (``2h``) or an ISO date/time.

    A date or time without an offset is UTC; one with an offset is turned
    into UTC. Anything else is a :class:`UsageError` (exit 2).
    """
    text = text.strip()
    try:
        return now - parse_duration(text)
    except (ValueError, TypeError):
        pass
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(
            f"--since {text!r}: give a duration such as 10m, 2h or 2d, "
            "or an ISO date or time such as 2026-05-01 or 2026-05-01T03:00"
        ) from None
    if at.tzinfo is None:
        return at.replace(tzinfo=UTC)
    try:
        return at.astimezone(UTC)
    except OverflowError:  # hours from the calendar's first or last day: that end is the answer
        return (datetime.min if at.year == 1 else datetime.max).replace(tzinfo=UTC)


def _to_path(value: object) -> object:
    if isinstance(value, str):
        if not value.strip():
            # Path("") is ".": a KILL file or a fleet stop there is the folder itself, present
            # always, and a state folder there is the config's own.
            raise ValueError("must not be empty")
        return Path(value)
    return value


# Strict types (no "3" for 3): a path is still written as a string in TOML.
ConfigPath = Annotated[Path, BeforeValidator(_to_path)]


class ConfigModel(BaseModel):
    """The base of every config table: unknown keys and loose types are errors."""

    # strict: `escalate_after = "3"` is a typo of a number, refused rather than guessed.
    # defer_build: the validator is built when a table of this kind is first validated.
    # python-re: a name's `pattern=r"\S"` compiled by Rust's regex costs ~0.45 ms per table
    # (Unicode classes), Python's re next to nothing; the matches and errors are the same.
    model_config = ConfigDict(
        extra="forbid", frozen=True, strict=True, defer_build=True, regex_engine="python-re"
    )


_Table = TypeVar("_Table", bound=BaseModel)


class _NestedTable:
    """Field metadata: validate a nested table with its own model, not as part of the parent's.

    The parent's validator then holds a call instead of the table's whole schema, so
    it is built without building the table's; errors keep their place (``detectors.
    repeat.threshold``) because pydantic prefixes a validation error raised here.
    """

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        model: type[BaseModel] = source

        def validate(value: Any) -> BaseModel:
            # An instance is taken as it is, as pydantic does for a nested model.
            return value if isinstance(value, model) else model.model_validate(value)

        return core_schema.no_info_plain_validator_function(validate, metadata={"heartbeat_table": model})

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        # Asked for rarely (never by a tick): the table's own schema, its validator built now.
        model: type[BaseModel] = schema.get("metadata", {})["heartbeat_table"]
        return handler(model.__pydantic_core_schema__)


TABLE = _NestedTable()
"""``Annotated[SomeConfig, TABLE]``: a field holding a table, validated by its own (deferred) model."""


def defaults(model: type[_Table]) -> Callable[[], _Table]:
    """A default_factory for a table left out: its defaults, without building its validator."""

    def make() -> _Table:
        return model.model_construct()

    return make


def new_list() -> list[Any]:
    """An empty list: a field's default_factory (pydantic inspects a builtin's text signature slowly)."""
    return []


def new_dict() -> dict[Any, Any]:
    """An empty dict: a field's default_factory (see new_list)."""
    return {}
