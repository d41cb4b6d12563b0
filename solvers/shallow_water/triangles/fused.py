"""The fused CUDA scheme of the triangle finite volumes: launches the kernels of
kernels/one_layer.cu / kernels/two_layer.cu (see kernels/assembly.cuh for the three assemblies,
../kernels/riemann.cuh for the fluxes) on the tables of tables.FVTables.

Per step: [sensor1] (one layer with shock_fix: the cells' shock sensors of the carbuncle cure,
riemann.py), [edge kernel → cell_dt] (assembly edge or atomic) or [cells] (assembly cell), then
cell_update, which reads Δt = min(reduced minimum, limit) on the device, arms the other slot of
the double-buffered minimum for the next step and clears the atomic accumulators (no memsets);
all queued back to back, then the one scalar Δt comes to the host through a pinned buffer (the
base class needs it for t): one host wait per step. `run` queues a batch of steps with the clock
kept on the device (core's DeviceClock and kernels/clock_slot.cu), replayed as CUDA graphs: one
host wait per batch; the window's calls run ahead (core/run_ahead.py).
All kernels of a file are compiled together once per dtype (one NVRTC call, cached).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ...core.backend import CORE_KERNELS
from ...core.device_clock import DeviceClock, GraphCache
from ...core.backend import load_kernels
from ...core.run_ahead import LaneRunAhead, copy_all
from ...core.scheme import SchemeBase
from .tables import cell_tables

KERNELS = Path(__file__).resolve().parent / "kernels"
RIEMANN = Path(__file__).resolve().parents[1] / "kernels"  # riemann.cuh
SCHEME_TAG = {"roe": "roe", "ir-roe": "irroe", "pvm-ifcp": "pvm"}
BLOCK_EDGE = 128
BLOCK_CELL = 128
CLOCK_CU = CORE_KERNELS / "clock_slot.cu"  # the device clock between reduction and update
GRAPH_STEPS = 32  # clocked steps of one CUDA graph (even: the Δt slots alternate)


def auto_assembly(layers: int, scheme: str) -> str:
    """Edge slots for two layers: fastest for every scheme on an H100 at 1M cells (tri_bench
    section D: Roe 0.52 / IR-Roe 0.27 / PVM-IFCP 0.22 ms per step, against 0.69 / 0.43 / 0.39
    with atomics and 1.13 / 0.44 / 0.30 cell-fused). One layer: cell-fused (cheap fluxes; see
    section B1 for the measured alternatives)."""
    return "cell" if layers == 1 else "edge"


def kernel_names(layers: int) -> list[str]:
    names = []
    for s in SCHEME_TAG.values():
        for a in ("edges", "atomic", "cells"):
            for mix in ("", "_mixed"):
                names.append(f"{a}_{s}{layers}{mix}")
    return names + ["cell_dt", f"update{layers}"] + (["sensor1"] if layers == 1 else [])


def load(layers: int, dtype: str) -> dict:
    cu = KERNELS / ("one_layer.cu" if layers == 1 else "two_layer.cu")
    return load_kernels(cu, dtype, kernel_names(layers), include_dirs=(RIEMANN,))


class TriFused(LaneRunAhead, SchemeBase):
    # steps per `run` (one host wait) and between two finiteness checks. A host wait leaves the
    # GPU idle until the next steps are queued, and beside the window's drawing every call back
    # from CUDA waits for the GIL: the fewer waits in a window's call (1/32 s), the more the
    # solver keeps (docs/BENCHMARKS.md, "One host wait a frame")
    BATCH = 960

    def __init__(self, sim):
        import cupy as cp
        super().__init__(sim)
        self.cp = cp
        sim.check_interval = self.BATCH
        p, tables, dtype, layers = sim.params, sim.tables, sim.dtype, sim.layers
        scheme, assembly = p["scheme"], p["assembly"]
        if assembly == "auto":
            assembly = auto_assembly(layers, scheme)
        self.assembly = assembly
        self.layers, self.nv = layers, 3 * layers
        self.real = np.dtype(dtype).type
        self.g, self.r = float(p["g"]), float(p.get("r", 0.0))
        eig_mixed = p.get("eigen_precision") == "float64" and dtype == "float32"
        k = load(layers, dtype)
        tag = f"{SCHEME_TAG[scheme]}{layers}{'_mixed' if eig_mixed else ''}"
        name = {"edge": "edges", "atomic": "atomic", "cell": "cells"}[assembly]
        self.k_flux = k[f"{name}_{tag}"]
        self.k_dt = k["cell_dt"]
        self.k_update = k[f"update{layers}"]
        m, ne = tables.n_cells, tables.n_edges
        self.m, self.ne = np.int32(m), np.int32(ne)
        f = lambda a: cp.asarray(np.ascontiguousarray(a), dtype=dtype)  # noqa: E731
        i = lambda a: cp.asarray(np.ascontiguousarray(a), dtype=np.int32)  # noqa: E731
        self.area = f(tables.area)
        self.k_sensor = None
        if assembly == "cell" or (layers == 1 and p.get("shock_fix", False)):
            nbr, cnx, cny, clen = cell_tables(tables)
            self.nbr, self.cnx, self.cny, self.clen = i(nbr), f(cnx), f(cny), f(clen)
        if layers == 1 and p.get("shock_fix", False):
            self.k_sensor = k["sensor1"]
            self.S = cp.zeros(m, dtype=dtype)
        self.S_arg = self.S if self.k_sensor is not None else np.uintp(0)  # null: no cure
        if assembly == "cell":
            self.ns = 1
        else:
            self.L, self.R = i(tables.edge_l), i(tables.edge_r)
            self.posL = i(tables.slot_l.astype(np.int64) * m + tables.edge_l)
            self.posR = i(np.where(tables.edge_r >= 0,
                                   tables.slot_r.astype(np.int64) * m + tables.edge_r, -1))
            self.nx, self.ny, self.len = f(tables.nx), f(tables.ny), f(tables.length)
            self.ns = 3 if assembly == "edge" else 1
        self.acc = cp.zeros(self.nv * self.ns * m, dtype=dtype)
        self.sacc = cp.zeros(self.ns * m, dtype=dtype)
        # double-buffered step minimum: step k reduces into slot k % 2, the update kernel of
        # step k arms slot (k + 1) % 2
        self.dtmin = cp.full(2, np.inf, dtype=dtype)
        self._slots = (self.dtmin[0:1], self.dtmin[1:2])
        self._cur = 0
        self.zero = np.int32(assembly == "atomic")  # atomic slots are cleared after use
        import cupyx
        self._dt_host = cupyx.empty_pinned((1,), dtype=dtype)
        self.grid_e = ((ne + BLOCK_EDGE - 1) // BLOCK_EDGE,)
        self.grid_c = ((m + BLOCK_CELL - 1) // BLOCK_CELL,)

    # `run` (LaneRunAhead's, core/run_ahead.py): up to BATCH of `count` steps queued back to
    # back with no host round trip: core's DeviceClock (kernels/clock_slot.cu between the Δt
    # reduction and the update, the protocol of core's clock.cuh: Δt clamped to t_end, 0 once
    # landed, recorded), then the host walks the same clock with core.clock over the recorded
    # steps. Whole groups of GRAPH_STEPS steps replay as CUDA graphs (one launch each). One host
    # wait per batch; with `ahead`, the next run queued in the spare lane before it.

    def _ensure_clock(self) -> None:
        if self._clock is None:
            self.k_clock = load_kernels(CLOCK_CU, str(np.dtype(self.real)), ["clock_slot"],
                                        options=("--fmad=false",))["clock_slot"]
            self._clock = DeviceClock(self.cp, self.BATCH)
            self._graphs = GraphCache(self.cp, GRAPH_STEPS)

    def _queue_run(self, count: int, clk) -> None:
        """Queue `count` steps of a batch on the current stream, the clock `clk` armed."""
        i = 0
        stream = self.cp.cuda.get_current_stream()
        while count - i >= GRAPH_STEPS:  # (from either Δt slot and clock parity: a run after
            graph = self._graph(i % 2)    # an odd number of steps replays graphs too)
            if graph is None:
                break
            graph.launch(stream)
            i += GRAPH_STEPS
        while i < count:
            self._queue_clocked(i)
            i += 1

    _graphs = None

    # ---- run-ahead: a lane is the state W (its views in sim.state), the Δt slots and the clock;
    # the accumulators and sensors are scratch that the two lanes never use at once
    LANE = ("dtmin", "_slots", "_cur", "_clock")

    def _swap_state(self, other) -> None:
        sim = self.sim
        sim.W, other["W"] = other["W"], sim.W
        views = other["views"]
        other["views"] = {k: sim.state[k] for k in views}
        sim.state.update(views)

    def _lane_bytes(self) -> int:
        return self.sim.W.nbytes

    def _lane_new(self) -> dict:
        cp, sim = self.cp, self.sim
        W = cp.empty_like(sim.W)
        dtmin = cp.full(2, np.inf, dtype=self.dtmin.dtype)
        return {"W": W, "views": {k: W[i] for i, k in enumerate(sim.state_names)},
                "dtmin": dtmin, "_slots": (dtmin[0:1], dtmin[1:2]), "_cur": 0,
                "_clock": DeviceClock(cp, self.BATCH)}

    def _lane_items(self) -> dict:
        return {"W": self.sim.W, "dtmin": self.dtmin, "cur": self._cur}

    def _lane_start(self, items, stream) -> None:
        self._cur = items["cur"]
        copy_all([(self.sim.W, items["W"]), (self.dtmin, items["dtmin"])], stream)

    def _queue_clocked(self, i: int) -> None:
        W = self.sim.W
        cur = self._queue_fluxes(W, self.sim.state["H"], self.sim.params["cfl"])
        self.k_clock((1,), (1,), (cur, *self._clock.args(i)))
        self._queue_update(W, np.inf)

    def _graph(self, parity: int):
        """The CUDA graph of GRAPH_STEPS clocked steps on the current buffers and cfl, from
        the current Δt slot and a step index of `parity` in the batch (the clock records
        alternate by step index; GRAPH_STEPS is even, so the slot and the parity come back).
        Until 2026-11-27 graphs started on slot 0 and an even index only, so after any odd
        run (the window's first step) every step was launched from Python."""
        key = (int(self.sim.W.data.ptr), int(self.sim.state["H"].data.ptr),
               float(self.sim.params["cfl"]), self._cur, parity)

        def queue(n):
            for k in range(n):
                self._queue_clocked(parity + k)

        def restore():
            self._cur = key[3]

        return self._graphs.get(key, queue, restore)

    def _queue_fluxes(self, W, H, cfl: float):
        cfl2 = self.real(2 * cfl)
        g, r = np.float64(self.g), np.float64(self.r)
        cur = self._slots[self._cur]
        if self.k_sensor is not None:
            self.k_sensor(self.grid_c, (BLOCK_CELL,),
                          (W, self.nbr, self.cnx, self.cny, self.S, self.m))
        if self.assembly == "cell":
            self.k_flux(self.grid_c, (BLOCK_CELL,),
                        (W, H, self.nbr, self.cnx, self.cny, self.clen, self.area, self.acc,
                         cur, cfl2, self.S_arg, self.m, g, r))
        else:
            self.k_flux(self.grid_e, (BLOCK_EDGE,),
                        (W, H, self.L, self.R, self.posL, self.posR, self.nx, self.ny, self.len,
                         self.acc, self.sacc, self.S_arg, self.m, self.ne, g, r))
            self.k_dt(self.grid_c, (BLOCK_CELL,),
                      (self.sacc, np.int32(self.ns), self.area, cfl2, self.m, cur, self.zero))
        return cur

    def _queue_update(self, W, limit: float):
        cur, nxt = self._slots[self._cur], self._slots[1 - self._cur]
        self.k_update(self.grid_c, (BLOCK_CELL,),
                      (W, self.acc, np.int32(self.ns), self.area, self.real(limit), self.m, cur,
                       nxt, self.zero))
        self._cur = 1 - self._cur
        return cur

    def step(self, t, dt_limit):
        """One step, all kernels queued back to back; the host waits once, for Δt."""
        W = self.sim.W
        self._queue_fluxes(W, self.sim.state["H"], self.sim.params["cfl"])
        limit = np.inf if dt_limit is None else dt_limit
        cur = self._queue_update(W, limit)
        cur.get(out=self._dt_host)  # pinned buffer; waits for the step
        return min(float(self._dt_host[0]), limit)
