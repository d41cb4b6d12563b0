"""Generated triangle meshes: a regular rectangle, a long curved tube (a snake's body), a sphere,
a torus and a disc. Each takes a target vertex count and returns a valid `TriangleMesh` (vectorised:
a million vertices take about a second).
"""
from __future__ import annotations

import math

import numpy as np

from ..core.errors import MeshError
from .triangles import TriangleMesh


def grid_triangles(nx: int, ny: int) -> np.ndarray:
    """Cells of an nx × ny vertex lattice (vertex (i, j) = j·nx + i), each quad cut along the
    same diagonal: interior valence 6, counter-clockwise seen from +z."""
    i, j = np.meshgrid(np.arange(nx - 1), np.arange(ny - 1))
    v00 = (j * nx + i).ravel()
    v10, v01, v11 = v00 + 1, v00 + nx, v00 + nx + 1
    lower = np.column_stack([v00, v10, v11])
    upper = np.column_stack([v00, v11, v01])
    return np.stack([lower, upper], axis=1).reshape(-1, 3)


def rectangle(vertices: int, width: float = 32.0, height: float = 16.0) -> TriangleMesh:
    """A regular triangulated rectangle [0, width] × [0, height] in the plane z = 0 with about
    `vertices` vertices (square cells cut by one diagonal, as the paper's test meshes)."""
    if vertices < 4:
        raise MeshError(f"rectangle: vertices = {vertices}; allowed: at least 4")
    h = math.sqrt(width * height / vertices)
    nx = max(2, round(width / h) + 1)
    ny = max(2, round(vertices / nx))
    x = np.linspace(0.0, width, nx)
    y = np.linspace(0.0, height, ny)
    X, Y = np.meshgrid(x, y)
    pts = np.column_stack([X.ravel(), Y.ravel(), np.zeros(nx * ny)])
    return TriangleMesh(pts, grid_triangles(nx, ny), name=f"rectangle {nx}x{ny}")


def _snake_radius(u: np.ndarray, radius: float) -> np.ndarray:
    """Body profile along the arc parameter u in [0, 1]: a head, a thick body, a thin tail."""
    head = np.clip(u / 0.06, 0.0, 1.0)
    tail = np.clip((1.0 - u) / 0.45, 0.0, 1.0)
    return radius * (0.35 + 0.65 * np.sqrt(head) * np.sqrt(tail))


def tube(vertices: int, length: float = 60.0, radius: float = 2.0, waves: float = 2.0,
         amplitude: float = 6.0, irregularity: float = 0.3, seed: int = 0) -> TriangleMesh:
    """A long, curved, open tube standing for the paper's snake "Kaa": the centre line is a sine
    wave in the xy-plane (`waves` periods of `amplitude` over `length`), the radius tapers to the
    head and (slowly) to the tail, and the number of vertices per ring follows the local
    circumference times a seeded random factor in [1 − irregularity, 1 + irregularity], so rings
    of different counts are stitched together: irregular valence (4 to 8 by default), no degenerate
    triangles. Each ring is also rotated by a seeded random phase."""
    if vertices < 60:
        raise MeshError(f"tube: vertices = {vertices}; allowed: at least 60")
    rng = np.random.default_rng(seed)
    mean_r = radius * 0.8
    h = math.sqrt(2 * math.pi * mean_r * length / vertices)
    n_rings = max(4, round(length / h) + 1)
    u = np.linspace(0.0, 1.0, n_rings)
    r = _snake_radius(u, radius)
    counts = np.maximum(6, np.round(2 * math.pi * r / h)).astype(np.int64)
    # scale counts to meet the target vertex number
    jitter = 1.0 + irregularity * rng.uniform(-1.0, 1.0, n_rings)
    counts = counts * jitter
    counts = np.maximum(6, np.round(counts * vertices / counts.sum())).astype(np.int64)
    # centre line c(s) and a rotation-minimising frame of the planar curve
    s = u * length
    k = 2 * math.pi * waves / length
    cx, cy = s, amplitude * np.sin(k * s)
    tx, ty = np.ones_like(s), amplitude * k * np.cos(k * s)
    tn = np.hypot(tx, ty)
    tx, ty = tx / tn, ty / tn
    nx_, ny_ = -ty, tx  # in-plane normal; binormal = +z
    start = np.concatenate([[0], np.cumsum(counts)])
    ring = np.repeat(np.arange(n_rings), counts)
    idx = np.arange(start[-1]) - start[ring]
    phase = rng.uniform(0, 2 * math.pi, n_rings)
    ang = 2 * math.pi * idx / counts[ring] + phase[ring]
    cosa, sina = np.cos(ang), np.sin(ang)
    rr = r[ring]
    pts = np.column_stack([cx[ring] + rr * cosa * nx_[ring], cy[ring] + rr * cosa * ny_[ring],
                           rr * sina])
    cells = _stitch_rings(start, counts, phase)
    return TriangleMesh(pts, cells, name=f"tube {n_rings} rings")


