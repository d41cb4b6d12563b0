"""The fused CUDA scheme of the surface reaction–diffusion models: one kernel launch per explicit
Euler step (kernels/chemotaxis.cu), double-buffered (a step writes the other pair of state
arrays and rebinds `sim.state`; the arrays it read are the next step's output).

    FusedChemotaxis   rd_step_vec: the Laplacian and vertex-gradient coefficients of the one-ring
                      stencil (reference.SurfaceOperators.stencil) in column-major tables padded
                      to a warp, the 4 coefficients of a slot interleaved and read as one vector
                      (the fastest rung of the optimisation ladder at 1M vertices,
                      benchmarks/surface_rd/ladder.py)
    FusedGrayScott    gs_step_padded: the same padded tables, Laplacian coefficients only
    FusedPositiveChemotaxis  scheme=positive (kernels/positive.cu): cx_rates (Scharfetter–Gummel
                      edge fluxes on the same padded one-ring layout with the half cotangent
                      weights, the rates, the block-then-atomic maximum of the loss rate λ) and
                      cx_update (the adaptive step on the device, the clock, the update in place):
                      two launches per step, state updated in place, no double buffer

`FusedEuler` is their base: it compiles the kernel file, keeps the buffers and the model's kernel
arguments, and implements the scheme protocol (core/scheme.py) including the batched `run`;
a subclass builds its device tables in `prepare` and launches its kernel in `launch`. `block`
(threads per block) is a constructor argument.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..core.device_clock import DeviceClock, GraphCache, run_fixed_steps
from ..core.backend import load_kernels
from ..core.errors import NonFiniteStep
from ..core.scheme import SchemeBase
from ..mesh.triangles import padded
from .reference import THETA

CU_FILE = Path(__file__).parent / "kernels" / "chemotaxis.cu"
POSITIVE_CU = Path(__file__).parent / "kernels" / "positive.cu"
KERNELS = ("rd_step_vec", "gs_step_padded", "rd_step_batch", "gs_step_batch")  # one compilation per real type
BLOCK = 256
GRAPH_STEPS = 64  # fixed steps of one CUDA graph (even: the double buffer comes back)
# steps between two finiteness checks (Simulation.check_interval; the base class's 64 is one graph):
# a step is a few µs on a small mesh, and the host's work between two chunks (the snapshot, the
# check's reductions and sync, the next launch) cost as much as the steps. H200, steps/s with 64 /
# 256 / 1024: gray-scott 20k vertices 164-181k / 276-279k / 319-340k, 1M 39-42k / 45k / 46k
# (docs/BENCHMARKS.md, "Longer batches on small grids")
CHECK_MESH = 2**21  # vertices
CHECK_SMALL, CHECK_LARGE = 1024, 256  # steps between checks up to CHECK_MESH vertices, above


class FusedEuler(SchemeBase):
    """Explicit Euler with the fixed δt `sim.dt`, one launch of a fused kernel per step, on the
    renumbered mesh `sim.imesh` and its operators `sim.ops`."""

    cu_file: Path = CU_FILE
    kernel_names: tuple[str, ...] = KERNELS
    include_dirs: tuple[Path, ...] = ()

    def __init__(self, sim, block: int = BLOCK):
        import cupy as cp
        super().__init__(sim)
        self.cp, self.block = cp, block
        self.real = sim.real
        self.n = sim.imesh.n_vertices
        self.k = load_kernels(self.cu_file, sim.dtype, list(self.kernel_names),
                              include_dirs=self.include_dirs)
        self.prepare()
        self.args = self.model_args()
        self._out = None
        self.graphs = True
        sim.check_interval = CHECK_SMALL if self.n <= CHECK_MESH else CHECK_LARGE

    # ---- subclass hooks -----------------------------------------------------------------
    def prepare(self) -> None:
        """Upload the device tables the kernel reads."""
        raise NotImplementedError

    def model_args(self) -> tuple:
        """The model parameters the kernel takes, in the real type."""
        raise NotImplementedError

    def launch(self, u, v, u_out, v_out, dt) -> None:
        raise NotImplementedError

    # ---- tables -------------------------------------------------------------------------
    def dev(self, a, dtype):
        return self.cp.asarray(np.ascontiguousarray(a, dtype=dtype))

    def grid(self, n: int) -> tuple[int]:
        return ((n + self.block - 1) // self.block,)

    def padded_ring(self):
        """The one-ring stencil with its neighbours in a column-major table padded to a warp:
        sets deg, nbr (K slots × P vertices), K and P; returns the stencil."""
        st = self.sim.ops.stencil
        self.deg = self.dev(np.diff(st.indptr), np.int32)
        nbr = padded(st.indptr, st.nbr, fill=0, dtype=np.int32)
        self.K, self.P = nbr.shape
        self.nbr = self.dev(nbr, np.int32)
        return st

    def shared_tables(self, build) -> None:
        """Set the attributes `build()` returns (a dict of read-only device tables), built once
        per simulation, class and real type: a scheme made again for the same mesh (an
        ensemble's member() installs a fresh one for each member) reuses them."""
        cache = self.sim.__dict__.setdefault("_fused_tables", {})
        key = (type(self).__name__, np.dtype(self.real).str)
        if key not in cache:
            cache[key] = build()
        self.__dict__.update(cache[key])

    @staticmethod
    def coefficient_planes(st) -> list[np.ndarray]:
        """The padded (K, P) planes of the Laplacian and the three gradient coefficients."""
        return [padded(st.indptr, st.lap, fill=0.0)] + \
               [padded(st.indptr, st.grad[:, d], fill=0.0) for d in range(3)]

    # ---- the scheme protocol ------------------------------------------------------------
    def step(self, t, dt_limit):
        dt = self.sim.dt if dt_limit is None else min(self.sim.dt, dt_limit)
        self.advance(dt)
        return dt

    def run(self, count, t, t_end):
        """Up to `count` steps from t without passing t_end: the whole steps first (groups of
        GRAPH_STEPS replayed as CUDA graphs, core's GraphCache), then the shortened one that
        lands (core/clock.py), exactly as step-by-step stepping."""
        dt = self.sim.dt

        def prepare():
            if self._out is None or self._out[0] is self.sim.state[self.sim.species[0]]:
                self.advance(dt)  # (the output buffers exist before a capture)
                return 1
            return 0
        return run_fixed_steps(getattr(self, "cp", None), count, t, t_end, dt, self.advance,
                               (lambda: self._graph(dt)) if self.graphs else (lambda: None),
                               GRAPH_STEPS, prepare if self.graphs else None)

    _graphs = None
    graphs = False  # (set by __init__: a scheme built on the device replays graphs)

    def _graph(self, dt: float):
        """A CUDA graph of GRAPH_STEPS steps of dt on the current buffers (an even number of
        steps: the double buffer comes back to its roles)."""
        if self._graphs is None:
            self._graphs = GraphCache(self.cp, GRAPH_STEPS)
        state, (a, b) = self.sim.state, self.sim.species
        key = (int(state[a].data.ptr), int(state[b].data.ptr), int(self._out[0].data.ptr),
               int(self._out[1].data.ptr), float(dt), self.args)
        saved = (state[a], state[b], self._out)

        def queue(n):
            for _ in range(n):
                self.advance(dt)

        def restore():
            state[a], state[b], self._out = saved

        return self._graphs.get(key, queue, restore)

    def invalidate(self):
        self.args = self.model_args()  # (graphs are keyed by the arguments they were made with)

    def advance(self, dt: float, steps: int = 1) -> None:
        """One explicit Euler step of dt into the other buffers (`steps` > 1: a scheme whose
        launch takes several); rebinds sim.state."""
        state = self.sim.state
        a, b = self.sim.species
        u, v = state[a], state[b]
        if self._out is None or self._out[0] is u or self._out[0].shape != u.shape:
            self._out = (self.cp.empty_like(u), self.cp.empty_like(v))
        uo, vo = self._out
        if steps == 1:
            self.launch(u, v, uo, vo, self.real(dt))
        else:
            self.launch(u, v, uo, vo, self.real(dt), steps)
        self._out = (u, v)
        state[a], state[b] = uo, vo


class FusedChemotaxis(FusedEuler):
    def prepare(self):
        def build():
            st = self.padded_ring()
            return {"deg": self.deg, "nbr": self.nbr, "K": self.K, "P": self.P,  # K,P,4 below
                    "coef": self.dev(np.stack(self.coefficient_planes(st), axis=-1), self.real)}
        self.shared_tables(build)

    batch_kernel = "rd_step_batch"

    @staticmethod
    def args_of(p, r) -> tuple:
        return (r(p["D"]), r(p["alpha"]), r(p["s"] * p["r"]), r(p["N"]), r(p["s"]))

    def model_args(self):
        return self.args_of(self.sim.params, self.real)

    def launch(self, u, v, uo, vo, dt):
        self.k["rd_step_vec"](self.grid(self.n), (self.block,),
                              (u, v, uo, vo, self.deg, self.nbr, self.coef, np.int32(self.n),
                               np.int32(self.P), *self.args, dt))


class FusedGrayScott(FusedEuler):
    """gs_step_padded on any mesh; on a lattice mesh (lattice_gs.py, `lattice_why` None) the
    cluster kernel of kernels/gs_lattice.cu instead, which runs a `run`'s whole steps in one
    launch."""

    def prepare(self):
        from . import lattice_gs
        self.lattice = lattice_gs.tables(self.sim)
        self.lattice_why = self.lattice["why"]
        if self.lattice_why is None:
            self._dev_args: dict = {}
            return

        def build():
            st = self.padded_ring()
            return {"deg": self.deg, "nbr": self.nbr, "K": self.K, "P": self.P,
                    "coef": self.dev(padded(st.indptr, st.lap, fill=0.0), self.real)}
        self.shared_tables(build)

    batch_kernel = "gs_step_batch"

    def batched(self, params):
        """The ensemble launcher (batched_kernel)."""
        if self.lattice_why is None:
            from .lattice_gs import BatchedLattice
            return BatchedLattice(self, params)
        return BatchedEuler(self, params)

    def run(self, count, t, t_end):
        if self.lattice_why is not None:
            return super().run(count, t, t_end)
        # the whole steps in one launch, then the shortened one that lands
        return run_fixed_steps(self.cp, count, t, t_end, self.sim.dt, self.advance,
                               lambda: None, GRAPH_STEPS, many=self.advance)

    def _lattice_launch(self, u, v, uo, vo, dt, steps):
        from .lattice_gs import launch
        key = (float(dt), self.args)
        got = self._dev_args.get(key)
        if got is None:
            if len(self._dev_args) > 8:
                self._dev_args = {}
            got = self._dev_args[key] = (self.cp.asarray(np.array([self.args], self.real)),
                                         self.cp.asarray(np.array([dt], self.real)))
        launch(self.lattice, u, v, uo, vo, 1, got[0], got[1], steps)

    @staticmethod
    def args_of(p, r) -> tuple:
        return (r(p["Du"]), r(p["Dv"]), r(p["F"]), r(p["k"]))

    def model_args(self):
        return self.args_of(self.sim.params, self.real)

    def launch(self, u, v, uo, vo, dt, steps=1):
        if self.lattice_why is None:
            return self._lattice_launch(u, v, uo, vo, dt, steps)
        self.k["gs_step_padded"](self.grid(self.n), (self.block,),
                                 (u, v, uo, vo, self.deg, self.nbr, self.coef, np.int32(self.n),
                                  np.int32(self.P), *self.args, dt))


class BatchedEuler:
    """One launch per step for an ensemble's members (ensemble.py): the solo scheme's device
    tables, the members' parameters as an (E, q) device array, double-buffered (E, n) state."""

    GRAPH = 32  # launches of one CUDA graph (even: the double buffer comes back to its roles)

    def __init__(self, scheme, params):
        self.s = scheme
        real = scheme.real
        table = np.array([[float(a) for a in scheme.args_of(p, real)] for p in params])
        self.par = scheme.cp.asarray(table.astype(real))
        self.E = len(params)
        self._out = None
        self._rows: dict = {}  # the members' step sizes on the device, by value (stable pointers)
        self._graphs = None

    def launch_many(self, state, row: np.ndarray, count: int) -> None:
        """`count` steps of the same step sizes `row` (host, one per member): whole groups of
        GRAPH replayed as CUDA graphs (core's GraphCache; the same launches, bit for bit)."""
        s, cp = self.s, self.s.cp
        dev = self._device_row(row)
        done = 0
        a = s.sim.species[0]
        if count >= self.GRAPH + 1 and s.graphs:
            if self._out is None or self._out[0] is state[a]:
                self.launch(state, dev)  # (the output buffers exist before a capture)
                done = 1
            stream = cp.cuda.get_current_stream()
            while count - done >= self.GRAPH:
                graph = self._graph(state, dev)
                if graph is None:
                    break
                graph.launch(stream)
                done += self.GRAPH
        for _ in range(count - done):
            self.launch(state, dev)

    def _device_row(self, row: np.ndarray):
        """The step sizes `row` on the device, kept by value (stable pointers for the graphs)."""
        key = row.tobytes()
        dev = self._rows.get(key)
        if dev is None:
            if len(self._rows) > 8:
                self._rows, self._graphs = {}, None
            dev = self._rows[key] = self.s.cp.asarray(row)
        return dev

    def _graph(self, state, dev):
        if self._graphs is None:
            self._graphs = GraphCache(self.s.cp, self.GRAPH)
        a, b = self.s.sim.species
        key = (int(state[a].data.ptr), int(state[b].data.ptr), int(self._out[0].data.ptr),
               int(self._out[1].data.ptr), int(dev.data.ptr), self.s.args)
        saved = (state[a], state[b], self._out)

        def queue(n):
            for _ in range(n):
                self.launch(state, dev)

        def restore():
            state[a], state[b], self._out = saved

        return self._graphs.get(key, queue, restore)

    def launch(self, state, dts, steps: int = 1) -> None:
        """`steps` steps (one but for a kernel that takes several) into the other buffers."""
        s = self.s
        a, b = s.sim.species
        u, v = state[a], state[b]
        if self._out is None or self._out[0] is u:
            self._out = (s.cp.empty_like(u), s.cp.empty_like(v))
        uo, vo = self._out
        self.kernel(u, v, uo, vo, dts, steps)
        self._out = (u, v)
        state[a], state[b] = uo, vo

    def kernel(self, u, v, uo, vo, dts, steps: int) -> None:
        s = self.s
        s.k[s.batch_kernel]((s.grid(s.n)[0], self.E), (s.block,),
                            (u, v, uo, vo, s.deg, s.nbr, s.coef, np.int32(s.n), np.int32(s.P),
                             self.par, dts))


class BatchedPositive:
    """The positive chemotaxis scheme for an ensemble: per step one cx_rates_batch and one
    cx_update_batch launch for all members, each member with its own λ slots and device clock
    (its adaptive δt); a block of steps ends with one read of the members' step sizes, walked on
    the host exactly as core/clock.replay walks a solo run's."""

    device_clock = True

    def __init__(self, scheme, params, dt):
        cp, self.s = scheme.cp, scheme
        real = scheme.real
        self.E, n = len(params), scheme.n
        table = np.array([[float(a) for a in FusedChemotaxis.args_of(p, real)] for p in params])
        self.par = cp.asarray(table.astype(real))
        self.lam = cp.zeros(2 * self.E, dtype=real)
        self.clock = DeviceClock(cp, scheme.BATCH, members=self.E)
        self.dt_user = cp.asarray(np.asarray(dt, dtype=np.float64))
        self.rates = (cp.empty((self.E, n), dtype=real), cp.empty((self.E, n), dtype=real))
        self.cur = 0

    def run_block(self, ens, count: int, t_end) -> int:
        from ..core import clock
        s, cp = self.s, self.s.cp
        count = min(count, s.BATCH)
        alive = ~ens.diverged
        if t_end is not None:
            alive &= ~(t_end - ens.t <= clock.LAND_RTOL * max(1.0, abs(t_end)))
        if not alive.any():
            return 0
        active = cp.asarray(alive.astype(np.uint8))
        self.clock.arm(count, ens.t, t_end)
        fn, fc = ens.state["cells"], ens.state["chemo"]
        rn, rc = self.rates
        grid = (s.grid(s.n)[0], self.E)
        for k in range(count):
            s.k["cx_rates_batch"](grid, (s.block,),
                                  (fn, fc, rn, rc, s.deg, s.nbr, s.hw, s.area, np.int32(s.n),
                                   np.int32(s.P), self.par, self.lam, np.int32(self.cur),
                                   active))
            records, hist, parity = self.clock.args_all(k)
            s.k["cx_update_batch"](grid, (s.block,),
                                   (fn, fc, rn, rc, np.int32(s.n), self.lam, np.int32(self.cur),
                                    records, hist, np.int32(s.BATCH), parity, self.dt_user,
                                    np.float64(THETA), np.float64(np.inf), active))
            self.cur = 1 - self.cur
        hist = self.clock.history(count)
        # clock.replay, member by member, vectorised over the members
        t, live = ens.t.copy(), alive.copy()
        for k in range(count):
            if t_end is not None:
                live &= ~(t_end - t <= clock.LAND_RTOL * max(1.0, abs(t_end)))
            d = hist[:, k]
            bad = live & ~(np.isfinite(d) & (d > 0))
            ens.stalled |= bad  # non-finite rates: the ensemble's check restores and flags it
            go = live & ~bad
            if t_end is None:
                t = np.where(go, t + d, t)
            else:
                snap = d >= (t_end - t) * (1 - clock.SNAP_RTOL)
                t = np.where(go, np.where(snap, t_end, t + d), t)
            ens.steps += go
            live = go
        ens.t = t
        return count


def batched_kernel(sim, params, dt=None):
    """The batched launcher for an ensemble of `sim`'s model (`dt`: each member's δt), or None
    where the scheme has none."""
    scheme = sim.scheme
    if isinstance(scheme, FusedPositiveChemotaxis):
        return BatchedPositive(scheme, params, dt)
    if getattr(scheme, "batch_kernel", None) is None:
        return None
    if hasattr(scheme, "batched"):
        return scheme.batched(params)
    return BatchedEuler(scheme, params)


def ring_half_weights(mesh):
    """The one-ring CSR (indptr, nbr) of a mesh with the half cotangent weight h = w/2 of each
    (vertex, neighbour) slot, the same value in the slots (i, j) and (j, i)."""
    indptr, nbr = (np.asarray(a) for a in mesh.vertex_vertex)
    n = mesh.n_vertices
    rows = np.repeat(np.arange(n), np.diff(indptr))
    e = mesh.edges  # sorted (i < j) pairs
    lo, hi = np.minimum(rows, nbr), np.maximum(rows, nbr)
    pos = np.searchsorted(e[:, 0] * np.int64(n) + e[:, 1], lo * np.int64(n) + hi)
    return indptr, nbr, 0.5 * np.asarray(mesh.cotangent_weights)[pos]


class FusedPositiveChemotaxis(FusedEuler):
    """scheme=positive (kernels/positive.cu): per step cx_rates (edge fluxes, rates, the
    reduction of the loss rate λ into one of two device slots) and cx_update (the adaptive
    δt = min(sim.dt, THETA/max λ) on the device, the clock, the in-place update). `step` reads
    the step's δt back (one host wait); `run` queues up to BATCH steps with the clock on the device
    (landing rule of core's clock.cuh, steps after landing apply 0) and walks the host clock over
    the δt's the device used: one host wait per batch, bit for bit the step-by-step result."""

    cu_file = POSITIVE_CU
    kernel_names = ("cx_rates", "cx_update", "cx_rates_batch", "cx_update_batch")
    BATCH = 64

    def prepare(self):
        mesh = self.sim.imesh
        n = mesh.n_vertices
        indptr, nbr, half = ring_half_weights(mesh)
        self.deg = self.dev(np.diff(indptr), np.int32)
        table = padded(indptr, nbr, fill=0, dtype=np.int32)
        self.K, self.P = table.shape
        self.nbr = self.dev(table, np.int32)
        self.hw = self.dev(padded(indptr, half, fill=0.0), self.real)
        self.area = self.dev(mesh.mixed_areas, self.real)
        cp = self.cp
        self.rates = (cp.empty(n, dtype=self.real), cp.empty(n, dtype=self.real))
        self.lam = cp.zeros(2, dtype=self.real)  # double-buffered maximum of λ
        self.clock = DeviceClock(cp, self.BATCH)
        self._cur = 0

    def model_args(self):
        p, r = self.sim.params, self.real
        return (r(p["D"]), r(p["alpha"]), r(p["s"] * p["r"]), r(p["N"]), r(p["s"]))

    def _queue(self, k: int, limit: float) -> None:
        """Queue step k of a batch: rates and λ into slot cur, then the update."""
        cur, nxt = self._cur, 1 - self._cur
        n, state = self.n, self.sim.state
        fn, fc = state["cells"], state["chemo"]
        rn, rc = self.rates
        self.k["cx_rates"](self.grid(n), (self.block,),
                           (fn, fc, rn, rc, self.deg, self.nbr, self.hw, self.area, np.int32(n),
                            np.int32(self.P), *self.args, self.lam[cur:cur + 1]))
        self.k["cx_update"](self.grid(n), (self.block,),
                            (fn, fc, rn, rc, np.int32(n), self.lam[cur:cur + 1],
                             self.lam[nxt:nxt + 1], *self.clock.args(k),
                             np.float64(self.sim.dt), np.float64(THETA), np.float64(limit)))
        self._cur = nxt

    def step(self, t, dt_limit):
        self.clock.arm(1, t, None)
        self._queue(0, np.inf if dt_limit is None else dt_limit)
        d = float(self.clock.history(1)[0, 0])
        if not math.isfinite(d) or d <= 0:
            raise NonFiniteStep
        return d

    def run(self, count, t, t_end):
        """Up to BATCH steps with the clock on the device (core's DeviceClock), whole groups of
        GRAPH_STEPS as CUDA graphs; one host wait."""
        count = self.clock.arm(count, t, t_end)
        k = 0
        stream = self.cp.cuda.get_current_stream()
        while count - k >= GRAPH_STEPS:  # (from either λ slot and clock parity)
            graph = self._clocked_graph(k % 2)
            if graph is None:
                break
            graph.launch(stream)
            k += GRAPH_STEPS
        for k in range(k, count):
            self._queue(k, np.inf)
        return self.clock.finish(count, t, t_end)

    def _clocked_graph(self, parity: int):
        """GRAPH_STEPS clocked steps from the current λ slot, the first at a step index of
        `parity` in the batch (both come back after an even number of steps)."""
        if self._graphs is None:
            self._graphs = GraphCache(self.cp, GRAPH_STEPS)
        state = self.sim.state
        key = (int(state["cells"].data.ptr), int(state["chemo"].data.ptr), self.args,
               float(self.sim.dt), self._cur, parity)

        def queue(n):
            for k in range(n):
                self._queue(parity + k, np.inf)

        def restore():
            self._cur = key[-2]

        return self._graphs.get(key, queue, restore)
