"""Small file helpers shared by everything that writes into the state folder.

A crash (SIGKILL, power loss) may stop a writer at any instruction, so a file
a reader can see is either the old one or the whole new one, never half of
each: :func:`atomic_write` writes a unique temp file beside the target,
fsyncs it, renames it over the target and fsyncs the folder. A writer killed
before the rename leaves its temp file behind (:func:`temp_target` tells one
by its name); :func:`sweep_temps` (through
:meth:`heartbeat.state.store.StateStore.clean_stale`) removes those, safe
only while the caller holds the state lock (no other writer can be between
``mkstemp`` and ``os.replace`` then).
"""

from __future__ import annotations

import contextlib
import errno
import glob
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Collection
from pathlib import Path

__all__ = [
    "PRIVATE_DIR_MODE",
    "PRIVATE_FILE_MODE",
    "QuietFolder",
    "append_problem",
    "atomic_write",
    "ensure_private_dir",
    "fsync_dir",
    "not_regular",
    "open_regular",
    "open_regular_stat",
    "read_regular",
    "read_to_end",
    "remove_temps",
    "room_for",
    "room_problem",
    "sweep_temps",
    "temp_pattern",
    "temp_target",
    "write_all",
]

PRIVATE_FILE_MODE = 0o600
"""Mode of every file heartbeat creates in the state folder."""

PRIVATE_DIR_MODE = 0o700
"""Mode of a state folder heartbeat creates."""


def temp_pattern(name: str) -> str:
    """The glob that matches the temp files :func:`atomic_write` makes for ``name``."""
    return f".{glob.escape(name)}.*.tmp"


