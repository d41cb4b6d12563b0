"""Reading surface meshes with meshio (OBJ, PLY, STL, OFF, VTK/VTU, Gmsh) and validating them.

`read_mesh(path)` returns a `TriangleMesh` or raises `MeshError` naming the file and the problem:
a format other than OBJ, PLY, STL, OFF, VTK, VTU, Gmsh (.msh), not a regular file, too large,
unreadable, a read that takes longer than the timeout (the file is read in a worker process:
safe_read.py), no triangles, non-finite or huge coordinates, out-of-range indices, degenerate
faces (a repeated vertex or zero area), duplicate faces, non-manifold edges (in more than two
faces) and vertices (surfaces touching at a point). Quadrilaterals are split into two triangles; vertices used by no triangle are
dropped (the returned mesh numbers only the vertices in use).

`validate(points, cells, source)` runs the same checks on arrays (e.g. a generated mesh).
`write_mesh(path, mesh, point_data)` writes a mesh with per-vertex fields (e.g. .vtu for ParaView).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.errors import MeshError
from .safe_read import read_arrays, shown
from .triangles import TriangleMesh

# Faces whose height is below this fraction of their longest edge (2·area <= RTOL · longest²)
# count as degenerate: collinear vertices, also after rounding to float32 (STL); a graded mesh's
# small but well-shaped faces are fine.
DEGENERATE_RTOL = 1e-6
MAX_COORDINATE = 1e100  # squares and areas of larger coordinates overflow or lose all precision


def read_mesh(path, timeout: float | None = None) -> TriangleMesh:
    """Read and validate a triangulated surface; MeshError names the problem. The file is read
    in a worker process with a time limit (safe_read.py: formats, file checks, `timeout`)."""
    points, cells, _ = read_arrays(path, timeout)
    return validate(points, cells, shown(path), drop_unused=True)


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
    big = np.abs(pts).max(axis=1) > MAX_COORDINATE
    if big.any():
        raise MeshError(f"mesh '{source}': vertex {int(np.argmax(big))} has a coordinate of "
                        f"magnitude {np.abs(pts).max():.3g} ({int(big.sum())} such vertices); "
                        f"allowed: |coordinates| <= {MAX_COORDINATE:g} (areas must not overflow)")
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
    mesh = TriangleMesh(pts, c, name=Path(source).name[:80] if source else "")
    longest = mesh.edge_lengths[mesh.cell_edges].max(axis=1)
    tiny = 2 * mesh.cell_areas <= DEGENERATE_RTOL * longest**2
    if tiny.any():
        f = int(np.argmax(tiny))
        raise MeshError(f"mesh '{source}': face {f} is degenerate (area "
                        f"{mesh.cell_areas[f]:.3g} for a longest edge of {longest[f]:.3g}: "
                        f"collinear vertices); {int(tiny.sum())} such faces; allowed: triangles "
                        f"whose height is more than {DEGENERATE_RTOL:g} of their longest edge")
    over = mesh.edge_valence > 2
    if over.any():
        e = int(np.argmax(over))
        raise MeshError(f"mesh '{source}': edge {mesh.edges[e].tolist()} is non-manifold (shared "
                        f"by {int(mesh.edge_valence[e])} faces; {int(over.sum())} such edges); "
                        "allowed: at most 2 faces per edge")
    fans = vertex_fans(mesh)
    pinched = fans > 1
    if pinched.any():
        v = int(np.argmax(pinched))
        raise MeshError(f"mesh '{source}': vertex {v} is non-manifold (its faces form {int(fans[v])} "
                        f"separate fans, surfaces touching at a point; {int(pinched.sum())} such "
                        "vertices); allowed: one fan of faces around each vertex")
    return mesh


def vertex_fans(mesh: TriangleMesh) -> np.ndarray:
    """(N,) the number of fans (groups of faces joined through edges at the vertex) around each
    vertex: 1 on a manifold surface, more where surfaces touch at a vertex. Needs at most two
    faces per edge."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    c = mesh.cells
    m = len(c)
    e = mesh.cell_edges.ravel()  # half-edge 3f + k: the edge opposite corner k of face f
    order = np.argsort(e, kind="stable")
    pair = np.flatnonzero(e[order][1:] == e[order][:-1])
    h1, h2 = order[pair], order[pair + 1]
    f1, k1, f2, k2 = h1 // 3, h1 % 3, h2 // 3, h2 % 3
    i1, j1 = (k1 + 1) % 3, (k1 + 2) % 3
    same = c[f2, (k2 + 1) % 3] == c[f1, i1]
    i2 = np.where(same, (k2 + 1) % 3, (k2 + 2) % 3)
    j2 = np.where(same, (k2 + 2) % 3, (k2 + 1) % 3)
    a = np.concatenate([3 * f1 + i1, 3 * f1 + j1])
    b = np.concatenate([3 * f2 + i2, 3 * f2 + j2])
    graph = coo_matrix((np.ones(len(a), dtype=np.int8), (a, b)), shape=(3 * m, 3 * m))
    _, label = connected_components(graph, directed=False)
    vertex = c.ravel()
    key = np.unique(vertex.astype(np.int64) * (3 * m) + label)
    return np.bincount(key // (3 * m), minlength=mesh.n_vertices)


def write_mesh(path, mesh: TriangleMesh, point_data: dict | None = None) -> None:
    import meshio
    meshio.write(str(path), meshio.Mesh(np.asarray(mesh.points), [("triangle", np.asarray(mesh.cells, dtype=np.int32))],
                                        point_data=point_data or {}))
