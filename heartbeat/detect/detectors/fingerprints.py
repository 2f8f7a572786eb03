"""Fingerprints: what makes two actions "the same", exactly or up to volatile values.

Every action gets three keys, all computed by :func:`prints` (the one
function the :class:`~heartbeat.detect.monitor.Monitor` calls per action):

* ``fingerprint``: the tool plus its arguments as canonical JSON (sorted
  keys, no spaces, absent or None arguments count as ``{}``) after dropping
  the configured volatile argument names, hashed to 16 hex characters. For a
  polling tool the call's result is part of it too.
* ``shape``: the same canonical call with every digit left out (numbers,
  line ranges, dates and times, counters, ids like ``HAT052``), hashed to 8
  hex characters. Paging through one file with a sliding line range, or a
  poll that carries a timestamp, keeps one shape.
* ``result``: the output (or, without one, the error text), stripped, with
  its digits left out when it is longer than 100 characters (timings,
  addresses and line numbers in a test log; a short answer such as
  ``300.0`` or ``45% done`` is mostly its numbers and is kept whole),
  hashed to 8 hex characters; None when the action reported neither.
  For a failed action only the last 200 bytes count, digits always left
  out: how a failure ends (the exception, the test summary) says what
  failed, the log before it changes with every edit, and the numbers in an
  error message change with the attempt. "The same result again" is
  judged on it.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable, Collection, Mapping, Sequence
from hashlib import blake2b
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import NamedTuple

from ...core.models import TEXT_LIMIT, clip

__all__ = ["Prints", "action_keys", "canonical_args", "fingerprint", "mask", "pattern", "prints", "summarize"]


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _encode_slow(value: object, _indent: int) -> list[str]:
    return [_ENCODER.encode(value)]


# The C encoder called directly: this runs once per recorded action, and the
# json.dumps wrapper costs as much again as the encoding of a small dict.
_encode: Callable[[object, int], Sequence[str]] = (
    c_make_encoder(None, str, encode_basestring, None, ":", ",", True, False, True)
    if c_make_encoder is not None
    else _encode_slow
)
_join = "".join


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
        if volatile:
            copied = False
            for name in volatile:
                if name in args:
                    if not copied:
                        args = args.copy()
                        copied = True
                    del args[name]
    elif args is None:
        return "{}"
    elif isinstance(args, Mapping):
        return canonical_args(dict(args), volatile)
    try:
        return _join(_encode(args, 0))
    except (TypeError, ValueError, RecursionError):
        pass  # unsortable keys or a self-reference: fall back to a slower, total form
    try:
        return _ENCODER.encode(_text_keys(args))
    except (TypeError, ValueError, RecursionError):
        return repr(args)


# An empty hasher to copy: a copy costs a third less than blake2b(..., digest_size=8),
# whose keyword parsing dominates for short inputs. The digest is the same.
_BLAKE2B_8 = blake2b(digest_size=8)


def _digest(tool: str, canonical: str, output: str | None) -> str:
    """The fingerprint of an already canonical call (and its result, for polling tools)."""
    text = f"{tool}\x00{canonical}" if output is None else f"{tool}\x00{canonical}\x00{output}"
    try:
        data = text.encode()
    except UnicodeEncodeError:  # a lone surrogate: hashed as its UTF-8-like bytes
        data = text.encode("utf-8", "surrogatepass")
    hasher = _BLAKE2B_8.copy()
    hasher.update(data)
    return hasher.hexdigest()


def _summary(tool: str, canonical: str) -> str:
    """``tool(args)`` from canonical arguments, ``tool()`` when there are none."""
    text = f"{tool}()" if canonical == "{}" else f"{tool}({canonical})"
    return text if len(text) <= TEXT_LIMIT else clip(text) or ""


def fingerprint(tool: str, args: object, *, volatile: Collection[str] = (), output: str | None = None) -> str:
    """The 16-hex-digit hash of ``tool`` + canonical ``args`` (+ ``output`` when given).

    Pass ``output`` only for polling tools: their result is part of what
    repeats.
    """
    return _digest(tool, canonical_args(args, volatile), output)


def summarize(tool: str, args: object, volatile: Collection[str] = ()) -> str:
    """``search({"q":"x"})`` as a human reads it, cut to 200 characters."""
    return _summary(tool, canonical_args(args, volatile))


# A word holding a digit: 42, 3.5, 2024-05-21T10:00:00Z, 559,650p's "650p", HAT052, a1b2c3d4, v2.
# Only for messages (the masked shape a person reads): too slow to run per action.
_VOLATILE = re.compile(r"[\w.:+-]*\d[\w.:+-]*")
_DIGITS = b"0123456789"
# bytes.translate with a table (every byte kept, the digits deleted) is faster than with None.
_SAME = bytes(range(256))
# Outputs longer than this are compared with their digits left out (timings, addresses,
# line numbers, dates in a test log); a shorter one is mostly its numbers ("300.0", "45% done").
_MASK_OUTPUT_OVER = 100
# The bytes at the end of a failed action's output that say what failed.
_ERROR_TAIL = 200


def mask(text: str) -> str:
    """``text`` with every word that holds a digit replaced by ``#``: the masked shape, as shown."""
    return _VOLATILE.sub("#", text)


