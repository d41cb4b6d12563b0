"""Writing files so that a kill, a crash or a full disk never leaves a half-written one behind.

`atomic_write(path)` yields a binary file object on a temporary file in the same folder; when the
block ends without an exception the data is flushed to disk (fsync) and the temporary file is
renamed over `path` (an atomic replace on POSIX), so readers see either the previous file or the
complete new one. Only regular files are replaced (symlinks are followed; devices, FIFOs and
directories refused). On an exception the temporary file is removed and the previous file is left
as it was. Every checkpoint and export goes through it.
"""
from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from .errors import ParameterError


@contextlib.contextmanager
def atomic_write(path, suffix: str | None = None):
    """Context manager: a binary file whose contents replace `path` only once complete. A
    symlink is followed (its target is replaced, the link kept); a path naming a directory,
    device, FIFO or socket is refused (a rename would replace e.g. /dev/full itself)."""
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
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


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


__all__ = ["atomic_write"]
