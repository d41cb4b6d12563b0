"""Orderings of vertices and cells for memory locality (docs/MODELS.md §3.4; [P1]'s patches).

Each function returns a permutation `order` (new index k holds old item order[k]); apply it with
`TriangleMesh.permuted(vertex_order=..., cell_order=...)` and keep `inverse(order)` to bring fields
back to the original numbering.

    rcm_vertices(mesh)   reverse Cuthill–McKee on the vertex adjacency (scipy)
    rcm_cells(mesh)      reverse Cuthill–McKee on the cell adjacency (finite volumes)
    morton_vertices(mesh), morton_cells(mesh)   Z-order of the coordinates (space-filling curve)
    shuffled(n, seed)    a seeded random order: a badly ordered mesh, to show what ordering buys
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

from .triangles import TriangleMesh


def inverse(order: np.ndarray) -> np.ndarray:
    inv = np.empty_like(order)
    inv[order] = np.arange(len(order), dtype=order.dtype)
    return inv


def _rcm(rows: np.ndarray, cols: np.ndarray, n: int) -> np.ndarray:
    a = sp.csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(n, n))
    return np.asarray(reverse_cuthill_mckee(a, symmetric_mode=True), dtype=np.int64)


def rcm_vertices(mesh: TriangleMesh) -> np.ndarray:
    e = mesh.edges
    return _rcm(np.concatenate([e[:, 0], e[:, 1]]), np.concatenate([e[:, 1], e[:, 0]]),
                mesh.n_vertices)


def rcm_cells(mesh: TriangleMesh) -> np.ndarray:
    ec = mesh.edge_cells
    inner = ec[:, 1] >= 0
    a, b = ec[inner, 0], ec[inner, 1]
    return _rcm(np.concatenate([a, b]), np.concatenate([b, a]), mesh.n_cells)


def _morton(xyz: np.ndarray, bits: int = 21) -> np.ndarray:
    lo, hi = xyz.min(axis=0), xyz.max(axis=0)
    q = ((xyz - lo) / np.where(hi > lo, hi - lo, 1.0) * (2**bits - 1)).astype(np.uint64)
    code = np.zeros(len(xyz), dtype=np.uint64)
    for b in range(bits):
        for d in range(3):
            code |= ((q[:, d] >> np.uint64(b)) & np.uint64(1)) << np.uint64(3 * b + d)
    return np.argsort(code, kind="stable").astype(np.int64)


def morton_vertices(mesh: TriangleMesh) -> np.ndarray:
    return _morton(mesh.points)


def morton_cells(mesh: TriangleMesh) -> np.ndarray:
    return _morton(mesh.cell_centroids)


def shuffled(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).permutation(n).astype(np.int64)


ORDERINGS = {"none": None, "rcm": rcm_vertices, "morton": morton_vertices}


def vertex_order(mesh: TriangleMesh, how: str) -> np.ndarray | None:
    """The vertex ordering named `how` ('none', 'rcm', 'morton'); None for 'none'."""
    f = ORDERINGS[how]
    return None if f is None else f(mesh)