def _stitch_rings(start: np.ndarray, counts: np.ndarray, phase: np.ndarray) -> np.ndarray:
    """Triangles between consecutive rings q, q+1 (vertex start[q] + i at angle phase[q] +
    2πi/counts[q]): walking both rings, advance on whichever has the next vertex at the smaller
    angle (a merge of two sorted lists, done for all ring pairs at once by one sort), which gives
    well-shaped triangles for any pair of counts. Counter-clockwise seen from outside when the
    rings advance along the tube's axis."""
    q = np.arange(len(counts) - 1)
    na, nb = counts[:-1], counts[1:]
    two_pi = 2 * math.pi
    shift = np.floor((phase[:-1] - phase[1:]) / two_pi * nb + 0.5).astype(np.int64)
    qa = np.repeat(q, na)
    ia = np.arange(len(qa)) - np.repeat(np.cumsum(na) - na, na)
    qb = np.repeat(q, nb)
    jb = np.arange(len(qb)) - np.repeat(np.cumsum(nb) - nb, nb)
    ang = np.concatenate([phase[qa] + two_pi * (ia + 1) / na[qa],
                          phase[qb + 1] + two_pi * (jb + 1 + shift[qb]) / nb[qb]])
    qq = np.concatenate([qa, qb])
    typ = np.concatenate([np.zeros(len(qa), np.int8), np.ones(len(qb), np.int8)])
    order = np.lexsort((typ, ang, qq))
    qq, is_a = qq[order], typ[order] == 0
    i = np.cumsum(is_a) - is_a - np.repeat(np.cumsum(na) - na, na + nb)
    j = np.cumsum(~is_a) - ~is_a - np.repeat(np.cumsum(nb) - nb, na + nb)
    a0, b0 = start[qq], start[qq + 1]
    ai, ai1 = a0 + i % na[qq], a0 + (i + 1) % na[qq]
    bj, bj1 = b0 + (j + shift[qq]) % nb[qq], b0 + (j + 1 + shift[qq]) % nb[qq]
    return np.where(is_a[:, None], np.column_stack([ai, ai1, bj]),
                    np.column_stack([ai, bj1, bj]))


