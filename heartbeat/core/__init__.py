"""What a tick means, as pure functions over data: no files, no clock, no network.

Owns ``models`` (the persisted data: ``state.json``, notifications),
``policy`` (:func:`~heartbeat.core.policy.decide`), ``settle`` (a tick's new
state, notices, events and outcome), ``escalation`` (the texts a human
reads), ``budget``, ``sanitize`` (an unsavable state made savable),
``result`` (:class:`~heartbeat.core.result.TickResult`) and ``delivery``
(what a delivery did). May import :mod:`heartbeat.config` and
:mod:`heartbeat.base`.
"""
