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

The lines are applied as the program writes them: every 0.1 s, while it
runs, each new complete line (a last line without its newline waits for
it); once it has exited, the rest, a last line without a newline too. So a
budget (``tokens_per_tick``, ``cost_per_day``, the action budgets ...) spent
mid-run ends the program at once, within about 0.1 s of the line that
spent it: its whole group is ended as KILL ends it, every complete line it
wrote before it died is applied, and the tick pauses the agent with a
budget notification, as a step's ``ctx`` past its budget does (the program
ended for its budget is no step error). A bad line is named (the first,
``actions.jsonl line N: why``) and the others still apply; it fails the
step once the program has ended.

It runs in the config's folder, in a process group of its own, with a
timeout; its output goes to ours. It never outlives its step: the whole
group (background children included) is ended when the program exits, when
it times out, when a KILL file appears (checked every 0.1 s), when it spends
a budget and when the tick is interrupted (SIGTERM/SIGINT); :func:`end_all`
ends every group still running, for ``heartbeat run`` on its way out. Should the heartbeat itself be
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

_POLL_SECONDS = 0.1  # how often a running program's KILL file and new lines are looked at
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
            with _Lines(actions_path, ctx) as lines:
                failure = self._run(env, ctx, lines)
                lines.read(final=True)  # what it wrote before it ended, a last line with no newline too
                problem = lines.bad
        if failure or problem:
            raise ExecStepError("; ".join(p for p in (failure, problem) if p))

    def _run(self, env: dict[str, str], ctx: StepContext, lines: _Lines) -> str | None:
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
            return self._wait(proc, ctx, lines)
        finally:
            # Background children it left behind must not act after the step (nor after KILL).
            _end_group(proc.pid)
            if proc.returncode is None:
                proc.wait()
            with _LIVE_LOCK:
                _LIVE.discard(proc.pid)

    def _wait(self, proc: subprocess.Popen[bytes], ctx: StepContext, lines: _Lines) -> str | None:
        """Wait for the program, applying its lines; end it on timeout, KILL or a spent budget; say what
        went wrong, if anything (a spent budget is no failure: the tick pauses the agent for it)."""
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                code = proc.wait(timeout=max(0.0, min(_POLL_SECONDS, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                lines.read()
                if ctx.killed:
                    why: str | None = self._stopped(ctx)
                elif ctx.budget_anomaly is not None:  # spent by the lines just read: no further call
                    why = None
                elif time.monotonic() >= deadline:
                    why = f"{self.argv[0]} timed out after {self.timeout:g}s and was killed"
                else:
                    continue
                lines.cut = True  # ended by us: a last line may be cut short
                _end_group(proc.pid)
                proc.wait()
                return why
            if code < 0 and -code in (signal.SIGKILL, signal.SIGTERM) and ctx.killed:
                return self._stopped(ctx)
            return f"{self.argv[0]} exited with code {code}" if code else None

    def _stopped(self, ctx: StepContext) -> str:
        """Why the program was ended by a stop: the KILL file or the fleet stop, named as every part
        names it (ctx.killed is true for either)."""
        said = ctx.stopped_by() or "stopped by the KILL file or the fleet stop"  # lifted meanwhile
        return f"{self.argv[0]} was ended: {said}"


class _Lines:
    """The ``HEARTBEAT_ACTIONS`` file as the program writes it: each line applied once, in order."""

    def __init__(self, path: Path, ctx: StepContext) -> None:
        self._handle = open(path, encoding="utf-8", errors="replace")  # noqa: SIM115 (closed by __exit__)
        self._ctx = ctx
        self._partial = ""  # a last line still waiting for its newline
        self._number = 0
        self.bad: str | None = None
        """The first bad line, named (``actions.jsonl line N: why``), else None."""
        self.cut = False
        """Set when heartbeat ended the program: a last line with no newline may be cut short by it."""

    def __enter__(self) -> _Lines:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()

    def read(self, *, final: bool = False) -> None:
        """Apply the new complete lines; ``final`` (the program has ended): a last unfinished one too."""
        text = self._handle.read()
        if not text and not (final and self._partial):
            return
        found = (self._partial + text).split("\n")
        self._partial = "" if final else found.pop()
        if final and self.cut and found[-1].strip() and not _whole(found[-1]):
            found.pop()  # half a line, cut by the kill: no call the program finished writing
        for line in found:
            self._number += 1
            if not line.strip():
                continue
            reason = _apply_line(line, self._ctx)
            if reason and self.bad is None:
                self.bad = f"{Path(self._handle.name).name} line {self._number}: {reason}"


def _whole(line: str) -> bool:
    """Whether a line is whole JSON (a line cut short mid-write never is: its braces are open)."""
    try:
        json.loads(line)
    except json.JSONDecodeError:
        return False
    return True


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
