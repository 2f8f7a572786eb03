"""Canonical arguments: a call's arguments as one text, whatever their order or types.

Sorted keys, no spaces, None as ``{}``: two calls with the same arguments are the
same text, so their fingerprints match (see :mod:`.fingerprints`). An argument whose
name says every call carries a new one (:data:`PER_CALL`: an idempotency key, a
nonce, a trace's ids) is left out, as the configured volatile names are: the same
charge retried under a fresh idempotency key is the same call again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

__all__ = ["PER_CALL", "canonical_args", "encode", "join", "kept_args"]


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _encode_slow(value: object, _indent: int) -> list[str]:
    return [_ENCODER.encode(value)]


# The C encoder called directly: this runs once per recorded action, and the
# json.dumps wrapper costs as much again as the encoding of a small dict.
encode: Callable[[object, int], Sequence[str]] = (
    c_make_encoder(None, str, encode_basestring, None, ":", ",", True, False, True)
    if c_make_encoder is not None
    else _encode_slow
)
"""The JSON encoder of canonical arguments, called as ``join(encode(value, 0))``."""
join = "".join
"""Joins what :data:`encode` returns."""


PER_CALL = frozenset(
    [
        *("idempotency_key", "idempotencyKey", "IdempotencyKey", "Idempotency-Key", "idempotency-key"),
        *("nonce", "Nonce", "client_token", "clientToken", "ClientToken"),
        *("client_request_token", "clientRequestToken", "ClientRequestToken"),
        *("traceparent", "tracestate", "trace_id", "traceId", "span_id", "spanId"),
        *("correlation_id", "correlationId", "X-Correlation-Id", "X-Correlation-ID"),
        *("x-request-id", "X-Request-Id", "X-Request-ID"),
    ]
)
"""Argument names that say each call carries a new value: left out of every canonical call.
Not ``request_id``: an approvals queue's ``approve(request_id=...)`` names the request worked on."""


def kept_args(args: dict[Any, Any], volatile: Collection[str] = ()) -> dict[Any, Any]:
    """``args`` without its :data:`PER_CALL` and ``volatile`` names: itself when it has none."""
    # A loop, not any(): this runs for every recorded action, and volatile is mostly empty.
    for name in volatile:
        if name in args:
            break
    else:
        if PER_CALL.isdisjoint(args):
            return args
    return {k: v for k, v in args.items() if k not in PER_CALL and k not in volatile}


def _text_keys(value: object) -> object:
    """``value`` with every dict key turned into text, so mixed key types can be sorted."""
    if isinstance(value, Mapping):
        return {str(k): _text_keys(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_text_keys(v) for v in value]
    return value


def canonical_args(args: object, volatile: Collection[str] = ()) -> str:
    """Arguments as canonical JSON: sorted keys, no spaces, None as ``{}``, volatile names dropped.

    Values JSON cannot hold are written as their ``str()``; a mapping with
    keys of mixed types has its keys compared as text.
    """
    # Plain dicts first and no any(): this runs for every recorded action.
    if args.__class__ is dict:
        args = kept_args(args, volatile)
    elif args is None:
        return "{}"
    elif isinstance(args, Mapping):
        return canonical_args(dict(args), volatile)
    try:
        return join(encode(args, 0))
    except (TypeError, ValueError, RecursionError):
        pass  # unsortable keys or a self-reference: fall back to a slower, total form
    try:
        return _ENCODER.encode(_text_keys(args))
    except (TypeError, ValueError, RecursionError):
        return repr(args)
