"""One heartbeat (lock, load, step, decide, settle, save, journal, deliver), and ``heartbeat run``.

Owns ``runner`` (:class:`~heartbeat.tick.runner.Heartbeat`, the pipeline),
``stepcall`` (the step phase), ``context`` (what the step sees), ``late``
(what ran after its heartbeat ended), ``stepguard`` (who settles a step's
calls: its tick, or a stop that will not wait for it), ``agent``
(the Protocol the runner's helpers take instead of the runner), ``control``
(pause, resume, KILL's stop), ``effects`` (carrying out notices),
``watchdog`` (KILL and signals while a step runs), ``execstep`` and
``orphans`` (``--exec`` programs, and what a dead one left), ``sharedstop``
(the fleet stop), ``plugins`` (one agent's step, metric and notifiers),
``pinground`` (the dead man's switch around a tick) and ``schedule``
(``heartbeat run``'s scheduler). May import :mod:`heartbeat.report` and
every package below it.
"""
