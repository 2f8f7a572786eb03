"""Tests of heartbeat.detect.detectors, one file per module (a package, so the names cannot clash)."""
