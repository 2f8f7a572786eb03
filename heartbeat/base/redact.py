"""Keeping secrets out of files and output: URLs cut to their host, known secrets masked.

Two operations. :func:`redact` is for messages (an error, a reason): every
URL in them is cut to ``scheme://host/…`` and every known secret masked.
:func:`mask` is for data that must keep its URLs (the agent's state, the
journal, outbox entries): only the known secrets are masked, as they appear
in plain text, in JSON (``\\/``, ``\\u00e9``) or percent-encoded.

What counts as a secret (:func:`url_secrets`, :func:`header_secrets`) is
chosen so that masking never garbles ordinary words: a URL's path segments
``services`` or ``webhooks`` are words, ``T0123ABCD`` and a 24-character token
are secrets.

Standard library only: every tick of an agent with a webhook needs it, and
most ticks send nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

__all__ = [
    "REDACTED",
    "argv_secrets",
    "header_secrets",
    "map_tree",
    "mask",
    "mask_tree",
    "redact",
    "redact_event",
    "redact_url",
    "secret_forms",
    "url_secrets",
    "webhook_secrets",
]

REDACTED = "***"
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")
_TRAILING = ".,:;!)]}…"
# A word a URL path or a header is made of ("services", "webhooks", "api-v2" is not one).
_WORD = re.compile(r"[A-Za-z][a-z]*(?:[._-][a-z]+)*")
# Query keys whose values are credentials however short or plain they look.
_CREDENTIAL_KEYS = re.compile(r"token|key|secret|sig|pass|auth|code|cred|session", re.IGNORECASE)
# A secret shorter than this is not masked on its own: "v1" or "abc" would garble text.
MIN_SECRET = 6
# Past this a word is long enough to be a token anyway.
_LONG = 24


def redact_url(url: str) -> str:
    """``scheme://host[:port]/…``: the URL with user info, path, query and fragment cut off."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
        port = parts.port
    except ValueError:
        return "<invalid URL>"
    if not parts.scheme or not host:
        return "<invalid URL>"
    if ":" in host:  # an IPv6 address keeps its brackets
        host = f"[{host}]"
    return f"{parts.scheme}://{host}{f':{port}' if port is not None else ''}/…"


def secret_forms(secrets: Iterable[str]) -> list[str]:
    """Each secret as it may appear in text, JSON or a URL; longest first, no duplicates."""
    forms: set[str] = set()
    for secret in secrets:
        if not secret:
            continue
        forms.add(secret)
        # As JSON writes it: json.dumps escapes quotes, backslashes, controls and non-ASCII.
        forms.add(json.dumps(secret)[1:-1])
        forms.add(json.dumps(secret, ensure_ascii=False)[1:-1])
        forms.add(secret.replace("/", "\\/"))  # some encoders escape the slash
        forms.add(quote(secret, safe=""))  # an echo of the URL, percent-encoded
    return sorted(forms, key=len, reverse=True)


