"""What heat-1d, ks-1d and euler-1d share: the three GPU strategies of seed 003 behind `method`.

    classic        one kernel launch per sub-step (tier), global memory (the paper's Classic);
    classic-graph  the same kernels, captured once as a CUDA graph of GRAPH_STEPS steps and
                   replayed (the fair modern rival: no Python and almost no launch cost per step);
    swept          the swept time-space decomposition (the paper's Shared variant): a block of
                   `block` nodes advances its triangle, then diamonds, in shared memory and passes
                   only its edges through global memory; output exists every steps_per_cycle steps.

`step(k)` works for any k: whole swept cycles (or graph replays) first, the remainder with classic
steps. All three compute the same tiers with the same device functions, so they agree to round-off.
On the NumPy backend and the GPU `array` path, swept runs the array emulation of the swept order
(`stencil.swept_emulate`) and classic-graph runs classic.

A model subclass sets R, NV, tiers_per_step, bc, CU_FILE, PREFIX and provides
    _tier_fn(dt) -> tier(par, S, b)   the scheme as xp code,
    _kernel_args(dt) -> tuple          scalars after (…, n) in the kernels' signatures,
    _ghosts() -> (left, right) | None  Dirichlet ghost states,
and keeps its prognostic variables in self._U, an (NV, n) array whose rows are the state arrays.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import ClassVar

import numpy as np

from ..core.backend import load_kernels
from ..core.errors import ParameterError
from ..core.params import Param
from ..core.simulation import Simulation
from . import stencil

METHODS = ("classic", "classic-graph", "swept")
BLOCKS = (32, 64, 128, 256, 512, 1024)
GRAPH_STEPS = 256  # steps captured in one CUDA graph (classic-graph)

METHOD = Param("method", "str", "classic",
               "GPU strategy: classic (one launch per sub-step), classic-graph (the same kernels "
               "replayed from a CUDA graph of 256 steps), swept (swept time-space decomposition "
               "in shared memory; output every block/2 steps for heat, block/8 for KS and Euler, "
               "classic steps for the rest). On the CPU and the array path swept runs its array "
               "emulation and classic-graph runs classic.",
               choices=METHODS)
BLOCK = Param("block", "int", 256,
              "Threads per GPU block; for swept also the nodes per block (nx must be a multiple).",
              choices=BLOCKS)


def _include_options() -> tuple[str, ...]:
    """NVRTC options for the family's .cu files: the include path of swept.cuh and a hash of its
    text (CuPy's kernel cache keys on the .cu source and the options, not on included headers)."""
    cuh = Path(__file__).with_name("swept.cuh")
    digest = hashlib.sha1(cuh.read_bytes()).hexdigest()[:16]
    return (f"-I{cuh.parent}", f"-DSWEPT_CUH_SHA1=0x{digest}")


class SweptSimulation(Simulation):
    R: ClassVar[int] = 1
    NV: ClassVar[int] = 1
    tiers_per_step: ClassVar[int] = 1
    bc: ClassVar[str] = "mirror"
    CU_FILE: ClassVar = None
    PREFIX: ClassVar[str] = ""
    nvrtc_options: ClassVar[tuple[str, ...]] = ()  # extra compiler options of the model's kernels
    state_names: ClassVar[tuple[str, ...]] = ()  # the rows of self._U, in order
    check_interval = 4096
    size_param = "nx"
    bench_sizes = tuple(2**k for k in range(11, 21, 3))
    bench_variants = ({"method": "classic"}, {"method": "classic-graph"}, {"method": "swept"})
    graph_steps = GRAPH_STEPS  # steps per captured graph (even: heat's ping-pong)

    # ---- parameters -------------------------------------------------------------------------
    @classmethod
    def _check_params(cls, p: dict) -> None:
        if p["method"] == "swept":
            W, n = p["block"], p["nx"]
            if n % W or n < W:
                near = max(W, round(n / W) * W)
                raise ParameterError(
                    f"{cls.model}: parameter 'nx' = {n} cannot be tiled by method 'swept' with "
                    f"'block' = {W}: allowed: nx a positive multiple of block (e.g. {near}), or a "
                    f"smaller block, or method 'classic'")

    # ---- set-up -----------------------------------------------------------------------------
    def _setup_buffers(self) -> None:
        """Scratch rows and kernels, once self._U (NV, n) exists."""
        xp = self.xp
        self._V = xp.empty_like(self._U)  # heat: the other half of the ping-pong; else predictor
        self._graphs: dict = {}
        self._E = None
        self.method = self.params["method"]
        W = self.params["block"]
        self.cycle_steps = stencil.steps_per_cycle(W, self.R, self.tiers_per_step)
        if self.method == "swept":
            self.check_interval = max(self.check_interval, 64 * self.cycle_steps)
        if self.kernel == "fused":
            names = [f"{self.PREFIX}_{k}" for k in ("classic", "up", "diamond", "down")]
            ks = load_kernels(self.CU_FILE, self.dtype, names,
                              options=_include_options() + self.nvrtc_options)
            self._k = {k.split("_", 1)[1]: v for k, v in ks.items()}
            used = ("classic", "up", "diamond", "down") if self.method == "swept" else ("classic",)
            limit = min(self._k[k].max_threads_per_block for k in used)
            if W > limit:
                raise ParameterError(
                    f"{self.model}: parameter 'block' = {W} exceeds what the {self.dtype} kernels "
                    f"of this GPU can launch (their registers allow {limit} threads per block); "
                    f"allowed: one of " + ", ".join(str(b) for b in BLOCKS if b <= limit))
            if self.method == "swept":
                shm = self._shared_bytes()
                if shm > 48 * 1024:
                    for k in ("up", "diamond", "down"):
                        self._k[k].max_dynamic_shared_size_bytes = shm

    def _shared_bytes(self) -> int:
        W = self.params["block"]
        return 2 * self.NV * (W + 2 * self.R) * np.dtype(self.dtype).itemsize

    # ---- hooks for subclasses -----------------------------------------------------------------
    def _tier_fn(self, dt: float):
        raise NotImplementedError

    def _kernel_args(self, dt: float) -> tuple:
        raise NotImplementedError

    def _ghosts(self):
        return None

    @property
    def dt(self) -> float:
        raise NotImplementedError

    # ---- one classic step -----------------------------------------------------------------------
    def _step(self, dt_limit):
        dt = self.dt if dt_limit is None else min(self.dt, dt_limit)
        self._classic_step(dt)
        return dt

    def _classic_step(self, dt: float) -> None:
        if self.kernel == "fused":
            self._launch_classic(dt)
        else:
            U = stencil.classic_steps(self._tier_fn(dt), self.tiers_per_step, self._U, self.R,
                                      self.bc, self._ghosts(), self.xp)
            self._U[...] = U

    def _launch_classic(self, dt: float) -> None:
        n = self._U.shape[1]
        W = self.params["block"]
        grid, k, args = ((n + W - 1) // W,), self._k["classic"], self._kernel_args(dt)
        N = np.int32(n)
        if self.tiers_per_step == 1:  # out of place, then swap the rows' roles
            k(grid, (W,), (self._U, self._U, self._V, N, np.int32(0)) + args)
            self._swap()
        else:                          # predictor into V, final in place into U
            k(grid, (W,), (self._U, self._U, self._V, N, np.int32(1)) + args)
            k(grid, (W,), (self._V, self._U, self._U, N, np.int32(0)) + args)

    def _swap(self) -> None:
        self._U, self._V = self._V, self._U
        self._bind_state()

    def _bind_state(self) -> None:
        """Point the state arrays at the rows of self._U (after a ping-pong swap)."""
        for c, name in enumerate(self.state_names):
            self.state[name] = self._U[c]

    # ---- many steps: swept cycles or graph replays, classic for the rest ----------------------
    def _period(self) -> int:
        if self.method == "swept":
            return self.cycle_steps
        if self.method == "classic-graph" and self.kernel == "fused":
            return self.graph_steps
        return 0

    def _steps_unchecked(self, count: int, t_end):
        P = self._period()
        if not P or count < P:
            return super()._steps_unchecked(count, t_end)
        q = self._full_steps(count, t_end)
        batches = q // P
        if batches:
            if self.method == "swept":
                self._swept_run(batches)
            else:
                self._graph_run(batches)
            # the same float sums as one step at a time (cumsum adds in order)
            acc = np.full(batches * P + 1, float(self.dt))
            acc[0] = self.t
            self.t = float(np.cumsum(acc)[-1])
            self.steps += batches * P
        k = batches * P
        return k + super()._steps_unchecked(count - k, t_end)

    def _full_steps(self, count: int, t_end) -> int:
        """How many of the next `count` steps the step-by-step loop would take with the full dt
        (before a shortened step that lands on t_end)."""
        if t_end is None:
            return count
        t, dt, q = self.t, float(self.dt), 0
        while q < count:
            rest = t_end - t
            if rest <= 1e-13 * max(1.0, abs(t_end)) or dt >= rest * (1 - 1e-12):
                break
            t += dt
            q += 1
        return q

    def _swept_run(self, cycles: int) -> None:
        dt = self.dt
        if self.kernel != "fused":
            self._U[...] = stencil.swept_emulate(
                self._tier_fn(dt), self._U, cycles, self.params["block"], self.R,
                self.tiers_per_step, self.bc, self._ghosts(), self.xp)
            return
        xp = self.xp
        n = self._U.shape[1]
        W = self.params["block"]
        if self._E is None:
            self._E = (xp.empty((2, self.NV, n), dtype=self.dtype),
                       xp.empty((2, self.NV, n), dtype=self.dtype))
        grid, blk, shm = (n // W,), (W,), self._shared_bytes()
        args, N = self._kernel_args(dt), np.int32(n)
        src, dst = self._E
        self._k["up"](grid, blk, (self._U, src, N) + args, shared_mem=shm)
        for stage in range(1, cycles):
            shift = np.int32((stage % 2) * (W // 2))
            self._k["diamond"](grid, blk, (src, dst, N, shift) + args, shared_mem=shm)
            src, dst = dst, src
        shift = np.int32((cycles % 2) * (W // 2))
        self._k["down"](grid, blk, (src, self._U, N, shift) + args, shared_mem=shm)

    def _graph_run(self, replays: int) -> None:
        cp = self.xp
        dt = float(self.dt)
        key = (int(self._U.data.ptr), dt, self.graph_steps)
        graph = self._graphs.get(key)
        if graph is None:
            stream = cp.cuda.Stream(non_blocking=True)
            cp.cuda.get_current_stream().synchronize()
            with stream:
                stream.begin_capture()
                for _ in range(self.graph_steps):  # even: heat's ping-pong ends where it began
                    self._launch_classic(dt)
                graph = stream.end_capture()
            self._graphs[key] = graph
        stream = cp.cuda.get_current_stream()
        for _ in range(replays):
            graph.launch(stream)

    # ---- bookkeeping --------------------------------------------------------------------------
    def work(self):
        n = self.params["nx"]
        return n, 2 * self.NV * n * np.dtype(self.dtype).itemsize  # read and write the state once
