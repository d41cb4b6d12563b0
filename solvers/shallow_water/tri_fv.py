"""Unstructured first-order finite volumes on triangle meshes (seeds 002, 004; SPEC §3.3–3.4).

`FVTables.build(mesh, renumber)` orders the cells (none | rcm | gps, tri_renumber) and the
edges with them (sorted by their lower-numbered cell, so an edge sweep walks the cells in memory
order) and lays out, in the new numbering:
    edge_l, edge_r (E,) int32   the two cells of an edge, left = the lower number; -1 = wall
    nx, ny, length (E,)         unit normal left → right, edge length
    slot_l, slot_r (E,) int32   where the edge writes its contribution for each cell:
                                acc[k, slot, cell] with slot ∈ {0, 1, 2} the rank of the edge
                                among the cell's three (no two edges share a place: no races)
    area (M,)                   cell areas
    order, rank                 new cell k is original cell order[k]; original i is new rank[i]
The time step (eq. (3)): Δt = min_i 2 δ |V_i| / Σ_j |E_ij| max_k |λ_ij,k| over the current
state (the same-step form of seed 002; seed 004 lags it one step to fuse kernels).

`FVSolver` advances W (nv, M) by one step with the array code of tri_flux (`array` path and
NumPy) or the fused kernels of tri_kernels.cu (`fused` path, in tri_gpu).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..mesh.triangles import TriangleMesh
from . import tri_flux
from .tri_renumber import bandwidth, cell_order


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
        rank = np.empty(m, dtype=np.int64)
        rank[order] = np.arange(m)
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


class FVSolver:
    """One explicit step W ← W − Δt/|V| Σ |E| D (array code). `layers` 1 (W = h, qx, qy) or 2
    (h1, q1x, q1y, h2, q2x, q2y)."""

    def __init__(self, tables: FVTables, xp, dtype, layers: int, scheme: str, g: float,
                 r: float = 0.0, eig_dtype=None):
        self.t, self.xp, self.layers = tables, xp, layers
        self.nv = 3 * layers
        self.scheme, self.g, self.r = scheme, g, r
        self.dtype = np.dtype(dtype)
        self.eig_dtype = np.dtype(eig_dtype or dtype)
        f = lambda a, d=self.dtype: xp.asarray(a, dtype=d)  # noqa: E731
        self.L = xp.asarray(tables.edge_l.astype(np.int64))
        rr = tables.edge_r.astype(np.int64)
        self.wall = xp.asarray(rr < 0)
        self.Rc = xp.asarray(np.where(rr >= 0, rr, tables.edge_l))
        self.inner = xp.asarray(np.flatnonzero(rr >= 0))
        self.nx, self.ny, self.len = f(tables.nx), f(tables.ny), f(tables.length)
        self.area = f(tables.area)
        m = tables.n_cells
        sl, sr = tables.slot_l.astype(np.int64), tables.slot_r.astype(np.int64)
        self.pos_l = xp.asarray(sl * m + tables.edge_l)
        self.pos_r = xp.asarray((sr * m + rr)[rr >= 0])
        self.acc = xp.zeros((self.nv, 3 * m), dtype=self.dtype)
        self.sacc = xp.zeros(3 * m, dtype=self.dtype)

    def fluctuations(self, W, H):
        """Per-edge contributions DL, DR (nv, E) and wave speeds (E,)."""
        xp, ed = self.xp, self.eig_dtype
        c = (lambda a: a.astype(ed)) if ed != self.dtype else (lambda a: a)  # noqa: E731
        WL = tuple(c(W[k][self.L]) for k in range(self.nv))
        WR = tuple(c(W[k][self.Rc]) for k in range(self.nv))
        HL, HR = c(H[self.L]), c(H[self.Rc])
        nx, ny = c(self.nx), c(self.ny)
        if self.layers == 1:
            DL, DR, s = tri_flux.one_layer(xp, self.scheme, WL, WR, HL, HR, nx, ny, self.wall,
                                           self.g)
        else:
            DL, DR, s = tri_flux.two_layer(xp, self.scheme, WL, WR, HL, HR, nx, ny, self.wall,
                                           self.g, self.r)
        back = lambda a: a.astype(self.dtype)  # noqa: E731
        return [back(d) for d in DL], [back(d) for d in DR], back(s)

    def step(self, W, H, cfl: float, dt_limit: float | None) -> float:
        xp = self.xp
        DL, DR, s = self.fluctuations(W, H)
        m = self.t.n_cells
        ln = self.len
        for k in range(self.nv):
            self.acc[k][self.pos_l] = DL[k] * ln
            self.acc[k][self.pos_r] = (DR[k] * ln)[self.inner]
        self.sacc[self.pos_l] = s * ln
        self.sacc[self.pos_r] = (s * ln)[self.inner]
        ssum = self.sacc.reshape(3, m).sum(axis=0)
        dt = float(xp.nanmin(2 * cfl * self.area / ssum))  # NaN cells: the finiteness check
        if dt_limit is not None:
            dt = min(dt, dt_limit)
        tot = self.acc.reshape(self.nv, 3, m).sum(axis=1)
        W -= (self.dtype.type(dt) / self.area) * tot
        return dt
