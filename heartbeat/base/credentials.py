"""Credentials an agent passes as tool arguments: values of credential-named keys, masked.

An agent that calls ``login(user="ann", password="hunter2")`` or
``fetch(url=..., headers={"Authorization": "Bearer ..."})`` hands heartbeat a
secret that no config names. Every text heartbeat keeps of an action (its
summary, and so ``state.json``, the journal, ``ESCALATION.md``, notifications,
``report.html``, ``status`` and ``replay``) shows the values of such keys as
``***``, at any depth; the fingerprint still hashes the real values, so a call
repeated with the same password is still seen as a repeat.

A key is a credential when one of its words (``apiKey`` and ``api-key`` are
``api key``) says so: ``password``, ``passwd``, ``passphrase``, ``secret``,
``credential(s)``, ``authorization``, ``auth``, ``cookie``, ``bearer``, or ends in
``password`` run together with another (``PGPASSWORD``); or
when it ends in ``token`` (``access_token``, ``token``, not ``max_tokens``)
or in ``key`` after a word such as ``api``, ``access``, ``secret``,
``private`` or ``signing`` (``api_key``, ``AWS_SECRET_ACCESS_KEY``; a bare
``key``, a cache key, is not).

Free text holds credentials too: :mod:`.credential_text` masks those a text gives away.

Pure and standard library only: the detectors' fingerprints use it for every
recorded action. What the agent keeps in its own data is masked by :mod:`.kept_data`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "KNOWN_LIMIT",
    "KNOWN_NAME",
    "LEAVES",
    "MASK",
    "credential_name",
    "credential_words",
    "holds_credentials",
    "is_credential_key",
    "mask_credentials",
    "name_words",
]

MASK = "***"
"""What a credential's value is shown as."""

_ANY_WORD = frozenset(
    [
        "password",
        "passwd",
        "passphrase",
        "pwd",
        "secret",
        "secrets",
        "credential",
        "credentials",
        "authorization",
        "auth",
        "cookie",
        "cookies",
        "bearer",
        "apikey",
        "apikeys",
        "privatekey",
        "sessionid",
        "sessiontoken",
    ]
)
_KEY_AFTER = frozenset(
    [
        "api",
        "access",
        "secret",
        "private",
        "signing",
        "client",
        "auth",
        "encryption",
        "master",
        "ssh",
        "license",
        "session",
        "webhook",
        "account",
        "service",
        "app",
        "subscription",
    ]
)
_ENDINGS = ("password", "passwd", "passphrase")
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_WORDS = re.compile(r"[a-z0-9]+")
# is_credential_key of the key names seen (bounded): an agent uses the same few names again
# and again, and the test of a name costs two regexes.
_KNOWN: dict[object, bool] = {}  # keyed by plain str names only
KNOWN_LIMIT = 4096
"""How many names a cache of names' answers keeps."""
KNOWN_NAME = 64
"""The longest name such a cache keeps: longer names are tested each time."""
_SAFE: set[str] = set()  # the names among them that are no credential's
_PLAIN_STR = frozenset([str])
LEAVES = frozenset([str, int, float, bool, type(None)])
"""The classes of values that hold no keys: skipped without an isinstance test."""


def is_credential_key(name: object) -> bool:
    """Whether an argument named ``name`` holds a credential (see the module docstring)."""
    if not isinstance(name, str) or not name:
        return False
    return credential_words(name_words(name))


def credential_words(words: list[str]) -> bool:
    """:func:`is_credential_key` of a name already split into its words."""
    if not words:
        return False
    if _ANY_WORD.intersection(words) or "".join(words) in _ANY_WORD:
        return True
    last = words[-1]
    if last.endswith(_ENDINGS):  # one word run together: PGPASSWORD, dbpasswd, MYSQL_ROOTPASSWORD
        return True
    if last == "token":
        return True
    if last == "data" and len(words) > 2 and words[-2] == "key":  # a kubeconfig's client-key-data
        return credential_words(words[:-1])
    return last == "key" and len(words) > 1 and words[-2] in _KEY_AFTER


