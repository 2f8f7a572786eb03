"""Tests of heartbeat.report, one file per module (a package, so the names cannot clash)."""
