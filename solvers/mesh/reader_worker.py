"""The mesh reader's worker process (see safe_read.py): reads one untrusted mesh file per request
with meshio, behind limits, and answers with the triangles' arrays or a one-line reason.

Self-contained on purpose (the standard library, NumPy and meshio only): safe_read.py runs it by
its file path with the parent's interpreter, so it starts without the parent's main module (and
in a frozen build through multiprocessing's spawn). Before meshio sees a file, `prescan` checks
what its format declares against its size: counts that the file cannot hold (a 100-byte file
announcing 10^12 vertices), an OFF file without its counts line (meshio's reader loops forever
at the end of such a file), a VTU with a DTD or entities (billion laughs, external entities:
mesh files never need them); compressed VTU data is inflated through a bounded decompressor (a
compression bomb stops at a budget instead of filling the memory). The worker's address space
is capped (RLIMIT_AS) per request; whatever still goes wrong inside meshio (an exception, sys.exit,
MemoryError) comes back as a message; a hang is the parent's timeout.

Protocol: length-prefixed frames (8 bytes little-endian, then the payload). A request is JSON
{"path", "format", "size", "memory"}; an answer is JSON {"error": text} or {"points": shape,
"cells": shape, "dropped": text} followed by two frames of raw float64 points and int64 cells.
"""
from __future__ import annotations

import sys

# Run as a script, Python puts this file's folder first on sys.path, where solvers/mesh's own
# modules (io.py, ...) would shadow the standard library's: take it off before anything else.
if __name__ == "__main__" and sys.path and sys.path[0] and \
        __import__("os").path.realpath(sys.path[0]) == \
        __import__("os").path.dirname(__import__("os").path.realpath(__file__)):
    del sys.path[0]

import json  # noqa: E402
import mmap  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import select  # noqa: E402
import struct  # noqa: E402
import warnings  # noqa: E402

MIN_BYTES = {"ascii": (6, 6), "binary": (12, 13)}  # bytes per vertex, per face at the least
IDLE = 300.0  # seconds without a request after which the worker exits (the parent starts anew)
INFLATE_FACTOR = 64
INFLATE_BASE = 64 << 20
PLY_TYPES = {"char": 1, "uchar": 1, "int8": 1, "uint8": 1, "short": 2, "ushort": 2, "int16": 2,
             "uint16": 2, "int": 4, "uint": 4, "float": 4, "int32": 4, "uint32": 4, "float32": 4,
             "double": 8, "float64": 8}


class Refused(Exception):
    """The file is refused before (or instead of) parsing it; the message says why."""


# ---- what a format declares, against what the file can hold ---------------------------------
def _too_many(what: str, n: int, per: float, size: int) -> None:
    if n < 0:
        raise Refused(f"declares {n} {what}; allowed: a count >= 0")
    if n * per > size:
        raise Refused(f"declares {n:,} {what}, more than its {size:,} bytes can hold "
                      "(a truncated or forged header)")


def _off(f, size: int) -> None:
    if f.readline(1 << 16).strip() != b"OFF":
        return  # meshio refuses it itself
    while True:
        line = f.readline(1 << 20)
        if not line:
            raise Refused("has no vertex and face counts after 'OFF'")
        line = line.strip()
        if line and not line.startswith(b"#"):
            break
    parts = line.split()
    try:
        nv, nf = int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        raise Refused("has a malformed counts line after 'OFF'; allowed: 'vertices faces edges'")
    _too_many("vertices", nv, MIN_BYTES["ascii"][0], size)
    _too_many("faces", nf, MIN_BYTES["ascii"][1], size)
    _too_many("vertices and faces", nv + nf, 6, size)


def _ply(f, size: int) -> None:
    header = f.read(min(size, 1 << 20))
    end = header.find(b"end_header")
    if not header.startswith(b"ply") or end < 0:
        if header.startswith(b"ply"):
            raise Refused("cannot be read as PLY (no 'end_header' in its first MB: a truncated "
                          "or malformed header)")
        return
    ascii_ = b"format ascii" in header[:end]
    need, elements = 0, []
    for line in header[:end].splitlines():
        w = line.split()
        if len(w) >= 3 and w[0] == b"element":
            try:
                elements.append([w[1].decode(errors="replace"), int(w[2]), 0])
            except ValueError:
                raise Refused(f"has a malformed element line {line[:60]!r}")
        elif len(w) >= 3 and w[0] == b"property" and elements:
            t = w[2].decode(errors="replace") if w[1] == b"list" else w[1].decode(errors="replace")
            elements[-1][2] += 2 if ascii_ else PLY_TYPES.get(t, 1)
    for name, n, per in elements:
        _too_many(f"'{name[:20]}' elements", n, max(per, 1), size)
        need += n * max(per, 1)
    if need > size:
        raise Refused(f"declares elements that need at least {need:,} bytes; it has {size:,}")


