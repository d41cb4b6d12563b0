"""The fused CUDA scheme of model files (docs/EQUATIONS.md): kernels generated from the model's
trees (codegen.py) into kernels/equations.cu's marker, compiled by core/backend.py's
`load_kernels` once per (source, dtype) — the generated file is named by the SHA-256 of its text,
so the same tree and dtype reuse the compiled module.

Explicit integrators: one `eq_stage` launch per stage (the stage form of reference.py), the
stages ping-ponging between two buffer sets; the state is rebound to the last one. Models with a
positive edge flux on a mesh launch `eq_rates` per stage (rates and the loss-rate maximum, one
device-to-host read per step for the adaptive step) and combine on the device as reference.py
does. integrator=imex: the rates from `eq_rates` without the implicit terms, then the solves of
imex.py on the device (cupyx FFT/DCT or CG); on a lattice mesh the whole step on the device
(lattice_imex.py), replayed as CUDA graphs.

The tables on meshes are the CSR one-ring of the mesh (int32): per directed entry the
Laplacian's weight L_ij = w_ij/(2A_i) (`lw`) and the half cotangent weight h_ij (`hw`).
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from ..core.device_clock import GraphCache, run_fixed_steps
from ..core.scheme import SchemeBase
from .codegen import Generator, tile_buffers
from .reference import IMEX, TABLEAUS, THETA, combine_stage

TEMPLATE = Path(__file__).resolve().parent / "kernels" / "equations.cu"
MARKER = "// @GENERATED@"
BLOCK = 256
GRAPH_STEPS = 64  # steps of one CUDA graph (even: the buffer sets come back to their roles)
# The tiled path (codegen.py's eq_tile): several whole steps of a grid model per launch, in
# shared memory. A block's tile is TILE_2D² nodes on rectangles, TILE_1D on intervals, with a halo
# of TILE_HALO stages (steps per launch = TILE_HALO // stages, a power of two dividing
# GRAPH_STEPS). PDESTUDIO_EQ_TILE="tile,halo[,threads]" overrides the choice (the benchmark's
# search; threads a multiple of 32), "0" turns the path off.
TILE_2D, TILE_1D, TILE_HALO, TILE_BLOCK = 16, 256, 8, 256
TILE_SHARED_MAX = 160 * 1024  # bytes of shared memory a block may ask for
# Above TILE_MAX_NODES a step is no longer launch-bound and the tiles' redundant halo work costs
# more than the launches it saves; above TILE_BIG_NODES rectangles take tiles of TILE_2D_BIG²
# with TILE_BLOCK_BIG threads (H200, Brusselator float64, steps/s untiled → tiled: 256²
# 4.06e5 → 5.07e5 (16²); 512² 2.61e5 → 2.23e5 (16²), 2.93e5 (32²); 1024² 9.3e4 → 6.6e4 (16²),
# 8.5e4 (32²); an interval of 2^18 3.1e5 → 5.2e5; docs/BENCHMARKS.md)
TILE_MAX_NODES, TILE_BIG_NODES, TILE_2D_BIG, TILE_BLOCK_BIG = 1 << 18, 1 << 17, 32, 512


class TilePlan:
    """How eq_tile runs a model (tile_plan)."""

    def __init__(self, tile, steps, nstage, two, shared, threads=TILE_BLOCK):
        self.tile, self.steps, self.nstage, self.threads = tile, steps, nstage, threads
        self.halo = steps * nstage
        self.two, self.shared = two, shared

    def grid(self, nx, ny):
        gx = (nx + self.tile - 1) // self.tile
        return (gx, (ny + self.tile - 1) // self.tile) if self.two else (gx,)


def tile_plan(sim) -> TilePlan | None:
    """The tiled path's plan for `sim`, or None where it does not apply: meshes, positive
    fluxes (adaptive step), IMEX, models that read t, grids smaller than a tile and its halo or
    larger than TILE_MAX_NODES (unless PDESTUDIO_EQ_TILE asks)."""
    if (sim.params["kind"] == "mesh" or sim.transports or sim.params["integrator"] in IMEX
            or not time_free(sim)):
        return None
    two = len(sim.shape) == 2
    tile, halo, threads = (TILE_2D if two else TILE_1D), TILE_HALO, TILE_BLOCK
    env = os.environ.get("PDESTUDIO_EQ_TILE", "").strip()
    if env:
        if env == "0":
            return None
        try:
            v = [int(x) for x in env.split(",")]
            tile, halo = v[0], v[1]
            threads = v[2] if len(v) > 2 else threads
        except (ValueError, IndexError):
            return None
        if threads < 32 or threads % 32 or threads > 1024:
            return None
    stages = TABLEAUS[sim.params["integrator"]]
    nstage = len(stages)
    steps = 1
    while 2 * steps * nstage <= halo and GRAPH_STEPS % (2 * steps) == 0:
        steps *= 2
    if steps * nstage > halo or tile < 1:
        return None
    h = steps * nstage
    nx, ny = sim.shape[-1], (sim.shape[0] if two else 1)
    if not env:
        if nx * ny > TILE_MAX_NODES:
            return None
        if two and nx * ny > TILE_BIG_NODES:
            tile, threads = TILE_2D_BIG, TILE_BLOCK_BIG
    if nx < tile + h or (two and ny < tile + h):
        return None
    nbuf, has_acc = tile_buffers(sim.params["integrator"])
    tx = tile + 2 * h
    shared = (len(sim.species) * (nbuf + has_acc) * tx * (tx if two else 1)
              * np.dtype(sim.dtype).itemsize)
    if shared > TILE_SHARED_MAX:
        return None
    return TilePlan(tile, steps, nstage, two, shared, threads)


def kernel_source(sim, batched: bool = False, tiled: bool = False) -> str:
    """kernels/equations.cu with the model's generated part in place of the marker (with
    `batched`, the ensembles' eq_stage_batch too: a module of its own, the solo one unchanged;
    with `tiled`, eq_tile)."""
    return TEMPLATE.read_text().replace(MARKER, Generator(sim).source(batched, tiled))


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pdestudio" / "equations"


def cached_source(src: str, prefix: str, key: str) -> Path:
    """`src` written once to the cache folder as PREFIX_<hash of src and key>.cu (atomically:
    concurrent processes write the same text)."""
    digest = hashlib.sha256((src + key).encode()).hexdigest()[:24]
    folder = _cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{prefix}_{digest}.cu"
    if not path.exists():
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(src)
        os.replace(tmp, path)
    return path


def compile_kernels(sim, batched: bool = False, tiled: bool = False) -> dict:
    """{"eq_stage", "eq_rates"} RawKernels of `sim`'s model in its dtype (cached); with
    `batched`, "eq_stage_batch" too; with `tiled`, "eq_tile"."""
    from ..core.backend import load_kernels
    path = cached_source(kernel_source(sim, batched, tiled), "model", sim.dtype)
    names = (["eq_stage", "eq_rates"] + (["eq_stage_batch"] if batched else [])
             + (["eq_tile"] if tiled else []))
    return load_kernels(path, sim.dtype, names, include_dirs=(TEMPLATE.parent,))


def mesh_tables(mesh):
    """(indptr, nbr, lw, hw) of the mesh's one-ring in CSR order (float64, int32)."""
    from ..mesh.operators import cotan_laplacian
    n = mesh.n_vertices
    indptr, nbr = (np.asarray(a) for a in mesh.vertex_vertex)
    rows = np.repeat(np.arange(n), np.diff(indptr))
    keys = rows.astype(np.int64) * n + nbr
    L = cotan_laplacian(mesh).tocoo()
    off = L.row != L.col
    lw = np.zeros(len(keys))
    lw[np.searchsorted(keys, L.row[off].astype(np.int64) * n + L.col[off])] = L.data[off]
    e = mesh.edges
    h = 0.5 * np.asarray(mesh.cotangent_weights)
    hw = np.zeros(len(keys))
    hw[np.searchsorted(keys, e[:, 0].astype(np.int64) * n + e[:, 1])] = h
    hw[np.searchsorted(keys, e[:, 1].astype(np.int64) * n + e[:, 0])] = h
    return indptr.astype(np.int32), nbr.astype(np.int32), lw, hw


