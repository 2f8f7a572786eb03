"""Import formats for ``heartbeat replay``: histories written by other tools, read as heartbeat traces."""