def icosphere(level: int, radius: float = 1.0) -> TriangleMesh:
    """An icosahedron subdivided `level` times (each triangle into four), projected onto the
    sphere: 10·4^level + 2 vertices, closed, outward-oriented."""
    t = (1 + math.sqrt(5)) / 2
    pts = np.array([[-1, t, 0], [1, t, 0], [-1, -t, 0], [1, -t, 0], [0, -1, t], [0, 1, t],
                    [0, -1, -t], [0, 1, -t], [t, 0, -1], [t, 0, 1], [-t, 0, -1], [-t, 0, 1]],
                   dtype=np.float64)
    cells = np.array([[0, 11, 5], [0, 5, 1], [0, 1, 7], [0, 7, 10], [0, 10, 11], [1, 5, 9],
                      [5, 11, 4], [11, 10, 2], [10, 7, 6], [7, 1, 8], [3, 9, 4], [3, 4, 2],
                      [3, 2, 6], [3, 6, 8], [3, 8, 9], [4, 9, 5], [2, 4, 11], [6, 2, 10],
                      [8, 6, 7], [9, 8, 1]], dtype=np.int64)
    pts /= np.linalg.norm(pts, axis=1, keepdims=True)
    for _ in range(level):
        m = TriangleMesh(pts, cells)
        mid = pts[m.edges].mean(axis=1)
        mid /= np.linalg.norm(mid, axis=1, keepdims=True)
        e = m.cell_edges + len(pts)  # new vertex on the edge opposite each corner
        a, b, c = cells.T
        ea, eb, ec = e.T  # opposite a: (b, c); opposite b: (c, a); opposite c: (a, b)
        cells = np.concatenate([np.column_stack([a, ec, eb]), np.column_stack([b, ea, ec]),
                                np.column_stack([c, eb, ea]), np.column_stack([ea, eb, ec])])
        pts = np.concatenate([pts, mid])
    return TriangleMesh(pts * radius, cells, name=f"icosphere level {level}")


def sphere(vertices: int, radius: float = 1.0) -> TriangleMesh:
    """The icosphere whose vertex count 10·4^level + 2 is nearest to `vertices`."""
    level = max(0, round(math.log(max(vertices - 2, 10) / 10, 4)))
    return icosphere(level, radius)


def torus(vertices: int, major: float = 3.0, minor: float = 1.0) -> TriangleMesh:
    """A closed torus (tube radius `minor` around a circle of radius `major`) of about
    `vertices` vertices: a periodic nu × nv lattice, nu/nv ≈ major/minor, quads cut by one
    diagonal (valence 6 everywhere)."""
    if vertices < 16:
        raise MeshError(f"torus: vertices = {vertices}; allowed: at least 16")
    nv = max(4, round(math.sqrt(vertices * minor / major)))
    nu = max(4, round(vertices / nv))
    u = 2 * math.pi * np.arange(nu) / nu
    v = 2 * math.pi * np.arange(nv) / nv
    U, V = np.meshgrid(u, v, indexing="ij")  # vertex (i, j) = i·nv + j
    ring = major + minor * np.cos(V)
    pts = np.column_stack([(ring * np.cos(U)).ravel(), (ring * np.sin(U)).ravel(),
                           (minor * np.sin(V)).ravel()])
    i, j = np.meshgrid(np.arange(nu), np.arange(nv), indexing="ij")
    v00 = (i * nv + j).ravel()
    v10 = (((i + 1) % nu) * nv + j).ravel()
    v01 = (i * nv + (j + 1) % nv).ravel()
    v11 = (((i + 1) % nu) * nv + (j + 1) % nv).ravel()
    cells = np.stack([np.column_stack([v00, v10, v11]), np.column_stack([v00, v11, v01])],
                     axis=1).reshape(-1, 3)
    return TriangleMesh(pts, cells, name=f"torus {nu}x{nv}")


def disc(vertices: int, radius: float = 1.0) -> TriangleMesh:
    """A planar disc of concentric rings (6k vertices on ring k), irregular only at the centre."""
    h = math.sqrt(math.pi * radius**2 / vertices * 1.15)
    n_rings = max(1, round(radius / h))
    counts = np.concatenate([[1], 6 * np.arange(1, n_rings + 1)])
    start = np.concatenate([[0], np.cumsum(counts)])
    pts = [np.zeros((1, 3))]
    cells = [np.column_stack([np.zeros(6, np.int64), 1 + np.arange(6), 1 + (np.arange(1, 7) % 6)])]
    for q in range(1, n_rings + 1):
        rq = radius * q / n_rings
        ang = 2 * math.pi * np.arange(counts[q]) / counts[q]
        pts.append(np.column_stack([rq * np.cos(ang), rq * np.sin(ang), np.zeros(counts[q])]))
    cells.append(_stitch_rings(start[1:], counts[1:], np.zeros(n_rings))[:, [0, 2, 1]])
    return TriangleMesh(np.concatenate(pts), np.concatenate(cells), name=f"disc {n_rings} rings")
