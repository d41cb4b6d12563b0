"""integrator=imex/imex1/imex3 of a model file on a lattice mesh, on the GPU (docs/EQUATIONS.md,
"IMEX"): imex.py's ARS step with every launch on the device and nothing on the host between
them, so that `fused.py` replays whole steps as CUDA graphs.

A stage i of ARS (imex.py) is

    rhs_s = U_s + Σ_j<i dt·(Â_ij·R_j,s + (A_ij − Â_ij)·I_j,s)     (lat_pack, all species)
    (I − A_ii·dt·c_s·L) Y_i,s = rhs_s        (cuFFT along one axis, lat_rec along the other)
    I_i,s = (Y_i,s − rhs_s)/(A_ii·dt)                             (lat_finish)
    R_i = the model's rates at Y_i (eq_rates, the generated kernel)

with R the full rates (implicit terms included) and I = c·L Y the implicit rates, so that
E = R − I is imex.py's explicit part; I_0 = c·L U comes from the 5-point stencil (lat_lap). The
last stage writes the new state over U (every read of U is done by then). Kernels:
kernels/lattice_imex.cu. Used where every species has a constant implicit coefficient c_s > 0,
zero-flux boundaries, no transports and no t in the model, the mesh is a lattice
(solvers/mesh/lattice.py) at most MAX_WIDTH nodes across one of its axes, and at most 4
species.
The transform runs along x where 2nx − 2 has no prime factor above 7 (cuFFT's fast sizes), else
along y where 2ny − 2 has none (the lattice transposed through shared-memory tiles by
lat_pack_t and lat_finish_t): `transform_axis`; otherwise imex.py's array path runs (`why_not`
says why, `sim.scheme.lattice_why`).
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..core.backend import load_kernels
from .imex import ARS

CU = Path(__file__).resolve().parent / "kernels" / "lattice_imex.cu"
MAXT = 8
MAX_SPECIES = 4
MAX_WIDTH = 6000  # rows of a tridiagonal system: its two extensions fit a block's shared memory
BLOCK = 256


def why_not(fused) -> str | None:
    """None where the lattice GPU step applies to this simulation, else the reason."""
    from .fused import time_free
    sim, imex = fused.sim, fused.imex
    if fused.cp is np:
        return "the CPU backend"
    if sim.params["integrator"] not in ARS:
        return f"integrator {sim.params['integrator']!r}"
    if sim.transports:
        return "transport terms (an adaptive step)"
    if not time_free(sim):
        return "the model reads t"
    if getattr(sim, "mesh", None) is None or hasattr(imex.ops, "axes"):
        return "not a mesh"
    if len(sim.species) > MAX_SPECIES:
        return f"more than {MAX_SPECIES} species"
    implicit = {s for s, _ in imex.implicit}
    if set(sim.species) - implicit or set(sim.species) - imex.homogeneous:
        return "a species without an implicit term or with boundary values"
    if any(imex.ops.pinned(s) for s in sim.species):
        return "Dirichlet vertices"
    if imex.lattice is None:
        return "the mesh is not a lattice"
    lat = imex.lattice.lat
    if (lat.ny if transform_axis(lat) == "x" else lat.nx) > MAX_WIDTH:
        return f"the lattice is more than {MAX_WIDTH} nodes across in both directions"
    return None


def smooth(n: int) -> bool:
    """Whether n has no prime factor above 7 (cuFFT's fast radices)."""
    for p in (2, 3, 5, 7):
        while n % p == 0:
            n //= p
    return n == 1


def transform_axis(lat) -> str:
    """The axis of the cosine transform: x (no transposes) unless its extension 2nx − 2 has a
    prime factor above 7 and y's does not, or the other axis is too long for a block of lat_rec
    (PDESTUDIO_LATTICE_AXIS = x or y overrides, for the tests and benchmarks)."""
    forced = os.environ.get("PDESTUDIO_LATTICE_AXIS", "")
    if forced in ("x", "y"):
        return forced
    fits = {"x": lat.ny <= MAX_WIDTH, "y": lat.nx <= MAX_WIDTH}
    candidates = [a for a in ("x", "y") if fits[a]] or ["x"]
    for a in candidates:
        if smooth(2 * (lat.nx if a == "x" else lat.ny) - 2):
            return a
    return candidates[0]


class LatticeImex:
    def __init__(self, fused):
        import cupy as cp
        from cupy.cuda import cufft
        self.fused, self.sim, self.cp = fused, fused.sim, cp
        sim = self.sim
        real = sim.real
        self.real = real
        lat = fused.imex.lattice.lat
        self.lat = lat
        self.k = load_kernels(CU, sim.dtype, ["lat_pack", "lat_rec", "lat_finish", "lat_lap",
                                              "lat_pack_t", "lat_finish_t"])
        S, nx, ny = len(sim.species), lat.nx, lat.ny
        self.S = S
        self.axis = transform_axis(lat)
        # the transform's axis (n, spacing) and the rows' axis (the tridiagonal systems)
        (nt, ht), (nr, hr) = (((nx, lat.hx), (ny, lat.hy)) if self.axis == "x"
                              else ((ny, lat.hy), (nx, lat.hx)))
        self.nt, self.nr, self.hr = nt, nr, hr
        rows, Nt = S * nr, 2 * nt - 2
        self.order = cp.asarray(lat.order, dtype=cp.int64)
        n = sim.mesh.n_vertices
        c, A, Ahat = ARS[sim.params["integrator"]]
        self.table = (c, A, Ahat)
        ns = len(c)
        new = lambda: [cp.empty(n, dtype=real) for _ in range(S)]  # noqa: E731
        self.R = [new() for _ in range(ns - 1)]  # rates at stages 0 … ns − 2
        self.I = [new() for _ in range(ns)]  # implicit rates (the last one is scratch)
        self.Y = [None] + [new() for _ in range(ns - 2)]  # stages 1 … ns − 2
        self.rhs = new()
        cplx = np.complex128 if np.dtype(real) == np.float64 else np.complex64
        self.ext = cp.empty((rows, Nt), dtype=real)
        self.spec = cp.empty((rows, nt), dtype=cplx)
        double = np.dtype(real) == np.float64
        self.fwd = cufft.PlanNd([Nt], [Nt], 1, Nt, [nt], 1, nt,
                                cufft.CUFFT_D2Z if double else cufft.CUFFT_R2C, rows, "C", -1,
                                None)
        self.inv = cufft.PlanNd([Nt], [nt], 1, nt, [Nt], 1, Nt,
                                cufft.CUFFT_Z2D if double else cufft.CUFFT_C2R, rows, "C", -1,
                                None)
        self.direction = (cufft.CUFFT_FORWARD, cufft.CUFFT_INVERSE)
        lt = (2 - 2 * np.cos(np.pi * np.arange(nt) / (nt - 1))) / ht**2
        self.lam = cp.asarray(lt, dtype=real)
        self.threads = 256  # per two modes (kernels/lattice_imex.cu, LAT_REC_THREADS)
        self.smem = 2 * (2 * nr - 2) * np.dtype(real).itemsize  # two extensions
        if self.smem > 48 * 1024:
            self.k["lat_rec"].max_dynamic_shared_size_bytes = self.smem
        if self.axis == "x":
            self.pack, self.finish = self.k["lat_pack"], self.k["lat_finish"]
            self.tgrid, self.tblock = (-(-(nx * ny) // BLOCK), S), (BLOCK,)
        else:
            self.pack, self.finish = self.k["lat_pack_t"], self.k["lat_finish_t"]
            self.tgrid, self.tblock = (-(-nx // 32), -(-ny // 32), S), (32, 32)
        self.grid = (-(-(nx * ny) // BLOCK), S)
        self._tables = None
        self._coefs = None

    # ---- host-side set-up (before any capture: no copies to the device inside a graph) -----
    def coefs(self) -> tuple:
        """c_s of each species' implicit terms (constant: parameters only), cached per
        parameter values."""
        sim, imex = self.sim, self.fused.imex
        key = tuple(sorted((k, repr(v)) for k, v in sim.user_params.items()))
        if self._coefs is None or self._coefs[0] != key:
            env = imex.rates.env(dict(sim.state), 0.0)
            c = dict.fromkeys(sim.species, 0.0)
            for s, term in imex.implicit:
                c[s] += float(imex.rates.ev(term.coef, env))
            self._coefs = (key, tuple(c[s] for s in sim.species))
        return self._coefs[1]

    def tables(self):
        """The device tables of array pointers, per configuration of the state's arrays."""
        cp, sim = self.cp, self.sim
        U = [sim.state[s] for s in sim.species]
        key = tuple(int(u.data.ptr) for u in U)
        if self._tables is not None and self._tables[0] == key:
            return self._tables[1]
        ptr = lambda arrs: cp.asarray(np.array([int(a.data.ptr) for a in arrs],  # noqa: E731
                                               dtype=np.uint64))
        c, A, Ahat = self.table
        ns = len(c)
        stages = []
        for i in range(1, ns):
            terms = []  # (array set, coefficient factor of dt)
            for j in range(i):
                if Ahat[i][j]:
                    terms.append((self.R[j], Ahat[i][j]))
                g = (A[i][j] if j < len(A[i]) else 0.0) - Ahat[i][j]
                if g:
                    terms.append((self.I[j], g))
            assert len(terms) <= MAXT
            flat = []
            for s in range(self.S):
                row = [ts[s] for ts, _ in terms]
                row += [row[0] if row else U[s]] * (MAXT - len(row))
                flat += row
            out = U if i == ns - 1 else self.Y[i]
            stages.append((ptr(flat), [g for _, g in terms], ptr(out), ptr(self.I[i])))
        t = {"U": ptr(U), "rhs": ptr(self.rhs), "I0": ptr(self.I[0]), "stages": stages}
        self._tables = (key, t)
        return t

    def prepare(self):
        """Everything a step needs made on the host first (a graph's capture follows)."""
        self.coefs()
        self.tables()

    # ---- the step ------------------------------------------------------------------------
    def _rates(self, Y, R):
        from .fused import BLOCK as RATES_BLOCK
        f = self.fused
        args = []
        for s in range(self.S):
            args += [Y[s], R[s]]
        real = self.real
        f.k["eq_rates"](f.grid, (RATES_BLOCK,), tuple(args) + (f.P, real(0), real(0), f.lam) + f.geo)

    def step(self, t, dt_limit):
        sim, real, lat = self.sim, self.real, self.lat
        dt = sim.dt if dt_limit is None else min(sim.dt, dt_limit)
        coefs = self.coefs()
        tab = self.tables()
        c, A, Ahat = self.table
        nx, ny, S = np.int32(lat.nx), np.int32(lat.ny), np.int32(self.S)
        cs = [real(x) for x in coefs] + [real(0)] * (4 - self.S)
        U = [sim.state[s] for s in sim.species]
        k = self.k
        k["lat_lap"](self.grid, (BLOCK,), (self.order, nx, ny, tab["U"], tab["I0"],
                                           real(1 / lat.hx**2), real(1 / lat.hy**2), *cs))
        self._rates(U, self.R[0])
        ns = len(c)
        for i in range(1, ns):
            T, g, out, Iout = tab["stages"][i - 1]
            cf = [real(x * dt) for x in g] + [real(0)] * (MAXT - len(g))
            self.pack(self.tgrid, self.tblock, (self.order, nx, ny, S, tab["U"], T,
                                                np.int32(len(g)), *cf, tab["rhs"], self.ext))
            self.fwd.fft(self.ext, self.spec, self.direction[0])
            gdt = A[i][i] * dt
            deltas = [real(gdt * x) for x in coefs] + [real(0)] * (4 - self.S)
            k["lat_rec"](((self.nt + 1) // 2, self.S), (self.threads,), (
                self.spec, np.int32(self.nt), np.int32(self.nr), S, self.lam,
                real(1 / self.hr**2), *deltas, real(1.0 / (2 * self.nt - 2))),
                shared_mem=self.smem)
            self.inv.fft(self.spec, self.ext, self.direction[1])
            self.finish(self.tgrid, self.tblock, (self.order, nx, ny, S, self.ext, tab["rhs"],
                                                  out, Iout, real(1.0 / gdt)))
            if i < ns - 1:
                self._rates(self.Y[i], self.R[i])
        return dt
