"""Child-process bodies for the real-process tests: writers to be SIGKILLed, lock holders.

They run in processes started by ``multiprocessing`` (forkserver: a fresh
interpreter that has imported heartbeat once and forks each child, so a child
starts in milliseconds instead of the ~200 ms of a new interpreter). Each
reports progress through a pipe so the parent can kill it at a point it knows.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import multiprocessing.context
import multiprocessing.synchronize
import os
import random
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from heartbeat.base.errors import StateLocked
from heartbeat.state.journal import Journal
from heartbeat.state.store import StateStore

BLOB_UNIT = "0123456789abcdef"
BLOB_REPEAT = 1150  # about 18.4 KB of blob: a ~19 KB state.json


def blob_for(counter: int) -> str:
    """The payload saved with ``counter``: it changes with every save, so a mix would show."""
    return f"{counter:08d}" + BLOB_UNIT * BLOB_REPEAT


def forkserver_context() -> multiprocessing.context.ForkServerContext:
    """A forkserver context whose server has imported heartbeat (and pytest's main) already."""
    ctx = multiprocessing.get_context("forkserver")
    # "__main__" too, or every child re-runs pytest's entry script. Not this
    # module: Python 3.11's forkserver ignores the parent's sys.path, so it
    # could not find it (each child imports it, cheaply, once heartbeat is in).
    ctx.set_forkserver_preload(["__main__", "heartbeat.state.store", "heartbeat.state.journal"])
    return ctx


def save_forever(state_dir: str, acks: multiprocessing.connection.Connection) -> None:
    """Lock, load, bump ``data.counter``, save, send the counter; again until killed."""
    store = StateStore(state_dir)
    while True:
        with store.lock():
            state = store.load()
            counter = int(state.data.get("counter", 0)) + 1
            state.data = {"counter": counter, "blob": blob_for(counter)}
            store.save(state)
        acks.send(counter)


def append_forever(path: str, acks: multiprocessing.connection.Connection, max_bytes: int, keep: int) -> None:
    """Append batches of numbered events to a journal and send the last number; until killed."""
    journal = Journal(path, max_bytes=max_bytes, keep=keep)
    last = journal.tail(1)
    seq = int(last[0]["seq"]) if last else 0
    while True:
        batch = [{"seq": seq + i, "pad": "x" * 200} for i in range(1, 6)]
        journal.append(batch)
        seq += len(batch)
        acks.send(seq)


def take_lock_and_wait(
    state_dir: str,
    start: multiprocessing.synchronize.Barrier,
    results: Any,
    release: multiprocessing.synchronize.Event,
) -> None:
    """Try the lock right after the barrier; report "won" or "locked" with the seconds it took."""
    store = StateStore(state_dir)
    start.wait()
    began = time.monotonic()
    try:
        with store.lock():
            results.put(("won", time.monotonic() - began))
            release.wait(30)
    except StateLocked:
        results.put(("locked", time.monotonic() - began))


def hold_lock_until_killed(state_dir: str, holding: multiprocessing.synchronize.Event) -> None:
    """Take the lock, say so, and keep it until the process is killed."""
    with StateStore(state_dir).lock():
        holding.set()
        while True:
            time.sleep(60)


def state_files(state_dir: str | Path) -> list[str]:
    """Names of the files in a state folder, sorted (for assertions)."""
    return sorted(p.name for p in Path(state_dir).iterdir())


def kill_mid_work(
    ctx: multiprocessing.context.ForkServerContext,
    target: Callable[..., None],
    args: tuple[Any, ...],
    rng: random.Random,
    max_delay: float,
) -> list[Any]:
    """Start ``target(*args, acks)``, SIGKILL it at a random moment after its first ack, return the acks.

    The first ack proves the child is inside its work loop; the random delay
    is only the kill-point randomiser, never a wait for a race to settle.
    """
    acks_in, acks_out = ctx.Pipe(duplex=False)
    child = ctx.Process(target=target, args=(*args[:1], acks_out, *args[1:]))
    child.start()
    acks_out.close()
    acks = [acks_in.recv()]
    time.sleep(rng.uniform(0, max_delay))
    os.kill(child.pid, signal.SIGKILL)  # type: ignore[arg-type]
    child.join()
    while True:
        try:
            acks.append(acks_in.recv())
        except EOFError:
            break
    acks_in.close()
    assert child.exitcode == -signal.SIGKILL
    return acks
