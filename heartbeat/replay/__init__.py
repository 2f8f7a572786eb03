"""Replaying traces (ours, and other tools' histories) through the same detectors, policy and settle.

Owns ``trace`` (a trace or an imported history as heartbeat lines), ``play``
(:func:`~heartbeat.replay.play.replay`: one trace, tick by tick), ``folder``
(a folder of traces, scored against hand labels) and ``run``
(``heartbeat replay TRACE|DIR``). May import :mod:`heartbeat.report`,
:mod:`heartbeat.formats` and the packages below them; not :mod:`heartbeat.tick`
or :mod:`heartbeat.integrations`.
"""
