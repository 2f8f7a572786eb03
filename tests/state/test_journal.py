"""Tests of heartbeat.state.journal: batched appends, rotation, torn lines, and SIGKILLed writers."""

from __future__ import annotations

import json
import os
import random
import re
import stat
from datetime import UTC, date, datetime, timedelta
from enum import Enum
from pathlib import Path
from typing import Any

import _crashers
import pytest

import heartbeat
from heartbeat.core.models import Anomaly, Status
from heartbeat.state.journal import EVENT_KINDS, Journal, encode_event

NOW = datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)


def mode(path: Path) -> int:
    """The permission bits of ``path``."""
    return stat.S_IMODE(path.stat().st_mode)


def names(folder: Path) -> list[str]:
    """The sorted names in ``folder``."""
    return sorted(p.name for p in folder.iterdir())


def numbered(start: int, count: int, pad: int = 0) -> list[dict[str, Any]]:
    """``count`` events with consecutive ``n`` from ``start``, each padded by ``pad`` characters."""
    return [{"event": "action", "n": n, "pad": "x" * pad} for n in range(start, start + count)]


@pytest.fixture
def journal(tmp_path: Path) -> Journal:
    """A journal in a fresh state folder, with the default rotation."""
    return Journal(tmp_path / "journal.jsonl")


def test_append_writes_one_json_object_per_line(journal: Journal) -> None:
    """Each event becomes one compact JSON line, in order, read back equal."""
    events: list[dict[str, Any]] = [
        {"event": "tick", "tick": 1},
        {"event": "action", "tool": "search", "args": {"q": "é"}},
    ]
    journal.append(events)
    lines = journal.path.read_bytes().split(b"\n")
    assert lines == [
        b'{"event":"tick","tick":1}',
        '{"event":"action","tool":"search","args":{"q":"é"}}'.encode(),
        b"",
    ]
    assert list(journal.read()) == events
    assert journal.skipped == 0


def test_the_journal_file_is_0600_in_a_0700_folder(tmp_path: Path) -> None:
    """The journal and a folder it had to create are private even under umask 0."""
    old = os.umask(0)
    try:
        journal = Journal(tmp_path / "state" / "journal.jsonl")
        journal.append([{"event": "tick"}])
    finally:
        os.umask(old)
    assert mode(journal.path) == 0o600
    assert mode(tmp_path / "state") == 0o700


@pytest.mark.parametrize("sync", [False, True])
def test_a_batch_is_one_write_and_an_fsync_only_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sync: bool
) -> None:
    """A tick's ten events cost one write; an fsync only with ``sync=True`` (state.json is durable)."""
    journal = Journal(tmp_path / "journal.jsonl", sync=sync)
    journal.append([{"event": "first"}])
    real_write, real_fsync = os.write, os.fsync
    writes: list[int] = []
    fsyncs: list[int] = []

    def counting_write(fd: int, data: Any) -> int:
        writes.append(len(data))
        return real_write(fd, data)

    def counting_fsync(fd: int) -> None:
        fsyncs.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "write", counting_write)
    monkeypatch.setattr(os, "fsync", counting_fsync)
    journal.append(numbered(1, 10))
    monkeypatch.undo()
    assert len(writes) == 1
    assert len(fsyncs) == (1 if sync else 0)
    assert [e.get("n") for e in journal.read()] == [None, *range(1, 11)]


def test_an_empty_batch_writes_nothing(journal: Journal) -> None:
    """No events, no file."""
    journal.append([])
    assert not journal.path.exists()


