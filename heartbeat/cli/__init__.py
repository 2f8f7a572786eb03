"""The ``heartbeat`` command: a thin adapter that parses, calls one library function, prints.

Owns ``main`` (:func:`~heartbeat.cli.main.main`: errors to exit codes),
``parser`` (the grammar and help), ``commands`` (one ``cmd_`` function per
command) and what only the command shows: ``tickoutput``, ``status``,
``logview``, ``metrics``, ``outbox``, ``notifytest``, ``scaffold`` and
``style``. May import every other package; none imports it.
"""
