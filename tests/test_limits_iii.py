"""Size and depth limits of issue 24 (items 11-13): what one step or one file can make heartbeat do.

Real processes over real files: a step whose exception text is 5 MB, replay of
input nested hundreds of levels deep, and an importer fed thousands of parallel
tool calls.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from heartbeat.journal import Journal


def cli(cwd: Path, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """A real ``python -m heartbeat`` process in ``cwd``, run to its end."""
    return subprocess.run(
        [sys.executable, "-m", "heartbeat", *argv],
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1"},
        text=True,
        capture_output=True,
        timeout=timeout,
    )


HUGE_RAISE = textwrap.dedent("""
    def step(ctx):
        ctx.record("read", {"page": ctx.tick}, output="page %d says something new" % ctx.tick)
        raise ValueError("the answer was " + "x" * 5_000_000)
""")


def test_a_five_megabyte_exception_is_clipped_everywhere(tmp_path: Path) -> None:
    """A step raising a 5 MB message: the output, the journal and the report stay small (item 11)."""
    (tmp_path / "agent.py").write_text(HUGE_RAISE)
    (tmp_path / "heartbeat.toml").write_text('[agent]\nstep = "agent:step"\n')
    for _ in range(3):
        done = cli(tmp_path, "tick")
        assert done.returncode == 1
        assert "ValueError: the answer was xxx" in done.stdout
        assert len(done.stdout) + len(done.stderr) < 10_000
    state = tmp_path / "state"
    journal = sum(p.stat().st_size for p in state.glob("journal.jsonl*"))
    assert journal < 100_000
    assert (state / "state.json").stat().st_size < 100_000
    lines = (state / "journal.jsonl").read_text().splitlines()
    errors = [json.loads(line) for line in lines if '"step_error"' in line]
    assert len(errors) == 3 and all(e["traceback"].rstrip().endswith("…") for e in errors)
    assert cli(tmp_path, "report").returncode == 0
    assert (state / "report.html").stat().st_size < 1_000_000


def test_one_huge_line_cannot_take_the_journal_past_its_rotation_bound(tmp_path: Path) -> None:
    """Events of 5 MB each: the files stay within keep + 1 times max_bytes (item 11)."""
    journal = Journal(tmp_path / "journal.jsonl", max_bytes=1_000_000, keep=3)
    for tick in range(6):
        journal.append([{"event": "note", "tick": tick, "text": "y" * 5_000_000}])
        journal.append([{"event": "deep", "tick": tick, "items": ["z" * 1000] * 5000}])
    sizes = [p.stat().st_size for p in tmp_path.glob("journal.jsonl*")]
    assert sum(sizes) <= 4 * 1_000_000 and max(sizes) <= 1_000_000
    events = list(journal.read())
    assert events and all(e["event"] in ("note", "deep") for e in events)
    assert any("[clipped]" in json.dumps(e) for e in events)
