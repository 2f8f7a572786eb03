"""Tests of heartbeat.cli, one file per module (a package, so the names cannot clash)."""
