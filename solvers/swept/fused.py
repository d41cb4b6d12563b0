"""The CUDA scheme of heat-1d, ks-1d and euler-1d: the three GPU strategies of docs/MODELS.md [P3] (`method`).

    classic        one kernel launch per tier, global memory (the paper's Classic); whole steps
                   of a batched run replayed as CUDA graphs of CLASSIC_GRAPH steps (core's
                   GraphCache), so the host's launch cost no longer sets the pace;
    classic-graph  the same kernels, captured once as a CUDA graph of `graph_steps` steps and
                   replayed (the fair modern rival: no Python and almost no launch cost per step);
    swept          the swept time-space decomposition (the paper's Shared variant): a block of
                   `block` nodes advances its triangle, then diamonds, in shared memory and passes
                   only its edges through global memory; output exists every cycle_steps steps.

`run(count, t, t_end)` (reference.TieredScheme.run) takes whole swept cycles or graph replays
first and classic steps for the rest, keeping time with core.clock. All three compute the same
tiers with the same device functions (kernels/swept.cuh), so they agree to round-off. Each model's
class derives from its reference scheme (the stencil's shape and the kernels' scalars) and names
its kernels/<model>.cu.
"""
from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import numpy as np

from ..core.backend import load_kernels, on_stream
from ..core.device_clock import GraphCache
from ..core.errors import ParameterError
from .reference import EulerScheme, HeatScheme, KSScheme, TieredScheme

KERNELS = Path(__file__).resolve().parent / "kernels"
STAGES = ("classic", "up", "diamond", "down")
GRAPH_STEPS = 256  # steps captured in one CUDA graph (classic-graph)
CLASSIC_GRAPH = 32  # classic: whole steps replayed as graphs of this many (even: the ping-pong)


_FINAL, _PREDICTOR = np.int32(0), np.int32(1)  # the tier flag of the classic kernels


