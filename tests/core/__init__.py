"""Tests of heartbeat.core, one file per module (a package, so the names cannot clash)."""
