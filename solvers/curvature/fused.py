"""The fused GPU path of the curvature flows: RKM attempts decided on the device (curvature.cu).

An attempt is five stage kernels (one right-hand-side evaluation each, the stage combination fused
into the tile load); the fifth also forms u_new and the error maximum, and its last block accepts or
rejects, updates τ and t and flips the state buffer in a small control block in device memory. The
host therefore only arms the control block, launches attempts (captured once as a CUDA graph of
`GRAPH_ATTEMPTS` attempts and replayed; plain launches where capture is unavailable) and reads the
control block back once per batch: no per-step synchronisation. Attempts after the run's target
(step count or end time) exit at once.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..core.backend import load_kernels
from ..core.errors import SimulationDiverged
from .operators import neumann_fill

CU_FILE = Path(__file__).with_name("curvature.cu")
BX, BY = 32, 8
GRAPH_ATTEMPTS = 32
CHECK_INTERVAL = 512  # accepted steps between two finiteness checks of the state (base class)
# indices into the control arrays (curvature.cu)
C_T, C_TAU, C_TRY, C_TEND, C_EPS, C_LASTDT = range(6)
I_ACTIVE, I_STEPS, I_TARGET, I_CUR, I_FAILED, I_REJ, I_REJROW, I_HASEND, I_ATTEMPTS = range(9)
FLAG_NEUMANN, FLAG_EXACT = 1, 2


def kernels(dtype: str) -> dict:
    return load_kernels(CU_FILE, dtype, ["mc_stage", "wm_stage", "mc_rhs", "wm_rhs"],
                        options=("-I" + str(CU_FILE.parent),))


class FusedRKM:
    """Buffers, control block and launches of the fused path of one simulation."""

    def __init__(self, sim):
        import cupy as cp
        self.cp = cp
        self.sim = sim
        self.k = kernels(sim.dtype)
        self.stage = self.k["wm_stage" if sim.willmore else "mc_stage"]
        phi = sim.state["phi"]
        self.u = [phi, cp.empty_like(phi)]
        self.u[1][...] = phi
        self.ks = [cp.zeros_like(phi) for _ in range(4)]
        self.ctl = cp.zeros(8, dtype=cp.float64)
        self.cti = cp.zeros(16, dtype=cp.int32)
        self.err = cp.zeros(1, dtype=cp.uint64)
        self.count = cp.zeros(1, dtype=cp.uint32)
        self.cur = 0
        self.tau = sim._rkm.tau
        self.rejected = 0
        self.attempts = 0
        self.last_dt = 0.0
        real = sim.real
        if sim.exact is not None:
            self.tx, self.ty = sim.exact.tables(sim.dtype)
            self.coef = sim.exact.coef
        else:
            self.tx = self.ty = self.coef = cp.zeros(1, dtype=sim.dtype)
        n2p1, n1p1 = phi.shape
        self.n1, self.n2 = n1p1 - 1, n2p1 - 1
        self.flags = (FLAG_NEUMANN if sim.neumann else 0) | (FLAG_EXACT if sim.exact is not None
                                                            else 0)
        self.grid = ((n1p1 + BX - 1) // BX, (n2p1 + BY - 1) // BY)
        self.scalars = (np.int32(self.n1), np.int32(self.n2), real(1.0 / sim.h1), real(1.0 / sim.h2),
                        real(sim.params["F"]), np.int32(self.flags))
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.graph = None
        self.graph_error = None
        sim.check_interval = CHECK_INTERVAL

    # ---- one attempt, as launches ----------------------------------------------------------
    def _launch_attempt(self):
        u, ks = self.u, self.ks
        for s in range(1, 6):
            self.stage(self.grid, (BX, BY), (np.int32(s), u[0], u[1], *ks, self.tx, self.ty, self.coef,
                                             self.ctl, self.cti, self.err, self.count,
                                             *self.scalars))

    def _capture(self):
        """A CUDA graph of GRAPH_ATTEMPTS attempts (kernel arguments are fixed pointers)."""
        cp = self.cp
        try:
            with self.stream:
                self.stream.begin_capture()
                try:
                    for _ in range(GRAPH_ATTEMPTS):
                        self._launch_attempt()
                finally:
                    graph = self.stream.end_capture()
            self.graph = graph
            try:
                graph.upload(self.stream)  # instantiate now rather than on the first launch
            except Exception:
                pass
        except Exception as e:  # no graph support: plain launches, same device-side control
            self.graph = False
            self.graph_error = f"{type(e).__name__}: {e}"
            cp.cuda.runtime.deviceSynchronize()

    def _launch_batch(self, n_batches: int):
        with self.stream:
            for _ in range(n_batches):
                if self.graph:
                    self.graph.launch(self.stream)
                else:
                    for _ in range(GRAPH_ATTEMPTS):
                        self._launch_attempt()

    # ---- a run of accepted steps -----------------------------------------------------------
    def run(self, count: int, t_end: float | None) -> int:
        """Advance up to `count` accepted steps (stopping on t_end); returns the number taken and
        updates sim.t / sim.steps like Simulation._steps_unchecked."""
        sim, cp = self.sim, self.cp
        if count <= 0 or (t_end is not None and sim._landed(t_end)):
            return 0
        if self.graph is None:
            self._capture()
        ctl = np.zeros(8)
        ctl[C_T] = sim.t
        ctl[C_TAU] = self.tau
        ctl[C_TRY] = self.tau if t_end is None else min(self.tau, t_end - sim.t)
        ctl[C_TEND] = 0.0 if t_end is None else t_end
        ctl[C_EPS] = sim.params["tolerance"]
        cti = np.zeros(16, dtype=np.int32)
        cti[I_ACTIVE] = 1
        cti[I_TARGET] = count
        cti[I_CUR] = self.cur
        cti[I_HASEND] = t_end is not None
        # order after work on the legacy stream (set_field, restore), then arm the control block
        self.stream.wait_event(cp.cuda.get_current_stream().record())
        with self.stream:
            self.ctl.set(ctl, stream=self.stream)
            self.cti.set(cti, stream=self.stream)
        done = 0
        attempts_per_step = 1.0 + self.rejected / max(1, self.attempts)
        while True:
            need = (count - done) * attempts_per_step
            self._launch_batch(max(1, math.ceil(need / GRAPH_ATTEMPTS)))
            out = self.cti.get(stream=self.stream)  # the one read-back of the batch
            done = int(out[I_STEPS])
            if not out[I_ACTIVE]:
                break
        ctl = self.ctl.get(stream=self.stream)
        self.rejected = int(out[I_REJ])
        self.attempts = int(out[I_ATTEMPTS])
        self.cur = int(out[I_CUR])
        self.tau = float(ctl[C_TAU])
        self.last_dt = float(ctl[C_LASTDT])
        sim.state["phi"] = self.u[self.cur]
        sim.t = float(ctl[C_T])
        sim.steps += done
        if out[I_FAILED]:
            raise SimulationDiverged(sim.model, sim.t, sim.steps, "phi")
        return done

    def step_one(self, dt_limit):
        """One accepted step for Simulation._steps_unchecked (which keeps t and the step count):
        returns the step τ taken."""
        sim = self.sim
        t0, steps0 = sim.t, sim.steps
        self.run(1, None if dt_limit is None else t0 + dt_limit)
        sim.t, sim.steps = t0, steps0
        return self.last_dt

    # ---- single right-hand-side evaluation (tests, timing) ----------------------------------
    def rhs(self, t: float, u):
        """f(t, u) on all nodes by the fused rhs kernel (one launch)."""
        cp = self.cp
        u = cp.ascontiguousarray(u, dtype=self.sim.dtype)
        f = cp.empty_like(u)
        kern = self.k["wm_rhs" if self.sim.willmore else "mc_rhs"]
        kern(self.grid, (BX, BY), (u, f, self.tx, self.ty, self.coef, np.float64(t), *self.scalars))
        if self.sim.neumann:
            neumann_fill(f)
        return f