class SweptFused(TieredScheme):
    """The fused launches of a tiered scheme. `graph_steps`: the steps one captured CUDA graph
    holds (classic-graph; even, so that heat's ping-pong ends where it began)."""

    CU_FILE: ClassVar[Path]
    PREFIX: ClassVar[str] = ""    # kernel templates <PREFIX>_classic, _up, _diamond, _down
    nvrtc_options: ClassVar[tuple[str, ...]] = ()

    def __init__(self, sim, graph_steps: int = GRAPH_STEPS):
        super().__init__(sim)
        if graph_steps < 2 or graph_steps % 2:
            raise ValueError(f"graph_steps must be even and positive, not {graph_steps}")
        self.graph_steps = graph_steps
        self.V = sim.xp.empty_like(sim.U)  # heat: the other half of the ping-pong; else predictor
        self._graphs: dict = {}
        self._E = None
        self._args = (None, ())  # (dt, kernel_args(dt)): the per-launch scalars, built once per dt
        n, W = sim.U.shape[1], sim.params["block"]
        self._launch = (((n + W - 1) // W,), (W,), np.int32(n))
        cu, prefix, options = self.kernel_source(sim.params)
        ks = load_kernels(cu, sim.dtype, [f"{prefix}_{k}" for k in STAGES], options=options)
        self._k = {k: ks[f"{prefix}_{k}"] for k in STAGES}
        swept = sim.params["method"] == "swept"
        W = sim.params["block"]
        limit = min(self._k[k].max_threads_per_block for k in (STAGES if swept else STAGES[:1]))
        if W > limit:
            raise ParameterError(
                f"{sim.model}: parameter 'block' = {W} exceeds what the {sim.dtype} kernels "
                f"of this GPU can launch (their registers allow {limit} threads per block); "
                "allowed: one of " + ", ".join(str(b) for b in sim.schema()["block"].choices
                                               if b <= limit))
        if swept and self._shared_bytes() > 48 * 1024:
            for k in STAGES[1:]:
                self._k[k].max_dynamic_shared_size_bytes = self._shared_bytes()

    @classmethod
    def kernel_source(cls, params) -> tuple[Path, str, tuple[str, ...]]:
        """(the .cu file, the kernels' name prefix, NVRTC options) of the kernels for `params`."""
        return cls.CU_FILE, cls.PREFIX, cls.nvrtc_options

    def _shared_bytes(self) -> int:
        NV, W = self.sim.U.shape[0], self.sim.params["block"]
        return 2 * NV * (W + 2 * self.R) * np.dtype(self.sim.dtype).itemsize

    def period(self) -> int:
        method = self.sim.params["method"]
        if method == "classic-graph":
            return self.graph_steps
        if method == "classic":  # whole steps are launched in one tight loop (_classic_run)
            return 1
        return super().period()

    def _kernel_args(self, dt: float) -> tuple:
        if self._args[0] != dt:
            self._args = (dt, self.kernel_args(dt))
        return self._args[1]

    def invalidate(self) -> None:
        self._args = (None, ())
        if self._classic_graphs is not None:
            self._classic_graphs.clear()
        super().invalidate()

    def classic(self, dt: float) -> None:
        sim = self.sim
        U, k, args = sim.U, self._k["classic"], self._kernel_args(dt)
        grid, block, N = self._launch
        if self.tiers_per_step == 1:  # out of place, then swap the rows' roles
            k(grid, block, (U, U, self.V, N, _FINAL) + args)
            new, self.V = self.V, U
            sim.set_rows(new)
        else:                          # predictor into V, final in place into U
            k(grid, block, (U, U, self.V, N, _PREDICTOR) + args)
            k(grid, block, (self.V, U, U, N, _FINAL) + args)

    def batch(self, count: int, dt: float) -> None:
        method = self.sim.params["method"]
        if method == "swept":
            self._swept(count, dt)
        elif method == "classic":
            self._classic_run(count, dt)
        else:
            self._replay(count, dt)

    def _classic_run(self, count: int, dt: float) -> None:
        """`count` whole classic steps of dt: the same launches as `classic`, one per tier;
        groups of CLASSIC_GRAPH steps replayed as CUDA graphs (core's GraphCache: the launch
        arguments are stable), the rest in one tight loop with their argument tuples built once
        and the ping-pong's rows rebound once at the end (the time is kept by the caller)."""
        if count >= CLASSIC_GRAPH:
            if self._classic_graphs is None:
                self._classic_graphs = GraphCache(self.sim.xp, CLASSIC_GRAPH)
            key = (int(self.sim.U.data.ptr), int(self.V.data.ptr), self._kernel_args(dt))
            graph = self._classic_graphs.get(key, lambda n: self._classic_loop(n, dt),
                                             lambda: None)
            if graph is not None:
                stream = self.sim.xp.cuda.get_current_stream()
                for _ in range(count // CLASSIC_GRAPH):
                    graph.launch(stream)
                count %= CLASSIC_GRAPH
        self._classic_loop(count, dt)

    _classic_graphs = None

    def _classic_loop(self, count: int, dt: float) -> None:
        sim = self.sim
        U, V, k, args = sim.U, self.V, self._k["classic"], self._kernel_args(dt)
        grid, block, N = self._launch
        if self.tiers_per_step == 1:  # out of place, U -> V -> U ...
            even, odd = (U, U, V, N, _FINAL) + args, (V, V, U, N, _FINAL) + args
            for i in range(count):
                k(grid, block, odd if i & 1 else even)
            if count & 1:
                self.V = U
                sim.set_rows(V)
        else:                          # predictor into V, final in place into U
            pred, final = (U, U, V, N, _PREDICTOR) + args, (V, U, U, N, _FINAL) + args
            for _ in range(count):
                k(grid, block, pred)
                k(grid, block, final)

    def _swept(self, cycles: int, dt: float) -> None:
        sim = self.sim
        xp, U = sim.xp, sim.U
        NV, n = U.shape
        W = sim.params["block"]
        if self._E is None:
            self._E = (xp.empty((2, NV, n), dtype=sim.dtype), xp.empty((2, NV, n), dtype=sim.dtype))
        grid, blk, shm = (n // W,), (W,), self._shared_bytes()
        args, N = self._kernel_args(dt), np.int32(n)
        src, dst = self._E
        self._k["up"](grid, blk, (U, src, N) + args, shared_mem=shm)
        for stage in range(1, cycles):
            shift = np.int32((stage % 2) * (W // 2))
            self._k["diamond"](grid, blk, (src, dst, N, shift) + args, shared_mem=shm)
            src, dst = dst, src
        shift = np.int32((cycles % 2) * (W // 2))
        self._k["down"](grid, blk, (src, U, N, shift) + args, shared_mem=shm)

    def _replay(self, replays: int, dt: float) -> None:
        cp = self.sim.xp
        key = (int(self.sim.U.data.ptr), dt)
        graph = self._graphs.get(key)
        if graph is None:
            stream = cp.cuda.Stream(non_blocking=True)
            cp.cuda.get_current_stream().synchronize()
            with on_stream(stream):
                stream.begin_capture()
                for _ in range(self.graph_steps):  # even: heat's ping-pong ends where it began
                    self.classic(dt)
                graph = stream.end_capture()
            self._graphs[key] = graph
        stream = cp.cuda.get_current_stream()
        for _ in range(replays):
            graph.launch(stream)


class HeatFused(SweptFused, HeatScheme):
    CU_FILE, PREFIX = KERNELS / "heat.cu", "heat"


class KSFused(SweptFused, KSScheme):
    CU_FILE, PREFIX = KERNELS / "ks.cu", "ks"


class EulerFused(SweptFused, EulerScheme):
    """scheme=paper: kernels/euler.cu; scheme=muscl-hllc: kernels/muscl.cu."""

    CU_FILE, PREFIX = KERNELS / "euler.cu", "euler"
    # No fused multiply-add contraction in the paper's scheme: the pressure-ratio limiter is
    # discontinuous where its denominator P_{i+1} − P_i vanishes (uniform ghost cells at the
    # Dirichlet ends), and a contracted a·b − c leaves the rounding error of c instead of an exact
    # 0 there. On the H100 that flipped min(P_r, 1) from 0 to 1 at the right end in float64
    # (error 4.9e-3 after 20 steps; a sentinel ghost state with another rounding matched NumPy to
    # 4e-16). The MC limiter and HLLC are continuous in their data: contraction is harmless there.
    nvrtc_options = ("--fmad=false",)
    SOURCES = {"paper": (KERNELS / "euler.cu", "euler", ("--fmad=false",)),
               "muscl-hllc": (KERNELS / "muscl.cu", "muscl", ())}

    @classmethod
    def kernel_source(cls, params):
        return cls.SOURCES[params["scheme"]]