def temp_target(name: str) -> str | None:
    """The file a temp named ``name`` was to become (``.{target}.{random}.tmp``), else None."""
    if not (name.startswith(".") and name.endswith(".tmp")):
        return None
    target, dot, token = name[1:-4].rpartition(".")
    return target if target and dot and token else None


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``; ``os.write`` may write fewer than asked."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def fsync_dir(path: Path | str) -> None:
    """Flush a folder's entries to disk, so a rename or a new file survives a power loss."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    except OSError as exc:
        # Some file systems (and some FUSE mounts) cannot fsync a folder at all;
        # that is not a failed write, there is just nothing more to do.
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


def atomic_write(
    path: Path | str, data: bytes, *, mode: int = PRIVATE_FILE_MODE, overwrite: bool = True
) -> None:
    """Replace ``path`` with ``data`` all at once; on failure the target is untouched.

    With ``overwrite=False`` an existing ``path`` is never replaced:
    :class:`FileExistsError` is raised instead (the new file still appears
    all at once, complete).
    """
    path = Path(path)
    folder = path.parent
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        try:
            # mkstemp already makes 0600; fchmod for other modes, and it is
            # not subject to the umask.
            os.fchmod(fd, mode)
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if overwrite:
            os.replace(temp, path)
        else:
            # link() fails if the name exists, where rename() would replace it.
            os.link(temp, path)
            os.unlink(temp)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    fsync_dir(folder)


def ensure_private_dir(path: Path | str) -> Path:
    """Create ``path`` (and its parents) if missing, the folder itself 0700; return it.

    An existing folder keeps its mode: it may be the user's own, shared on
    purpose, and is not ours to change.
    """
    path = Path(path)
    try:
        path.mkdir(mode=PRIVATE_DIR_MODE)
    except FileExistsError:
        if not path.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path)) from None
        return path
    except FileNotFoundError:
        # Missing parents are created private too: under umask 000 they would be
        # world-writable, and whoever can write a parent can swap the state folder.
        ensure_private_dir(path.parent)
        try:
            path.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:
            return path  # another process created it between our two calls
    # mkdir's mode is filtered by the umask; make it exactly 0700.
    os.chmod(path, PRIVATE_DIR_MODE)
    return path


def sweep_temps(
    folder: str | Path,
    *,
    subfolder: str,
    spare: Collection[str],
    spare_temps_of: Collection[str],
    scratch_prefix: str,
    on_scratch: Callable[[str], object] | None = None,
) -> tuple[int, bool, bool]:
    """Remove what killed writers left in ``folder``: (how many, whether all went, ``subfolder`` seen).

    One ``scandir``: :func:`atomic_write` temps (``.<name>.*.tmp``) except
    those of ``spare_temps_of`` (written without the lock), scratch folders
    named ``scratch_prefix*``, and the temps directly in ``subfolder``; the
    names in ``spare`` are left alone. Only while holding the lock every
    writer into ``folder`` takes. ``on_scratch(path)`` is called before a
    scratch folder is removed (to end what still runs in it).
    """
    removed = 0
    clean = True
    seen = False
    try:
        entries = os.scandir(folder)
    except OSError:
        return 0, False, False
    with entries:
        for entry in entries:
            name = entry.name
            if name == subfolder:  # its entries are written under the same lock
                seen = True
                removed += remove_temps(entry.path)
                continue
            if name[0] != "." or name in spare:
                continue
            try:
                if name.startswith(scratch_prefix):
                    if entry.is_dir(follow_symlinks=False):
                        if on_scratch is not None:
                            on_scratch(entry.path)
                        shutil.rmtree(entry.path)
                        removed += 1
                elif (target := temp_target(name)) is not None and target not in spare_temps_of:
                    os.unlink(entry.path)
                    removed += 1
            except OSError:
                clean = False
    return removed, clean, seen


def remove_temps(folder: str) -> int:
    """Remove every :func:`atomic_write` temp file directly in ``folder``; return how many.

    Only while holding the lock every writer into ``folder`` takes (see
    :func:`clean_stale_temps`).
    """
    removed = 0
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name[0] == "." and temp_target(entry.name) is not None:
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)
                        removed += 1
    except OSError:
        return 0
    return removed


def _kind(mode: int) -> str:
    """A file type in words, for "is a FIFO, not a regular file"."""
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def not_regular(path: Path | str) -> str | None:
    """Why a file must not be written over ``path`` (a device, FIFO or socket is there), else None.

    An atomic write renames its temp file over the target: over ``/dev/null``
    that replaces the device itself (as root, for every program on the host).
    A missing path, a regular file or a symlink to one is fine; a folder is
    left to the rename's own error.
    """
    try:
        info = os.stat(path)
    except OSError:
        return None
    if stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode):
        return None
    return f"is {_kind(info.st_mode)}, not a regular file"


def append_problem(path: Path | str) -> str | None:
    """Why appending to ``path`` would fail or block now, else None (a missing file is made).

    A folder, FIFO, device or socket in its place, a symlink to nothing, or no
    permission to write it. One ``stat`` and one ``access``, never an ``open``:
    a FIFO opened to write waits for a reader.
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return "is a symlink to a missing file" if os.path.islink(path) else None
    except OSError as exc:
        return exc.strerror or str(exc)
    if not stat.S_ISREG(info.st_mode):
        kind = _kind(info.st_mode)
        return kind if kind.startswith("not") else f"is {kind}, not a regular file"
    return None if os.access(path, os.W_OK) else "permission denied"


