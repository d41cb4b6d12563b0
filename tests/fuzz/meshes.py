"""Malformed mesh files for the fuzz test: every format the app reads (OBJ, PLY ascii/binary, STL
ascii/binary, OFF, VTK ascii/binary, VTU ascii/binary/zlib, Gmsh 2.2 ascii/binary), valid and
then broken in every way we could think of: truncated, bytes flipped, NaN/inf and huge
coordinates, out-of-range indices, degenerate faces (repeated vertex, collinear), duplicate
faces, non-manifold edges and vertices, header counts no file can hold, compression bombs,
XML entity tricks (billion laughs, external entities), an OFF without counts (meshio's reader
loops forever on it), garbage, empty files, other formats, directories, FIFOs, device links.

Each case: {"surface": "mesh", "id", "kind", "path", "model", "expect"}; expect is "ok" (must
load), "error" (must raise MeshError/ParameterError) or "any" (either, e.g. a flipped byte in a
coordinate digit is still a valid mesh)."""
from __future__ import annotations

import base64
import os
import struct
from pathlib import Path

import numpy as np

FORMATS = [("obj", "obj", {}), ("ply", "ply", {"binary": False}), ("ply", "ply", {"binary": True}),
           ("stl", "stl", {"binary": False}), ("stl", "stl", {"binary": True}), ("off", "off", {}),
           ("vtk", "vtk", {"binary": False}), ("vtk", "vtk", {"binary": True}),
           ("vtu", "vtu", {"binary": False}), ("vtu", "vtu", {"binary": True,
                                                               "compression": None}),
           ("vtu", "vtu", {"binary": True, "compression": "zlib"}),
           ("msh", "gmsh22", {"binary": False}), ("msh", "gmsh22", {"binary": True})]
OTHER = [("wkt", "wkt"), ("inp", "abaqus"), ("dat", "tecplot"), ("mdpa", "mdpa"),
         ("bdf", "nastran"), ("mesh", "medit")]


def base_meshes():
    """(name, points, cells, planar) of small valid surfaces."""
    from pdestudio.solvers.mesh import icosphere, rectangle
    s = icosphere(1)
    r = rectangle(64)
    return [("sphere", np.array(s.points), np.array(s.cells), False),
            ("square", np.array(r.points), np.array(r.cells), True)]


def write(path: Path, points, cells, fmt: str, opts: dict) -> Path:
    import meshio
    m = meshio.Mesh(np.asarray(points, dtype=np.float64),
                    [("triangle", np.asarray(cells, dtype=np.int64))])
    import contextlib
    import io
    import logging
    import warnings
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        logging.disable(logging.WARNING)
        try:
            meshio.write(str(path), m, file_format=fmt, **opts)
        finally:
            logging.disable(logging.NOTSET)
    return path


def _label(fmt, opts):
    extra = "-".join(f"{v if not isinstance(v, bool) else ('bin' if v else 'ascii')}"
                     for v in opts.values() if v is not None)
    return fmt + (f"-{extra}" if extra else "")


