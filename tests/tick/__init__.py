"""Tests of heartbeat.tick, one file per module (a package, so the names cannot clash)."""
