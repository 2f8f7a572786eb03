"""``heartbeat init``: a config, a state folder and a starter step, never overwriting."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from ..base.fsutil import ensure_private_dir, write_all

__all__ = ["init_project"]

CONFIG = """\
# heartbeat.toml: every key is optional; flags override it. Reference: README.md
[agent]
name = "agent"
step = "agent:step"            # the step, as module:attr (or: exec = "python my_agent.py")
progress = "agent:progress"    # the progress metric, as module:attr
state_dir = "state"
kill_file = "KILL"

[schedule]
every = "30m"                  # or: cron = "*/30 * * * *"

[detectors]
volatile_args = ["request_id", "timestamp"]

[detectors.repeat]
threshold = 3
# tools = { get_status = 10 }  # a tool that legitimately polls

[policy]
escalate_after = 3

# [[notify]]
# type = "webhook"
# url = "${HEARTBEAT_WEBHOOK_URL}"   # secrets come from the environment
"""

AGENT = '''\
"""A starter agent: replace the body of step() with your agent's real work."""


def step(ctx):
    """Called once per heartbeat."""
    if ctx.instructions:
        print(f"the heartbeat says: {ctx.instructions}")
    notes = ctx.data.setdefault("notes", [])
    note = f"note {len(notes)}: what this heartbeat found"
    # Report what the tool really returned: a short output (10 characters or fewer) counts as
    # empty, and three in a row look stuck.
    hit = ctx.record("write_note", {"n": len(notes)}, output=f"saved {note!r}")
    if hit:
        return  # stuck already: stop early and let the next heartbeat's instructions help
    notes.append(note)


def progress(ctx):
    """The domain metric: only real work moves it."""
    return len(ctx.data.get("notes", []))
'''


# The config may come to hold a header or a token: 0600. The code is code: 0644.
# Set with fchmod, which the umask does not filter, so `umask 000` cannot make them world-writable.
_FILES = (("heartbeat.toml", CONFIG, 0o600), ("agent.py", AGENT, 0o644))


def _create(path: Path, text: str, mode: int) -> bool:
    """Write a new file with exactly ``mode``; False if it exists (never overwritten)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        return False
    try:
        os.fchmod(fd, mode)
        write_all(fd, text.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return True


def init_project(directory: Path) -> Iterator[str]:
    """Create what is missing in ``directory`` (missing folders 0700); yield one line per file."""
    if not directory.is_dir():
        ensure_private_dir(directory)
    for name, text, mode in _FILES:
        path = directory / name
        if os.path.lexists(path) or not _create(path, text, mode):
            yield f"{path}: exists, left as it is"
            continue
        yield f"{path}: created"
    state = directory / "state"
    existed = state.exists()
    ensure_private_dir(state)
    yield f"{state}/: {'exists' if existed else 'created (0700)'}"
    yield "next: heartbeat tick   (or: heartbeat run)"
