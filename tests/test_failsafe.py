"""No fail-open path: whatever the step does or the disk refuses, the agent never runs unmonitored.

Each test runs real ``python -m heartbeat`` processes over real files (issue 10,
"Fail-open and lost work").
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Agent, make_agent

from heartbeat.core.models import Status

COUNTING = """
import os, pathlib

def bump(ctx):
    # Counted outside the state folder, so a call is seen even when nothing is saved.
    marker = pathlib.Path(ctx.base_dir) / "calls"
    marker.write_text(str(int(marker.read_text()) + 1 if marker.exists() else 1))
"""


def calls(agent: Agent) -> int:
    """How often the agent's step was called (its own counter beside the project)."""
    marker = agent.root / "calls"
    return int(marker.read_text()) if marker.exists() else 0


# ---------------------------------------------------------------- 1. unsavable state


@pytest.mark.parametrize(
    "body",
    [
        'ctx.record("read", {"path": b"notes-\\xff.txt".decode("utf-8", "surrogateescape")}, output="text")',
        'ctx.data["client"] = object()',
        'ctx.data["loop"] = ctx.data',
        "ctx.data['big'] = 10 ** 5000",
    ],
    ids=["surrogate-in-args", "object-in-data", "cycle-in-data", "5000-digit-int"],
)
def test_a_state_that_cannot_be_saved_is_made_savable_and_says_so(tmp_path: Path, body: str) -> None:
    """Every tick saves and journals, budgets bite, and the journal names what was changed."""
    agent = make_agent(tmp_path, COUNTING + f"\ndef step(ctx):\n    bump(ctx)\n    {body}\n")
    for tick in (1, 2, 3):
        done = agent.cli("tick")
        assert done.returncode == 0, done.stderr
        assert "unsavable" in done.stdout
        assert agent.load().ticks == tick  # saved: the tick counts
    assert calls(agent) == 3
    notes = [e for e in agent.journal() if e["event"] == "sanitised"]
    assert len(notes) == 3 and all(n["changes"] for n in notes)
    # And the budget still bites: max_ticks = 3 is reached, the fourth tick pauses.
    (tmp_path / "heartbeat.toml").write_text("[budget]\nmax_ticks = 3\n")
    paused = agent.cli("tick", "--config", str(tmp_path / "heartbeat.toml"))
    assert paused.returncode == 0 and "paused" in paused.stdout
    assert calls(agent) == 3


@contextlib.contextmanager
def small_disk(folder: Path, size: str = "256k") -> Iterator[Path]:
    """A real tmpfs of ``size`` mounted at ``folder`` (root only: a stand-in for a disk)."""
    folder.mkdir(parents=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], check=False)
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_read_only_state_folder_stops_the_step(tmp_path: Path) -> None:
    """A read-only remount: the step is not called until the folder can be written again."""
    agent = make_agent(tmp_path, COUNTING + "\ndef step(ctx):\n    bump(ctx)\n")
    with small_disk(agent.state):
        assert agent.cli("tick").returncode == 0 and calls(agent) == 1
        subprocess.run(["mount", "-o", "remount,ro", str(agent.state)], check=True)
        for _ in range(3):
            refused = agent.cli("tick")
            assert refused.returncode == 2, refused.stderr
            assert refused.stderr.count("\n") == 1 and "Read-only file system" in refused.stderr
        assert calls(agent) == 1  # never called while nothing could be saved
        subprocess.run(["mount", "-o", "remount,rw", str(agent.state)], check=True)
        assert agent.cli("tick").returncode == 0 and calls(agent) == 2
        assert agent.load().ticks == 2


def test_a_full_disk_stops_the_step(tmp_path: Path) -> None:
    """No room for the state: the step is not called, exit 2, one line; room again: it goes on."""
    agent = make_agent(tmp_path, COUNTING + "\ndef step(ctx):\n    bump(ctx)\n")
    with small_disk(agent.state):
        assert agent.cli("tick").returncode == 0
        filler = agent.state / "filler"
        with contextlib.suppress(OSError), open(filler, "wb") as handle:
            while True:
                handle.write(b"x" * 4096)
                handle.flush()
        before = (agent.state / "state.json").read_bytes()
        refused = agent.cli("tick")
        assert refused.returncode == 2 and "no room" in refused.stderr, refused.stderr
        assert calls(agent) == 1 and (agent.state / "state.json").read_bytes() == before
        filler.unlink()
        assert agent.cli("tick").returncode == 0 and calls(agent) == 2