def test_datetimes_and_common_types_are_serialised(journal: Journal) -> None:
    """Datetimes become ISO 8601; dates, timedeltas, enums, paths, sets and models become JSON."""

    class Colour(Enum):
        RED = 1

    anomaly = Anomaly(kind="repeat", message="same call 3 times", tick=4, at=NOW, evidence={"n": 3})
    journal.append(
        [
            {
                "at": NOW,
                "day": date(2024, 5, 6),
                "took": timedelta(milliseconds=1500),
                "status": Status.PAUSED,
                "colour": Colour.RED,
                "file": Path("state/KILL"),
                "kinds": {"loop", "empty"},
                "anomaly": anomaly,
            }
        ]
    )
    (event,) = journal.read()
    assert event["at"] == "2024-05-06T07:08:09+00:00"
    assert datetime.fromisoformat(event["at"]) == NOW
    assert event["day"] == "2024-05-06"
    assert event["took"] == 1.5
    assert event["status"] == "paused"
    assert event["colour"] == 1
    assert event["file"] == "state/KILL"
    assert sorted(event["kinds"]) == ["empty", "loop"]
    assert event["anomaly"]["at"] == "2024-05-06T07:08:09Z"
    assert Anomaly.model_validate(event["anomaly"]) == anomaly


@pytest.mark.parametrize(
    ("bad", "error"),
    [({"x": object()}, TypeError), ({"x": float("nan")}, ValueError), ("not a mapping", TypeError)],
)
def test_a_batch_with_an_unserialisable_event_writes_nothing(
    journal: Journal, bad: Any, error: type[Exception]
) -> None:
    """One bad event in a batch raises before anything is written, so the batch is all or nothing."""
    journal.append([{"event": "before"}])
    before = journal.path.read_bytes()
    with pytest.raises(error):
        journal.append([{"event": "good"}, bad])
    assert journal.path.read_bytes() == before


def test_encode_event_is_one_line_even_with_newlines_in_values() -> None:
    """A value holding newlines still encodes as exactly one line."""
    line = encode_event({"output": "line one\nline two\r\n", "sep": "\u2028"})
    assert line.count(b"\n") == 1
    assert line.endswith(b"\n")
    assert json.loads(line) == {"output": "line one\nline two\r\n", "sep": "\u2028"}


def test_a_torn_last_line_is_skipped_and_the_next_append_starts_a_fresh_line(journal: Journal) -> None:
    """Half a record from a crash is skipped on read, and the next batch is not glued to it."""
    journal.append(numbered(1, 2))
    with journal.path.open("ab") as handle:
        handle.write(b'{"event":"action","n":3,"pa')
    assert [e["n"] for e in journal.read()] == [1, 2]
    assert journal.skipped == 1
    journal.append(numbered(4, 2))
    lines = journal.path.read_bytes().split(b"\n")
    assert lines[2] == b'{"event":"action","n":3,"pa'
    assert json.loads(lines[3])["n"] == 4
    assert [e["n"] for e in journal.read()] == [1, 2, 4, 5]
    assert journal.skipped == 1


def test_garbled_and_non_object_lines_are_skipped_and_counted(journal: Journal) -> None:
    """Binary noise, bare values and broken JSON are skipped; blank lines are ignored silently."""
    journal.path.write_bytes(
        b'{"n":1}\n\xff\xfe\x00garbage\n[1,2]\n42\n\n{"n":2}\n{"n":\n' + b"[" * 50_000 + b"\n"
    )
    assert [e["n"] for e in journal.read()] == [1, 2]
    assert journal.skipped == 5


def test_rotation_keeps_keep_files_each_within_max_bytes(tmp_path: Path) -> None:
    """Past max_bytes the journal shifts to .1, .2; the oldest beyond keep is dropped; files stay 0600."""
    journal = Journal(tmp_path / "journal.jsonl", max_bytes=1_000, keep=2)
    for batch in range(40):
        journal.append(numbered(batch * 3 + 1, 3, pad=60))
    assert names(tmp_path) == ["journal.jsonl", "journal.jsonl.1", "journal.jsonl.2"]
    for path in tmp_path.iterdir():
        assert path.stat().st_size <= 1_000
        assert mode(path) == 0o600
    seen = [e["n"] for e in journal.read()]
    assert seen[-1] == 120
    assert seen == list(range(seen[0], 121))
    assert seen[0] > 1
    current = [e["n"] for e in journal.read(rotated=False)]
    assert current == seen[-len(current) :]
    assert len(current) < len(seen)