def device_geometry(sim, cp) -> tuple[tuple, int]:
    """(the kernels' geometry arguments, node count) of `sim` on backend `cp`: the mesh's
    tables, areas, coordinates and pinned flags, or the grid's (nx, ny, hx, hy)."""
    real = sim.real
    if sim.params["kind"] == "mesh":
        indptr, nbr, lw, hw = mesh_tables(sim.mesh)
        pinned = np.zeros(sim.mesh.n_vertices, np.uint8)
        if any(sim.sides[s]["all"].kind == "dirichlet" for s in sim.species):
            pinned[np.asarray(sim.mesh.boundary_vertices)] = 1
        c = sim.coords
        geo = (np.int32(sim.mesh.n_vertices), cp.asarray(indptr), cp.asarray(nbr),
               cp.asarray(lw, dtype=real), cp.asarray(hw, dtype=real),
               cp.asarray(sim.mesh.mixed_areas, dtype=real),
               cp.asarray(c["x"], dtype=real), cp.asarray(c["y"], dtype=real),
               cp.asarray(c["z"], dtype=real), cp.asarray(pinned))
        return geo, int(sim.mesh.n_vertices)
    shape = sim.shape
    nx, ny = shape[-1], (shape[0] if len(shape) == 2 else 1)
    hx = sim.spacing[0]
    hy = sim.spacing[1] if len(sim.spacing) > 1 else 1.0
    return (np.int32(nx), np.int32(ny), real(hx), real(hy)), nx * ny