def test_a_file_size_limit_stops_the_step_as_a_full_disk_does(tmp_path: Path) -> None:
    """A file size limit under the state's size (``ulimit -f``: EFBIG): the tick whose save fails
    notes it, and the next ticks refuse before the step (exit 2, one line) instead of calling it
    again to fail the same save, its e-mails sent each time (until 2026-12-06); lifted, it goes on."""
    agent = make_agent(
        tmp_path,
        COUNTING
        + f"\nWORDS = {[f'250 OK: {w} queued' for w in sorted(dir(str))]!r}\n"
        + "\ndef step(ctx):\n    bump(ctx)\n    for i in range(3):\n"
        + "        ctx.record('send', {'to': f'u{ctx.tick}-{i}@x.org'}, output=WORDS[ctx.tick * 3 + i])\n",
    )
    for _ in range(4):
        assert agent.cli("tick").returncode == 0
    limit = (agent.state / "state.json").stat().st_size  # the next save is bigger

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    done = []
    for _ in range(3):
        proc = subprocess.run(
            [sys.executable, "-m", "heartbeat", "tick", *agent.flags()],
            cwd=agent.root,
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=limited,
            check=False,
        )
        done.append((proc.returncode, proc.stderr.count("\n")))
    assert done == [(2, 1)] * 3, done
    assert calls(agent) == 5  # the first limited tick called it; the next two refused before it
    assert agent.cli("tick").returncode == 0 and calls(agent) == 6
    assert agent.load().ticks == 5


# ---------------------------------------------------------------- 2. SystemExit and friends


@pytest.mark.parametrize(
    "raise_",
    ["raise SystemExit(0)", "import sys; sys.exit(0)", "raise KeyboardInterrupt", "raise GeneratorExit"],
)
def test_a_step_that_exits_is_a_step_error(tmp_path: Path, raise_: str) -> None:
    """sys.exit(0) inside the step: saved, journaled, exit 1, budgets held."""
    agent = make_agent(
        tmp_path, f"def step(ctx):\n    ctx.data['n'] = ctx.data.get('n', 0) + 1\n    {raise_}\n"
    )
    done = agent.cli("tick")
    assert done.returncode == 1, (done.stdout, done.stderr)
    state = agent.load()
    assert state.ticks == 1 and state.data == {"n": 1}
    assert state.history[-1].tool == "step" and state.history[-1].error
    assert any(e["event"] == "step_error" for e in agent.journal())


# ---------------------------------------------------------------- 4. what is written reads back


def test_every_load_error_is_exit_2_with_the_file_kept_and_copied_aside(tmp_path: Path) -> None:
    """A state.json holding a 5,000-digit number (written by an older release) is a clean exit 2."""
    agent = make_agent(tmp_path, "def step(ctx):\n    pass\n")
    agent.state.mkdir()
    raw = b'{"schema_version": 1, "data": {"n": ' + b"7" * 5000 + b"}}"
    (agent.state / "state.json").write_bytes(raw)
    done = agent.cli("tick")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert (agent.state / "state.json").read_bytes() == raw
    copies = list(agent.state.glob("state.json.corrupt-*"))
    assert len(copies) == 1 and copies[0].read_bytes() == raw


# ---------------------------------------------------------------- 5. ctx.data rebinding


def test_rebinding_ctx_data_is_saved_and_a_non_dict_is_refused(tmp_path: Path) -> None:
    """``ctx.data = {...}`` is saved; ``ctx.data = [...]`` is a step error, the old data kept."""
    agent = make_agent(
        tmp_path,
        """
        def step(ctx):
            ctx.data = {"fresh": ctx.tick}

        def bad(ctx):
            ctx.data = ["not", "a", "dict"]
        """,
    )
    assert agent.cli("tick").returncode == 0
    assert agent.load().data == {"fresh": 1}
    done = agent.cli("tick", attr="bad")
    assert done.returncode == 1 and "ctx.data must be a dict" in done.stdout
    assert agent.load().data == {"fresh": 1}


# ---------------------------------------------------------------- 6. the journal holds every action


def test_the_journal_holds_every_action_of_a_long_tick(tmp_path: Path) -> None:
    """50 actions in one tick: 50 action events, numbered 1..50, each with its summary."""
    agent = make_agent(
        tmp_path,
        """
        def step(ctx):
            for i in range(50):
                ctx.record("fetch", {"page": i}, output=f"page {i}")
        """,
    )
    assert agent.cli("tick").returncode == 0
    actions = [e for e in agent.journal() if e["event"] == "action"]
    assert [a["index"] for a in actions] == list(range(1, 51))
    assert actions[0]["summary"] == 'fetch({"page":0})' and actions[0]["output_len"] == 6


# A step that puts a folder where the journal goes: the check before the step found a file (or none).
BREAKS_THE_JOURNAL = """
import os, pathlib

def step(ctx):
    ctx.data['n'] = 1
    journal = pathlib.Path(ctx.state_dir) / "journal.jsonl"
    if journal.exists():
        journal.unlink()
    journal.mkdir()
"""


