"""Quality unstructured triangle meshes of the square [−L, L]² (the shallow-water papers' domain
[−5, 5]², docs/MODELS.md [P2] and [P4]) at an exact number of cells.

`square_mesh(cells, seed)` builds it the way the papers' meshes were built (MATLAB's PDE
toolbox: `initmesh` then `refinemesh`): a coarse Delaunay mesh of a jittered hexagonal lattice
(scipy), refined k times by splitting every triangle into four similar ones, where k is the
largest number of times 4 divides `cells` with at least `MIN_COARSE` coarse cells left. The
paper's sizes 4,000 · 4^k are therefore exact, and so is any other count (k = 0: the Delaunay
mesh itself has exactly `cells` triangles, by choosing the number of boundary points).

Cell order "as generated" mimics MATLAB's, whose meshes docs/MODELS.md [P4] renumbers (its Table 3:
bandwidth 3,786 of 4,000 for the initial mesh, 0.75 N after refinements): the coarse cells come
in a seeded random order (bandwidth ≈ N), and refinement numbers child c of cell i as
i + c · N_parent (the four children of a triangle lie N_parent apart: bandwidth ≈ 0.75 N).
Deterministic for a given seed; 2M cells take about a second.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.spatial import Delaunay

from ..core.errors import MeshError
from .triangles import TriangleMesh

MIN_COARSE = 4000  # smallest coarse mesh that is refined (the paper's initial mesh had 4,000)
MAX_CELLS = 2**24


def split_count(cells: int) -> tuple[int, int]:
    """(coarse cells, refinements k) with coarse · 4^k = cells and coarse >= MIN_COARSE."""
    k = 0
    while cells % 4 == 0 and cells // 4 >= MIN_COARSE:
        cells //= 4
        k += 1
    return cells, k


def delaunay_square(cells: int, half_width: float = 5.0, seed: int = 0) -> TriangleMesh:
    """A Delaunay mesh of [−L, L]² with exactly `cells` triangles (cells >= 2): b points on the
    boundary (the four corners and equally spaced points on each side) and n jittered points of
    a hexagonal lattice inside give 2 n + b − 2 triangles."""
    if cells < 2:
        raise MeshError(f"square mesh: cells = {cells}; allowed: at least 2")
    L = float(half_width)
    a = math.sqrt(4.0 * (4 * L * L / cells) / math.sqrt(3.0))  # equilateral edge of that area
    b = max(4, 4 * round(2 * L / a))
    if (cells - b) % 2:  # 2 n + b − 2 = cells needs b of the parity of cells
        b += 1
    n_in = (cells - b + 2) // 2
    while n_in < 0:
        b -= 2
        n_in = (cells - b + 2) // 2
    # boundary points: b points around the perimeter, per side as equal as possible
    per_side = [b // 4 + (1 if s < b % 4 else 0) for s in range(4)]
    corners = np.array([[-L, -L], [L, -L], [L, L], [-L, L]])
    bnd = []
    for s, m in enumerate(per_side):
        p, q = corners[s], corners[(s + 1) % 4]
        t = np.arange(m)[:, None] / m
        bnd.append(p + t * (q - p))
    bnd = np.concatenate(bnd)
    pts_in = _hex_points(n_in, L, seed)
    pts = np.concatenate([bnd, pts_in])
    tri = Delaunay(pts, qhull_options="Qbb Qc Qz Q12 Qt")
    simp = tri.simplices.astype(np.int64)
    if len(simp) != cells:
        raise MeshError(f"square mesh: Delaunay gave {len(simp)} triangles for {cells} asked "
                        "(degenerate point set); try another seed")
    # counter-clockwise orientation
    p = pts[simp]
    cr = (p[:, 1, 0] - p[:, 0, 0]) * (p[:, 2, 1] - p[:, 0, 1]) - \
         (p[:, 1, 1] - p[:, 0, 1]) * (p[:, 2, 0] - p[:, 0, 0])
    neg = cr < 0
    simp[neg] = simp[neg][:, [0, 2, 1]]
    return TriangleMesh(pts, simp, name=f"square {cells}")


def _hex_points(n: int, L: float, seed: int) -> np.ndarray:
    """n points of a jittered hexagonal lattice strictly inside [−L, L]²."""
    if n == 0:
        return np.zeros((0, 2))
    area = (2 * L) ** 2
    a = math.sqrt(2 * area / (math.sqrt(3) * n))  # lattice spacing for n points
    rows = max(1, round(2 * L / (a * math.sqrt(3) / 2)))
    cols = max(2, round(2 * L / a))
    while rows * cols - rows // 2 < n:
        cols += 1
    dy = 2 * L / rows
    dx = 2 * L / cols
    j, i = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    odd = (j % 2) == 1
    x = -L + np.where(odd, i + 1.0, i + 0.5) * dx  # odd rows: cols − 1 points, shifted dx/2
    y = -L + (j + 0.5) * dy
    keep_row = ~(odd & (i == cols - 1))
    pts = np.column_stack([x[keep_row], y[keep_row]])
    extra = len(pts) - n
    if extra:  # drop points spread evenly over the lattice
        drop = np.unique(np.linspace(0, len(pts) - 1, extra + 2).round().astype(np.int64)[1:-1])
        keep = np.ones(len(pts), dtype=bool)
        keep[drop] = False
        pts = pts[keep]
        if len(pts) > n:
            pts = pts[: n]
    rng = np.random.default_rng(seed)
    jit = 0.15 * min(dx, dy)
    return pts + rng.uniform(-jit, jit, size=pts.shape)


def refine(points: np.ndarray, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Split every triangle into four similar ones (edge midpoints). Child c of cell i gets index
    i + c · M (MATLAB `refinemesh` style): children 0–2 at the corners, 3 in the middle."""
    m = len(cells)
    a = cells[:, [1, 2, 0]].ravel()
    b = cells[:, [2, 0, 1]].ravel()
    key = np.minimum(a, b) * np.int64(len(points)) + np.maximum(a, b)
    uniq, inv = np.unique(key, return_inverse=True)
    e0, e1 = uniq // len(points), uniq % len(points)
    mid = 0.5 * (points[e0] + points[e1])
    new_pts = np.concatenate([points, mid])
    me = (inv.reshape(m, 3) + len(points))  # midpoint opposite corner k
    v0, v1, v2 = cells[:, 0], cells[:, 1], cells[:, 2]
    m0, m1, m2 = me[:, 0], me[:, 1], me[:, 2]  # m0 on edge (v1, v2), ...
    children = np.concatenate([
        np.column_stack([v0, m2, m1]),
        np.column_stack([m2, v1, m0]),
        np.column_stack([m1, m0, v2]),
        np.column_stack([m0, m1, m2]),
    ])
    return new_pts, children


def square_mesh(cells: int, half_width: float = 5.0, seed: int = 0) -> TriangleMesh:
    """A mesh of [−L, L]² with exactly `cells` triangles in the 'as generated' (badly ordered,
    MATLAB-like) cell order described in the module docstring."""
    cells = int(cells)
    if not 2 <= cells <= MAX_CELLS:
        raise MeshError(f"square mesh: cells = {cells}; allowed: 2 .. {MAX_CELLS}")
    coarse, k = split_count(cells)
    mesh = delaunay_square(coarse, half_width, seed)
    order = np.random.default_rng(seed + 1).permutation(coarse)
    pts, tri = mesh.points[:, :2], mesh.cells[order]
    for _ in range(k):
        pts, tri = refine(pts, tri)
    return TriangleMesh(pts, tri, name=f"square {cells} ({coarse} x 4^{k})")


def min_angle_degrees(mesh: TriangleMesh) -> float:
    """Smallest interior angle of the mesh (a quality measure)."""
    return float(np.degrees(mesh.corner_angles.min()))
