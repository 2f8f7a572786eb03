"""An ``--exec`` program whose heartbeat died outright must not go on running with nothing watching it.

The same holds for what a Python step starts (:func:`end_descendants`,
when a heartbeat stops on KILL or a signal).

The program runs in a session of its own (so its whole group can be ended),
which also means it survives a heartbeat that is SIGKILLed (``kill -9``, the
OOM killer, a supervisor's last resort): no timeout, no KILL file and no
state are watching it any more, and the next tick would start a second copy.
Two guards, both Linux-only (elsewhere they do nothing):

- :func:`die_with_parent`, run in the program's process just before it
  starts: the kernel SIGKILLs it when the thread that started it dies.
- :func:`end_processes_of`, run by the next heartbeat that takes the state
  folder's lock and finds the scratch folder (``.exec-*``) the dead tick
  left: every process whose ``HEARTBEAT_ACTIONS`` names that folder (the
  program's own children too), and their process groups, are SIGKILLed
  before the folder is removed.

A Python step's processes get the same sweep: while it runs (:func:`marking_children`),
a scratch folder of its own is named in the tick's environment
(``HEARTBEAT_STEP_SCRATCH``), which every process it starts inherits, so those
a SIGKILLed tick left running are found by the next heartbeat as an ``--exec``
program's are (a step that gives a child an environment of its own, or a
double fork that drops it, is out of reach).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = ["STEP_SCRATCH", "die_with_parent", "end_descendants", "end_processes_of", "marking_children"]

_PR_SET_PDEATHSIG = 1
_ACTIONS = b"HEARTBEAT_ACTIONS="
STEP_SCRATCH = "HEARTBEAT_STEP_SCRATCH"
"""The variable naming a Python step's scratch folder in the environment its processes inherit."""
_STEP = os.fsencode(STEP_SCRATCH) + b"="


@contextlib.contextmanager
def marking_children(state_dir: Path, prefix: str) -> Iterator[None]:
    """While a Python step runs: a scratch folder ``<prefix>...`` in ``state_dir``, named in this
    process's environment for the processes the step starts (Linux; elsewhere nothing is swept).
    Removed when the step is done; a SIGKILLed tick leaves it for the next one's sweep."""
    if not sys.platform.startswith("linux"):
        yield
        return
    try:
        folder = tempfile.mkdtemp(prefix=prefix, dir=state_dir)  # as an --exec program's (execstep)
    except OSError:  # the save will say what is wrong with the folder: the step is not held up
        yield
        return
    before = os.environ.get(STEP_SCRATCH)
    os.environ[STEP_SCRATCH] = folder
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(STEP_SCRATCH, None)
        else:
            os.environ[STEP_SCRATCH] = before
        with contextlib.suppress(OSError):
            os.rmdir(folder)


def die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child SIGKILLed when the thread starting it dies (None off Linux).

    Built in the parent, so the child (forked from a process with threads) imports and
    loads nothing: it makes one ``prctl`` call, then checks the parent did not die first.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # no libc to ask: the next tick's sweep is the guard
        return None
    parent = os.getpid()

    def guard() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the guard was set
            os._exit(1)

    return guard


def end_processes_of(scratch: str) -> int:
    """SIGKILL every process (and its group) whose ``HEARTBEAT_ACTIONS`` lies in ``scratch``; how many."""
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return 0
    folder = os.path.realpath(scratch)
    own = {os.getpid(), os.getpgrp()}
    ended = 0
    for pid in pids:
        if pid in own or not _runs_in(pid, folder):
            continue
        with contextlib.suppress(OSError):
            group = os.getpgid(pid)
            if group not in own:  # never our own group: that would end this heartbeat
                os.killpg(group, signal.SIGKILL)
            os.kill(pid, signal.SIGKILL)
            ended += 1
    return ended


def _runs_in(pid: int, folder: str) -> bool:
    """Whether process ``pid`` was started by a step (an ``--exec`` program or a Python step's
    process) whose scratch folder is ``folder``."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            environ = handle.read()
    except OSError:  # gone, or not ours to read
        return False
    for entry in environ.split(b"\0"):
        if entry.startswith(_ACTIONS):
            path = os.fsdecode(entry[len(_ACTIONS) :])
            if os.path.realpath(os.path.dirname(path)) == folder:
                return True
        elif entry.startswith(_STEP) and os.path.realpath(os.fsdecode(entry[len(_STEP) :])) == folder:
            return True
    return False


def end_descendants(rounds: int = 3) -> int:
    """SIGKILL every process this one started, and what they started (Linux; 0 elsewhere); how many.

    For a heartbeat that stops on KILL or a signal: a Python step's ``subprocess``
    (an agent CLI, a browser) would otherwise go on acting once the heartbeat is
    gone. Parents are ended before their children, so none forks anew unseen;
    the scan is repeated while it still finds some. A process that left the tree
    on purpose (a double fork, reparented to init) is out of reach.
    """
    ended = 0
    for _ in range(rounds):
        found = _descendants(os.getpid())
        if not found:
            break
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                ended += 1
    return ended


def _descendants(root: int) -> list[int]:
    """The processes under ``root`` in the process tree, parents first (from /proc)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    children: dict[int, list[int]] = {}
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()  # the name may hold ") "
            if fields[0] != b"Z":  # a zombie is dead already
                children.setdefault(int(fields[1]), []).append(int(name))
        except (OSError, IndexError, ValueError):
            continue
    found: list[int] = []
    todo = list(children.get(root, ()))
    while todo:
        pid = todo.pop(0)
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found
