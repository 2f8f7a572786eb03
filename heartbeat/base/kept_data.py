"""What an agent keeps in its own data (``ctx.data``), with the credentials in it masked.

``state.json`` is a plain file a person reads: a credential the agent stored there, as a key's
value or inside a text as a person's output would show it (an OAuth access token, a ``Bearer``
value, a URL with its password, ``aws_secret_access_key = ...``, a connection string's
``AccountKey=``, ``mysql -p...``), is written as ``***``. What the agent needs
back to go on (a page's ``next_token``, a sync's cursor) is kept. Pure and standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .credential_text import mask_credential_text
from .credentials import KNOWN_LIMIT, KNOWN_NAME, LEAVES, MASK, credential_words, name_words

__all__ = ["is_kept_secret", "mask_data"]


def mask_data(value: Any) -> Any:
    """JSON-like data an agent keeps (its ``ctx.data``) with the credentials in it as ``***``: in a
    text, what :func:`.credential_text.mask_credential_text` masks but a cursor's token
    (``next_token=``, ``page_token=``), under any key, and the value of a key named for a secret
    (``password``, ``api_key``, ``access_token``; not a page's ``next_token`` or ``sync_token``,
    which the agent needs back: :func:`is_kept_secret`); ``value`` itself, not copied, when it
    holds none."""
    masked = _masked_texts(value)
    if masked is None:
        return value
    root: list[Any] = [None]
    copies: dict[int, Any] = {}  # a container met twice is the same copy (a cycle ends)
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        item, parent, key = stack.pop()
        if isinstance(item, str):
            found = masked.get(item) if item.__class__ is str else None  # read once, masked then
            parent[key] = found if found is not None else mask_credential_text(item, _kept_secret_name)
        elif id(item) in copies:
            parent[key] = copies[id(item)]
        elif isinstance(item, Mapping):
            new: dict[Any, Any] = {}
            for name, inner in item.items():
                new[name] = MASK  # the keys keep their order; a value not masked is filled in below
                if not _secret_at(name, inner):
                    stack.append((inner, new, name))
            copies[id(item)] = parent[key] = new
        elif isinstance(item, list | tuple):
            copies[id(item)] = parent[key] = [None] * len(item)
            stack.extend((inner, parent[key], i) for i, inner in enumerate(item))
        else:
            parent[key] = item
    return root[0]


# The words before "token" that make it a credential's (an OAuth access or refresh token), where a
# page's or a sync's token (next_token, sync_token, continuation_token) is a cursor the agent needs.
_SECRET_TOKENS = frozenset(
    ["access", "refresh", "id", "auth", "bearer", "api", "session", "oauth", "personal"]
)


def is_kept_secret(name: object) -> bool:
    """Whether a key of the agent's own data named ``name`` holds a secret: a credential's name
    (:func:`is_credential_key`), but a ``token`` only after a word that makes it one."""
    if not isinstance(name, str) or not name:
        return False
    words = name_words(name)
    if not credential_words(words):
        return False
    return words[-1] != "token" or (len(words) > 1 and words[-2] in _SECRET_TOKENS)


def _secret_at(name: object, value: Any) -> bool:
    """Whether ``value``, kept under the key ``name``, is a secret to mask: a key named for one
    (:func:`is_kept_secret`) holding something; ``None``, ``True`` or ``False`` there (a key not
    set yet) hides nothing, and the agent reads it back as it was."""
    return value is not None and value.__class__ is not bool and _kept_secret_name(name)


# is_kept_secret of the key names seen (bounded, as _KNOWN): an agent's data holds the same few
# keys in record after record (a list of 5,000 items, each its "id", "title" and "url").
_KEPT: dict[str, bool] = {}


def _kept_secret_name(name: object) -> bool:
    """is_kept_secret, remembered for short plain-str names."""
    if not isinstance(name, str) or name.__class__ is not str:  # a subclass may hash as it likes
        return is_kept_secret(name)
    found = _KEPT.get(name)
    if found is None:
        found = is_kept_secret(name)
        if len(_KEPT) < KNOWN_LIMIT and len(name) <= KNOWN_NAME:
            _KEPT[name] = found
    return found


def _masked_texts(value: Any) -> dict[str, str] | None:
    """None when :func:`mask_data` would mask nothing in ``value``; else the masked form of each
    text it holds that was read to tell (so no text is read twice), by text."""
    stack: list[Any] = [value]
    seen: set[int] = set()
    texts: list[str] = []
    while stack:
        item = stack.pop()
        kind = item.__class__
        if kind is str or isinstance(item, str):
            texts.append(item)
        elif kind in LEAVES or id(item) in seen:  # a number, None; a container met before
            continue
        elif kind is dict or isinstance(item, Mapping):
            seen.add(id(item))
            for name, inner in item.items():
                if _secret_at(name, inner):
                    return {}  # a secret's key: its texts are read as they are masked
                stack.append(inner)
        elif isinstance(item, list | tuple):
            seen.add(id(item))
            stack.extend(item)
    # Each text on its own: a pair's name may end one text and its value start the next, so the
    # texts read as one would find what none of them holds.
    masked: dict[str, str] = {}
    holds = False
    for text in texts:
        if text.__class__ is str and text not in masked:  # a subclass may hash as it likes
            masked[text] = kept = mask_credential_text(text, _kept_secret_name)
            holds = holds or kept != text
        elif text.__class__ is not str:
            holds = holds or mask_credential_text(text, _kept_secret_name) != text
    return masked if holds else None
