"""The mesh side of the finite volumes on triangles: the cell orderings for memory locality (docs/MODELS.md [P4],
docs/MODELS.md §3.4), the per-edge tables that both schemes walk, and the generated square meshes.

Orderings (`renumber`):

    none   the mesh as generated (for the square meshes: MATLAB-like, bandwidth ≈ 0.75–1 N;
           see solvers.mesh.square)
    rcm    reverse Cuthill–McKee on the cell adjacency (scipy, as MATLAB's symrcm)
    gps    Gibbs–Poole–Stockmeyer: the ends of a pseudo-diameter from iterated level
           structures, a level structure of small width combining the two rooted ones
           (component by component, as GPS's step 2), and a Cuthill–McKee numbering level by
           level (each level ordered by its lowest-numbered neighbour in the level before, then
           by degree)

Each returns `order` (new cell k is old cell order[k]).

`FVTables.build(mesh, renumber)` orders the cells and the edges with them (sorted by their
lower-numbered cell, so an edge sweep walks the cells in memory order) and lays out, in the new
numbering:
    edge_l, edge_r (E,) int32   the two cells of an edge, left = the lower number; -1 = wall
    nx, ny, length (E,)         unit normal left → right, edge length
    slot_l, slot_r (E,) int32   where the edge writes its contribution for each cell:
                                acc[k, slot, cell] with slot ∈ {0, 1, 2} the rank of the edge
                                among the cell's three (no two edges share a place: no races)
    area (M,)                   cell areas
    order, rank                 new cell k is original cell order[k]; original i is new rank[i]
`cell_tables` gives the per-cell view of the cell-fused GPU assembly.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, shortest_path

from ...core.errors import MeshError
from ...mesh.io import read_mesh
from ...mesh.renumber import inverse, rcm_cells
from ...mesh.square import square_mesh
from ...mesh.triangles import TriangleMesh

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
        inv = inverse(order)
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


@dataclass
class FVTables:
    edge_l: np.ndarray
    edge_r: np.ndarray
    nx: np.ndarray
    ny: np.ndarray
    length: np.ndarray
    slot_l: np.ndarray
    slot_r: np.ndarray
    area: np.ndarray
    centroids: np.ndarray  # (M, 2) in the new numbering
    order: np.ndarray
    rank: np.ndarray
    bandwidth: int
    n_cells: int
    n_edges: int

    @classmethod
    def build(cls, mesh: TriangleMesh, renumber: str = "none") -> "FVTables":
        order = cell_order(mesh, renumber)
        m = mesh.n_cells
        rank = inverse(order)
        ec = mesh.edge_cells
        a = rank[ec[:, 0]]
        b = np.where(ec[:, 1] >= 0, rank[np.maximum(ec[:, 1], 0)], -1)
        nrm = np.asarray(mesh.edge_normals_2d)
        swap = (b >= 0) & (b < a)
        left = np.where(swap, b, a)
        right = np.where(swap, a, b)
        nx = np.where(swap, -nrm[:, 0], nrm[:, 0])
        ny = np.where(swap, -nrm[:, 1], nrm[:, 1])
        eorder = np.lexsort((right, left))
        left, right, nx, ny = left[eorder], right[eorder], nx[eorder], ny[eorder]
        length = np.asarray(mesh.edge_lengths)[eorder]
        ne = len(left)
        # slots: rank of each edge among its cell's edges (edges are sorted, so stable)
        cells = np.concatenate([left, right])
        eid = np.concatenate([np.arange(ne), np.arange(ne)])
        ok = cells >= 0
        cells, eid = cells[ok], eid[ok]
        srt = np.lexsort((eid, cells))
        cs = cells[srt]
        start = np.searchsorted(cs, cs, side="left")
        slot = np.arange(len(cs)) - start
        if slot.max(initial=0) > 2:
            raise ValueError("a cell has more than three edges")
        slot_all = np.empty(len(cs), dtype=np.int64)
        slot_all[srt] = slot
        slot_l = np.full(ne, -1, dtype=np.int64)
        slot_r = np.full(ne, -1, dtype=np.int64)
        n_l = int(ne)
        is_left = np.flatnonzero(ok)
        first = is_left < n_l
        slot_l[eid[first]] = slot_all[first]
        slot_r[eid[~first]] = slot_all[~first]
        area = np.asarray(mesh.cell_areas)[order]
        cen = np.asarray(mesh.cell_centroids)[order, :2]
        return cls(edge_l=left.astype(np.int32), edge_r=right.astype(np.int32), nx=nx, ny=ny,
                   length=length, slot_l=slot_l.astype(np.int32),
                   slot_r=slot_r.astype(np.int32), area=area, centroids=cen,
                   order=order, rank=rank, bandwidth=bandwidth(mesh, order), n_cells=m,
                   n_edges=ne)


def cell_tables(t: FVTables):
    """Per-cell edge tables of the cell-fused assembly, (3, M) column-major as slot·M + cell:
    the neighbour across each edge (-1: wall), the normal pointing out of the cell, the length.
    A cell computes each of its edges as the left cell with the outward normal; the schemes are
    symmetric (D⁻(W_R, W_L, −n) = D⁺(W_L, W_R, n)), so this equals the edge assembly."""
    m = t.n_cells
    pos_l = t.slot_l.astype(np.int64) * m + t.edge_l
    inner = t.edge_r >= 0
    pos_r = (t.slot_r.astype(np.int64) * m + t.edge_r)[inner]
    nbr = np.full(3 * m, -1, dtype=np.int64)
    cnx, cny, clen = (np.zeros(3 * m) for _ in range(3))
    nbr[pos_l] = t.edge_r
    cnx[pos_l], cny[pos_l], clen[pos_l] = t.nx, t.ny, t.length
    nbr[pos_r] = t.edge_l[inner]
    cnx[pos_r], cny[pos_r] = -t.nx[inner], -t.ny[inner]
    clen[pos_r] = t.length[inner]
    return nbr, cnx, cny, clen


def load_mesh(path: str) -> TriangleMesh:
    """A 2D triangle mesh from a file (meshio formats), checked to be planar."""
    mesh = read_mesh(path)
    z = mesh.points[:, 2]
    if np.ptp(z) > 1e-12 * max(1.0, np.abs(mesh.points[:, :2]).max()):
        raise MeshError(f"mesh '{path}' is not planar (z varies by {np.ptp(z):.3g}); allowed: a "
                        "2D triangle mesh in a plane z = const")
    if mesh.n_cells < 2:
        raise MeshError(f"mesh '{path}' has {mesh.n_cells} triangle; allowed: >= 2")
    return mesh


SIDE = 10.0  # the generated square is [−5, 5]² (the papers' domain)


@lru_cache(maxsize=4)
def generated_mesh(cells: int, seed: int, Lx: float = SIDE, Ly: float = SIDE) -> TriangleMesh:
    """The generated mesh of [−Lx/2, Lx/2] × [−Ly/2, Ly/2]: the square mesh of [−5, 5]² with its
    points scaled by (Lx/10, Ly/10) (the same triangles, stretched where Lx ≠ Ly; the cell order
    and the adjacency do not change). Cached: read-only, shared by simulations of the same size."""
    mesh = square_mesh(cells, seed=seed)
    if (Lx, Ly) == (SIDE, SIDE):
        return mesh
    pts = mesh.points * np.array([Lx / SIDE, Ly / SIDE, 1.0])
    return TriangleMesh(pts, mesh.cells, name=f"{mesh.name} scaled to {Lx:g} x {Ly:g}")


@lru_cache(maxsize=8)
def generated_tables(cells: int, seed: int, renumber: str, Lx: float = SIDE,
                     Ly: float = SIDE) -> FVTables:
    return FVTables.build(generated_mesh(cells, seed, Lx, Ly), renumber)