def test_rotation_with_a_gap_in_the_numbers_keeps_the_order(tmp_path: Path) -> None:
    """A crash mid-rotation can leave .1 and .3 with no .2; the next rotation keeps every line in order."""
    path = tmp_path / "journal.jsonl"
    (tmp_path / "journal.jsonl.3").write_bytes(b'{"n":1}\n')
    (tmp_path / "journal.jsonl.1").write_bytes(b'{"n":2}\n')
    path.write_bytes(b'{"n":3}\n')
    journal = Journal(path, max_bytes=10, keep=10)
    journal.append([{"n": 4}])
    assert names(tmp_path) == ["journal.jsonl", "journal.jsonl.1", "journal.jsonl.2", "journal.jsonl.4"]
    assert [e["n"] for e in journal.read()] == [1, 2, 3, 4]


def test_only_numbered_files_count_as_rotated(tmp_path: Path) -> None:
    """journal.jsonl.bak, .1x or .٣ (not ASCII digits) are neither read nor rotated away."""
    path = tmp_path / "journal.jsonl"
    others = ["journal.jsonl.bak", "journal.jsonl.1x", "journal.jsonl.\u0663", "journal.jsonl."]
    for name in others:
        (tmp_path / name).write_bytes(b'{"other":true}\n')
    (tmp_path / "journal.jsonl.1").write_bytes(b'{"n":1}\n')
    path.write_bytes(b'{"n":2}\n')
    journal = Journal(path, max_bytes=10, keep=1)
    assert [e.get("n") for e in journal.read()] == [1, 2]
    journal.append([{"n": 3}])
    assert names(tmp_path) == sorted(["journal.jsonl", "journal.jsonl.1", *others])


def test_a_missing_folder_is_created_private_at_the_first_append(tmp_path: Path) -> None:
    """Appending into a folder that does not exist yet creates it 0700 (and the file 0600)."""
    journal = Journal(tmp_path / "new" / "journal.jsonl")
    journal.append([{"n": 1}])
    assert mode(tmp_path / "new") == 0o700 and mode(journal.path) == 0o600
    assert [e["n"] for e in journal.read()] == [1]


def test_rotation_drops_files_beyond_a_lowered_keep(tmp_path: Path) -> None:
    """Rotated files numbered past keep (keep was lowered in the config) are removed at the next rotation."""
    path = tmp_path / "journal.jsonl"
    for number in range(1, 6):
        (tmp_path / f"journal.jsonl.{number}").write_bytes(b'{"old":true}\n')
    path.write_bytes(b'{"n":1}\n')
    Journal(path, max_bytes=10, keep=2).append([{"n": 2}])
    assert names(tmp_path) == ["journal.jsonl", "journal.jsonl.1", "journal.jsonl.2"]
    assert (tmp_path / "journal.jsonl.1").read_bytes() == b'{"n":1}\n'


def test_a_batch_larger_than_max_bytes_is_written_whole(tmp_path: Path) -> None:
    """A batch too big for any file is never split: it goes whole into a fresh file."""
    journal = Journal(tmp_path / "journal.jsonl", max_bytes=200, keep=1)
    journal.append([{"n": 0}])
    journal.append(numbered(1, 10, pad=50))
    assert [e["n"] for e in journal.read(rotated=False)] == list(range(1, 11))
    assert [e["n"] for e in journal.read()] == list(range(0, 11))


def test_tail_reaches_into_rotated_files(tmp_path: Path) -> None:
    """tail(n) gives the last n events oldest first, across rotated files, and [] for n <= 0."""
    journal = Journal(tmp_path / "journal.jsonl", max_bytes=100, keep=5)
    for n in range(1, 31):
        journal.append([{"n": n}])
    current = [e["n"] for e in journal.read(rotated=False)]
    assert len(current) < 12
    assert [e["n"] for e in journal.tail(12)] == list(range(19, 31))
    assert [e["n"] for e in journal.tail(1)] == [30]
    assert journal.tail(0) == []
    assert len(journal.tail(10_000)) == len(list(journal.read()))