_VTK = re.compile(rb"(?m)^[ \t]*(POINTS|CELLS|POLYGONS|TRIANGLE_STRIPS|LINES|VERTICES|"
                  rb"CELL_TYPES|POINT_DATA|CELL_DATA|OFFSETS|CONNECTIVITY)[ \t]+(\d+)")


def _vtk(mm, size: int) -> None:
    binary = re.search(rb"(?m)^BINARY\s*$", mm[:4096]) is not None
    for m in _VTK.finditer(mm):
        n = int(m.group(2))
        per = (12 if binary else 6) if m.group(1) == b"POINTS" else (1 if binary else 2)
        _too_many(m.group(1).decode().lower(), n, per, size)


def _gmsh(mm, size: int) -> None:
    for section in (b"$Nodes", b"$Elements"):
        at = mm.find(section + b"\n")
        if at < 0:
            at = mm.find(section + b"\r\n")
        if at < 0:
            continue
        line = mm[at:at + 256].splitlines()[1:2]
        counts = line[0].split() if line else []
        try:
            first = [int(c) for c in counts[:2]]
        except ValueError:
            continue  # binary or malformed: meshio decides
        for n in first:
            _too_many(section[1:].decode().lower(), n, 4, size)


def _vtu(mm, size: int) -> None:
    if mm.find(b"<!DOCTYPE") >= 0 or mm.find(b"<!ENTITY") >= 0:
        raise Refused("declares a DTD or XML entities (<!DOCTYPE, <!ENTITY); allowed: a plain "
                      "VTU file (no entities, nothing included from elsewhere)")
    head = mm[:1 << 20]
    compressed = b"compressor=" in head
    budget = INFLATE_FACTOR * size + INFLATE_BASE
    for m in re.finditer(rb"Number(OfPoints|OfCells)\s*=\s*\"\s*(\d+)\s*\"", head):
        n, points = int(m.group(2)), m.group(1) == b"OfPoints"
        what = "points" if points else "cells"
        if compressed:  # at least 3 float32 per point, a byte per cell, once inflated
            if n * (12 if points else 1) > budget:
                raise Refused(f"declares {n:,} {what}, more than its compressed data may inflate "
                              f"to ({budget:,} bytes for a {size:,}-byte file)")
        else:
            _too_many(what, n, 6 if points else 2, size)


def prescan(path: str, fmt: str, size: int) -> None:
    with open(path, "rb") as f:
        if fmt == "off":
            return _off(f, size)
        if fmt == "ply":
            return _ply(f, size)
        if fmt in ("vtk", "gmsh", "vtu") and size:
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                {"vtk": _vtk, "gmsh": _gmsh, "vtu": _vtu}[fmt](mm, size)


# ---- bounded decompression for meshio's VTU reader ---------------------------------------------
class Bomb(Exception):
    pass


class _Bounded:
    """Stands in for the zlib / lzma modules inside meshio's VTU reader: decompress() stops once
    the file's inflated bytes pass the budget."""

    def __init__(self, module, budget: int):
        self.module, self.left, self.budget = module, budget, budget

    def __getattr__(self, name):
        return getattr(self.module, name)

    def decompress(self, data, *args, **kwargs):
        if self.module.__name__ == "zlib":
            d = self.module.decompressobj()
            out = d.decompress(data, self.left + 1)
            more = bool(d.unconsumed_tail)
        else:
            d = self.module.LZMADecompressor()
            out = d.decompress(data, self.left + 1)
            more = not d.eof and not d.needs_input
        self.left -= len(out)
        if self.left < 0 or more:
            raise Bomb(f"inflates to more than {self.budget:,} bytes (a compression bomb?)")
        return out


# ---- one request ---------------------------------------------------------------------------------
def _limit_memory(budget: int) -> None:
    try:
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        with open("/proc/self/status") as f:
            vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
        new = vm + budget
        if hard != resource.RLIM_INFINITY:
            new = min(new, hard)
        resource.setrlimit(resource.RLIMIT_AS, (new, hard))
    except Exception:
        pass  # not Linux: the parent's timeout still bounds the read