# ---- geometric and topological damage (written correctly, wrong content) --------------------------
def broken_geometry(rng, points, cells):
    """(kind, points, cells, expect) variants of a valid mesh."""
    n, m = len(points), len(cells)
    out = [("valid", points, cells, "ok")]
    p = points.copy()
    p[rng.integers(n), rng.integers(3)] = rng.choice([np.nan, np.inf, -np.inf])
    out.append(("nonfinite", p, cells, "error"))
    p = points.copy()
    p[rng.integers(n), rng.integers(3)] = rng.choice([1e200, -1e300, 1e150])
    out.append(("huge-coordinate", p, cells, "error"))
    c = cells.copy()
    c[rng.integers(m), rng.integers(3)] = n + int(rng.integers(0, 1000))
    out.append(("index-out-of-range", points, c, "error"))
    c = cells.copy()
    f = int(rng.integers(m))
    c[f, 1] = c[f, 0]
    out.append(("repeated-vertex", points, c, "error"))
    p = points.copy()
    a, b, d = cells[int(rng.integers(m))]
    p[d] = 0.5 * (p[a] + p[b])  # collinear: zero area (and neighbours may fold)
    out.append(("collinear", p, cells, "error"))
    c = np.concatenate([cells, cells[[int(rng.integers(m))]][:, ::-1]])
    out.append(("duplicate-face", points, c, "error"))
    a, b, _ = cells[int(rng.integers(m))]
    far = len(points)
    p = np.concatenate([points, [points[a] + [0.3, -0.2, 0.7]]])
    c = np.concatenate([cells, [[a, b, far]]])
    out.append(("nonmanifold-edge", p, c, "error" if _valence(c, a, b) > 2 else "any"))
    v = int(cells[int(rng.integers(m)), 0])
    q = points[v]
    p = np.concatenate([points, [q + [0.0, 0.5, 2.0], q + [0.5, 0.0, 2.0]]])
    c = np.concatenate([cells, [[v, n, n + 1]]])
    out.append(("nonmanifold-vertex", p, c, "error"))
    return out


def _valence(c, a, b) -> int:
    s = np.sort(c, axis=1)
    lo, hi = min(a, b), max(a, b)
    e = ((s[:, 0] == lo) & (s[:, 1] == hi)) | ((s[:, 1] == lo) & (s[:, 2] == hi)) \
        | ((s[:, 0] == lo) & (s[:, 2] == hi))
    return int(e.sum())


# ---- byte-level damage ---------------------------------------------------------------------------
def truncated(rng, data: bytes) -> bytes:
    return data[:int(rng.integers(0, len(data)))]


def flipped(rng, data: bytes, count: int = 1) -> bytes:
    b = bytearray(data)
    for _ in range(count):
        b[int(rng.integers(len(b)))] ^= 1 << int(rng.integers(8))
    return bytes(b)


def spliced(rng, data: bytes) -> bytes:
    """A random slice of the file repeated or removed."""
    i, j = sorted(int(x) for x in rng.integers(0, len(data), 2))
    return data[:i] + data[i:j] * int(rng.integers(0, 3)) + data[j:]


def garbage(rng, size: int) -> bytes:
    return rng.integers(0, 256, size, dtype=np.uint8).tobytes()


# ---- forged headers and bombs --------------------------------------------------------------------
def header_bombs(rng) -> list[tuple[str, str, bytes]]:
    big = int(rng.choice([10**9, 2**31 - 1, 10**12, 2**62]))
    return [
        ("off", "off-count-bomb", f"OFF\n{big} {big} 0\n0 0 0\n".encode()),
        ("off", "off-no-counts", b"OFF\n" + b"# only comments\n" * int(rng.integers(0, 3))),
        ("off", "off-negative-count", b"OFF\n-5 -1 0\n0 0 0\n"),
        ("ply", "ply-count-bomb", (f"ply\nformat binary_little_endian 1.0\nelement vertex {big}\n"
                                   "property float x\nproperty float y\nproperty float z\n"
                                   f"element face {big}\nproperty list uchar int vertex_indices\n"
                                   "end_header\n").encode() + bytes(64)),
        ("ply", "ply-ascii-count-bomb", (f"ply\nformat ascii 1.0\nelement vertex {big}\n"
                                         "property float x\nproperty float y\nproperty float z\n"
                                         "element face 1\nproperty list uchar int vertex_indices\n"
                                         "end_header\n0 0 0\n").encode()),
        ("ply", "ply-no-end-header", b"ply\nformat ascii 1.0\nelement vertex 3\n" * 3),
        ("vtk", "vtk-count-bomb", (f"# vtk DataFile Version 4.2\nx\nASCII\nDATASET "
                                   f"UNSTRUCTURED_GRID\nPOINTS {big} double\n0 0 0\n").encode()),
        ("vtk", "vtk-cells-bomb", ("# vtk DataFile Version 4.2\nx\nASCII\nDATASET "
                                   "UNSTRUCTURED_GRID\nPOINTS 3 double\n0 0 0 1 0 0 0 1 0\n"
                                   f"CELLS {big} {4 * big}\n3 0 1 2\n").encode()),
        ("msh", "msh-count-bomb", (f"$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n{big}\n"
                                   "1 0 0 0\n$EndNodes\n").encode()),
        ("vtu", "vtu-count-bomb", _vtu_text(big, 1, "0 0 0", "0 1 2", "3", "5")),
        ("stl", "stl-count-bomb", b"\x00" * 80 + struct.pack("<I", big % 2**32) + bytes(50)),
    ]


