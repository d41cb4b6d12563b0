"""The fused GPU path of the curvature flows: RKM attempts decided on the device.

Two ways to run them, the same arithmetic:

* `persistent` (default where cooperative launches work): one cooperative kernel per run of steps
  (curvature_persist.cu). Its blocks own tiles of the grid, separate the five stages of an attempt
  by grid-wide barriers and all take the same accept/reject decision, so a run of up to
  `CHECK_INTERVAL` accepted steps is one launch and one read-back.
* `graph` (curvature.cu): five stage kernels per attempt, described below.

In the graph path an attempt is five stage kernels (one right-hand-side evaluation each, the stage combination fused
into the tile load); the fifth also forms u_new and the error maximum, and its last block accepts or
rejects, updates τ and t and flips the state buffer in a small control block in device memory. The
host therefore only arms the control block, launches attempts (captured once as a CUDA graph of
`GRAPH_ATTEMPTS` attempts and replayed; plain launches where capture is unavailable) and reads the
control block back once per batch: no per-step synchronisation. Attempts after the run's target
(step count or end time) exit at once.
"""
from __future__ import annotations

import functools
import math
import os
from pathlib import Path

import numpy as np

from ..core.backend import load_kernels
from ..core.errors import SimulationDiverged
from .reference import neumann_fill

CU_FILE = Path(__file__).parent / "kernels" / "curvature.cu"
PERSIST_FILE = Path(__file__).parent / "kernels" / "curvature_persist.cu"
# the cooperative kernels compiled per flow (willmore?): name suffix -> (tile height TY, threads)
PERSIST_VARIANTS = {
    False: {"8": (8, 256), "16": (16, 512)},
    True: {"8": (8, 256), "8x2": (8, 512), "16": (16, 512)},
}
# measured on the H100 (µs per attempt, `python -m pdestudio.solvers.curvature.timing --parts attempts`):
# mean curvature 256² f64: 8 → 19.2, 16 → 19.5 (4 → 21.7, 16×2 threads → 21.4); 1024² f32:
# 8 → 80.0, 16 → 85.2 (4 → 93.0, 16×2 → 130.0); Willmore 128² f64: 8×2 → 21.8 (8 → 24.8, 16 → 30.0);
# 256² f64: 8×2 → 28.1, 8 → 28.9, 16 → 30.9 (4 → 32.0, 16×2 → 31.0)
DEFAULT_VARIANT = {False: "8", True: "8x2"}
# the persistent path wins on small grids (latency-bound: no launches, no host round trips) and
# the lean stage kernels of the graph path on large ones (bandwidth-bound). Crossover measured on
# the H100 (µs per attempt, persistent vs graph): mean curvature 256² f64 21 vs 35, 512² f32 49 vs
# 37, 1024² f32 160 vs 82; Willmore 256² 27.5 vs 57, 512² 71 vs 107.
PERSISTENT_MAX_NODES = {False: 100_000, True: 300_000}
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


def persistent_kernels(dtype: str, willmore: bool) -> dict:
    """{TY: (RawKernel, dynamic shared-memory bytes)} of the cooperative kernels (tiles of 32 × TY
    interior nodes); the shared-memory sizes come from the kernel file itself (persist_smem)."""
    import cupy as cp
    return _persistent_kernels(dtype, willmore, cp.cuda.Device().id)


@functools.lru_cache(maxsize=None)
def _persistent_kernels(dtype: str, willmore: bool, device: int) -> dict:
    import cupy as cp
    pre = "wm" if willmore else "mc"
    variants = PERSIST_VARIANTS[willmore]
    names = {v: f"{pre}_persist{v}" for v in variants}
    ks = load_kernels(PERSIST_FILE, dtype, list(names.values()) + ["persist_smem"],
                      options=("-I" + str(CU_FILE.parent),), cooperative=True)
    sizes = cp.zeros(6, dtype=cp.int32)
    ks["persist_smem"]((1,), (1,), (sizes,))
    sizes = sizes.get().tolist()
    out = {}
    for v, (ty, _) in variants.items():
        kern = ks[names[v]]
        nbytes = sizes[(3 if willmore else 0) + {4: 0, 8: 1, 16: 2}[ty]]
        if nbytes > 48 * 1024:
            kern.max_dynamic_shared_size_bytes = nbytes
        out[v] = (kern, nbytes)
    return out


