"""Tests of heartbeat.base.fsutil: atomic writes, private folders, stale temp clean-up."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import mode

from heartbeat.base.fsutil import (
    atomic_write,
    ensure_private_dir,
    fsync_dir,
    sweep_temps,
    temp_pattern,
    write_all,
)


def temps(folder: Path, name: str) -> list[Path]:
    """The atomic_write temp files for ``name`` in ``folder``."""
    return sorted(folder.glob(temp_pattern(name)))


def failing(exc: OSError) -> Callable[..., Any]:
    """A stand-in for an os function that always raises ``exc``."""

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise exc

    return fail


def test_atomic_write_creates_file_0600_whatever_the_umask(tmp_path: Path, open_umask: None) -> None:
    """A new file gets exactly the bytes given and mode 0600 even under umask 0."""
    target = tmp_path / "state.json"
    atomic_write(target, b'{"a": 1}\n')
    assert target.read_bytes() == b'{"a": 1}\n'
    assert mode(target) == 0o600
    assert temps(tmp_path, "state.json") == []


def test_atomic_write_honours_an_explicit_mode(tmp_path: Path, open_umask: None) -> None:
    """The mode argument is applied as given, not filtered by the umask."""
    target = tmp_path / "ESCALATION.md"
    atomic_write(target, b"# help\n", mode=0o640)
    assert mode(target) == 0o640


def test_atomic_write_replaces_existing_content(tmp_path: Path) -> None:
    """Writing over an existing file leaves only the new bytes."""
    target = tmp_path / "state.json"
    target.write_bytes(b"old content that is longer than the new one")
    atomic_write(target, b"new")
    assert target.read_bytes() == b"new"


def test_atomic_write_fsyncs_file_and_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One fsync for the file's bytes and one for the folder entry of the rename."""
    real_fsync = os.fsync
    synced: list[bool] = []

    def counting_fsync(fd: int) -> None:
        synced.append(stat.S_ISDIR(os.fstat(fd).st_mode))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counting_fsync)
    atomic_write(tmp_path / "f", b"x")
    assert synced == [False, True]


@pytest.mark.parametrize(
    ("function", "error"),
    [
        ("write", errno.ENOSPC),
        ("fsync", errno.EIO),
        ("replace", errno.EACCES),
        ("fchmod", errno.EPERM),
    ],
)
def test_atomic_write_failure_leaves_target_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, function: str, error: int
) -> None:
    """Whichever step fails, the old file is byte-for-byte intact and the temp file is gone."""
    target = tmp_path / "state.json"
    target.write_bytes(b"previous")
    with monkeypatch.context() as patch:
        patch.setattr(os, function, failing(OSError(error, os.strerror(error))))
        with pytest.raises(OSError, match=os.strerror(error)) as caught:
            atomic_write(target, b"next" * 1000)
    assert caught.value.errno == error
    assert target.read_bytes() == b"previous"
    assert temps(tmp_path, "state.json") == []


def test_atomic_write_without_overwrite_refuses_an_existing_file(tmp_path: Path) -> None:
    """overwrite=False raises FileExistsError, keeps the existing file and leaves no temp."""
    target = tmp_path / "copy"
    target.write_bytes(b"first")
    with pytest.raises(FileExistsError):
        atomic_write(target, b"second", overwrite=False)
    assert target.read_bytes() == b"first"
    assert temps(tmp_path, "copy") == []


def test_atomic_write_without_overwrite_creates_a_new_file(tmp_path: Path) -> None:
    """overwrite=False still creates a missing file with the bytes and mode given."""
    target = tmp_path / "copy"
    atomic_write(target, b"only", overwrite=False)
    assert target.read_bytes() == b"only"
    assert mode(target) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["copy"]


def test_write_all_loops_over_short_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that takes only some bytes is continued until every byte is written."""
    real_write = os.write
    calls: list[int] = []

    def short_write(fd: int, data: Any) -> int:
        calls.append(len(data))
        return real_write(fd, bytes(data[:3]))

    target = tmp_path / "f"
    fd = os.open(target, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        monkeypatch.setattr(os, "write", short_write)
        write_all(fd, b"0123456789")
    finally:
        os.close(fd)
    assert target.read_bytes() == b"0123456789"
    assert calls == [10, 7, 4, 1]


def test_ensure_private_dir_creates_parents_and_a_0700_leaf(tmp_path: Path, open_umask: None) -> None:
    """Missing parents are created 0700 too, even under umask 000; existing ones keep their mode."""
    tmp_path.chmod(0o755)
    leaf = tmp_path / "a" / "b" / "state"
    assert ensure_private_dir(leaf) == leaf
    assert leaf.is_dir()
    assert mode(leaf) == mode(tmp_path / "a") == mode(tmp_path / "a" / "b") == 0o700
    assert mode(tmp_path) == 0o755


def test_ensure_private_dir_leaves_an_existing_folder_mode_alone(tmp_path: Path) -> None:
    """A folder the user made (0755 here) is not chmod-ed."""
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o755)
    ensure_private_dir(folder)
    assert mode(folder) == 0o755


def test_ensure_private_dir_refuses_a_file_in_the_way(tmp_path: Path) -> None:
    """A file where the folder should be is a NotADirectoryError, and the file stays."""
    blocker = tmp_path / "state"
    blocker.write_text("not a folder")
    with pytest.raises(NotADirectoryError):
        ensure_private_dir(blocker)
    assert blocker.read_text() == "not a folder"


def sweep(folder: Path) -> tuple[int, bool, bool]:
    """:func:`sweep_temps` as the store calls it."""
    return sweep_temps(
        folder, subfolder="outbox", spare=(".lock",), spare_temps_of={"KILL"}, scratch_prefix=".exec-"
    )


def test_sweep_temps_removes_only_temps_and_scratch_folders(tmp_path: Path) -> None:
    """Temps, scratch folders and the subfolder's temps go; files, look-alikes and KILL's temps stay."""
    for name in [".state.json.a1b2.tmp", ".ESCALATION.md.zz.tmp"]:
        (tmp_path / name).write_bytes(b"half a file")
    (tmp_path / ".exec-1234").mkdir()
    (tmp_path / ".exec-1234" / "scratch").write_bytes(b"x")
    (tmp_path / "outbox").mkdir()
    (tmp_path / "outbox" / ".n1.json.q.tmp").write_bytes(b"")
    (tmp_path / "outbox" / "n1.json").write_bytes(b"{}")
    keep = ["state.json", "state.json.tmp", ".state.json.a1.tmp.bak", ".KILL.q.tmp", ".lock", "outbox"]
    for name in keep[:-1]:
        (tmp_path / name).write_bytes(b"x")
    assert sweep(tmp_path) == (4, True, True)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(keep)
    assert [p.name for p in (tmp_path / "outbox").iterdir()] == ["n1.json"]


def test_sweep_temps_of_a_missing_folder_is_nothing(tmp_path: Path) -> None:
    """A folder that does not exist has nothing to clean, and says it was not looked at."""
    assert sweep(tmp_path / "nowhere") == (0, False, False)


def test_fsync_dir_raises_for_a_missing_folder(tmp_path: Path) -> None:
    """fsync_dir does not hide a real error such as a missing folder."""
    fsync_dir(tmp_path)
    with pytest.raises(FileNotFoundError):
        fsync_dir(tmp_path / "nowhere")
