"""Tests of heartbeat.base, one file per module (a package, so the names cannot clash)."""