def blocks_per_sm(kern, threads: int, props: dict, dynamic_smem: int = 0) -> int:
    """Resident blocks per SM for `kern` (registers, shared memory, threads, block slots)."""
    regs = max(1, int(kern.num_regs))
    regs_per_warp = -(-regs * 32 // 256) * 256
    by_regs = props["regsPerMultiprocessor"] // (regs_per_warp * (threads // 32))
    smem = int(kern.shared_size_bytes) + dynamic_smem + 1024  # 1 KiB per block is reserved
    by_smem = props["sharedMemPerMultiprocessor"] // smem
    by_threads = props["maxThreadsPerMultiProcessor"] // threads
    return max(0, min(by_regs, by_smem, by_threads, props.get("maxBlocksPerMultiProcessor", 32)))


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
        # the lean stage kernels (curvature.cu): one warp per strip of 30 (mean curvature) / 28
        # (Willmore) columns walking `rows` rows; walks shortened on small grids (lean_rows there)
        cw = 28 if sim.willmore else 30
        strips = -(-self.n1 // cw)
        rows = 32
        while rows > 4 and strips * ((self.n2 + rows) // rows) < 8192:
            rows //= 2
        self.grid = (strips, -(-((self.n2 + rows) // rows) // BY))
        self.scalars = (np.int32(self.n1), np.int32(self.n2), real(1.0 / sim.h1), real(1.0 / sim.h2),
                        real(sim.params["F"]), np.int32(self.flags))
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.graph = None
        self.graph_error = None
        self.sync = cp.zeros(4, dtype=cp.uint64)  # persistent path: 3 error slots, barrier count
        self.persist = None  # (kernel, TY, grid) once set up
        self.persist_error = None
        nodes = (self.n1 + 1) * (self.n2 + 1)
        want = os.environ.get("PDESTUDIO_CURVATURE_PATH") or (
            "persistent" if nodes <= PERSISTENT_MAX_NODES[sim.willmore] else "graph")
        self.path = "persistent" if want == "persistent" and self._setup_persistent() else "graph"
        sim.check_interval = CHECK_INTERVAL

    def _setup_persistent(self, variant: str | None = None) -> bool:
        """Compile the cooperative kernel and size its grid; False (graph path) where the device
        or the driver cannot launch cooperatively."""
        cp = self.cp
        try:
            dev = cp.cuda.Device()
            if not dev.attributes.get("CooperativeLaunch", 1):
                raise RuntimeError("the device does not support cooperative launches")
            props = cp.cuda.runtime.getDeviceProperties(dev.id)
            nsm = props["multiProcessorCount"]
            variant = variant or os.environ.get("PDESTUDIO_CURVATURE_VARIANT") or \
                DEFAULT_VARIANT[self.sim.willmore]
            ty, threads = PERSIST_VARIANTS[self.sim.willmore][variant]
            kern, smem = persistent_kernels(self.sim.dtype, self.sim.willmore)[variant]
            bps = blocks_per_sm(kern, threads, props, smem)
            if bps < 1:
                raise RuntimeError("the persistent kernel does not fit on one SM")
            tiles = -(-(self.n1 - 1) // 32) * -(-(self.n2 - 1) // ty)
            self.persist = (kern, variant, max(1, min(tiles, nsm * bps)))
            self._smem = smem
            self._nsm = nsm
            return True
        except Exception as e:  # noqa: BLE001 - any failure means: use the graph path
            self.persist = None
            self.persist_error = f"{type(e).__name__}: {e}"
            return False

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

    def _launch_persistent(self):
        """The whole armed run in one cooperative launch; returns the control ints (None where the
        launch was refused and the graph path takes over)."""
        cp = self.cp
        while True:
            kern, variant, grid = self.persist
            threads = PERSIST_VARIANTS[self.sim.willmore][variant][1]
            try:
                with self.stream:
                    self.sync.fill(0)
                    kern((grid,), (32, threads // 32), (self.u[0], self.u[1], *self.ks, self.tx, self.ty,
                                             self.coef, self.ctl, self.cti, self.sync,
                                             *self.scalars), shared_mem=self._smem)
                break
            except cp.cuda.driver.CUDADriverError as e:
                # more blocks than the device holds at once (our occupancy estimate was high):
                # one block fewer per SM; any other refusal: the graph path from now on
                if "TOO_LARGE" in str(e) and grid > self._nsm:
                    self.persist = (kern, variant, grid - self._nsm)
                    continue
                self.persist_error = f"{type(e).__name__}: {e}"
                self.path = "graph"
                self._capture()
                return None  # run() goes on with graph batches (the control block is armed)
        return self.cti.get(stream=self.stream)

    # ---- a run of accepted steps -----------------------------------------------------------
    def run(self, count: int, t_end: float | None) -> int:
        """Advance up to `count` accepted steps (stopping on t_end); returns the number taken and
        updates sim.t / sim.steps like Simulation._steps_unchecked."""
        sim, cp = self.sim, self.cp
        if count <= 0 or (t_end is not None and sim._landed(t_end)):
            return 0
        if self.path == "graph" and self.graph is None:
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
        out = self._launch_persistent() if self.path == "persistent" else None
        if out is not None:
            done = int(out[I_STEPS])
        attempts_per_step = 1.0 + self.rejected / max(1, self.attempts)
        while self.path == "graph":
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
