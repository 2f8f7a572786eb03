"""Tests of heartbeat.replay, one file per module (a package, so the names cannot clash)."""
