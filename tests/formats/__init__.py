"""Tests of heartbeat.formats, one file per module (a package, so the names cannot clash)."""
