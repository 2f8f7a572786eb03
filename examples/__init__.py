"""Runnable example agents (importable as ``examples.<name>`` from the repo root)."""
