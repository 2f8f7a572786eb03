"""``heartbeat.toml``: its tables, its loading, flags over it, and what it names.

Owns ``file`` (the top-level tables and :func:`~heartbeat.config.file.load_config`),
``types`` (durations, paths, the strict base model, ``--since``), the tables
of ``detectors``, ``notify`` and ``policy`` (with the recovery templates'
placeholders), ``flags`` (command-line flags or a library caller's overrides
over the file), ``plugins`` (a ``module:attr`` or entry point named in the
file -> the object) and ``trigger`` (a schedule as an APScheduler trigger).
May import only :mod:`heartbeat.base`.
"""
