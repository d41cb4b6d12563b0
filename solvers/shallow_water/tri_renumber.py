"""Cell orderings of a triangle mesh for memory locality (seed 004, SPEC §3.4).

    none   the mesh as generated (for the square meshes: MATLAB-like, bandwidth ≈ 0.75–1 N;
           see solvers.mesh.square)
    rcm    reverse Cuthill–McKee on the cell adjacency (scipy, as MATLAB's symrcm)
    gps    Gibbs–Poole–Stockmeyer: the ends of a pseudo-diameter from iterated level
           structures, a level structure of small width combining the two rooted ones
           (component by component, as GPS's step 2), and a Cuthill–McKee numbering level by
           level (each level ordered by its lowest-numbered neighbour in the level before, then
           by degree)

Each returns `order` (new cell k is old cell order[k]).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, shortest_path

from ..mesh.renumber import rcm_cells
from ..mesh.triangles import TriangleMesh

ORDERINGS = ("none", "rcm", "gps")


def cell_graph(mesh: TriangleMesh) -> sp.csr_matrix:
    ec = mesh.edge_cells
    inner = ec[:, 1] >= 0
    a, b = ec[inner, 0], ec[inner, 1]
    n = mesh.n_cells
    return sp.csr_matrix((np.ones(2 * len(a), dtype=np.int8),
                          (np.concatenate([a, b]), np.concatenate([b, a]))), shape=(n, n))


def bandwidth(mesh: TriangleMesh, order: np.ndarray | None = None) -> int:
    """max |i − j| over neighbouring cells i, j (the adjacency matrix's bandwidth)."""
    ec = mesh.edge_cells
    inner = ec[:, 1] >= 0
    a, b = ec[inner, 0], ec[inner, 1]
    if order is not None:
        inv = np.empty_like(order)
        inv[order] = np.arange(len(order))
        a, b = inv[a], inv[b]
    return int(np.abs(a - b).max(initial=0))


def _levels(g: sp.csr_matrix, root: int) -> np.ndarray:
    d = shortest_path(g, method="D", unweighted=True, indices=[root])[0]
    d[~np.isfinite(d)] = -1
    return d.astype(np.int64)


def _width(levels: np.ndarray) -> int:
    return int(np.bincount(levels[levels >= 0]).max())


def _pseudo_diameter(g: sp.csr_matrix, deg: np.ndarray, start: int, tries: int = 5):
    """GPS step 1: (v, u, L_v, L_u) with u in the last level of L_v and no deeper structure."""
    v = start
    lv = _levels(g, v)
    for _ in range(20):
        depth = lv.max()
        last = np.flatnonzero(lv == depth)
        cand = last[np.argsort(deg[last], kind="stable")][:tries]
        best, best_w, best_l = None, None, None
        deeper = False
        for c in cand:
            lc = _levels(g, int(c))
            if lc.max() > depth:
                v, lv = int(c), lc
                deeper = True
                break
            w = _width(lc)
            if best_w is None or w < best_w:
                best, best_w, best_l = int(c), w, lc
        if not deeper:
            return v, best, lv, best_l
    return v, best, lv, best_l


def gps_cells(mesh: TriangleMesh) -> np.ndarray:
    g = cell_graph(mesh)
    n = mesh.n_cells
    deg = np.diff(g.indptr)
    ncomp, comp = connected_components(g, directed=False)
    nb = np.asarray(mesh.cell_neighbours)
    order_all = []
    for cidx in range(ncomp):
        members = np.flatnonzero(comp == cidx)
        start = int(members[np.argmin(deg[members])])
        v, u, lv, lu = _pseudo_diameter(g, deg, start)
        k = lv.max()
        # GPS step 2: level pairs (lv, k − lu); fixed nodes where they agree; each remaining
        # connected piece goes wholesale to whichever choice keeps the widest level narrower.
        a, b = lv, k - lu
        level = np.full(n, -1, dtype=np.int64)
        fixed = (a == b) & (lv >= 0)
        level[fixed] = a[fixed]
        rest = np.flatnonzero((~fixed) & (lv >= 0))
        if len(rest):
            sub = g[rest][:, rest]
            npc, pc = connected_components(sub, directed=False)
            sizes = np.bincount(pc)
            width = np.bincount(level[level >= 0], minlength=k + 1).astype(np.int64)
            for p in np.argsort(-sizes, kind="stable"):
                nodes = rest[pc == p]
                wa = width + np.bincount(a[nodes], minlength=k + 1)
                wb = width + np.bincount(b[nodes], minlength=k + 1)
                chosen = a if wa.max() <= wb.max() else b
                level[nodes] = chosen[nodes]
                width = wa if chosen is a else wb
        # GPS step 3: number level by level, from the end v of the diameter
        new = np.full(n, -1, dtype=np.int64)
        count = 0
        new[v] = count
        count += 1
        by_level = np.argsort(level[members], kind="stable")
        lv_sorted = level[members][by_level]
        bounds = np.searchsorted(lv_sorted, np.arange(k + 2))
        for lev in range(k + 1):
            nodes = members[by_level[bounds[lev]:bounds[lev + 1]]]
            nodes = nodes[new[nodes] < 0]
            if not len(nodes):
                continue
            nbn = nb[nodes]
            num = np.where(nbn >= 0, new[np.maximum(nbn, 0)], -1)
            num = np.where(num >= 0, num, np.iinfo(np.int64).max)
            key = num.min(axis=1)
            idx = np.lexsort((deg[nodes], key))
            new[nodes[idx]] = count + np.arange(len(nodes))
            count += len(nodes)
        part = members[np.argsort(new[members])]
        order_all.append(part)
    return np.concatenate(order_all).astype(np.int64)


def cell_order(mesh: TriangleMesh, how: str) -> np.ndarray:
    """The permutation for ordering `how` (identity for 'none')."""
    if how == "none":
        return np.arange(mesh.n_cells, dtype=np.int64)
    if how == "rcm":
        return rcm_cells(mesh)
    if how == "gps":
        return gps_cells(mesh)
    raise ValueError(how)


__all__ = ["ORDERINGS", "bandwidth", "cell_order", "gps_cells", "cell_graph"]
