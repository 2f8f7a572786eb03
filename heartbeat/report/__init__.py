"""``report.html``: an agent's night as one self-contained page, the fleet overview, the tuning page.

Owns ``write`` (the I/O shell: reads a :class:`~heartbeat.report.write.Reported`
agent's state and journal, writes the pages atomically), ``data`` and
``rows`` (journal events -> timeline, pure), ``page``, ``timeline``,
``html`` and ``tuning`` (data -> HTML, pure). May import :mod:`heartbeat.state`
and the packages below it; not :mod:`heartbeat.notify`.
"""