def _vtu_text(npts, ncells, pts, conn, offs, types, extra=b"", doctype=b"") -> bytes:
    return doctype + (
        f'<?xml version="1.0"?>\n<VTKFile type="UnstructuredGrid" version="0.1">\n'
        f'<UnstructuredGrid><Piece NumberOfPoints="{npts}" NumberOfCells="{ncells}">\n'
        f'<Points><DataArray type="Float64" NumberOfComponents="3" format="ascii">{pts}'
        f'</DataArray></Points>\n<Cells>\n'
        f'<DataArray type="Int64" Name="connectivity" format="ascii">{conn}</DataArray>\n'
        f'<DataArray type="Int64" Name="offsets" format="ascii">{offs}</DataArray>\n'
        f'<DataArray type="UInt8" Name="types" format="ascii">{types}</DataArray>\n'
        '</Cells>\n</Piece></UnstructuredGrid>\n').encode() + extra + b"</VTKFile>\n"


def xml_tricks() -> list[tuple[str, bytes]]:
    laughs = (b'<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol "lol">\n'
              + b"".join(f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10 if i > 1 else "&lol;" * 10}">\n'.encode()
                         for i in range(1, 10)) + b"]>\n")
    external = (b'<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY ext SYSTEM "file:///etc/passwd">'
                b']>\n')
    tri = ("0 0 0 1 0 0 0 1 0", "0 1 2", "3", "5")
    body = _vtu_text(3, 1, *tri).split(b"\n", 1)[1]
    return [("vtu-billion-laughs", laughs + body.replace(b"<Points>", b"<Points>&lol9;", 1)),
            ("vtu-external-entity", external + body.replace(b"<Points>", b"<Points>&ext;", 1)),
            ("vtu-fifo-entity", external.replace(b"file:///etc/passwd", b"/dev/zero") + body)]


def vtu_bomb(nbytes: int, lie: bool) -> bytes:
    """A zlib-compressed VTU whose points array inflates to `nbytes` (declared honestly, or
    declared as 72 bytes: a lying bomb)."""
    from .corrupt import zeros_deflated
    raw, _ = zeros_deflated(nbytes)
    declared = 72 if lie else nbytes
    header = struct.pack("<4Q", 1, declared, declared, len(raw))
    data = base64.b64encode(header).decode() + base64.b64encode(raw).decode()
    npts = 3 if lie else nbytes // 24
    return (
        f'<?xml version="1.0"?>\n<VTKFile type="UnstructuredGrid" version="0.1" '
        f'header_type="UInt64" compressor="vtkZLibDataCompressor">\n'
        f'<UnstructuredGrid><Piece NumberOfPoints="{npts}" NumberOfCells="1">\n'
        f'<Points><DataArray type="Float64" NumberOfComponents="3" format="binary">{data}'
        '</DataArray></Points>\n<Cells>\n'
        '<DataArray type="Int64" Name="connectivity" format="ascii">0 1 2</DataArray>\n'
        '<DataArray type="Int64" Name="offsets" format="ascii">3</DataArray>\n'
        '<DataArray type="UInt8" Name="types" format="ascii">5</DataArray>\n'
        '</Cells>\n</Piece></UnstructuredGrid>\n</VTKFile>\n').encode()


