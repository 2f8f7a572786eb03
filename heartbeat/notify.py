"""Telling a human: the notifiers and the outbox that retries them, in one import.

The notifiers live in :mod:`heartbeat.notifiers` (one module per kind) and
the outbox in :mod:`heartbeat.outbox`; this module gathers their public
names so ``from heartbeat.notify import WebhookNotifier, Outbox`` keeps
working. httpx is imported only when a webhook sends.
"""

from __future__ import annotations

from .models import Notification
from .notifiers import build_notifiers
from .notifiers.base import Notifier
from .notifiers.command import CommandNotifier
from .notifiers.file import FileNotifier
from .notifiers.webhook import WebhookNotifier
from .outbox import (
    RETRY_BASE,
    RETRY_CAP,
    SETTLE_WAIT,
    STATUS_KINDS,
    DeliveryReport,
    Outbox,
    OutboxEntry,
    OutboxItem,
    retry_delay,
)
from .redact import redact, redact_url, url_secrets

__all__ = [
    "RETRY_BASE",
    "RETRY_CAP",
    "SETTLE_WAIT",
    "STATUS_KINDS",
    "CommandNotifier",
    "DeliveryReport",
    "FileNotifier",
    "Notification",
    "Notifier",
    "Outbox",
    "OutboxEntry",
    "OutboxItem",
    "WebhookNotifier",
    "build_notifiers",
    "redact",
    "redact_url",
    "retry_delay",
    "url_secrets",
]