def name_words(name: str) -> list[str]:
    """The words of a key's name, lowercased: ``apiKey`` and ``api-key`` are ``api key``."""
    return _WORDS.findall(_CAMEL.sub(r"\1 \2", name).lower())


def credential_name(name: object) -> bool:
    """:func:`is_credential_key`, remembered for short plain-str names: a name is asked about
    once per action, and an agent uses the same few."""
    if name.__class__ is not str:  # a subclass may compare or hash as it likes: not kept
        return is_credential_key(name)
    found = _KNOWN.get(name)
    if found is None:
        found = is_credential_key(name)
        if len(_KNOWN) < KNOWN_LIMIT and len(name) <= KNOWN_NAME:
            _KNOWN[name] = found
            if not found:
                _SAFE.add(name)
    return found


# A credential given as a name and a value side by side: a HAR header ``{"name": "X-Api-Key",
# "value": "..."}``, a Kubernetes env entry, ``{"header_name": ..., "header_value": ...}``.
_NAME_KEYS = ("name", "key", "header", "header_name", "headerName", "field", "Name", "Key")
_VALUE_KEYS = frozenset(["value", "header_value", "headerValue", "Value"])


def _named_value(item: Mapping[Any, Any]) -> Any:
    """The key of ``item``'s value that a key beside it names as a credential's; else None."""
    if _VALUE_KEYS.isdisjoint(item):
        return None
    named = next((item[key] for key in _NAME_KEYS if key in item), None)
    if named.__class__ is not str or not credential_name(named):
        return None
    return next(key for key in item if key in _VALUE_KEYS)


def holds_credentials(value: Any) -> bool:
    """Whether :func:`mask_credentials` would mask anything: a credential-named key at any depth."""
    # Per recorded action: the keys are looked at, not the text of the values. Most arguments
    # are one plain dict of plain values with names seen before: one pass, no walk.
    known = _KNOWN
    leaves = LEAVES
    if value.__class__ is dict:
        # The common case in C: plain str names, all known to be safe, and plain values.
        if (
            _SAFE.issuperset(value)
            and _PLAIN_STR.issuperset(map(type, value))
            and leaves.issuperset(map(type, value.values()))
            and _VALUE_KEYS.isdisjoint(value)
        ):
            return False
        if _named_value(value) is not None:
            return True
        nested = False
        for name, inner in value.items():
            found = known.get(name) if name.__class__ is str else None
            if found is None:
                found = credential_name(name)
            if found:
                return True
            if inner.__class__ not in leaves:
                nested = True
        if not nested:
            return False
    seen: set[int] = set()
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if item.__class__ in leaves or id(item) in seen:
            continue
        if isinstance(item, Mapping):
            seen.add(id(item))
            if _named_value(item) is not None:
                return True
            for name, inner in item.items():
                if credential_name(name):
                    return True
                if inner.__class__ not in leaves:
                    stack.append(inner)
        elif isinstance(item, list | tuple):
            seen.add(id(item))
            stack.extend(item)
    return False


def mask_credentials(value: Any) -> Any:
    """A copy of JSON-like arguments with the value of every credential-named key as ``***``, and
    of a ``value`` whose ``name`` beside it is a credential's (``{"name": "X-Api-Key", "value": ...}``).

    At any depth and without recursion; other values are kept as they are (not copied).
    A container met twice (passed twice, or a cycle) is the same masked copy both times:
    the original, kept, would show its secrets.
    """
    root: list[Any] = [None]
    copies: dict[int, Any] = {}
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        item, parent, key = stack.pop()
        if id(item) in copies:
            parent[key] = copies[id(item)]
        elif isinstance(item, Mapping | list | tuple):
            if isinstance(item, Mapping):
                new: Any = {}
                named = _named_value(item)
                for name, inner in item.items():
                    if credential_name(name) or (named is not None and name == named):
                        new[name] = MASK
                    else:
                        new[name] = None  # the keys keep their order; the value is filled in below
                        stack.append((inner, new, name))
            else:
                new = [None] * len(item)
                stack.extend((inner, new, i) for i, inner in enumerate(item))
            copies[id(item)] = parent[key] = new
        else:
            parent[key] = item
    return root[0]
