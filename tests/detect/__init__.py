"""Tests of heartbeat.detect, one file per module (a package, so the names cannot clash)."""
