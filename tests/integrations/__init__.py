"""Tests of heartbeat.integrations, one file per module (a package, so the names cannot clash)."""