def pattern(summary: str) -> str:
    """A call as the pattern a shape matches: ``run_build({"stamp":"#"}) with any stamp``.

    For an agent told what not to do again: the exact call (a timestamp, an
    id) is one it will never make again, the pattern is what it keeps doing.
    A summary with no number in it is its own pattern.
    """
    masked = mask(summary)
    if masked == summary:
        return summary
    rest = summary.partition("(")[2]
    try:
        args = json.loads(rest[:-1]) if rest.endswith(")") else None
    except ValueError:  # cut at 200 characters, or not JSON: the shape alone
        args = None
    values = args.items() if isinstance(args, dict) else ()
    varying = [key for key, value in values if mask(json.dumps(value)) != json.dumps(value)]
    return f"{masked} with any {', '.join(varying)}" if varying else f"{masked} (# is any number)"


def _crc(data: bytes) -> str:
    return f"{zlib.crc32(data):08x}"


def _bytes(text: str) -> bytes:
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate: hashed as its UTF-8-like bytes
        return text.encode("utf-8", "surrogatepass")


class Prints(NamedTuple):
    """The keys of one action: see the module docstring."""

    fingerprint: str
    shape: str
    result: str | None
    summary: str


def prints(
    tool: str,
    args: object,
    output: str | None = None,
    error: str | None = None,
    *,
    volatile: Collection[str] = (),
    polling: bool = False,
) -> Prints:
    """The fingerprint, shape, result key and summary of one action (see the module docstring)."""
    fp, shape, result, summary, _length = action_keys(tool, args, output, error, volatile, polling)
    return _new_prints(Prints, (fp, shape, result, summary))


def action_keys(
    tool: str,
    args: object,
    output: str | None,
    error: str | None,
    volatile: Collection[str],
    polling: bool,
) -> tuple[str, str, str | None, str, int | None]:
    """:func:`prints` plus the stripped output's length, as a plain tuple: what the Monitor needs.

    The Monitor calls it for every recorded action, where keyword arguments,
    a NamedTuple and stripping the output a second time would cost more than
    some of the keys.
    """
    # This runs for every recorded action: the common case (a plain dict) is encoded
    # inline, as canonical_args would, and the call's bytes are made once for all three keys.
    if args.__class__ is dict:
        plain = args
        for name in volatile:
            if name in plain:
                if plain is args:
                    plain = args.copy()
                del plain[name]
        try:
            canonical = _join(_encode(plain, 0))
        except (TypeError, ValueError, RecursionError):
            canonical = canonical_args(plain)
    else:
        canonical = canonical_args(args, volatile)
    call = f"{tool}\x00{canonical}"
    try:
        data = call.encode()
    except UnicodeEncodeError:  # a lone surrogate: hashed as its UTF-8-like bytes
        data = call.encode("utf-8", "surrogatepass")
    hasher = _BLAKE2B_8.copy()
    hasher.update(data)
    if polling:
        # A polling tool repeats only when its result repeats; a failure is a result too.
        seen = output if output is not None else (f"\x00error\x00{error}" if error else "")
        hasher.update(_bytes(f"\x00{seen}"))
    # The shape drops every digit (bytes.translate: a fraction of a microsecond, where a
    # regex over the call costs several): 'sed -n 1,20p f' and 'sed -n 559,650p f' are one
    # shape, and so are HAT052 and HAT030, or two timestamps. The 4 big-endian bytes in
    # hex are f"{crc:08x}" at half its cost.
    shape = _crc32(data.translate(_SAME, _DIGITS)).to_bytes(4, "big").hex()
    length: int | None = None
    if output is not None:
        stripped = output.strip()
        length = len(stripped)
    elif error is not None:
        stripped = error.strip()
    else:
        return hasher.hexdigest(), shape, None, _summary(tool, canonical), length
    try:
        out = stripped.encode()
    except UnicodeEncodeError:  # a lone surrogate: hashed as its UTF-8-like bytes
        out = stripped.encode("utf-8", "surrogatepass")
    if error:
        # A failure is told by how it ends (the exception, the test summary, the
        # shell's complaint), not by the log before it, which changes with every edit;
        # and "amount 957 does not match 1002" is the same error with other numbers.
        out = out[-_ERROR_TAIL:].translate(_SAME, _DIGITS)
    elif len(out) > _MASK_OUTPUT_OVER:
        out = out.translate(_SAME, _DIGITS)
    result = _crc32(out).to_bytes(4, "big").hex()
    summary = f"{tool}()" if canonical == "{}" else f"{tool}({canonical})"
    if len(summary) > TEXT_LIMIT:
        summary = clip(summary) or ""
    return hasher.hexdigest(), shape, result, summary, length


_new_prints = tuple.__new__
_crc32 = zlib.crc32
