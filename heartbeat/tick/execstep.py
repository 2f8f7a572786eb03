"""``--exec "CMD"``: any program as the step, talking JSON lines.

The program gets, in its environment:

- ``HEARTBEAT_STATE_DIR``  the state folder
- ``HEARTBEAT_INSTRUCTIONS``  recovery text or a human's note ("" when none)
- ``HEARTBEAT_ACTIONS``  a file to append one JSON object per line to:
  ``{"tool": "search", "args": {...}, "output": "...", "error": null, "cost": 0.01}``
  for an action, ``{"usage": {"model": "gpt-4o", "input_tokens": 1200,
  "output_tokens": 300, "cached_tokens": 0}}`` for a model call's tokens
  (spend, not an action; ``"cost"`` in dollars if known, else priced as
  ``ctx.record_usage`` prices), ``{"progress": 0.4}`` to report progress,
  ``{"data": {...}}`` to replace the agent's persisted data
- ``HEARTBEAT_DATA``  a JSON file holding the agent's data (read it freely)
- ``HEARTBEAT_TICK`` and ``HEARTBEAT_AGENT``

It runs in the config's folder, in a process group of its own, with a
timeout; its output goes to ours. It never outlives its step: the whole
group (background children included) is ended when the program exits, when
it times out, when a KILL file appears (checked every 0.1 s) and when the
tick is interrupted (SIGTERM/SIGINT); :func:`end_all` ends every group still
running, for ``heartbeat run`` on its way out. Should the heartbeat itself be
SIGKILLed, the program dies with it and the next tick ends what it left
(:mod:`heartbeat.tick.orphans`).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ..base.commandline import split_command
from ..state.store import EXEC_SCRATCH_PREFIX
from .context import StepContext
from .orphans import die_with_parent

__all__ = ["ExecStep", "ExecStepError", "end_all"]

_POLL_SECONDS = 0.1  # how often a running program's KILL file is looked at
_LIVE: set[int] = set()  # process groups of the programs running now
_LIVE_LOCK = threading.Lock()


def _end_group(pgid: int) -> None:
    """SIGKILL a whole process group; one that is gone already is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def end_all() -> int:
    """End the process group of every ``--exec`` program still running; return how many."""
    with _LIVE_LOCK:
        groups = list(_LIVE)
    for pgid in groups:
        _end_group(pgid)
    return len(groups)


class ExecStepError(RuntimeError):
    """The program failed, timed out or wrote a line that is not the protocol."""


class ExecStep:
    """Run ``command`` as the agent's step."""

    def __init__(self, command: str, *, timeout: float) -> None:
        self.argv = split_command(command, "--exec")
        self.command = command
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"ExecStep({self.command!r}, timeout={self.timeout:g})"

    def __call__(self, ctx: StepContext) -> None:
        """Run the program once and record what it reported."""
        # The store names the state folder's files: it also sweeps scratch folders a kill left.
        with tempfile.TemporaryDirectory(prefix=EXEC_SCRATCH_PREFIX, dir=ctx.state_dir) as scratch:
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
            failure = self._run(env, ctx)
            problem = self._read_actions(actions_path, ctx)
        if failure or problem:
            raise ExecStepError("; ".join(p for p in (failure, problem) if p))

    def _run(self, env: dict[str, str], ctx: StepContext) -> str | None:
        try:
            # Its own session and process group, so ending the group ends everything it started;
            # and it dies with us, should we be SIGKILLed (heartbeat.tick.orphans).
            proc = subprocess.Popen(
                self.argv, env=env, cwd=ctx.base_dir, start_new_session=True, preexec_fn=die_with_parent()
            )
        except OSError as exc:
            return f"cannot start {self.argv[0]!r}: {exc.strerror}"
        with _LIVE_LOCK:
            _LIVE.add(proc.pid)
        try:
            return self._wait(proc, ctx)
        finally:
            # Background children it left behind must not act after the step (nor after KILL).
            _end_group(proc.pid)
            if proc.returncode is None:
                proc.wait()
            with _LIVE_LOCK:
                _LIVE.discard(proc.pid)

    def _wait(self, proc: subprocess.Popen[bytes], ctx: StepContext) -> str | None:
        """Wait for the program; end it on timeout or KILL; say what went wrong, if anything."""
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                code = proc.wait(timeout=max(0.0, min(_POLL_SECONDS, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                if ctx.killed:
                    _end_group(proc.pid)
                    proc.wait()
                    return f"{self.argv[0]} was ended: the KILL file appeared"
                if time.monotonic() >= deadline:
                    _end_group(proc.pid)
                    proc.wait()
                    return f"{self.argv[0]} timed out after {self.timeout:g}s and was killed"
                continue
            if code < 0 and -code in (signal.SIGKILL, signal.SIGTERM) and ctx.killed:
                return f"{self.argv[0]} was ended: the KILL file appeared"
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
    if "usage" in item:
        return _apply_usage(item["usage"], ctx)
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
    return "expected a 'tool', 'usage', 'progress' or 'data' key"


def _apply_usage(usage: object, ctx: StepContext) -> str | None:
    """A model call's ``{"usage": {"model": ..., "input_tokens": ..., ...}}`` line, recorded as spend."""
    if not isinstance(usage, dict):
        return "'usage' must be an object"
    model = usage.get("model")
    if not isinstance(model, str) or not model:
        return "'usage.model' must be a non-empty string"
    counts = []
    for key in ("input_tokens", "output_tokens", "cached_tokens"):
        value = usage.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return f"'usage.{key}' must be an integer >= 0"
        counts.append(value)
    cost = usage.get("cost")
    if cost is not None and (
        isinstance(cost, bool) or not isinstance(cost, int | float) or not math.isfinite(cost) or cost < 0
    ):
        return "'usage.cost' must be a number >= 0"
    ctx.record_usage(model, *counts, cost=None if cost is None else float(cost))
    return None
