"""Tests of heartbeat.config, one file per module (a package, so the names cannot clash)."""
