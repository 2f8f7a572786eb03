"""Keeping secrets out of files and output: URLs cut to their host, known secrets masked.

Standard library only: every tick of an agent with a webhook needs it, and
most ticks send nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from urllib.parse import parse_qsl, urlsplit

__all__ = ["REDACTED", "redact", "redact_url", "url_secrets", "webhook_secrets"]

REDACTED = "***"
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")
_TRAILING = ".,:;!)]}…"


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


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every secret replaced by ``***`` and every URL cut to :func:`redact_url`."""
    # URLs first, so a secret inside one cannot garble its host; then the secrets
    # left elsewhere, longest first, so one that contains another is replaced whole.
    text = _URL.sub(_cut_url, text)
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def _cut_url(match: re.Match[str]) -> str:
    """One URL found in a text, redacted; punctuation after it is kept."""
    url = match.group(0)
    core = url.rstrip(_TRAILING)
    tail = url[len(core) :]
    if core.endswith("/") and tail.startswith("…"):
        tail = tail[1:]  # an already redacted "host/…": redact_url puts the ellipsis back
    return redact_url(core) + tail


def url_secrets(url: str) -> list[str]:
    """The parts of a URL that may be credentials: the whole URL, its path and query pieces."""
    parts = urlsplit(url)
    found = [url, parts.path, parts.query, parts.fragment]
    if parts.password:
        found.append(parts.password)
    if parts.username:
        found.append(parts.username)
    # Slack's and Discord's tokens are path segments; short ones ("v1") are not secrets,
    # and replacing them would garble messages.
    found += [segment for segment in parts.path.split("/") if len(segment) >= 6]
    found += [value for _, value in parse_qsl(parts.query) if len(value) >= 3]
    return [s for s in found if s and s != "/"]


def webhook_secrets(url: str, headers: Mapping[str, str]) -> list[str]:
    """What a webhook must never show: its URL's secret parts and its header values."""
    return [*url_secrets(url), *(v for v in headers.values() if len(v) >= 4)]