def open_regular(path: Path | str, flags: int = os.O_RDONLY) -> int:
    """Open ``path`` without ever blocking on it, and only if it is a regular file; return the fd.

    A FIFO opened for reading blocks until a writer comes, a device may do
    anything: both raise :class:`OSError` (``EINVAL``, "is a FIFO, not a
    regular file") instead. Symlinks are followed.
    """
    fd, _ = open_regular_stat(path, flags)
    try:
        # Regular files never block; clear the flag so a file object over the fd behaves as usual.
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular_stat(path: Path | str, flags: int = os.O_RDONLY) -> tuple[int, os.stat_result]:
    """:func:`open_regular`, also returning the file's ``fstat``; the fd keeps ``O_NONBLOCK``.

    For an fd used with ``os.read``/``os.write``/``os.pread`` only: regular
    files ignore ``O_NONBLOCK``, so the two ``fcntl`` calls to clear it are
    saved (a tick reads ``state.json`` and appends to the journal this way).
    """
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = _kind(info.st_mode)
            what = kind if kind.startswith("not") else f"is {kind}, not a regular file"
            raise OSError(errno.EINVAL, what, str(path))
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_regular(path: Path | str, *, limit: int | None = None) -> bytes:
    """The bytes of a regular file (see :func:`open_regular`); past ``limit`` bytes -> OSError(EFBIG)."""
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        if limit is not None and size > limit:
            raise OSError(errno.EFBIG, f"is {size} bytes, over the {limit}-byte limit", str(path))
        chunks = []
        while True:
            chunk = os.read(fd, max(size, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            if limit is not None and sum(map(len, chunks)) > limit:
                raise OSError(errno.EFBIG, f"is over the {limit}-byte limit", str(path))
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        os.close(fd)


def room_problem(folder: Path | str, needed: int) -> str | None:
    """Why ``folder`` cannot take a new file of ``needed`` bytes now, or None when it can.

    One ``statvfs`` and one ``access``, no write: a read-only file system,
    no write permission, fewer than ``needed`` free bytes or no free inode.
    """
    try:
        info = os.statvfs(folder)
    except OSError as exc:
        return f"the state folder cannot be written ({exc.strerror})"
    if info.f_flag & os.ST_RDONLY:
        return "the state folder cannot be written (read-only file system)"
    if not os.access(folder, os.W_OK | os.X_OK):
        return "the state folder cannot be written (permission denied)"
    # Blocks held back for root count for root only, as the kernel counts them.
    root = os.geteuid() == 0
    free = info.f_bfree if root else info.f_bavail
    inodes = info.f_ffree if root else info.f_favail
    if free * info.f_frsize < needed or (info.f_files and inodes < 1):
        return f"no room for the state ({free * info.f_frsize} bytes free, {needed} needed)"
    return None


def room_for(folder: Path | str, size: int) -> str | None:
    """Why ``folder`` cannot take ``size`` more bytes now (reserved in a temp file, then freed), or None."""
    try:
        fd, temp = tempfile.mkstemp(prefix=".room.", suffix=".tmp", dir=folder)
    except OSError as exc:
        return exc.strerror or str(exc)
    try:
        os.posix_fallocate(fd, 0, max(1, size))
    except OSError as exc:
        return f"{size} bytes do not fit ({exc.strerror or exc})"
    finally:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(temp)
    return None


def read_to_end(fd: int, size: int) -> bytes:
    """Every byte from ``fd``'s position to the end of a regular file of ``size`` bytes (as fstat said).

    ``os.read`` straight into bytes, no file object: a read of a regular file
    that returns less than asked has reached the end, so a file of the size
    fstat gave takes one read; one that grew since goes on to the end.
    """
    chunks = []
    want = max(size + 1, 8192)
    while chunk := os.read(fd, want):
        chunks.append(chunk)
        if len(chunk) < want:
            break
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class QuietFolder:
    """Whether a folder may have gained an entry since it was last known to hold nothing stale.

    A temp file or a scratch folder is created in the folder itself, which
    sets the folder's mtime (and a new subfolder its link count). While both
    are what they were when the folder was last known clean (a scan that
    found nothing, or the caller's own save under the lock, which only
    replaces a file), no writer can have left anything there, and the scan
    can be skipped. What the clock cannot show (an entry created within the
    same clock tick, on a kernel without fine-grained timestamps: Linux
    before 6.13; or in the moment between reading the mtime and taking the
    lock), and a temp file the caller's own step left beside its save, are
    caught by the full scan every ``every``-th time does anyway.
    """

    __slots__ = ("_every", "_known", "_skipped")

    def __init__(self, every: int = 16) -> None:
        self._every = every
        self._known: tuple[int, int, int] | None = None  # (mtime ns, link count, inode) when clean
        self._skipped = 0

    def unchanged(self, info: os.stat_result | None) -> bool:
        """True when the folder (``info``, read before the lock) may skip its scan; counts the skip."""
        if info is None or self._known != _look(info) or self._skipped >= self._every - 1:
            self._skipped, self._known = 0, None
            return False
        self._skipped += 1
        return True

    def scanned(self, info: os.stat_result | None, clean: bool) -> None:
        """The scan found the folder as ``info`` says with nothing left (``clean``), or not."""
        self._known = _look(info) if clean and info is not None else None

    def saved(self, folder: Path | str) -> None:
        """The caller, holding the lock, replaced a file in the folder: take its new mtime."""
        if self._known is None:
            return
        try:
            info = os.stat(folder)
        except OSError:
            self._known = None
            return
        # A new subfolder (outbox/, a scratch folder left behind) since the scan: scan again.
        self._known = _look(info) if info.st_nlink == self._known[1] else None


def _look(info: os.stat_result) -> tuple[int, int, int]:
    """What :class:`QuietFolder` compares: the folder's mtime (ns), link count and inode."""
    return info.st_mtime_ns, info.st_nlink, info.st_ino
