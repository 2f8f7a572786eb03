"""Tests of heartbeat.state, one file per module (a package, so the names cannot clash)."""