# ---- the cases -----------------------------------------------------------------------------------
def cases(rng, folder: Path, count: int) -> list[dict]:
    """About `count` mesh cases (files written into `folder`)."""
    folder.mkdir(parents=True, exist_ok=True)
    out: list[dict] = []
    bases = base_meshes()

    def add(kind, data, ext, expect, planar=False):
        path = folder / f"m{len(out):05d}.{ext}"
        if data is not None:
            path.write_bytes(data)
        model = "shallow-water" if planar and rng.random() < 0.5 else "chemotaxis"
        out.append({"surface": "mesh", "id": f"mesh-{len(out)}", "kind": kind, "path": str(path),
                    "model": model, "expect": expect})

    # the fixed set: every format × every content damage, the bombs and tricks, special files
    for name, pts, cells, planar in bases:
        for ext, fmt, opts in FORMATS:
            for kind, p, c, expect in broken_geometry(rng, pts, cells):
                if fmt == "stl" and kind in ("index-out-of-range", "repeated-vertex"):
                    continue  # STL stores coordinates, not indices
                tmp = folder / f"tmp.{ext}"
                try:
                    write(tmp, p, c, fmt, opts)
                except Exception:
                    continue  # the writer itself refuses (e.g. NaN in some formats)
                add(f"{_label(fmt, opts)}:{kind}", tmp.read_bytes(), ext, expect,
                    planar and kind == "valid")
    for ext, kind, data in header_bombs(rng):
        add(kind, data, ext, "error")
    for kind, data in xml_tricks():
        add(kind, data, "vtu", "error")
    add("vtu-zlib-bomb-honest", vtu_bomb(256 << 20, lie=False), "vtu", "error")
    add("vtu-zlib-bomb-lying", vtu_bomb(256 << 20, lie=True), "vtu", "error")
    for ext, fmt in OTHER:
        add(f"other-format-{fmt}", b"anything", ext, "error")
    add("empty", b"", "obj", "error")
    add("no-extension", b"v 0 0 0\n", "", "error")
    d = folder / "adir.obj"
    d.mkdir(exist_ok=True)
    out.append({"surface": "mesh", "id": f"mesh-{len(out)}", "kind": "directory",
                "path": str(d), "model": "chemotaxis", "expect": "error"})
    fifo = folder / "fifo.obj"
    if not fifo.exists():
        os.mkfifo(fifo)
    out.append({"surface": "mesh", "id": f"mesh-{len(out)}", "kind": "fifo", "path": str(fifo),
                "model": "chemotaxis", "expect": "error"})
    for target in ("/dev/zero", "/dev/null", str(fifo)):
        link = folder / f"link{len(out)}.ply"
        if not link.exists():
            os.symlink(target, link)
        out.append({"surface": "mesh", "id": f"mesh-{len(out)}", "kind": f"symlink-{target}",
                    "path": str(link), "model": "chemotaxis", "expect": "error"})
    # random damage of valid files up to `count`
    valid = []
    for name, pts, cells, planar in bases:
        for ext, fmt, opts in FORMATS:
            tmp = folder / f"tmp.{ext}"
            write(tmp, pts, cells, fmt, opts)
            valid.append((ext, _label(fmt, opts), tmp.read_bytes()))
    while len(out) < count:
        ext, label, data = valid[int(rng.integers(len(valid)))]
        how = rng.choice(["truncate", "flip", "flip8", "splice", "garbage", "swap-ext"])
        if how == "truncate":
            add(f"{label}:truncated", truncated(rng, data), ext, "any")
        elif how == "flip":
            add(f"{label}:flip", flipped(rng, data), ext, "any")
        elif how == "flip8":
            add(f"{label}:flip8", flipped(rng, data, 8), ext, "any")
        elif how == "splice":
            add(f"{label}:splice", spliced(rng, data), ext, "any")
        elif how == "garbage":
            add(f"{label}:garbage", garbage(rng, int(rng.integers(1, 4096))), ext, "error")
        else:
            other = FORMATS[int(rng.integers(len(FORMATS)))][0]
            add(f"{label}:as-.{other}", data, other, "any")
    if len(out) > count:  # a sample of the fixed set (the fast run in CI)
        keep = sorted(int(i) for i in rng.choice(len(out), count, replace=False))
        out = [out[i] for i in keep]
    return out
