"""The fused GPU path: device tables for each rung of the kernel ladder (chemotaxis.cu) and their
launches. `FusedStepper(sim, rung)` uploads what its rung reads and advances (n, c) by one
explicit Euler step per `step` call, double-buffered (the input arrays are never written).

Rungs, in the order of the paper's Fig. 11 (bytes per vertex with valence ~6, float32/float64,
assuming gathered neighbour values hit the cache):
    naive    7 launches (Laplacian, face gradients, vertex gradients per species, update), CSR,
             intermediates in global memory
    fusion1  4 launches, both species per launch
    csr      1 launch, precomputed one-ring coefficients (lap, G) per slot, CSR rows
    padded   1 launch, the same in column-major tables padded to a warp (coalesced)
    vec      padded, the 4 coefficients of a slot interleaved and read as one vector
    geom     1 launch, padded vertex–face table; geometry recomputed from float64 coordinates
    ring     the same from the 1-ring in fan order (mesh.vertex_fans): one index and one gather
             per neighbour; meshes with several fans at a vertex or inconsistent orientation
             fall back to geom
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.backend import load_kernels
from ..mesh.triangles import padded

CU_FILE = Path(__file__).with_name("chemotaxis.cu")
BLOCK = 256
RUNGS = ("naive", "fusion1", "csr", "padded", "vec", "geom", "ring")
_KERNELS = {
    "naive": ["naive_lap", "naive_face_grad", "naive_vertex_grad", "rd_update"],
    "fusion1": ["fused1_lap", "fused1_face_grad", "fused1_vertex_grad", "rd_update"],
    "csr": ["rd_step_csr"], "padded": ["rd_step_padded"], "vec": ["rd_step_vec"],
    "geom": ["rd_step_geom"], "ring": ["rd_step_ring"], "gs": ["gs_step_padded"],
}


def _grid(n: int, block: int) -> tuple[int]:
    return ((n + block - 1) // block,)


class FusedStepper:
    """Device tables and launches of one rung for a chemotaxis (or, rung 'gs', Gray–Scott)
    simulation `sim` (its internal, renumbered mesh `sim.imesh` and operators `sim.ops`)."""

    def __init__(self, sim, rung: str, block: int = BLOCK):
        import cupy as cp
        if rung not in _KERNELS:
            raise ValueError(f"unknown rung '{rung}'; rungs: {', '.join(_KERNELS)}")
        self.cp, self.rung, self.block = cp, rung, block
        self.sim = sim
        self.real = sim.real
        self.n = sim.imesh.n_vertices
        # one compilation of the whole file per real type, whatever the rung
        allk = load_kernels(CU_FILE, sim.dtype, sorted({k for v in _KERNELS.values() for k in v}))
        self.k = {k: allk[k] for k in _KERNELS[rung]}
        self.args = sim.fused_args()
        if rung == "ring" and sim.imesh.vertex_fans is None:
            rung = self.rung = "geom"
            self.k = {"rd_step_geom": allk["rd_step_geom"]}
        getattr(self, f"_prepare_{'naive' if rung == 'fusion1' else rung}")()
        self._out = None

    # ---- tables -------------------------------------------------------------------------
    def _dev(self, a, dtype):
        return self.cp.asarray(np.ascontiguousarray(a, dtype=dtype))

    def _prepare_naive(self):
        ops, mesh, r = self.sim.ops, self.sim.imesh, self.real
        st = ops.stencil
        self.indptr = self._dev(st.indptr, np.int32)
        self.nbr = self._dev(st.nbr, np.int32)
        self.lap = self._dev(st.lap, r)
        from .operators import face_gradient_coefficients
        self.cells = self._dev(mesh.cells, np.int32)
        self.g = self._dev(face_gradient_coefficients(mesh), r)
        W = ops.W.tocsr()
        W.sort_indices()
        self.vf_indptr = self._dev(W.indptr, np.int32)
        self.vf_face = self._dev(W.indices, np.int32)
        self.vf_w = self._dev(W.data, r)
        cp, n, m = self.cp, self.n, mesh.n_cells
        self.m = m
        self.tmp = {k: cp.empty(s, dtype=r) for k, s in
                    (("ln", n), ("lc", n), ("gfn", 3 * m), ("gfc", 3 * m), ("gvn", 3 * n),
                     ("gvc", 3 * n))}

    def _prepare_csr(self):
        st = self.sim.ops.stencil
        self.indptr = self._dev(st.indptr, np.int32)
        self.nbr = self._dev(st.nbr, np.int32)
        self.coef = self._dev(np.column_stack([st.lap, st.grad]), self.real)

    def _padded_ring(self):
        st = self.sim.ops.stencil
        self.deg = self._dev(np.diff(st.indptr), np.int32)
        nbr = padded(st.indptr, st.nbr, fill=0, dtype=np.int32)
        self.K, self.P = nbr.shape
        self.nbr = self._dev(nbr, np.int32)
        return st

    def _prepare_padded(self):
        st = self._padded_ring()
        planes = [padded(st.indptr, st.lap, fill=0.0)] + \
                 [padded(st.indptr, st.grad[:, d], fill=0.0) for d in range(3)]
        self.coef = self._dev(np.stack(planes), self.real)

    def _prepare_vec(self):
        st = self._padded_ring()
        planes = [padded(st.indptr, st.lap, fill=0.0)] + \
                 [padded(st.indptr, st.grad[:, d], fill=0.0) for d in range(3)]
        self.coef = self._dev(np.stack(planes, axis=-1), self.real)  # (K, P, 4)

    def _prepare_geom(self):
        mesh = self.sim.imesh
        indptr, cells, corner = mesh.vertex_face
        tri = mesh.cells[cells]
        a = tri[np.arange(len(cells)), (corner + 1) % 3]
        b = tri[np.arange(len(cells)), (corner + 2) % 3]
        self.deg = self._dev(np.diff(indptr), np.int32)
        fa = padded(indptr, a, fill=0, dtype=np.int32)
        self.K, self.P = fa.shape
        self.fa = self._dev(fa, np.int32)
        self.fb = self._dev(padded(indptr, b, fill=0, dtype=np.int32), np.int32)
        self.xyz = self._dev(mesh.points.T, np.float64)

    def _prepare_ring(self):
        mesh = self.sim.imesh
        ring_ptr, ring = mesh.vertex_fans
        self.deg = self._dev(np.diff(ring_ptr) - 1, np.int32)  # incident faces
        table = padded(ring_ptr, ring, fill=0, dtype=np.int32)
        self.K, self.P = table.shape
        self.ring = self._dev(table, np.int32)
        xyz4 = np.zeros((mesh.n_vertices, 4))
        xyz4[:, :3] = mesh.points
        self.xyz = self._dev(xyz4, np.float64)

    def _prepare_gs(self):
        st = self._padded_ring()
        self.coef = self._dev(padded(st.indptr, st.lap, fill=0.0), self.real)

    # ---- stepping -----------------------------------------------------------------------
    def step(self, u, v, dt: float):
        """One explicit Euler step; returns the new (u, v) (buffers alternate)."""
        cp = self.cp
        if self._out is None or self._out[0] is u or self._out[0].shape != u.shape:
            self._out = (cp.empty_like(u), cp.empty_like(v))
        uo, vo = self._out
        getattr(self, f"_step_{self.rung}")(u, v, uo, vo, self.real(dt))
        self._out = (u, v)
        return uo, vo

    def _step_naive(self, u, v, uo, vo, dt):
        n, m, b, k, t = self.n, self.m, self.block, self.k, self.tmp
        i32 = np.int32
        for f, lap in ((u, t["ln"]), (v, t["lc"])):
            k["naive_lap"](_grid(n, b), (b,), (f, lap, self.indptr, self.nbr, self.lap, i32(n)))
        for f, gf in ((u, t["gfn"]), (v, t["gfc"])):
            k["naive_face_grad"](_grid(m, b), (b,), (f, gf, self.cells, self.g, i32(m)))
        for gf, gv in ((t["gfn"], t["gvn"]), (t["gfc"], t["gvc"])):
            k["naive_vertex_grad"](_grid(n, b), (b,), (gf, gv, self.vf_indptr, self.vf_face,
                                                       self.vf_w, i32(n), i32(m)))
        self._update(u, v, uo, vo, dt)

    def _step_fusion1(self, u, v, uo, vo, dt):
        n, m, b, k, t = self.n, self.m, self.block, self.k, self.tmp
        i32 = np.int32
        k["fused1_lap"](_grid(n, b), (b,), (u, v, t["ln"], t["lc"], self.indptr, self.nbr,
                                            self.lap, i32(n)))
        k["fused1_face_grad"](_grid(m, b), (b,), (u, v, t["gfn"], t["gfc"], self.cells, self.g,
                                                  i32(m)))
        k["fused1_vertex_grad"](_grid(n, b), (b,), (t["gfn"], t["gfc"], t["gvn"], t["gvc"],
                                                    self.vf_indptr, self.vf_face, self.vf_w,
                                                    i32(n), i32(m)))
        self._update(u, v, uo, vo, dt)

    def _update(self, u, v, uo, vo, dt):
        t, n, b = self.tmp, self.n, self.block
        self.k["rd_update"](_grid(n, b), (b,), (u, v, t["ln"], t["lc"], t["gvn"], t["gvc"], uo,
                                                vo, np.int32(n), *self.args, dt))

    def _step_csr(self, u, v, uo, vo, dt):
        n, b = self.n, self.block
        self.k["rd_step_csr"](_grid(n, b), (b,), (u, v, uo, vo, self.indptr, self.nbr, self.coef,
                                                  np.int32(n), *self.args, dt))

    def _step_padded(self, u, v, uo, vo, dt):
        n, b = self.n, self.block
        self.k["rd_step_padded"](_grid(n, b), (b,), (u, v, uo, vo, self.deg, self.nbr, self.coef,
                                                     np.int32(n), np.int32(self.P),
                                                     np.int32(self.K), *self.args, dt))

    def _step_vec(self, u, v, uo, vo, dt):
        n, b = self.n, self.block
        self.k["rd_step_vec"](_grid(n, b), (b,), (u, v, uo, vo, self.deg, self.nbr, self.coef,
                                                  np.int32(n), np.int32(self.P), *self.args, dt))

    def _step_geom(self, u, v, uo, vo, dt):
        n, b = self.n, self.block
        self.k["rd_step_geom"](_grid(n, b), (b,), (u, v, uo, vo, self.deg, self.fa, self.fb,
                                                   self.xyz, np.int32(n), np.int32(self.P),
                                                   *self.args, dt))

    def _step_ring(self, u, v, uo, vo, dt):
        n, b = self.n, self.block
        self.k["rd_step_ring"](_grid(n, b), (b,), (u, v, uo, vo, self.deg, self.ring, self.xyz,
                                                   np.int32(n), np.int32(self.P), *self.args, dt))

    def _step_gs(self, u, v, uo, vo, dt):
        n, b = self.n, self.block
        self.k["gs_step_padded"](_grid(n, b), (b,), (u, v, uo, vo, self.deg, self.nbr, self.coef,
                                                     np.int32(n), np.int32(self.P), *self.args,
                                                     dt))

    # ---- accounting ---------------------------------------------------------------------
    def traffic(self) -> int:
        """Bytes a step of this rung reads and writes from DRAM if every gathered neighbour
        value hits the cache: the state (read and written), the tables it reads once, and the
        intermediates it stores and loads again (naive, fusion1)."""
        n, item = self.n, np.dtype(self.real).itemsize
        mesh = self.sim.imesh
        nnz = 2 * mesh.n_edges
        m = mesh.n_cells
        state = 4 * n * item
        if self.rung in ("naive", "fusion1"):
            per = 2 if self.rung == "naive" else 1  # species passes over the tables
            lap = per * (4 * (n + 1) + nnz * (4 + item))
            face = per * m * (12 + 9 * item)
            vert = per * (4 * (n + 1) + 3 * m * (4 + item))
            inter = 2 * (2 * n + 2 * 3 * m + 2 * 3 * n) * item  # written once, read once
            return state + lap + face + vert + inter + (state // 2)  # update rereads n, c
        if self.rung in ("csr", "padded", "vec"):
            return state + 4 * n + nnz * (4 + 4 * item)
        if self.rung == "geom":
            return state + 4 * n + 3 * m * 8 + 24 * n  # two ints per face slot, coordinates
        if self.rung == "ring":
            return state + 4 * n + 4 * (3 * m + n) + 32 * n  # d + 1 ints, 32-byte coordinates
        return state + 4 * n + nnz * (4 + item)  # gs