def _triangles(mesh):
    import numpy as np
    blocks, other = [], set()
    for block in mesh.cells:
        data = np.asarray(block.data)
        width = data.shape[1] if data.ndim == 2 else 0
        if block.type == "triangle" or (block.type == "polygon" and width == 3):
            blocks.append(data.reshape(-1, 3))
        elif block.type == "quad" or (block.type == "polygon" and width == 4):
            q = data.reshape(-1, 4)
            blocks.append(np.concatenate([q[:, [0, 1, 2]], q[:, [0, 2, 3]]]))
        else:
            other.add(str(block.type))
    if not blocks:
        kinds = ", ".join(sorted(other)) or "none"
        raise Refused(f"has no triangles (cell types: {kinds[:100]}); allowed: a surface made of "
                      "triangles (or quadrilaterals)")
    cells = np.concatenate(blocks)
    if cells.dtype.kind not in "iu":
        if cells.dtype.kind == "f" and np.isfinite(cells).all() and (cells == np.round(cells)).all():
            cells = cells.astype(np.int64)
        else:
            raise Refused(f"has vertex indices of type {cells.dtype}; allowed: integers")
    points = np.asarray(mesh.points)
    if points.dtype.kind not in "iuf" or points.ndim != 2:
        raise Refused(f"has points of type {points.dtype} and shape {points.shape}; allowed: "
                      "(N, 2) or (N, 3) numbers")
    dropped = ", ".join(sorted(other))
    points = np.ascontiguousarray(points, dtype=np.float64)
    cells = np.ascontiguousarray(cells, dtype=np.int64)
    return points, cells, dropped


def _reader(meshio, fmt: str):
    """meshio's reader of `fmt` itself: it raises ReadError with the reason, where meshio.read
    prints the reason and calls sys.exit(1)."""
    readers = getattr(getattr(meshio, "_helpers", None), "reader_map", None)
    if isinstance(readers, dict) and fmt in readers:
        return readers[fmt]
    return lambda path: meshio.read(path, file_format=fmt)


def read(req: dict):
    """(points, cells, dropped cell kinds) of the request's file, or raises Refused."""
    path, fmt, size = req["path"], req["format"], int(req["size"])
    _limit_memory(int(req["memory"]))
    prescan(path, fmt, size)
    import meshio
    if fmt == "vtu":
        from meshio.vtu import _vtu
        budget = INFLATE_FACTOR * size + INFLATE_BASE
        import zlib
        _vtu.zlib = _Bounded(zlib, budget)
        if getattr(_vtu, "lzma", None) is not None:
            import lzma
            _vtu.lzma = _Bounded(lzma, budget)
    # .msh: Gmsh, else ANSYS/Fluent (what meshio itself writes for .msh)
    readers = ("gmsh", "ansys") if fmt == "gmsh" else (fmt,)
    first = None
    for k, reader in enumerate(readers):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return _triangles(_reader(meshio, reader)(path))
            except (Refused, Bomb, MemoryError):
                raise
            except RecursionError:
                raise Refused("cannot be read: it is nested too deeply") from None
            except (Exception, SystemExit) as e:  # meshio calls sys.exit(1) on some errors
                first = first or e
                if k + 1 < len(readers):
                    continue
                e = first  # the first reader's reason (Gmsh's for .msh)
                text = "" if isinstance(e, SystemExit) else str(e).strip().split("\n")[0]
                name = " or ".join(r.upper() for r in readers)
                raise Refused(f"cannot be read as {name} ({type(e).__name__}"
                              + (f": {text[:160]}" if text else "") + ")") from None
    raise Refused("cannot be read")  # pragma: no cover


def answer(req: dict) -> list[bytes]:
    """The frames answering one request."""
    try:
        points, cells, dropped = read(req)
    except Refused as e:
        return [json.dumps({"error": str(e)}).encode()]
    except Bomb as e:
        return [json.dumps({"error": str(e), "restart": True}).encode()]
    except MemoryError:
        return [json.dumps({"error": f"needs more memory than the reader may use "
                            f"({int(req['memory']) / 1e9:.3g} GB)", "restart": True}).encode()]
    head = {"points": list(points.shape), "cells": list(cells.shape), "dropped": dropped}
    return [json.dumps(head).encode(), points.tobytes(), cells.tobytes()]


# ---- transports ----------------------------------------------------------------------------------
def _read_exact(fd: int, n: int) -> bytes | None:
    parts, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _warm() -> None:
    """Import NumPy and meshio once, before the first request's clock runs."""
    import meshio  # noqa: F401
    import numpy  # noqa: F401


def serve_stdio() -> None:
    """Requests on stdin, answers on the original stdout; anything meshio prints goes to
    stderr, which never reaches the protocol."""
    out = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _warm()
    while True:
        if not select.select([0], [], [], IDLE)[0]:
            return
        head = _read_exact(0, 8)
        if head is None:
            return
        body = _read_exact(0, struct.unpack("<Q", head)[0])
        if body is None:
            return
        for frame in answer(json.loads(body)):
            data = struct.pack("<Q", len(frame)) + frame
            view = memoryview(data)
            while view:
                view = view[os.write(out, view):]


def serve_connection(conn) -> None:
    """The same over a multiprocessing connection (the frozen app's spawn path)."""
    sys.stdout = sys.stderr
    _warm()
    while True:
        try:
            if not conn.poll(IDLE):
                return
            req = json.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        for frame in answer(req):
            conn.send_bytes(frame)


if __name__ == "__main__":
    serve_stdio()
