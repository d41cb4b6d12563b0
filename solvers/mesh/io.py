"""Reading surface meshes with meshio (OBJ, PLY, STL, OFF, VTK/VTU, Gmsh, ...) and validating them.

`read_mesh(path)` returns a `TriangleMesh` or raises `MeshError` naming the file and the problem:
unreadable or unknown format, no triangles, non-finite coordinates, out-of-range indices,
degenerate faces (a repeated vertex or zero area), duplicate faces, non-manifold edges (in more
than two faces). Quadrilaterals are split into two triangles; vertices used by no triangle are
dropped (the returned mesh numbers only the vertices in use).

`validate(points, cells, source)` runs the same checks on arrays (e.g. a generated mesh).
`write_mesh(path, mesh, point_data)` writes a mesh with per-vertex fields (e.g. .vtu for ParaView).
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from ..core.errors import MeshError
from .triangles import TriangleMesh

# Faces with 2·area below this fraction of (mean edge length)² count as degenerate.
DEGENERATE_RTOL = 1e-10


def _triangles_of(mesh, src: str) -> np.ndarray:
    blocks = []
    for block in mesh.cells:
        data = np.asarray(block.data)
        if block.type == "triangle" or (block.type == "polygon" and data.shape[1] == 3):
            blocks.append(data.reshape(-1, 3))
        elif block.type == "quad" or (block.type == "polygon" and data.shape[1] == 4):
            q = data.reshape(-1, 4)
            blocks.append(np.concatenate([q[:, [0, 1, 2]], q[:, [0, 2, 3]]]))
    if not blocks:
        kinds = ", ".join(sorted({b.type for b in mesh.cells})) or "none"
        raise MeshError(f"mesh '{src}' has no triangles (cell types: {kinds}); allowed: a "
                        "surface made of triangles (or quadrilaterals)")
    return np.concatenate(blocks)


def read_mesh(path) -> TriangleMesh:
    """Read and validate a triangulated surface; MeshError names the problem."""
    try:
        import meshio
    except ImportError as e:  # pragma: no cover - meshio is a dependency
        raise MeshError(f"reading mesh files needs meshio ({e})") from None
    src = str(path)
    p = Path(path)
    if not p.is_file():
        raise MeshError(f"mesh file '{src}' does not exist or is not a file")
    try:
        with warnings.catch_warnings():
            # meshio's ASCII STL reader overflows a float32 cast harmlessly (ENVIRONMENT.md)
            warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"meshio.*")
            warnings.filterwarnings("ignore", category=RuntimeWarning, message=".*overflow.*")
            m = meshio.read(p)
    except (Exception, SystemExit) as e:  # meshio raises many kinds, and calls sys.exit(1)
        # when no reader accepts a file
        msg = str(e).splitlines()[0][:200] if str(e) else type(e).__name__
        if isinstance(e, SystemExit):
            msg = "no reader accepts it"
        raise MeshError(f"mesh file '{src}' cannot be read by meshio ({msg}); allowed: a "
                        "surface mesh in a format meshio reads (OBJ, PLY, STL, OFF, VTK, VTU, "
                        "Gmsh, ...)") from None
    cells = _triangles_of(m, src)
    return validate(m.points, cells, src, drop_unused=True)


def validate(points, cells, source: str = "mesh", drop_unused: bool = False) -> TriangleMesh:
    """Check a triangle mesh given as arrays and return it as a TriangleMesh."""
    pts = np.asarray(points)
    if pts.ndim != 2 or pts.shape[1] not in (2, 3) or len(pts) == 0:
        raise MeshError(f"mesh '{source}' has points of shape {pts.shape}; allowed: (N, 2) or "
                        "(N, 3) with N > 0")
    try:
        pts = pts.astype(np.float64)
    except (TypeError, ValueError):
        raise MeshError(f"mesh '{source}' has non-numeric coordinates") from None
    bad = ~np.isfinite(pts).all(axis=1)
    if bad.any():
        raise MeshError(f"mesh '{source}': vertex {int(np.argmax(bad))} has non-finite "
                        f"coordinates ({int(bad.sum())} such vertices); allowed: finite numbers")
    c = np.asarray(cells)
    if c.ndim != 2 or c.shape[1] != 3 or len(c) == 0:
        raise MeshError(f"mesh '{source}' has no triangles (cells of shape {c.shape})")
    if c.dtype.kind not in "iu":
        if c.dtype.kind == "f" and np.all(np.isfinite(c)) and np.all(c == np.round(c)):
            c = c.astype(np.int64)
        else:
            raise MeshError(f"mesh '{source}' has non-integer vertex indices")
    c = c.astype(np.int64)
    out = (c < 0) | (c >= len(pts))
    if out.any():
        f = int(np.argmax(out.any(axis=1)))
        raise MeshError(f"mesh '{source}': face {f} has vertex index {int(c[out][0])} out of "
                        f"range; allowed: 0 .. {len(pts) - 1}")
    rep = (c[:, 0] == c[:, 1]) | (c[:, 1] == c[:, 2]) | (c[:, 0] == c[:, 2])
    if rep.any():
        f = int(np.argmax(rep))
        raise MeshError(f"mesh '{source}': face {f} is degenerate (repeats a vertex: "
                        f"{c[f].tolist()}); {int(rep.sum())} such faces")
    key = np.sort(c, axis=1)
    _, first, counts = np.unique(key, axis=0, return_index=True, return_counts=True)
    if (counts > 1).any():
        dup = np.sort(first[counts > 1])[0]
        raise MeshError(f"mesh '{source}': face {int(dup)} ({c[dup].tolist()}) appears more than "
                        f"once; {int((counts - 1).sum())} duplicate faces")
    if drop_unused:
        used = np.zeros(len(pts), dtype=bool)
        used[c.ravel()] = True
        if not used.all():
            new = np.cumsum(used) - 1
            pts, c = pts[used], new[c]
    mesh = TriangleMesh(pts, c, name=Path(source).name if source else "")
    scale = mesh.mean_edge_length
    tiny = 2 * mesh.cell_areas <= DEGENERATE_RTOL * scale**2
    if tiny.any():
        f = int(np.argmax(tiny))
        raise MeshError(f"mesh '{source}': face {f} is degenerate (area "
                        f"{mesh.cell_areas[f]:.3g}, collinear vertices); {int(tiny.sum())} such "
                        "faces; allowed: triangles of positive area")
    over = mesh.edge_valence > 2
    if over.any():
        e = int(np.argmax(over))
        raise MeshError(f"mesh '{source}': edge {mesh.edges[e].tolist()} is non-manifold (shared "
                        f"by {int(mesh.edge_valence[e])} faces; {int(over.sum())} such edges); "
                        "allowed: at most 2 faces per edge")
    return mesh


def write_mesh(path, mesh: TriangleMesh, point_data: dict | None = None) -> None:
    import meshio
    meshio.write(str(path), meshio.Mesh(np.asarray(mesh.points), [("triangle", np.asarray(mesh.cells, dtype=np.int32))],
                                        point_data=point_data or {}))
