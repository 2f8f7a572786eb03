"""Telling a human: the notifiers, and the outbox that delivers to them at least once.

Owns ``notifiers`` (:func:`~heartbeat.notify.notifiers.build_notifiers`; the
``Notifier`` protocol is ``base``'s), one module per built-in kind
(``webhook``, ``command``, ``file``, ``ping``) and ``outbox`` (undelivered
notifications on disk, retried with back-off). httpx is imported only when
a webhook sends. May import :mod:`heartbeat.detect`, :mod:`heartbeat.core`,
:mod:`heartbeat.config` and :mod:`heartbeat.base`; not :mod:`heartbeat.state`.
"""
