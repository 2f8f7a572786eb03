"""A real ``python -m heartbeat`` process, as the CLI tests run it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_cli(cwd: Path, *argv: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m heartbeat ARGV`` in ``cwd``, run to its end (a hang fails the test through the
    timeout), colour off, ``env`` over this process's environment."""
    return subprocess.run(
        [sys.executable, "-m", "heartbeat", *argv],
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1", **env},
        text=True,
        capture_output=True,
        timeout=timeout,
    )
