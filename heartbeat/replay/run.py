"""``heartbeat replay TRACE|DIR``: one trace (:mod:`.play`) or a folder of them (:mod:`.folder`)."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from ..base.errors import UsageError
from ..config.file import HeartbeatConfig
from .play import render_json, render_table, replay

__all__ = ["run_replay"]


def run_replay(
    path: Path,
    config: HeartbeatConfig,
    *,
    as_json: bool,
    out: TextIO,
    fmt: str | None = None,
    per_heartbeat: int | None = None,
    labels: Path | None = None,
    html: Path | None = None,
) -> int:
    """``heartbeat replay TRACE|DIR [--json]``: write the replay to ``out``; 0, or TraceError/UsageError."""
    if path.is_dir():
        from .folder import run_folder  # csv and statistics: only for a folder

        return run_folder(
            path,
            config,
            as_json=as_json,
            out=out,
            fmt=fmt,
            per_heartbeat=per_heartbeat,
            labels=labels,
            html=html,
        )
    if labels is not None or html is not None:
        raise UsageError("--labels and --html need a folder of traces")
    ticks = replay(path, config, fmt=fmt, per_heartbeat=per_heartbeat)
    lines = (render_json(t) for t in ticks) if as_json else render_table(ticks)
    for line in lines:
        out.write(line + "\n")
    return 0
