"""The rungs of the chemotaxis kernel ladder (the paper's Fig. 11) as fused schemes: each is a
`FusedChemotaxis` (pdestudio.solvers.surface_rd.fused) with its own device tables and launches,
its kernels in kernels/ladder.cu; `vec` is the production scheme itself. A benchmark or test puts
one on a simulation through the documented hook: `sim.scheme = rung_scheme(sim, "csr")`.

Rungs, in the order of Fig. 11 (bytes per vertex with valence ~6, float32/float64, assuming
gathered neighbour values hit the cache; `traffic`):
    naive    7 launches (Laplacian, face gradients, vertex gradients per species, update), CSR,
             intermediates in global memory
    fusion1  4 launches, both species per launch
    csr      1 launch, precomputed one-ring coefficients (lap, G) per slot, CSR rows
    padded   1 launch, the same in column-major tables padded to a warp (coalesced)
    vec      padded, the 4 coefficients of a slot interleaved and read as one vector (production)
    geom     1 launch, padded vertex–face table; geometry recomputed from float64 coordinates
    ring     the same from the 1-ring in fan order (mesh.vertex_fans): one index and one gather
             per neighbour; meshes with several fans at a vertex or inconsistent orientation
             fall back to geom

Beyond the public API it imports the kernel ladder's rungs are schemes built from the fused scheme's tables and kernels (surface_rd.fused, mesh.triangles.padded): they are put on a simulation through the documented `Simulation.scheme` hook.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from pdestudio.solvers.mesh.triangles import padded
from pdestudio.solvers.surface_rd import fused
from pdestudio.solvers.surface_rd.fused import BLOCK, FusedChemotaxis
from pdestudio.solvers.surface_rd.reference import face_gradient_coefficients

LADDER_CU = Path(__file__).resolve().parent / "kernels" / "ladder.cu"
RD_KERNELS = fused.CU_FILE.parent  # chemotaxis.cuh: the device functions shared with production
LAUNCHES = {"naive": 7, "fusion1": 4, "csr": 1, "padded": 1, "vec": 1, "geom": 1, "ring": 1}


class LadderRung(FusedChemotaxis):
    """A rung whose kernels are in ladder.cu (one compilation of the file per real type)."""

    cu_file = LADDER_CU
    kernel_names = ("naive_lap", "naive_face_grad", "naive_vertex_grad", "rd_update",
                    "fused1_lap", "fused1_face_grad", "fused1_vertex_grad", "rd_step_csr",
                    "rd_step_padded", "rd_step_geom", "rd_step_ring")
    include_dirs = (RD_KERNELS,)


class Naive(LadderRung):
    def prepare(self):
        ops, mesh, r = self.sim.ops, self.sim.imesh, self.real
        st = ops.stencil
        self.indptr = self.dev(st.indptr, np.int32)
        self.nbr = self.dev(st.nbr, np.int32)
        self.lap = self.dev(st.lap, r)
        self.cells = self.dev(mesh.cells, np.int32)
        self.g = self.dev(face_gradient_coefficients(mesh), r)
        W = ops.W.tocsr()
        W.sort_indices()
        self.vf_indptr = self.dev(W.indptr, np.int32)
        self.vf_face = self.dev(W.indices, np.int32)
        self.vf_w = self.dev(W.data, r)
        cp, n, m = self.cp, self.n, mesh.n_cells
        self.m = m
        self.tmp = {k: cp.empty(s, dtype=r) for k, s in
                    (("ln", n), ("lc", n), ("gfn", 3 * m), ("gfc", 3 * m), ("gvn", 3 * n),
                     ("gvc", 3 * n))}

    def launch(self, u, v, uo, vo, dt):
        n, m, k, t = self.n, self.m, self.k, self.tmp
        b, i32 = (self.block,), np.int32
        for f, lap in ((u, t["ln"]), (v, t["lc"])):
            k["naive_lap"](self.grid(n), b, (f, lap, self.indptr, self.nbr, self.lap, i32(n)))
        for f, gf in ((u, t["gfn"]), (v, t["gfc"])):
            k["naive_face_grad"](self.grid(m), b, (f, gf, self.cells, self.g, i32(m)))
        for gf, gv in ((t["gfn"], t["gvn"]), (t["gfc"], t["gvc"])):
            k["naive_vertex_grad"](self.grid(n), b, (gf, gv, self.vf_indptr, self.vf_face,
                                                     self.vf_w, i32(n), i32(m)))
        self.update(u, v, uo, vo, dt)

    def update(self, u, v, uo, vo, dt):
        t, n = self.tmp, self.n
        self.k["rd_update"](self.grid(n), (self.block,),
                            (u, v, t["ln"], t["lc"], t["gvn"], t["gvc"], uo, vo, np.int32(n),
                             *self.args, dt))


class Fusion1(Naive):
    def launch(self, u, v, uo, vo, dt):
        n, m, k, t = self.n, self.m, self.k, self.tmp
        b, i32 = (self.block,), np.int32
        k["fused1_lap"](self.grid(n), b, (u, v, t["ln"], t["lc"], self.indptr, self.nbr,
                                          self.lap, i32(n)))
        k["fused1_face_grad"](self.grid(m), b, (u, v, t["gfn"], t["gfc"], self.cells, self.g,
                                                i32(m)))
        k["fused1_vertex_grad"](self.grid(n), b, (t["gfn"], t["gfc"], t["gvn"], t["gvc"],
                                                  self.vf_indptr, self.vf_face, self.vf_w,
                                                  i32(n), i32(m)))
        self.update(u, v, uo, vo, dt)


class CSR(LadderRung):
    def prepare(self):
        st = self.sim.ops.stencil
        self.indptr = self.dev(st.indptr, np.int32)
        self.nbr = self.dev(st.nbr, np.int32)
        self.coef = self.dev(np.column_stack([st.lap, st.grad]), self.real)

    def launch(self, u, v, uo, vo, dt):
        self.k["rd_step_csr"](self.grid(self.n), (self.block,),
                              (u, v, uo, vo, self.indptr, self.nbr, self.coef, np.int32(self.n),
                               *self.args, dt))


class Padded(LadderRung):
    def prepare(self):
        st = self.padded_ring()
        self.coef = self.dev(np.stack(self.coefficient_planes(st)), self.real)  # (4, K, P)

    def launch(self, u, v, uo, vo, dt):
        self.k["rd_step_padded"](self.grid(self.n), (self.block,),
                                 (u, v, uo, vo, self.deg, self.nbr, self.coef, np.int32(self.n),
                                  np.int32(self.P), np.int32(self.K), *self.args, dt))


class Geom(LadderRung):
    def prepare(self):
        mesh = self.sim.imesh
        indptr, cells, corner = mesh.vertex_face
        tri = mesh.cells[cells]
        a = tri[np.arange(len(cells)), (corner + 1) % 3]
        b = tri[np.arange(len(cells)), (corner + 2) % 3]
        self.deg = self.dev(np.diff(indptr), np.int32)
        fa = padded(indptr, a, fill=0, dtype=np.int32)
        self.K, self.P = fa.shape
        self.fa = self.dev(fa, np.int32)
        self.fb = self.dev(padded(indptr, b, fill=0, dtype=np.int32), np.int32)
        self.xyz = self.dev(mesh.points.T, np.float64)

    def launch(self, u, v, uo, vo, dt):
        self.k["rd_step_geom"](self.grid(self.n), (self.block,),
                               (u, v, uo, vo, self.deg, self.fa, self.fb, self.xyz,
                                np.int32(self.n), np.int32(self.P), *self.args, dt))


class Ring(LadderRung):
    def prepare(self):
        mesh = self.sim.imesh
        ring_ptr, ring = mesh.vertex_fans
        self.deg = self.dev(np.diff(ring_ptr) - 1, np.int32)  # incident faces
        table = padded(ring_ptr, ring, fill=0, dtype=np.int32)
        self.K, self.P = table.shape
        self.ring = self.dev(table, np.int32)
        xyz4 = np.zeros((mesh.n_vertices, 4))
        xyz4[:, :3] = mesh.points
        self.xyz = self.dev(xyz4, np.float64)

    def launch(self, u, v, uo, vo, dt):
        self.k["rd_step_ring"](self.grid(self.n), (self.block,),
                               (u, v, uo, vo, self.deg, self.ring, self.xyz, np.int32(self.n),
                                np.int32(self.P), *self.args, dt))


RUNGS = {"naive": Naive, "fusion1": Fusion1, "csr": CSR, "padded": Padded,
         "vec": FusedChemotaxis, "geom": Geom, "ring": Ring}


def rung_name(sim, rung: str) -> str:
    """The rung that runs for `rung` on this simulation's mesh: ring needs one consistent fan
    at every vertex (mesh.vertex_fans) and falls back to geom."""
    return "geom" if rung == "ring" and sim.imesh.vertex_fans is None else rung


def rung_scheme(sim, rung: str, block: int = BLOCK) -> FusedChemotaxis:
    """The fused scheme of rung `rung` (RUNGS) for a chemotaxis simulation on the GPU."""
    if rung not in RUNGS:
        raise ValueError(f"unknown rung '{rung}'; rungs: {', '.join(RUNGS)}")
    if sim.params["scheme"] != "paper":
        raise ValueError("the ladder's rungs discretise the paper's scheme: create the "
                         "simulation with scheme='paper'")
    return RUNGS[rung_name(sim, rung)](sim, block=block)


def traffic(sim, rung: str) -> int:
    """Bytes a step of `rung` reads and writes from DRAM if every gathered neighbour value hits
    the cache: the state (read and written), the tables it reads once, and the intermediates it
    stores and loads again (naive, fusion1)."""
    rung = rung_name(sim, rung)
    mesh = sim.imesh
    n, item = mesh.n_vertices, np.dtype(sim.dtype).itemsize
    nnz = 2 * mesh.n_edges
    m = mesh.n_cells
    state = 4 * n * item
    if rung in ("naive", "fusion1"):
        per = 2 if rung == "naive" else 1  # species passes over the tables
        lap = per * (4 * (n + 1) + nnz * (4 + item))
        face = per * m * (12 + 9 * item)
        vert = per * (4 * (n + 1) + 3 * m * (4 + item))
        inter = 2 * (2 * n + 2 * 3 * m + 2 * 3 * n) * item  # written once, read once
        return state + lap + face + vert + inter + (state // 2)  # update rereads n, c
    if rung in ("csr", "padded", "vec"):
        return state + 4 * n + nnz * (4 + 4 * item)
    if rung == "geom":
        return state + 4 * n + 3 * m * 8 + 24 * n  # two ints per face slot, coordinates
    return state + 4 * n + 4 * (3 * m + n) + 32 * n  # ring: d + 1 ints, 32-byte coordinates