def mask(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every known secret (in any of :func:`secret_forms`) replaced by ``***``."""
    for form in secret_forms(secrets):
        if form in text:
            text = text.replace(form, REDACTED)
    return text


def mask_tree(value: Any, secrets: Iterable[str]) -> Any:
    """A copy of a JSON-like value with every string (keys too) masked; other values as they are."""
    forms = secret_forms(secrets)
    if not forms:
        return value

    def text(item: str) -> str:
        for form in forms:
            if form in item:
                item = item.replace(form, REDACTED)
        return item

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return text(item)
        if isinstance(item, Mapping):
            return {text(k) if isinstance(k, str) else k: walk(v) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return [walk(v) for v in item]
        return item

    try:
        return walk(value)
    except RecursionError:  # nested deeper than Python recurses (a hostile trace): the same, by hand
        return map_tree(value, text)


def map_tree(value: Any, text: Callable[[str], str]) -> Any:
    """A copy of a JSON-like value with ``text`` applied to every string (keys too), at any depth.

    Without recursion, so input nested thousands of levels deep is no RecursionError; a
    container met twice (a cycle) becomes the text ``"[cycle]"``.
    """
    root: list[Any] = [None]
    seen: set[int] = set()
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        item, parent, key = stack.pop()
        if isinstance(item, str):
            parent[key] = text(item)
        elif isinstance(item, Mapping | list | tuple):
            if id(item) in seen:
                parent[key] = "[cycle]"
                continue
            seen.add(id(item))
            if isinstance(item, Mapping):
                new: Any = {}
                for k, v in item.items():
                    name = text(k) if isinstance(k, str) else k
                    new[name] = None  # the keys keep their order; the values are filled in below
                    stack.append((v, new, name))
            else:
                new = [None] * len(item)
                stack.extend((v, new, i) for i, v in enumerate(item))
            parent[key] = new
        else:
            parent[key] = item
    return root[0]


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every secret replaced by ``***`` and every URL cut to :func:`redact_url`."""
    # URLs first, so a secret inside one cannot garble its host; then the secrets
    # left elsewhere (a token echoed on its own).
    return mask(_URL.sub(_cut_url, text), secrets)


def _cut_url(match: re.Match[str]) -> str:
    """One URL found in a text, redacted; punctuation after it is kept."""
    url = match.group(0)
    core = url.rstrip(_TRAILING)
    tail = url[len(core) :]
    if core.endswith("/") and tail.startswith("…"):
        tail = tail[1:]  # an already redacted "host/…": redact_url puts the ellipsis back
    return redact_url(core) + tail


def _token_like(piece: str) -> bool:
    """Whether a URL segment or header word is a credential rather than an ordinary word."""
    if len(piece) < MIN_SECRET:
        return False
    return len(piece) >= _LONG or _WORD.fullmatch(piece) is None


def url_secrets(url: str) -> list[str]:
    """The parts of a URL that may be credentials: the whole URL, its path and query, token-like pieces."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return [url] if url else []
    found = [url, parts.query, parts.fragment, parts.password or "", parts.username or ""]
    # Slack's and Discord's tokens are path segments ("T0123/B0456/XXXX..."); words such
    # as "services" or "webhooks" are not, and masking them would garble messages.
    segments = [segment for segment in parts.path.split("/") if segment]
    tokens = [segment for segment in segments if _token_like(segment)]
    if tokens or len(segments) > 1:
        found += [parts.path, *tokens]  # a one-word path ("/hook") is no secret by itself
    for key, value in parse_qsl(parts.query):
        if _token_like(value) or (len(value) >= 3 and _CREDENTIAL_KEYS.search(key)):
            found.append(value)
    return [s for s in found if s]


def header_secrets(value: str) -> list[str]:
    """A header value's secrets: the whole value and its token-like words ("Bearer abc..." -> abc...)."""
    if len(value) < 4:
        return []
    return [value, *(word for word in value.split() if word != value and _token_like(word))]


def argv_secrets(args: Iterable[str]) -> list[str]:
    """The values a command line names as credentials: ``--token X``, ``password=X``, ``Authorization: X``.

    Only these: the other words (a file name, a flag) are what makes a failed
    command's error readable.
    """
    found: list[str] = []
    words = list(args)
    for i, word in enumerate(words):
        key, sep, value = word.partition("=") if "=" in word else word.partition(":")
        if sep and _CREDENTIAL_KEYS.search(key) and value.strip():
            found += header_secrets(value.strip()) if sep == ":" else [value]
        elif word.startswith("-") and _CREDENTIAL_KEYS.search(word) and i + 1 < len(words):
            found.append(words[i + 1])
    return [s for s in found if len(s) >= 3]


def webhook_secrets(url: str, headers: Mapping[str, str]) -> list[str]:
    """What a webhook must never show: its URL's secret parts and its header values."""
    return [*url_secrets(url), *(s for v in headers.values() for s in header_secrets(v))]


def redact_event(event: Mapping[str, Any], secrets: Iterable[str]) -> dict[str, Any]:
    """A journal event with URLs and secrets cut from its top-level texts and secrets masked below."""
    found = list(secrets)
    top = {k: redact(v, found) if isinstance(v, str) else v for k, v in event.items()}
    masked: dict[str, Any] = mask_tree(top, found)
    return masked