def test_a_journal_append_failure_is_reported_as_such(tmp_path: Path) -> None:
    """The journal cannot be written after the step (a folder put in its place meanwhile): exit 2,
    the state saved, said so."""
    agent = make_agent(tmp_path, BREAKS_THE_JOURNAL)
    done = agent.cli("tick")
    assert done.returncode == 2
    assert "journal could not be written" in done.stdout + done.stderr
    assert "could not save state" not in done.stdout + done.stderr
    assert agent.load().data == {"n": 1} and agent.load().status is Status.ACTIVE
    assert json.loads((agent.state / "state.json").read_text())["ticks"] == 1
    assert os.path.isdir(agent.state / "journal.jsonl")


def test_an_error_after_the_save_is_one_line_under_quiet(tmp_path: Path) -> None:
    """Regression: `tick --quiet` (what cron runs) exited 2 and printed nothing when the journal
    could not be written after the save, so cron mailed nobody. Quiet silences normal output only."""
    agent = make_agent(tmp_path, BREAKS_THE_JOURNAL)
    done = agent.cli("tick", "--quiet")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("heartbeat: error: the journal could not be written ("), done.stderr
    assert agent.load().ticks == 1  # the state was saved, as the line says


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_journal_that_cannot_be_written_stops_the_step(tmp_path: Path, kind: str) -> None:
    """Regression: with journal.jsonl a FIFO or a folder, `validate` said ok and every tick called
    the step and saved the state, then exited 2: the agent acted on every cron run while none of its
    calls reached the journal. Now `validate` and every tick say so in one line (exit 2), before the
    step, and nothing is changed; a journal that is a file again lets it go on."""
    agent = make_agent(tmp_path, COUNTING + "\ndef step(ctx):\n    bump(ctx)\n")
    assert agent.cli("tick").returncode == 0 and calls(agent) == 1
    journal = agent.state / "journal.jsonl"
    journal.unlink()
    os.mkfifo(journal) if kind == "fifo" else journal.mkdir()
    checked = agent.cli("validate", timeout=20)
    assert checked.returncode == 2 and checked.stderr.count("\n") == 1, (checked.stdout, checked.stderr)
    assert "journal.jsonl cannot be written" in checked.stderr, checked.stderr
    before = (agent.state / "state.json").read_bytes()
    for flags in ([], ["--quiet"]):
        refused = agent.cli("tick", *flags, timeout=20)
        assert refused.returncode == 2 and refused.stdout == "", (refused.stdout, refused.stderr)
        assert refused.stderr.count("\n") == 1 and "the step was not called" in refused.stderr, refused.stderr
    assert calls(agent) == 1 and (agent.state / "state.json").read_bytes() == before
    journal.unlink() if kind == "fifo" else journal.rmdir()
    assert agent.cli("tick").returncode == 0 and calls(agent) == 2


def test_a_symlinked_state_file_on_a_read_only_disk_stops_the_step(tmp_path: Path) -> None:
    """state.json links to a file on another disk, which goes read-only: the step is not called."""
    agent = make_agent(tmp_path, COUNTING + "\ndef step(ctx):\n    bump(ctx)\n")
    with small_disk(tmp_path / "disk") as disk:
        agent.state.mkdir()
        (agent.state / "state.json").symlink_to(disk / "state.json")
        assert agent.cli("tick").returncode == 0 and calls(agent) == 1
        assert (disk / "state.json").exists() and (agent.state / "state.json").is_symlink()
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        refused = agent.cli("tick")
        assert refused.returncode == 2 and "read-only file system" in refused.stderr.lower(), refused.stderr
        assert calls(agent) == 1  # never called while the state could not be saved
        subprocess.run(["mount", "-o", "remount,rw", str(disk)], check=True)
        assert agent.cli("tick").returncode == 0 and calls(agent) == 2
        assert agent.load().ticks == 2


def test_a_state_that_outgrew_the_disk_stops_the_step(tmp_path: Path) -> None:
    """The step's data no longer fits on the disk: that save fails, and no later tick calls the step."""
    grow = "\ndef step(ctx):\n    bump(ctx)\n    ctx.data['notes'] = 'x' * 400_000\n"
    agent = make_agent(tmp_path, COUNTING + grow)
    with small_disk(agent.state):
        failed = agent.cli("tick")
        assert failed.returncode == 2 and "No space left" in failed.stderr, failed.stderr
        assert calls(agent) == 1
        for _ in range(2):
            refused = agent.cli("tick")
            assert refused.returncode == 2 and "no room" in refused.stderr, refused.stderr
        assert calls(agent) == 1  # not called again while its state cannot be saved
        subprocess.run(["mount", "-o", "remount,size=4m", str(agent.state)], check=True)  # room again
        assert agent.cli("tick").returncode == 0 and calls(agent) == 2
        assert len(agent.load().data["notes"]) == 400_000
        assert not (agent.state / ".no-room").exists()
