"""``heartbeat init``: a config, a state folder and a starter step, never overwriting."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from ..base.fsutil import ensure_private_dir, write_all

__all__ = ["REFERENCE", "init_project"]

REFERENCE = "README.md of the heartbeat checkout it was installed from (`heartbeat --help`: the commands)"
"""Where the files ``init`` writes send a reader: heartbeat is not on the package index, so there is
no project page; it is installed from a checkout, whose README is the reference."""

CONFIG = f"""\
# heartbeat.toml: every key is optional; flags override it. Reference: {REFERENCE}
[agent]
name = "agent"
step = "agent:step"            # the step, as module:attr (or: exec = "python my_agent.py")
progress = "agent:progress"    # the progress metric, as module:attr
state_dir = "state"
kill_file = "KILL"

[schedule]
every = "30m"                  # or: cron = "*/30 * * * *"

# The detectors' defaults are the README's; uncomment to change one.
# [detectors]
# volatile_args = ["request_id", "timestamp"]  # arguments new on every call, left out of a call
# [detectors.repeat]
# threshold = 3                  # the default
# tools = {{ get_status = 10 }}  # a tool that legitimately polls

[policy]
escalate_after = 3

# Who is told when the agent needs a human: a file to start with, then a webhook too.
[[notify]]
type = "file"
path = "notifications.jsonl"

# [[notify]]
# type = "webhook"
# url = "${{HEARTBEAT_WEBHOOK_URL}}"   # secrets come from the environment
"""

AGENT = '''\
"""A starter agent: replace the body of step() with your agent's real work.

How heartbeat calls it, and what ctx holds: {REFERENCE}
"""


def step(ctx):
    """Called once per heartbeat."""
    if ctx.instructions:
        print(f"the heartbeat says: {ctx.instructions}")
    notes = ctx.data.setdefault("notes", [])
    note = f"note {len(notes)}: what this heartbeat found"
    # Report what the tool really returned: an answer of nothing ("", [], "no results") to a
    # call that asks for something counts as empty, and three in a row look stuck; a write or
    # an act answered "ok" never does.
    notes.append(note)  # keep what the call did before asking whether to stop
    if ctx.record("write_note", {"n": len(notes) - 1}, output=f"saved {note!r}"):
        return  # stuck already: stop early and let the next heartbeat's instructions help


def progress(ctx):
    """The domain metric: only real work moves it."""
    return len(ctx.data.get("notes", []))
'''.replace("{REFERENCE}", REFERENCE)


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


def _missing(path: Path, names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` a Python file does not define at its top level (all, if it cannot be read)."""
    import ast

    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return list(names)
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    defined |= {
        t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)
    }
    defined |= {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
    return [name for name in names if name not in defined]


def init_project(directory: Path) -> Iterator[str]:
    """Create what is missing in ``directory`` (missing folders 0700); yield one line per file."""
    if not directory.is_dir():
        ensure_private_dir(directory)
    created = set()
    for name, text, mode in _FILES:
        path = directory / name
        if os.path.lexists(path) or not _create(path, text, mode):
            yield f"{path}: exists, left as it is"
            continue
        created.add(name)
        yield f"{path}: created"
    state = directory / "state"
    existed = state.exists()
    ensure_private_dir(state)
    yield f"{state}/: {'exists' if existed else 'created (0700)'}"
    # The config written here names agent:step and agent:progress: an agent.py of the user's
    # own that defines neither would fail at the first tick.
    missing = _missing(directory / "agent.py", ("step", "progress")) if created == {"heartbeat.toml"} else []
    if missing:
        wanted = " and ".join(f"def {name}(ctx)" for name in missing)
        yield (
            f"next: {directory / 'agent.py'} (yours, kept) has no {' or '.join(missing)}: add {wanted}, "
            "or point [agent] in heartbeat.toml at your own; then heartbeat tick"
        )
        return
    yield "next: heartbeat tick   (or: heartbeat run)"
