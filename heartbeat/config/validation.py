"""A pydantic ValidationError as one line a person editing ``heartbeat.toml`` reads.

The key as the file spells it (``notify[0].retries``, not pydantic's
``notify.0.webhook.retries``) and what it should be in plain words
(``expected a whole number, got text``, not ``Input should be a valid
integer``). The value itself is never shown: it may be a secret.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from .notify import BUILTIN_TYPES

__all__ = ["format_validation_error"]

# What pydantic's error types mean, in the words of a person editing a TOML file.
_EXPECTED = {
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "text (in quotes)",
    "list_type": "a list ([...])",
    "dict_type": "a table (key = value lines under [its name], or { ... })",
    "model_type": "a table (key = value lines under [its name], or { ... })",
    "model_attributes_type": "a table (key = value lines under [its name], or { ... })",
    "is_instance_of": "a path (text in quotes)",
    "path_type": "a path (text in quotes)",
}
_BOUNDS = {
    "greater_than_equal": ("ge", "a number of at least {}"),
    "greater_than": ("gt", "a number above {}"),
    "less_than_equal": ("le", "a number of at most {}"),
    "less_than": ("lt", "a number below {}"),
    "string_too_short": ("min_length", "text of at least {} character(s)"),
    "string_too_long": ("max_length", "text of at most {} character(s)"),
    "too_short": ("min_length", "at least {} item(s)"),
    "too_long": ("max_length", "at most {} item(s)"),
}
_TAGS = frozenset({*BUILTIN_TYPES, "plugin"})  # [[notify]]'s union tags: pydantic's, not the file's


def _toml_kind(value: Any) -> str:
    """What a TOML value is, for "got ...": never the value itself (it may be a secret)."""
    kinds: tuple[tuple[type, str], ...] = ((bool, "true/false"), (int, "a whole number"), (float, "a number"))
    kinds += ((str, "text"), (list, "a list"), (dict, "a table"))
    return next((name for kind, name in kinds if isinstance(value, kind)), type(value).__name__)


def _key(loc: tuple[int | str, ...]) -> str:
    """``("notify", 0, "webhook", "retries")`` -> ``notify[0].retries``: the file's keys, indexes as jq's."""
    parts: list[str] = []
    after_index = False
    for part in loc:
        if isinstance(part, int):
            parts[-1:] = [f"{parts[-1] if parts else ''}[{part}]"]
            after_index = True
            continue
        if str(part).startswith("function-") or str(part) == "[key]" or (after_index and part in _TAGS):
            after_index = False
            continue
        parts.append(str(part))
        after_index = False
    return ".".join(parts)


def _plain(error: Any) -> str:
    """One pydantic error as what was expected (and what kind of value came), in plain words."""
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind == "missing":
        return "required, but missing"
    if kind in ("value_error", "assertion_error"):
        return str(error["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if kind == "literal_error":
        return f"expected {ctx.get('expected', '?')}, got {_toml_kind(error['input'])}"
    if kind == "string_pattern_mismatch":
        pattern = ctx.get("pattern")
        return "expected text that is not blank" if pattern == r"\S" else f"expected text matching {pattern}"
    if kind in _BOUNDS:
        name, words = _BOUNDS[kind]
        return f"expected {words.format(ctx.get(name))}"
    if kind in _EXPECTED:
        return f"expected {_EXPECTED[kind]}, got {_toml_kind(error['input'])}"
    return str(error["msg"]).replace("Input should be", "expected")


def format_validation_error(error: ValidationError, *, prefix: str = "") -> str:
    """One line naming the first bad key (as the file spells it) and what it should be, in plain words."""
    first = error.errors(include_url=False)[0]
    loc = _key(tuple(first["loc"]))
    where = f"{prefix}{loc}" if loc else prefix.rstrip(".")
    if first["type"] == "extra_forbidden":
        return f"unknown key '{where}'"
    message = _plain(first)
    more = error.error_count() - 1
    text = f"{where}: {message}" if where else message
    return text + (f" (and {more} more problem{'s' * (more > 1)})" if more else "")
