"""Writing files so that a kill, a crash or a full disk never leaves a half-written one behind.

`atomic_write(path)` yields a binary file object on a temporary file in the same folder; when the
block ends without an exception the data is flushed to disk (fsync) and the temporary file is
renamed over `path` (an atomic replace on POSIX), so readers see either the previous file or the
complete new one. Only regular files are replaced (symlinks are followed; devices, FIFOs and
directories refused). On an exception the temporary file is removed and the previous file is left
as it was. Every checkpoint and export goes through it.

`atomic_write(path, sync=False)` skips the fsync (about a millisecond a file on a server's disk):
the replace is still atomic for every reader while the system runs (a killed or crashed process
leaves the previous file or the whole new one), but after a power loss or an OS crash the new
file may be empty or cut short. For many small files whose readers validate them and treat a
damaged one as missing (a sweep's member rows); `sync_all(paths)` then makes them durable with
one wait for all of them instead of one each.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import stat
import sys
import tempfile
from pathlib import Path

from .errors import ParameterError


@contextlib.contextmanager
def atomic_write(path, suffix: str | None = None, sync: bool = True):
    """Context manager: a binary file whose contents replace `path` only once complete (and,
    with `sync`, on disk). A symlink is followed (its target is replaced, the link kept); a path
    naming a directory, device, FIFO or socket is refused (a rename would replace e.g. /dev/full
    itself)."""
    path = Path(path)
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        raise ParameterError(f"cannot write '{path}': it is not a regular file (a directory, "
                             "device, FIFO or socket); allowed: a file name")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise ParameterError(f"cannot write '{path}': folder '{folder}' does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix or ".part", dir=folder)
    try:
        os.fchmod(fd, file_mode(path))  # mkstemp makes 0600; a written file gets the usual mode
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            if sync:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def sync_all(paths) -> None:
    """Put the files `paths` (written with atomic_write(..., sync=False)) and their names on
    disk with as few waits as possible: on Linux one syncfs(2) per filesystem that holds them
    (one wait however many files; other filesystems, a hung network mount say, untouched),
    elsewhere an fsync of each file. A file that is gone is skipped."""
    found = {}  # filesystem -> a file on it
    for p in paths:
        with contextlib.suppress(OSError):
            found.setdefault(os.stat(p).st_dev, p)
    syncfs = _syncfs()
    if syncfs is not None:
        for p in list(found.values()):
            fd = os.open(p, os.O_RDONLY)
            try:
                if syncfs(fd) != 0:
                    raise OSError(ctypes.get_errno(), "syncfs")
            finally:
                os.close(fd)
        return
    for p in paths:
        with contextlib.suppress(OSError), open(p, "rb+") as f:
            os.fsync(f.fileno())


@functools.lru_cache(maxsize=1)
def _syncfs():
    """libc's syncfs on Linux, else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_int
    return fn


def file_mode(path) -> int:
    """The permissions a file written at `path` should get: those of the file it replaces, else
    what open() would give a new file (0666 less the umask)."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o666 & ~umask()


def umask() -> int:
    try:  # Linux: read it without changing it (os.umask would, for a moment, in every thread)
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


__all__ = ["atomic_write", "sync_all"]
