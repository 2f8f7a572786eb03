"""``heartbeat init``: a config, a state folder and a starter step, never overwriting."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from .fsutil import ensure_private_dir

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


def init_project(directory: Path) -> Iterator[str]:
    """Create what is missing in ``directory``; yield one line per file."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in (("heartbeat.toml", CONFIG), ("agent.py", AGENT)):
        path = directory / name
        if path.exists():
            yield f"{path}: exists, left as it is"
            continue
        path.write_text(text, encoding="utf-8")
        yield f"{path}: created"
    state = directory / "state"
    existed = state.exists()
    ensure_private_dir(state)
    yield f"{state}/: {'exists' if existed else 'created (0700)'}"
    yield "next: heartbeat tick   (or: heartbeat run)"
