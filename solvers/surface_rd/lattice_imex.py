"""integrator=imex of chemotaxis on the GPU (docs/MODELS.md §2, docs/EQUATIONS.md "IMEX"): on a
lattice mesh (the generated rectangle, solvers/mesh/lattice.py) with scheme=positive the whole
semi-implicit Euler step of imex.ChemotaxisImex runs on the device, six launches and no host
wait (kernels/chemotaxis_imex.cu):

    cxi_rates      the upwind cell flux and the logistic term (imex.upwind_rates), the loss rate
                   λ and its maximum
    cxi_pack       δt = min(dt, THETA/max λ) on the device clock (core's clock.cuh), the
                   right-hand sides n + δt·ṅ, c + δt·s(n/(1 + n) − c) into the even extension
    cuFFT, lat_rec_clk, inverse cuFFT      (I − δt·D·L) n⁺ = …, (I − δt·L) c⁺ = …
                                           (mesh.lattice.LatticeTransform)
    cxi_finish     n⁺, c⁺ written over the state

so `run` queues up to BATCH steps (whole groups of GRAPH_STEPS as CUDA graphs, which replay
from any clock) with one host wait, and walks the host clock over the steps the device took,
bit for bit as stepping one at a time. Anywhere else (scheme=paper, a mesh that is not a
lattice, the CPU) the class is imex.ChemotaxisImex itself, and `lattice_why` says why.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..core.backend import load_kernels
from ..core.device_clock import DeviceClock, GraphCache
from ..core.errors import NonFiniteStep
from ..core.scheme import SchemeBase
from ..mesh.lattice import KERNELS as LATTICE_KERNELS
from ..mesh.lattice import MAX_WIDTH, LatticeTransform, transform_axis
from ..mesh.triangles import padded
from .imex import ChemotaxisImex
from .reference import THETA

CU = Path(__file__).resolve().parent / "kernels" / "chemotaxis_imex.cu"
BLOCK = 256


def why_not(sim, lat) -> str | None:
    """None where the device step applies, else the reason."""
    if sim.xp is np:
        return "the CPU backend"
    if sim.params["scheme"] != "positive":
        return f"scheme={sim.params['scheme']}"
    if lat is None:
        return "the mesh is not a lattice"
    if (lat.ny if transform_axis(lat) == "x" else lat.nx) > MAX_WIDTH:
        return f"the lattice is more than {MAX_WIDTH} nodes across in both directions"
    return None


def _tables(sim) -> dict:
    """The lattice, why_not, and where it applies the kernels, the one-ring tables and the
    transform (LatticeTransform), made once per simulation and real type: an ensemble installs
    a fresh scheme for each member on the same template simulation."""
    cache = sim.__dict__.setdefault("_fused_tables", {})
    key = ("FusedChemotaxisImex", np.dtype(sim.real).str, sim.params["scheme"])
    if key in cache:
        return cache[key]
    lat = sim.ops.lattice
    t = {"why": why_not(sim, lat)}
    if t["why"] is None:
        import cupy as cp
        from .fused import ring_half_weights
        k = load_kernels(CU, sim.dtype, ["cxi_rates", "cxi_pack", "cxi_finish", "lat_rec_clk"],
                         include_dirs=(LATTICE_KERNELS,))
        indptr, nbr, half = ring_half_weights(sim.imesh)
        dev = lambda a, dt: cp.asarray(np.ascontiguousarray(a, dtype=dt))  # noqa: E731
        table = padded(indptr, nbr, fill=0, dtype=np.int32)
        tr = LatticeTransform(lat, sim.real, 2, k["lat_rec_clk"])
        order = cp.asarray(lat.order, dtype=cp.int64)
        t.update(k=k, lat=lat, tr=tr, P=table.shape[1], nbr=dev(table, np.int32),
                 deg=dev(np.diff(indptr), np.int32), hw=dev(padded(indptr, half, fill=0.0),
                                                          sim.real),
                 area=dev(sim.imesh.mixed_areas, sim.real),
                 tgrid=(-(-lat.nx // 32), -(-lat.ny // 32)),
                 head=(order, np.int32(lat.nx), np.int32(lat.ny), np.int32(tr.axis == "y")))
    cache[key] = t
    return t


class FusedChemotaxisImex(ChemotaxisImex):
    """The chemotaxis IMEX step on the device (module docstring), else ChemotaxisImex."""

    BATCH = 64  # steps between two host waits (DeviceClock)
    GRAPH_STEPS = 64  # steps of one CUDA graph (even: the λ slot and clock parity come back)

    def __init__(self, sim):
        tables = _tables(sim)
        self.lattice_why = tables["why"]
        if self.lattice_why is not None:
            super().__init__(sim)
            self.run = None  # (the simulation steps ChemotaxisImex one step at a time)
            return
        SchemeBase.__init__(self, sim)
        import cupy as cp
        self.__dict__.update((k, v) for k, v in tables.items() if k != "why")
        self.cp, self.real = cp, sim.real
        self.n = sim.imesh.n_vertices
        self.rate = cp.empty(self.n, dtype=self.real)
        self.lam = cp.zeros(2, dtype=self.real)  # double-buffered maximum of λ
        self.dstep = cp.zeros(1, dtype=np.float64)  # the step cxi_pack took, for lat_rec_clk
        self.clock = DeviceClock(cp, self.BATCH)
        self._cur = 0
        self._graphs = None

    def _args(self) -> tuple:
        p, r = self.sim.params, self.real
        return (r(p["alpha"]), r(p["s"] * p["r"]), r(p["N"]), r(p["s"]), float(p["D"]))

    def _queue(self, k: int, limit: float, args: tuple) -> None:
        """Queue step k of a batch (module docstring) from λ slot cur."""
        alpha, sr, N, s, D = args
        cur, nxt = self._cur, 1 - self._cur
        fn, fc = self.sim.state["cells"], self.sim.state["chemo"]
        lam_cur, lam_next = self.lam[cur:cur + 1], self.lam[nxt:nxt + 1]
        self.k["cxi_rates"]((-(-self.n // BLOCK),), (BLOCK,), (
            fn, fc, self.rate, self.deg, self.nbr, self.hw, self.area, np.int32(self.n),
            np.int32(self.P), alpha, sr, N, lam_cur))
        self.k["cxi_pack"](self.tgrid, (32, 8), self.head + (
            fn, fc, self.rate, s, self.tr.ext, lam_cur, lam_next, *self.clock.args(k),
            self.dstep, np.float64(self.sim.dt), np.float64(THETA), np.float64(limit)))
        self.tr.solve(self.k["lat_rec_clk"], (self.dstep, np.float64(D), np.float64(1.0),
                                              np.float64(0.0), np.float64(0.0)))
        self.k["cxi_finish"](self.tgrid, (32, 8), self.head + (self.tr.ext, fn, fc, self.dstep))
        self._cur = nxt

    def step(self, t, dt_limit):
        if self.lattice_why is not None:
            return super().step(t, dt_limit)
        self.clock.arm(1, t, None)
        self._queue(0, np.inf if dt_limit is None else dt_limit, self._args())
        d = float(self.clock.history(1)[0, 0])
        if not math.isfinite(d) or d <= 0:
            raise NonFiniteStep
        return d

    def run(self, count, t, t_end):
        """Up to BATCH steps with the clock on the device, whole groups of GRAPH_STEPS as CUDA
        graphs; one host wait."""
        args = self._args()
        count = self.clock.arm(count, t, t_end)
        k = 0
        stream = self.cp.cuda.get_current_stream()
        while count - k >= self.GRAPH_STEPS:
            graph = self._graph(k % 2, args)
            if graph is None:
                break
            graph.launch(stream)
            k += self.GRAPH_STEPS
        for k in range(k, count):
            self._queue(k, np.inf, args)
        return self.clock.finish(count, t, t_end)

    def _graph(self, parity: int, args: tuple):
        """GRAPH_STEPS clocked steps from the current λ slot, the first at a step index of
        `parity` in the batch."""
        if self._graphs is None:
            self._graphs = GraphCache(self.cp, self.GRAPH_STEPS)
        state = self.sim.state
        key = (int(state["cells"].data.ptr), int(state["chemo"].data.ptr), args,
               float(self.sim.dt), self._cur, parity)

        def queue(n):
            for k in range(n):
                self._queue(parity + k, np.inf, args)

        def restore():
            self._cur = key[-2]

        return self._graphs.get(key, queue, restore)