class FusedEquations(SchemeBase):
    """The fused scheme (module docstring) on CuPy."""

    def __init__(self, sim, xp=None, kernels=None):
        """`xp` and `kernels` default to CuPy and the compiled module; the CPU harness of the
        tests passes NumPy and the same source compiled by g++ (threads in any order)."""
        super().__init__(sim)
        if xp is None:
            import cupy as xp
        self.cp = cp = xp
        # batched runs replay CUDA graphs of GRAPH_STEPS fixed steps (`run`) where a step's
        # launches are the same every step: explicit stages without a positive flux (no
        # adaptive step) and a generated source that never reads the time (the graph holds the
        # launch arguments of its capture; the parameters are read from P on the device, so a
        # live change needs no new graph). On grids the graphs hold eq_tile launches of several
        # steps each (tile_plan), where the model allows.
        self.graphs = (kernels is None and not sim.transports
                       and sim.params["integrator"] not in IMEX and time_free(sim))
        self.tiles = None
        if self.graphs or (kernels is not None and "eq_tile" in kernels):
            self.tiles = tile_plan(sim)
        self.tile_failed = None
        if kernels is not None:
            self.k = kernels
        elif self.tiles is not None:
            try:
                self.k = compile_kernels(sim, tiled=True)
                if self.tiles.shared > 48 * 1024:
                    self.k["eq_tile"].max_dynamic_shared_size_bytes = self.tiles.shared
            except Exception as e:  # noqa: BLE001  (the stage kernels alone, step by step)
                self.tile_failed, self.tiles = f"{type(e).__name__}: {e}", None
                self.k = compile_kernels(sim)
        else:
            self.k = compile_kernels(sim)
        real = sim.real
        self.P = cp.asarray([sim.user_params[p] for p in sim.definition.parameters] or [0.0],
                            dtype=real)
        self.geo, self.n = device_geometry(sim, cp)
        self.grid = ((self.n + BLOCK - 1) // BLOCK,)
        self.buffers = [{s: cp.empty_like(sim.state[s]) for s in sim.species} for _ in range(2)]
        self.acc = {s: cp.empty_like(sim.state[s]) for s in sim.species}
        self.lam = cp.zeros(1, dtype=real)
        self.imex = None
        self.lattice_imex, self.lattice_why = None, "explicit"
        if self.graphs:
            sim.check_interval = 4 * GRAPH_STEPS
            self.run = self._run_graphs
        if sim.params["integrator"] in IMEX:
            from .imex import ImexReference
            self.imex = ImexReference(sim)
            self.imex.rates = FusedImexRates(self, self.imex.rates)
            # a lattice mesh: the whole step on the device, replayed as CUDA graphs
            from .lattice_imex import LatticeImex, why_not
            self.lattice_why = why_not(self)
            if self.lattice_why is None:
                self.lattice_imex = LatticeImex(self)
                self.graphs = True
                sim.check_interval = 4 * GRAPH_STEPS
                self.run = self._run_graphs

    def invalidate(self):
        self.P[...] = self.cp.asarray([self.sim.user_params[p] for p in
                                       self.sim.definition.parameters] or [0.0],
                                      dtype=self.sim.real)

    def rates(self, Y, t):
        """({species: rate}, λ max or None) on the device."""
        cp, sim = self.cp, self.sim
        R = {s: cp.empty_like(Y[s]) for s in sim.species}
        args = []
        for s in sim.species:
            args += [Y[s], R[s]]
        self.lam.fill(0)
        self.k["eq_rates"](self.grid, (BLOCK,), tuple(args) + (
            self.P, sim.real(t), sim.real(t), self.lam) + self.geo)
        return R, (float(self.lam[0]) if sim.transports else None)

    def step(self, t, dt_limit):
        sim = self.sim
        if self.imex is not None:
            return self._imex_step(t, dt_limit)
        dt = sim.dt if dt_limit is None else min(sim.dt, dt_limit)
        stages = TABLEAUS[sim.params["integrator"]]
        U = dict(sim.state)
        Y = U
        if sim.transports:
            return self._combined_step(t, dt, stages, U)
        real = sim.real
        for i, (c, a0, a1, a2, a3, b) in enumerate(stages):
            out = self.buffers[0] if Y is not self.buffers[0] else self.buffers[1]
            t_out = t + (stages[i + 1][0] if i + 1 < len(stages) else 1.0) * dt
            args = []
            for s in sim.species:
                args += [Y[s], U[s], out[s], self.acc[s]]
            self.k["eq_stage"](self.grid, (BLOCK,), tuple(args) + (
                self.P, real(t + c * dt), real(t_out), real(a0), real(a1), real(a2 * dt),
                real(a3), real(b * dt), np.int32(i == 0)) + self.geo)
            Y = out
        self._install(Y, U)
        return dt

    def _run_graphs(self, count, t, t_end):
        """`run` where graphs replay (see __init__; the other schemes have no `run`, and the
        simulation steps them one by one): up to `count` fixed steps from t without passing
        t_end, groups of GRAPH_STEPS whole steps replayed as CUDA graphs (core's GraphCache),
        the rest and the shortened last step launched one by one (core/clock.py), exactly as
        step-by-step stepping."""
        dt = self.sim.dt
        return run_fixed_steps(self.cp, count, t, t_end, dt, lambda d: self.step(t, d),
                               lambda: self._graph(dt), GRAPH_STEPS)

    _graphs = None

    def _graph(self, dt: float):
        """The CUDA graph of GRAPH_STEPS steps of dt from the current buffers (None where
        capture failed: the caller launches the steps)."""
        if self._graphs is None:
            self._graphs = GraphCache(self.cp, GRAPH_STEPS)
        if self.tiles is not None:
            self.stage_scalars(dt)
        sim = self.sim
        ptrs = lambda d: tuple(int(d[s].data.ptr) for s in sim.species)  # noqa: E731
        key = (ptrs(sim.state), ptrs(self.buffers[0]), ptrs(self.buffers[1]), float(dt))
        lattice = self.lattice_imex
        if lattice is not None:  # (its tables and coefficients made before capture)
            lattice.prepare(dt)
            key += (lattice.coefs(),)
        saved = (dict(sim.state), [dict(b) for b in self.buffers])

        def queue(n):
            if lattice is not None and lattice.point:  # (steps that pack the next one's start)
                lattice.run(n, dt)
                return
            if self.tiles is not None:  # (tile_plan: steps divides GRAPH_STEPS = n)
                for _ in range(n // self.tiles.steps):
                    self.tile_steps(dt)
                return
            for _ in range(n):
                self.step(0.0, None)

        def restore():
            sim.state.update(saved[0])
            self.buffers[:] = saved[1]

        return self._graphs.get(key, queue, restore)

    _cs = None

    def stage_scalars(self, dt: float):
        """eq_tile's stage scalars (a2·dt, b·dt) for dt on the device (made before a graph's
        capture, which allows no host-to-device copies; the other constants are in the code)."""
        if self._cs is None or self._cs[0] != dt:
            real, cs = self.sim.real, []
            for (c, a0, a1, a2, a3, b) in TABLEAUS[self.sim.params["integrator"]]:
                cs += [real(a2 * dt), real(b * dt)]
            self._cs = (dt, self.cp.asarray(np.array(cs, dtype=real)))
        return self._cs[1]

    def tile_steps(self, dt: float) -> None:
        """self.tiles.steps steps of dt in one eq_tile launch (the same arithmetic as as many
        `step` calls; t is not passed: the tiled models never read it)."""
        sim, plan = self.sim, self.tiles
        real = sim.real
        cs = self.stage_scalars(dt)
        U = dict(sim.state)
        out = self.buffers[0]
        args = []
        for s in sim.species:
            args += [U[s], out[s]]
        nx, ny, hx, hy = self.geo
        # (the CPU builds: a block is one thread)
        block = (1,) if self.cp is np else ((32, plan.threads // 32) if plan.two
                                            else (plan.threads,))
        kw = {"shared_mem": plan.shared} if self.cp is not np else {}
        self.k["eq_tile"](plan.grid(int(nx), int(ny)), block, tuple(args) + (
            self.P, cs, np.int32(plan.steps), real(0), real(0), np.int32(plan.tile),
            np.int32(plan.halo), nx, ny, hx, hy), **kw)
        self._install(out, U)

    def _install(self, Y, U):
        sim = self.sim
        for s in sim.species:
            sim.state[s] = Y[s]
        # the old state's arrays become a free buffer set
        if Y is self.buffers[0]:
            self.buffers[0] = dict(U)
        elif Y is self.buffers[1]:
            self.buffers[1] = dict(U)

    def _combined_step(self, t, dt, stages, U):
        """Rates kernel + device combination (positive-flux models; reference.py's order)."""
        sim = self.sim
        Y, acc = U, None
        for i, (c, a0, a1, a2, a3, b) in enumerate(stages):
            k, lam = self.rates(Y, t + c * dt)
            if i == 0 and lam is not None:
                if not lam >= 0 or lam == float("inf"):
                    return float("nan")
                if lam > 0:
                    dt = min(dt, THETA / lam)
            nxt, acc = combine_stage(sim, U, Y, k, acc, (a0, a1, a2, a3, b), dt)
            # every stage's Dirichlet nodes at the stage's time, as reference.py pins them
            self.pinner.pin(nxt, t + (stages[i + 1][0] if i + 1 < len(stages) else 1.0) * dt)
            Y = nxt
        for s in sim.species:
            sim.state[s] = Y[s]
        return dt

    @property
    def pinner(self):
        """reference.py's Dirichlet pins on the device (positive-flux models)."""
        if not hasattr(self, "_pin_ref"):
            from .reference import ExplicitReference
            self._pin_ref = ExplicitReference(self.sim)
        return self._pin_ref

    def _imex_step(self, t, dt_limit):
        if self.lattice_imex is not None:
            return self.lattice_imex.step(t, dt_limit)
        return self.imex.step(t, dt_limit)


class FusedImexRates:
    """The explicit rates of imex.py from the generated kernel: every term, minus the implicit
    c·lap(s) terms computed on the device's sparse/stencil operators."""

    def __init__(self, fused: FusedEquations, rates):
        self.fused, self.base = fused, rates

    def __getattr__(self, name):
        return getattr(self.base, name)

    def __call__(self, Y, t, implicit=()):
        k, lam = self.fused.rates(Y, t)
        if implicit:
            env = self.base.env(Y, t)
            ops = self.fused.imex.ops
            for s, term in implicit:
                c = self.base.ev(term.coef, env)
                k[s] = k[s] - c * ops.lap(Y[s], s, env, self.base.ev)
        return k, lam


def time_free(sim) -> bool:
    """Whether no expression of the model (equations, algebraic species, boundary values) reads
    the time t: then a step's launches do not depend on t, and CUDA graphs of steps replay from
    any t."""
    def reads_t(node) -> bool:
        if isinstance(node, tuple):
            return node == ("var", "t") or any(reads_t(c) for c in node)
        return False

    d = sim.definition
    trees = list(d.equations.values()) + list(d.algebraic.values())
    trees += [side.value for s in sim.species for side in sim.sides[s].values()]
    return not any(reads_t(tree) for tree in trees)


def fused_scheme(sim):
    return FusedEquations(sim)
