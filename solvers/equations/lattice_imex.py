"""integrator=imex/imex1/imex3/imex443 of a model file on a lattice mesh, on the GPU
(docs/EQUATIONS.md, "IMEX"): imex.py's ARS step with every launch on the device and nothing on
the host between them, so that `fused.py` replays whole steps as CUDA graphs.

Where the explicit part is the reaction alone (`pointwise`: every term with an operator is
implicit), a step is, per implicit stage, a forward cuFFT, lat_rec, the inverse cuFFT and one
launch of the generated lat_stage (kernels/lattice_stage.cu: the stage finished, its reaction
E_i and implicit rate I_i stored, the next right-hand side U + Σ dt·(Â·E + A·I) packed into the
next extension; the last stage writes the state, adds ARS(3,4,3)'s explicit weights and packs
the next step's first stage): `point_plan`, `LatticeImex.run`. Otherwise (the rates kernel
path), a stage i of ARS (imex.py) is

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

from pathlib import Path

import numpy as np

from ..core.backend import load_kernels
from ..mesh.lattice import KERNELS as MESH_KERNELS
from ..mesh.lattice import MAX_WIDTH, LatticeTransform, transform_axis
from .imex import ARS, final_weights

CU = Path(__file__).resolve().parent / "kernels" / "lattice_imex.cu"
STAGE_CU = CU.parent / "lattice_stage.cu"
TILE_CUH = MESH_KERNELS / "lattice_tile.cuh"  # (included by lattice_stage.cu)
MAXT = 8
MAX_SPECIES = 4
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
    if len(ARS[sim.params["integrator"]]) > 3 and not pointwise(sim, imex):
        return "operators in the explicit part with a scheme whose last stage is not the state"
    lat = imex.lattice.lat
    if (lat.ny if transform_axis(lat) == "x" else lat.nx) > MAX_WIDTH:
        return f"the lattice is more than {MAX_WIDTH} nodes across in both directions"
    return None


def pointwise(sim, imex) -> bool:
    """Whether every term with an operator is implicit (then the explicit part E is the
    reaction, a function of the node's values: lat_stage evaluates it where it finishes a
    stage, and no rates kernel runs)."""
    implicit = set(imex.implicit)
    return all((s, t) in implicit for s in sim.species for t in sim.central_terms[s])


def point_source(sim) -> str:
    """kernels/equations.cu's helpers, the model's reaction at one node as
    lat_point<T>(P, x, y, z, s, k) and kernels/lattice_stage.cu."""
    from .codegen import Names, expr
    from .fused import MARKER, TEMPLATE
    d = sim.definition
    nm = Names(d.species, d.algebraic, d.parameters)
    body = ["const T r = sqrt(x * x + y * y); const T t = T(0);"]
    body += [f"const T p_{p} = P[{i}]; (void)p_{p};" for i, p in enumerate(d.parameters)]
    body += [f"const T s_{s} = sv[{k}]; (void)s_{s};" for k, s in enumerate(d.species)]
    body += [f"const T a_{a} = {expr(tree, nm)}; (void)a_{a};"
             for a, tree in d.algebraic.items()]
    body += ["(void)x; (void)y; (void)z; (void)r; (void)t;"]
    body += [f"k[{k}] = {expr(sim.splits[s].reaction, nm)};" for k, s in enumerate(d.species)]
    fn = ("template <typename T>\n__device__ __forceinline__ void lat_point("
          "const T* __restrict__ P, const T x, const T y, const T z, const T* sv, T* k)\n{\n    "
          + "\n    ".join(body) + "\n}\n\n#include \"lattice_stage.cu\"\n")
    return TEMPLATE.read_text().replace(MARKER, fn)


def compile_stage(sim):
    """lat_stage of `sim`'s model (cached like the model's other kernels)."""
    from .fused import TEMPLATE, cached_source
    # (the included kernel file's text in the key: a change there is a new module)
    path = cached_source(point_source(sim), "lattice", sim.dtype + STAGE_CU.read_text()
                         + TILE_CUH.read_text())
    return load_kernels(path, sim.dtype, ["lat_stage"],
                        include_dirs=(TEMPLATE.parent, MESH_KERNELS))


LAT_START, LAT_MID, LAT_LAST = 0, 1, 2  # lat_stage's modes (kernels/lattice_stage.cu)


def point_plan(table, dt: float) -> tuple[dict, list]:
    """The launches of lat_stage for steps of dt by the ARS scheme `table` (imex.ARS), as
    (start, [(A_ii·dt, launch) per implicit stage]): a launch is a dict of mode, the stage's
    outputs Eout (index of E) and Iout (index of I), the older terms [(kind "E" or "I", index,
    weight·dt)], cE and cI (the weights·dt of the stage's own E and I in the next right-hand
    side; at the last stage cE weighs E in the new state and cI is Â_10·dt of the next step's
    first stage), inv_gdt. Pure Python: the CPU tests run it on NumPy
    (tests/solvers/equations/test_lattice_imex.py, _emulate_point_plan)."""
    c, A, Ahat = table[:3]
    ns = len(c)
    assert all(A[i][0] == 0.0 for i in range(1, ns))  # ARS: no implicit part of stage 0
    first = Ahat[1][0] * dt
    start = {"mode": LAT_START, "Eout": 0, "Iout": None, "terms": [], "cE": 0.0, "cI": first,
             "inv_gdt": 0.0}
    stages = []
    for i in range(1, ns):
        gdt = A[i][i] * dt
        if i < ns - 1:
            terms = [("E", j, Ahat[i + 1][j] * dt) for j in range(i) if Ahat[i + 1][j]]
            terms += [("I", j, A[i + 1][j] * dt) for j in range(1, i) if A[i + 1][j]]
            launch = {"mode": LAT_MID, "Eout": i, "Iout": i, "terms": terms,
                      "cE": Ahat[i + 1][i] * dt, "cI": A[i + 1][i] * dt, "inv_gdt": 1.0 / gdt}
        else:  # s⁺ = Y + dt·Σ (b̂_j − Â_last,j)·E_j (none where the explicit part is stiffly
            # accurate), then the next step's first stage
            w = [x * dt for x in (final_weights(table) or [0.0] * ns)]
            launch = {"mode": LAT_LAST, "Eout": 0, "Iout": None,
                      "terms": [("E", j, w[j]) for j in range(i) if w[j]], "cE": w[i],
                      "cI": first, "inv_gdt": 0.0}
        assert len(launch["terms"]) <= MAXT
        stages.append((gdt, launch))
    return start, stages


class LatticeImex:
    def __init__(self, fused):
        import cupy as cp
        self.fused, self.sim, self.cp = fused, fused.sim, cp
        sim = self.sim
        real = sim.real
        self.real = real
        lat = fused.imex.lattice.lat
        self.lat = lat
        self.k = load_kernels(CU, sim.dtype, ["lat_pack", "lat_rec", "lat_finish", "lat_lap",
                                              "lat_pack_t", "lat_finish_t"],
                              include_dirs=(MESH_KERNELS,))
        S, nx, ny = len(sim.species), lat.nx, lat.ny
        self.S = S
        self.tr = LatticeTransform(lat, real, S, self.k["lat_rec"])
        self.axis, self.ext = self.tr.axis, self.tr.ext
        self.order = cp.asarray(lat.order, dtype=cp.int64)
        n = sim.mesh.n_vertices
        self.table_full = ARS[sim.params["integrator"]]
        c, A, Ahat = self.table = self.table_full[:3]
        ns = len(c)
        new = lambda: [cp.empty(n, dtype=real) for _ in range(S)]  # noqa: E731
        # the explicit part the reaction alone: lat_stage finishes a stage and packs the next
        self.point = pointwise(sim, fused.imex)
        if self.point:
            self.E = [new() for _ in range(ns)]  # explicit rates at stages 0 … ns − 1
            self.I = [None] + [new() for _ in range(ns - 2)]  # implicit, stages 1 … ns − 2
        else:
            self.R = [new() for _ in range(ns - 1)]  # rates at stages 0 … ns − 2
            self.I = [new() for _ in range(ns)]  # implicit rates (the last one is scratch)
            self.Y = [None] + [new() for _ in range(ns - 2)]  # stages 1 … ns − 2
        self.rhs = new()
        if self.axis == "x":
            self.pack, self.finish = self.k["lat_pack"], self.k["lat_finish"]
            self.tgrid, self.tblock = (-(-(nx * ny) // BLOCK), S), (BLOCK,)
        else:
            self.pack, self.finish = self.k["lat_pack_t"], self.k["lat_finish_t"]
            self.tgrid, self.tblock = (-(-nx // 32), -(-ny // 32), S), (32, 32)
        self.grid = (-(-(nx * ny) // BLOCK), S)
        self._tables = {}
        self._coefs = None
        if self.point:
            self.ks = compile_stage(sim)["lat_stage"]
            self.sgrid = (-(-nx // 32), -(-ny // 32))
            self._plan, self._ptr_tables = None, {}

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
        if key in self._tables:  # (kept: a captured graph holds their addresses)
            return self._tables[key]
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
        self._tables[key] = t
        return t

    def prepare(self, dt=None):
        """Everything a step needs made on the host first (a graph's capture follows)."""
        self.coefs()
        if self.point:
            self.launches(self.sim.dt if dt is None else dt)
        else:
            self.tables()

    def pointer_tables(self):
        """The device arrays of pointers that point_plan's launches read, per configuration of
        the state's arrays (which arrays a launch reads does not depend on dt). Kept for the
        object's life: a captured graph holds their addresses, and may replay after a step of
        another dt or a parameter's round trip."""
        cp, S = self.cp, self.S
        U = [self.sim.state[s] for s in self.sim.species]
        key = tuple(int(u.data.ptr) for u in U)
        if key in self._ptr_tables:
            return self._ptr_tables[key]
        ptr = lambda arrs: cp.asarray(np.array([int(a.data.ptr) for a in arrs],  # noqa: E731
                                               dtype=np.uint64))
        null = np.uint64(0)
        sets = {"E": self.E, "I": self.I}

        def tables(launch):
            terms = launch["terms"]
            flat = []
            for s in range(S):
                flat += [sets[k][j][s] for k, j, _ in terms] + [U[s]] * (MAXT - len(terms))
            E = null if launch["Eout"] is None else ptr(self.E[launch["Eout"]])
            I = null if launch["Iout"] is None else ptr(self.I[launch["Iout"]])
            return ptr(U), ptr(self.rhs), E, I, ptr(flat)

        start, stages = point_plan(self.table_full, 1.0)
        self._ptr_tables[key] = (tables(start), [tables(la) for _, la in stages])
        return self._ptr_tables[key]

    def launches(self, dt: float):
        """point_plan's launches of lat_stage: their pointer tables and scalars, per (state
        arrays, dt, implicit coefficients)."""
        real, S = self.real, self.S
        coefs = self.coefs()
        tabs = self.pointer_tables()
        key = (id(tabs), float(dt), coefs)
        if self._plan is not None and self._plan[0] == key:
            return self._plan[1]

        def args(launch, tables):
            terms = launch["terms"]
            cf = [real(w) for _, _, w in terms] + [real(0)] * (MAXT - len(terms))
            return (np.int32(launch["mode"]), *tables, np.int32(len(terms)), *cf,
                    real(launch["cE"]), real(launch["cI"]), real(launch["inv_gdt"]))

        start, stages = point_plan(self.table_full, dt)
        plan = (args(start, tabs[0]),
                [([real(gdt * x) for x in coefs] + [real(0)] * (4 - S), args(la, t))
                 for (gdt, la), t in zip(stages, tabs[1])])
        self._plan = (key, plan)
        return plan

    def run(self, n: int, dt: float):
        """n steps of dt (the point path): lat_stage packs the first stage, then per step and
        implicit stage a forward cuFFT, lat_rec, the inverse and lat_stage (which, after the
        last stage of a step that another follows, packs that step's first stage)."""
        start, stages = self.launches(dt)
        f, lat = self.fused, self.lat
        X, Yc, Z = f.geo[6], f.geo[7], f.geo[8]
        head = (self.order, np.int32(lat.nx), np.int32(lat.ny), np.int32(self.S),
                np.int32(self.axis == "y"))
        null = np.uint64(0)

        def stage(a, ext_in, ext_out):
            mode, U, rhs, E, I, T, nt, *rest = a
            self.ks(self.sgrid, (32, 8), head + (mode, ext_in, ext_out, U, rhs, E, I, T,
                                                 nt, *rest, f.P, X, Yc, Z))

        stage(start, null, self.ext)
        for step in range(n):
            for k, (deltas, a) in enumerate(stages):
                self.solve(deltas)
                more = k < len(stages) - 1 or step < n - 1
                stage(a, self.ext, self.ext if more else null)

    def solve(self, deltas):
        """The extension's rows → the stage's solution there ((I − δ_s·L) x = b per species)."""
        self.tr.solve(self.k["lat_rec"], deltas)

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
        if self.point:
            self.run(1, dt)
            return dt
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
            gdt = A[i][i] * dt
            self.solve([real(gdt * x) for x in coefs] + [real(0)] * (4 - self.S))
            self.finish(self.tgrid, self.tblock, (self.order, nx, ny, S, self.ext, tab["rhs"],
                                                  out, Iout, real(1.0 / gdt)))
            if i < ns - 1:
                self._rates(self.Y[i], self.R[i])
        return dt
