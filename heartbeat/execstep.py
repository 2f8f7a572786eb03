"""``--exec "CMD"``: any program as the step, talking JSON lines.

The program gets, in its environment:

- ``HEARTBEAT_STATE_DIR``  the state folder
- ``HEARTBEAT_INSTRUCTIONS``  recovery text or a human's note ("" when none)
- ``HEARTBEAT_ACTIONS``  a file to append one JSON object per line to:
  ``{"tool": "search", "args": {...}, "output": "...", "error": null, "cost": 0.01}``
  for an action, ``{"progress": 0.4}`` to report progress, ``{"data": {...}}``
  to replace the agent's persisted data
- ``HEARTBEAT_DATA``  a JSON file holding the agent's data (read it freely)
- ``HEARTBEAT_TICK`` and ``HEARTBEAT_AGENT``

It runs in the config's folder, with a timeout; its output goes to ours.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from .context import StepContext
from .errors import ConfigError

__all__ = ["ExecStep", "ExecStepError"]


class ExecStepError(RuntimeError):
    """The program failed, timed out or wrote a line that is not the protocol."""


class ExecStep:
    """Run ``command`` as the agent's step."""

    def __init__(self, command: str, *, timeout: float) -> None:
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise ConfigError(f"exec {command!r}: {exc}") from None
        if not self.argv:
            raise ConfigError("exec: the command is empty")
        self.command = command
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"ExecStep({self.command!r}, timeout={self.timeout:g})"

    def __call__(self, ctx: StepContext) -> None:
        """Run the program once and record what it reported."""
        with tempfile.TemporaryDirectory(prefix=".exec-", dir=ctx.state_dir) as scratch:
            actions_path = Path(scratch) / "actions.jsonl"
            data_path = Path(scratch) / "data.json"
            actions_path.touch(mode=0o600)
            data_path.write_text(json.dumps(ctx.data), encoding="utf-8")
            env = {
                **os.environ,
                "HEARTBEAT_STATE_DIR": str(ctx.state_dir),
                "HEARTBEAT_INSTRUCTIONS": ctx.instructions or "",
                "HEARTBEAT_ACTIONS": str(actions_path),
                "HEARTBEAT_DATA": str(data_path),
                "HEARTBEAT_TICK": str(ctx.tick),
                "HEARTBEAT_AGENT": ctx.agent,
            }
            failure = self._run(env, ctx.base_dir)
            problem = self._read_actions(actions_path, ctx)
        if failure or problem:
            raise ExecStepError("; ".join(p for p in (failure, problem) if p))

    def _run(self, env: dict[str, str], cwd: Path) -> str | None:
        try:
            # Its own session, so a timeout kills the program and everything it started.
            proc = subprocess.Popen(self.argv, env=env, cwd=cwd, start_new_session=True)
        except OSError as exc:
            return f"cannot start {self.argv[0]!r}: {exc.strerror}"
        try:
            code = proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return f"{self.argv[0]} timed out after {self.timeout:g}s and was killed"
        return f"{self.argv[0]} exited with code {code}" if code else None

    @staticmethod
    def _read_actions(path: Path, ctx: StepContext) -> str | None:
        """Record every valid line; name the first bad one."""
        bad: str | None = None
        with open(path, encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                reason = _apply_line(line, ctx)
                if reason and bad is None:
                    bad = f"{path.name} line {number}: {reason}"
        return bad


def _apply_line(line: str, ctx: StepContext) -> str | None:
    try:
        item: Any = json.loads(line)
    except json.JSONDecodeError as exc:
        return f"not JSON ({exc.msg})"
    if not isinstance(item, dict):
        return "not a JSON object"
    if "tool" in item:
        tool, args, output, error = item["tool"], item.get("args"), item.get("output"), item.get("error")
        cost = item.get("cost", 0.0) or 0.0
        if not isinstance(tool, str) or not tool:
            return "'tool' must be a non-empty string"
        if args is not None and not isinstance(args, dict):
            return "'args' must be an object"
        if isinstance(cost, bool) or not isinstance(cost, int | float) or not math.isfinite(cost) or cost < 0:
            return "'cost' must be a number >= 0"
        ctx.record(
            tool,
            args,
            output=None if output is None else str(output),
            error=None if error in (None, "") else str(error),
            cost=float(cost),
        )
        return None
    if "progress" in item:
        value = item["progress"]
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            return "'progress' must be a number or null"
        ctx.report_progress(None if value is None else float(value))
        return None
    if "data" in item:
        if not isinstance(item["data"], dict):
            return "'data' must be an object"
        ctx.data.clear()
        ctx.data.update(item["data"])
        return None
    return "expected a 'tool', 'progress' or 'data' key"
