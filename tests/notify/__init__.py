"""Tests of heartbeat.notify, one file per module (a package, so the names cannot clash)."""
