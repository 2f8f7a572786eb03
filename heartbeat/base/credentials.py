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
``credential(s)``, ``authorization``, ``auth``, ``cookie``, ``bearer``; or
when it ends in ``token`` (``access_token``, ``token``, not ``max_tokens``)
or in ``key`` after a word such as ``api``, ``access``, ``secret``,
``private`` or ``signing`` (``api_key``, ``AWS_SECRET_ACCESS_KEY``; a bare
``key``, a cache key, is not).

Pure and standard library only: the detectors' fingerprints use it for every
recorded action.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["MASK", "is_credential_key", "mask_credentials", "may_hold_credentials"]

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
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_WORDS = re.compile(r"[a-z0-9]+")
# A quick look at canonical JSON ("name": ...) before the exact test: most calls have no such key.
_HINT = re.compile(r'"[^"]*(?:pass|pwd|secret|cred|auth|cookie|bearer|token|key)[^"]*":', re.IGNORECASE)


def is_credential_key(name: object) -> bool:
    """Whether an argument named ``name`` holds a credential (see the module docstring)."""
    if not isinstance(name, str) or not name:
        return False
    words = _WORDS.findall(_CAMEL.sub(r"\1 \2", name).lower())
    if not words:
        return False
    if _ANY_WORD.intersection(words) or "".join(words) in _ANY_WORD:
        return True
    last = words[-1]
    if last == "token":
        return True
    return last == "key" and len(words) > 1 and words[-2] in _KEY_AFTER


def may_hold_credentials(canonical: str) -> bool:
    """A quick test of canonical JSON arguments: False means no credential-named key is in them."""
    return _HINT.search(canonical) is not None


def mask_credentials(value: Any) -> Any:
    """A copy of JSON-like arguments with the value of every credential-named key as ``***``.

    At any depth and without recursion; other values are kept as they are (not copied).
    A container met twice (a cycle) is kept as it is the second time.
    """
    root: list[Any] = [None]
    seen: set[int] = set()
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        item, parent, key = stack.pop()
        if isinstance(item, Mapping | list | tuple) and id(item) not in seen:
            seen.add(id(item))
            if isinstance(item, Mapping):
                new: Any = {}
                for name, inner in item.items():
                    if is_credential_key(name):
                        new[name] = MASK
                    else:
                        new[name] = None  # the keys keep their order; the value is filled in below
                        stack.append((inner, new, name))
            else:
                new = [None] * len(item)
                stack.extend((inner, new, i) for i, inner in enumerate(item))
            parent[key] = new
        else:
            parent[key] = item
    return root[0]
