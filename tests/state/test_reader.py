"""Tests of heartbeat.state.reader: reading state.json's bytes and decoding them (the store's read half).

The store's tests (tests/state/test_store.py) cover loading through ``StateStore``;
these check what the reader itself hands the store: the size, the mtime and
the migrated original of the last read.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from heartbeat.base.errors import StateCorrupt
from heartbeat.core.models import SCHEMA_VERSION, AgentState
from heartbeat.state.migrations import MIGRATIONS, Migration
from heartbeat.state.reader import StateReader

NOW = datetime(2026, 3, 4, 5, 6, 7, 123456, tzinfo=UTC)


def reader(
    path: Path, migrations: tuple[Migration, ...] = MIGRATIONS, current: int = SCHEMA_VERSION
) -> StateReader:
    return StateReader(path, migrations=migrations, current_version=current, clock=lambda: NOW)


def test_no_file_reads_as_none_and_decodes_to_a_fresh_state(tmp_path: Path) -> None:
    """A state folder with no state.json yet: a fresh state of the current version, nothing written."""
    read = reader(tmp_path / "state.json")
    raw = read.read()
    assert raw is None
    assert read.decode(raw) == AgentState(schema_version=SCHEMA_VERSION)
    assert (read.mtime, read.migrated_from) == (None, None)
    assert list(tmp_path.iterdir()) == []


def test_a_read_remembers_the_size_and_mtime_the_store_needs(tmp_path: Path) -> None:
    """The size is what a save must have room for; the mtime is given to a corrupt copy."""
    path = tmp_path / "state.json"
    data = AgentState(ticks=7).model_dump_json(indent=2).encode() + b"\n"
    path.write_bytes(data)
    read = reader(path)
    state = read.decode(read.read())
    assert state.ticks == 7
    assert read.size == len(data)
    assert read.mtime == os.stat(path).st_mtime_ns


def test_a_migrated_file_is_remembered_until_the_next_read(tmp_path: Path) -> None:
    """decode keeps the old version and bytes (the store copies them aside); the next read forgets them."""

    def renamed(raw: dict[str, Any]) -> dict[str, Any]:
        raw["ticks"] = raw.pop("beats")
        return raw

    path = tmp_path / "state.json"
    old = json.dumps({"schema_version": 1, "beats": 3}).encode()
    path.write_bytes(old)
    read = reader(path, (Migration(1, "beats-to-ticks", renamed),), current=2)
    state = read.decode(read.read())
    assert (state.schema_version, state.ticks) == (2, 3)
    assert read.migrated_from == (1, old)
    path.write_bytes(json.dumps({"schema_version": 2, "ticks": 4}).encode())
    assert read.decode(read.read()).ticks == 4
    assert read.migrated_from is None


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "is empty"),
        (b"[1, 2]", "is not a JSON object but an array"),
        (b'{"ticks": 1}', "schema_version is missing"),
        (b'{"schema_version": "1"}', 'schema_version must be an integer, not "1"'),
    ],
)
def test_a_bad_file_is_copied_aside_once_and_left_in_place(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    """One copy per content, named with the clock; state.json itself is never touched."""
    path = tmp_path / "state.json"
    path.write_bytes(content)
    read = reader(path)
    copies = []
    for _ in range(2):
        with pytest.raises(StateCorrupt, match=reason) as caught:
            read.decode(read.read())
        copies.append(caught.value.copy)
    assert copies[0] is not None and copies[0] == copies[1]
    assert copies[0].name == "state.json.corrupt-20260304T050607123456Z"
    assert copies[0].read_bytes() == content
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json", copies[0].name]


def test_a_fifo_in_place_of_state_json_is_refused_at_once(tmp_path: Path) -> None:
    """Reading a FIFO would wait for a writer forever: refused without a read, not copied aside."""
    path = tmp_path / "state.json"
    os.mkfifo(path)
    with pytest.raises(StateCorrupt, match="not copied aside") as caught:
        reader(path).read()
    assert caught.value.copy is None
