"""Reading an untrusted mesh file so that it cannot hang, exhaust the memory or crash the caller.

`read_arrays(path)` returns (points float64 (N, 2|3), cells int64 (M, 3)) or raises MeshError
naming the file and the reason:

- formats: only those the app documents (docs/MODELS.md §2, README): OBJ, PLY, STL, OFF, VTK (legacy),
  VTU and Gmsh .msh, chosen by the file's extension (FORMATS); any other is refused with the
  list. meshio's other readers (Abaqus, Nastran, Tecplot, WKT, MDPA, ...) are never reached:
  several of them loop forever on malformed input or follow includes to other files. None of
  the allowed formats includes other files; XML entities and DTDs in a VTU are refused.
- the file: a regular file after resolving symlinks (no directory, device, FIFO or socket),
  not empty, at most MAX_BYTES (2 GB; PDESTUDIO_MESH_MAX_BYTES).
- the read happens in a worker process (reader_worker.py), which checks the counts a header
  declares against the file's size before meshio allocates anything, inflates compressed data
  through a bounded decompressor, and runs under an address-space limit (the host memory
  available, core/memory.py). It must answer within the timeout (TIMEOUT = 30 s;
  PDESTUDIO_MESH_TIMEOUT, or the `timeout` argument), else it is killed: "reading 'x.off' took
  longer than 30 s". A worker that crashes or runs out of memory is replaced.

The worker is started once and reused (reading a normal file costs milliseconds after the first,
which pays ~0.3 s to start Python, NumPy and meshio); it exits when its input closes, i.e. with
the process that started it, or after 5 minutes without a request. Generated meshes never come
here.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import stat
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

from ..core.errors import MeshError
from ..core.params import short_path as shown

FORMATS = {".obj": "obj", ".ply": "ply", ".stl": "stl", ".off": "off", ".vtk": "vtk",
           ".vtu": "vtu", ".msh": "gmsh"}
ALLOWED = "OBJ, PLY, STL, OFF, VTK, VTU, Gmsh (.msh)"
MAX_BYTES = int(os.environ.get("PDESTUDIO_MESH_MAX_BYTES", 2 * 10**9))
TIMEOUT = float(os.environ.get("PDESTUDIO_MESH_TIMEOUT", 30.0))
WORKER = Path(__file__).with_name("reader_worker.py")
IDLE = 300.0  # the worker exits after this long without a request (reader_worker.IDLE)


def check_file(path) -> tuple[Path, int, str]:
    """(resolved path, size, meshio format) of a mesh file the reader may open."""
    src = shown(path)
    if "\x00" in str(path):
        raise MeshError(f"mesh file '{src}' has a NUL character in its name")
    suffix = Path(str(path)).suffix.lower()
    if suffix not in FORMATS:
        raise MeshError(f"mesh file '{src}' has the type '{suffix[:20] or '(none)'}'; allowed: "
                        f"{ALLOWED}")
    try:
        real = Path(path).resolve(strict=True)
        st = os.stat(real)
    except FileNotFoundError:
        raise MeshError(f"mesh file '{src}' does not exist or is not a file") from None
    except (OSError, RuntimeError) as e:  # a symlink loop, no permission, ...
        raise MeshError(f"mesh file '{src}' cannot be opened: {getattr(e, 'strerror', e)}") \
            from None
    if not stat.S_ISREG(st.st_mode):
        raise MeshError(f"mesh file '{src}' is not a regular file (a directory, device, FIFO or "
                        f"socket: '{shown(real)}'); allowed: a mesh file")
    if st.st_size == 0:
        raise MeshError(f"mesh file '{src}' is empty")
    if st.st_size > MAX_BYTES:
        raise MeshError(f"mesh file '{src}' has {st.st_size:,} bytes; allowed: at most "
                        f"{MAX_BYTES:,} (PDESTUDIO_MESH_MAX_BYTES)")
    return real, st.st_size, FORMATS[suffix]


class _Timeout(Exception):
    pass


class _Worker:
    """One reader process and its framed pipe (see reader_worker.py)."""

    def __init__(self):
        self.conn = None
        self.last = time.monotonic()
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1"}
        if getattr(sys, "frozen", False) or os.environ.get("PDESTUDIO_MESH_WORKER") == "spawn":
            import multiprocessing as mp  # the frozen app has no script interpreter
            from . import reader_worker
            ctx = mp.get_context("spawn")
            self.conn, child = ctx.Pipe()
            self.proc = ctx.Process(target=reader_worker.serve_connection, args=(child,),
                                    daemon=True)
            self.proc.start()
            child.close()
        else:
            self.proc = subprocess.Popen([sys.executable, str(WORKER)], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                         env=env, close_fds=True)
            self.fd = self.proc.stdout.fileno()

    def fresh(self) -> bool:
        """Running, and not about to exit for idleness (reader_worker.IDLE)."""
        return self.alive() and time.monotonic() - self.last < IDLE - 30

    def alive(self) -> bool:
        if self.conn is not None:
            return self.proc.is_alive()
        return self.proc.poll() is None

    def send(self, data: bytes) -> None:
        if self.conn is not None:
            self.conn.send_bytes(data)
        else:
            self.proc.stdin.write(struct.pack("<Q", len(data)) + data)
            self.proc.stdin.flush()

    def recv(self, deadline: float) -> bytes:
        if self.conn is not None:
            if not self.conn.poll(max(0.0, deadline - time.monotonic())):
                raise _Timeout
            return self.conn.recv_bytes()
        n = struct.unpack("<Q", self._exact(8, deadline))[0]
        return self._exact(n, deadline)

    def _exact(self, n: int, deadline: float) -> bytes:
        buf, got = bytearray(n), 0
        view = memoryview(buf)
        while got < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                raise _Timeout
            k = os.readv(self.fd, [view[got:got + (1 << 24)]])
            if k == 0:
                raise EOFError
            got += k
        return bytes(buf)

    def kill(self) -> None:
        try:
            self.proc.kill()
            if self.conn is not None:
                self.proc.join(5)
                self.conn.close()
            else:
                self.proc.wait(5)
                self.proc.stdin.close()
                self.proc.stdout.close()
        except Exception:  # already gone
            pass

    def exit_text(self) -> str:
        code = self.proc.exitcode if self.conn is not None else self.proc.poll()
        if code is None:
            return "it stopped answering"
        if code < 0:
            return f"it was killed by signal {-code}" + (" (out of memory?)" if code == -9 else "")
        return f"it exited with code {code}"


_lock = threading.Lock()
_worker: _Worker | None = None


def _stop() -> None:
    global _worker
    if _worker is not None:
        _worker.kill()
        _worker = None


atexit.register(_stop)


def _memory_budget() -> int:
    from ..core import memory
    have = memory.available()
    return int(0.8 * have) if have else 16 << 30


def read_arrays(path, timeout: float | None = None) -> tuple[np.ndarray, np.ndarray, str]:
    """(points, cells, dropped cell kinds) of the mesh file at `path` (see the module doc)."""
    global _worker
    src = shown(path)
    real, size, fmt = check_file(path)
    timeout = TIMEOUT if timeout is None else float(timeout)
    request = json.dumps({"path": str(real), "format": fmt, "size": size,
                          "memory": _memory_budget()}).encode()
    with _lock:
        deadline = time.monotonic() + timeout
        for attempt in (0, 1):
            if _worker is None or not _worker.fresh():
                _stop()
                _worker = _Worker()
            _worker.last = time.monotonic()
            try:
                _worker.send(request)
                head = json.loads(_worker.recv(deadline))
                frames = [] if "error" in head else [_worker.recv(deadline),
                                                     _worker.recv(deadline)]
            except _Timeout:
                _stop()
                raise MeshError(f"reading '{src}' took longer than {timeout:g} s: the file is "
                                "probably malformed (the reader was stopped); allowed: a valid "
                                f"mesh file ({ALLOWED}); PDESTUDIO_MESH_TIMEOUT sets the limit") \
                    from None
            except (EOFError, OSError, ValueError) as e:  # the worker died, or answered garbage
                why = _worker.exit_text() if _worker is not None else str(e)
                _stop()
                if attempt == 0 and isinstance(e, BrokenPipeError):
                    continue  # the idle worker had died: start a fresh one once
                raise MeshError(f"reading '{src}' failed: the reader process ended ({why}); "
                                f"allowed: a valid mesh file ({ALLOWED})") from None
            if "error" in head:
                if head.get("restart"):
                    _stop()
                raise MeshError(f"mesh file '{src}' {head['error']}")
            try:
                points = np.frombuffer(frames[0], dtype=np.float64).reshape(head["points"])
                cells = np.frombuffer(frames[1], dtype=np.int64).reshape(head["cells"])
            except (KeyError, TypeError, ValueError):
                _stop()
                raise MeshError(f"reading '{src}' failed: the reader answered garbage") from None
            return points, cells, str(head.get("dropped", ""))
    raise MeshError(f"reading '{src}' failed")  # pragma: no cover


__all__ = ["FORMATS", "ALLOWED", "MAX_BYTES", "TIMEOUT", "shown", "check_file", "read_arrays"]
