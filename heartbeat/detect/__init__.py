"""Seeing that an agent is stuck: the Monitor, the detectors, the progress metrics.

Owns ``monitor`` (:class:`~heartbeat.detect.monitor.Monitor`: actions fed one
by one to incremental trackers), ``detectors`` (one module per kind, with
the fingerprints and the contract beside them; pure) and ``progress`` (the
built-in metrics, and loading a custom one). May import :mod:`heartbeat.core`,
:mod:`heartbeat.config` and :mod:`heartbeat.base`.
"""