def test_read_and_tail_stop_at_end_across_rotated_files(tmp_path: Path) -> None:
    """``end``: the live file read as if it ended there (where ``log --follow`` starts); rotated whole."""
    journal = Journal(tmp_path / "journal.jsonl", max_bytes=100, keep=5)
    for n in range(1, 21):
        journal.append([{"n": n}])
    end = journal.path.stat().st_size
    journal.append([{"n": 21}, {"n": 22}])  # after the starting point: the follower's to show
    assert [e["n"] for e in journal.read(end=end)] == list(range(1, 21))
    assert [e["n"] for e in journal.tail(3, end=end)] == [18, 19, 20]
    live = [e["n"] for e in journal.read(rotated=False)]
    assert 1 < len(live) < 22 and live[-2:] == [21, 22]  # rotated files and a live one
    assert [e["n"] for e in journal.read(end=0)] == list(range(1, 23 - len(live)))
    assert [e["n"] for e in journal.read()] == list(range(1, 23))


def test_reading_a_missing_journal_is_empty(tmp_path: Path) -> None:
    """No journal yet: read and tail give nothing, and nothing is created."""
    journal = Journal(tmp_path / "state" / "journal.jsonl")
    assert list(journal.read()) == []
    assert journal.tail(5) == []
    assert not (tmp_path / "state").exists()


@pytest.mark.parametrize(("max_bytes", "keep"), [(0, 3), (100, -1)])
def test_nonsense_limits_are_refused(max_bytes: int, keep: int) -> None:
    """A journal that could never hold a line, or keeps a negative number of files, is a ValueError."""
    with pytest.raises(ValueError, match=r"max_bytes|keep"):
        Journal(Path("j.jsonl"), max_bytes=max_bytes, keep=keep)


def test_sigkilled_writers_lose_no_acknowledged_batch(tmp_path: Path, rng: random.Random) -> None:
    """Writers SIGKILLed at random points, mid-rotation too, keep every acknowledged event in order."""
    ctx = _crashers.forkserver_context()
    path = tmp_path / "journal.jsonl"
    kills = 100
    last_ack = 0
    for _ in range(kills):
        # keep is large so no rotation ever drops an event this test looks for.
        acks = _crashers.kill_mid_work(ctx, _crashers.append_forever, (str(path), 6_000, 10_000), rng, 0.002)
        last_ack = acks[-1]
    journal = Journal(path)
    seqs = [e["seq"] for e in journal.read()]
    assert journal.skipped <= kills
    assert len(list(tmp_path.glob("journal.jsonl.*"))) > 1
    assert seqs == list(range(1, len(seqs) + 1))
    assert seqs[-1] >= last_ack


def test_a_new_journal_file_waits_on_no_folder_fsync_unless_synced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default journal never fsyncs, not even the folder of a file it creates: that fsync waits
    behind every write the disk holds and once kept a KILL past half a second. sync=True pays it."""
    import heartbeat.state.journal as journal_module

    synced: list[Path] = []
    monkeypatch.setattr(journal_module, "fsync_dir", lambda path: synced.append(Path(path)))
    Journal(tmp_path / "plain" / "journal.jsonl").append([{"event": "kill"}])
    assert synced == []
    Journal(tmp_path / "durable" / "journal.jsonl", sync=True).append([{"event": "kill"}])
    assert synced == [tmp_path / "durable"]


def test_every_event_the_package_journals_is_a_kind_log_can_pick() -> None:
    """`heartbeat log --event` refuses kinds outside EVENT_KINDS: each one the package writes is in it."""
    written: set[str] = set()
    for path in Path(heartbeat.__file__).parent.rglob("*.py"):
        written.update(re.findall(r'"event": "([a-z_]+)"', path.read_text(encoding="utf-8")))
    assert written and written <= EVENT_KINDS, written - EVENT_KINDS
