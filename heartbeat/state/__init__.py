"""The files heartbeat keeps: the state folder, its journal, the KILL file.

Owns ``store`` (the folder's file names, its locks, saving ``state.json``),
``reader``, ``text`` and ``copies`` (loading, writing and setting aside
``state.json``'s bytes), ``migrations``, ``journal`` (``journal.jsonl``),
``killswitch`` (the KILL file) and ``warm`` (what an in-process heartbeat
keeps between ticks). May import :mod:`heartbeat.detect`, :mod:`heartbeat.core`,
:mod:`heartbeat.config` and :mod:`heartbeat.base`; not :mod:`heartbeat.notify`.
"""
