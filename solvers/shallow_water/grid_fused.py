"""The fused CUDA path of the structured shallow-water scheme: launches grid_kernels.cu.

Δt lives in a device slot that the update kernels read; the host needs it only to advance the
clock, and copies it on a side stream as soon as it is known, while the update runs, so the GPU
never waits for the host.

- order 1, variant "strip" (the default): ONE pass per step, sw_strip1, which updates the state
  and reduces the same-step CFL Δt of the next step from the new state (the separate pass sw_cfl
  runs only for the first step and after the state was replaced: set_field, restore, load).
- order 1, variant "cell": sw_cfl then sw_step1 (one thread per cell, all four edges recomputed;
  the plain fused kernel, kept as the rung below "strip" in the benchmarks).
- order 3: sw_cfl, then three sw_stage3 launches (SSP-RK3 stages).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.backend import load_kernels

CU_FILE = Path(__file__).with_name("grid_kernels.cu")
BLOCK = (32, 8)
BLOCK3 = (32, 4)
STRIP = 29  # columns owned by a warp of sw_strip1 (grid_kernels.cu)


class GridFusedSolver:
    def __init__(self, *, dtype: str, shape: tuple[int, int], g: float, dx: float, dy: float,
                 cfl: float, order: int, variant: str = "strip"):
        import cupy as cp
        self.cp = cp
        self.real = np.dtype(dtype).type
        self.ny, self.nx = shape
        self.g, self.dx, self.dy, self.cfl, self.order = g, dx, dy, cfl, order
        opts = ("--use_fast_math",) if dtype == "float32" else ()
        self.k = load_kernels(CU_FILE, dtype, ["sw_cfl", "sw_step1", "sw_strip1", "sw_stage3"],
                              options=opts)
        self.variant = variant if order == 1 else "stages"
        self.bits = np.uint32 if dtype == "float32" else np.uint64
        self.slot = cp.empty(1, dtype=self.bits)
        self.next_slot = cp.empty(1, dtype=self.bits)
        self.next_event = cp.cuda.Event(disable_timing=True)
        self.valid = False  # does self.slot hold the Δt of the current state?
        n = self.nx * self.ny
        self.rows = 8 if n < 2**22 else (16 if n < 2**24 else 32)  # rows per warp (strip)
        self.pinned = cp.cuda.alloc_pinned_memory(8)
        self.host_dt = np.frombuffer(self.pinned, dtype=self.real, count=1)
        self.side = cp.cuda.Stream(non_blocking=True)
        self.event = cp.cuda.Event(disable_timing=True)
        self.spare: list = []  # output buffers, recycled from the previous step's inputs

    def _grid(self, block):
        return ((self.nx + block[0] - 1) // block[0], (self.ny + block[1] - 1) // block[1])

    def _buffers(self, like, count=3):
        while len(self.spare) < count:
            self.spare.append(self.cp.empty_like(like))
        return [self.spare.pop() for _ in range(count)]

    def dt(self) -> float:
        """Wait for the reduction of this step and return its Δt (the update keeps running)."""
        cp = self.cp
        self.side.wait_event(self.event)
        cp.cuda.runtime.memcpyAsync(self.pinned.ptr, self.slot.data.ptr, self.slot.nbytes,
                                    cp.cuda.runtime.memcpyDeviceToHost, self.side.ptr)
        self.side.synchronize()
        return float(self.host_dt[0])

    def invalidate(self) -> None:
        """The state was replaced: the Δt folded into the last step no longer applies."""
        self.valid = False

    def _reduce_dt(self, h, qx, qy, stream) -> None:
        r = self.real
        cp = self.cp
        cp.cuda.runtime.memsetAsync(self.slot.data.ptr, 0xFF, self.slot.nbytes, stream.ptr)
        self.k["sw_cfl"](self._grid(BLOCK), BLOCK,
                         (h, qx, qy, np.int32(self.nx), np.int32(self.ny), r(self.dx), r(self.dy),
                          r(self.g), r(self.cfl), self.slot))
        self.event.record(stream)

    def step(self, h, qx, qy, H, dt_limit):
        cp, r = self.cp, self.real
        stream = cp.cuda.get_current_stream()
        limit = np.float64(np.inf if dt_limit is None else dt_limit)
        nx, ny = np.int32(self.nx), np.int32(self.ny)
        rdx, rdy, g = r(1 / self.dx), r(1 / self.dy), r(self.g)
        if self.variant != "strip" or not self.valid:
            self._reduce_dt(h, qx, qy, stream)
        out = self._buffers(h)
        if self.variant == "strip":
            M = self.rows
            cp.cuda.runtime.memsetAsync(self.next_slot.data.ptr, 0xFF, self.next_slot.nbytes,
                                        stream.ptr)
            segs = (self.ny + M - 1) // M
            grid = ((self.nx + STRIP - 1) // STRIP, (segs + BLOCK3[1] - 1) // BLOCK3[1])
            self.k["sw_strip1"](grid, BLOCK3, (h, qx, qy, H, *out, nx, ny, np.int32(M), rdx, rdy,
                                               r(self.dx), r(self.dy), g, r(self.cfl), self.slot,
                                               self.next_slot, limit))
            self.next_event.record(stream)
        elif self.variant == "cell":
            self.k["sw_step1"](self._grid(BLOCK), BLOCK,
                               (h, qx, qy, H, *out, nx, ny, rdx, rdy, g, self.slot, limit))
        else:
            eps = r(min(self.dx, self.dy) ** 2)
            u0 = (h, qx, qy)
            u = u0
            for a, b in ((0.0, 1.0), (0.75, 0.25), (1.0 / 3.0, 2.0 / 3.0)):
                self.k["sw_stage3"](self._grid(BLOCK3), BLOCK3,
                                    (*u, H, *u0, *out, nx, ny, rdx, rdy, g, eps, r(a), r(b),
                                     self.slot, limit))
                if u is not u0:
                    self.spare.extend(u)
                u = out
                if b != 2.0 / 3.0:
                    out = self._buffers(h)
            out = u
        dt = self.dt()
        if self.variant == "strip":  # the next step's Δt is in next_slot once next_event passed
            self.slot, self.next_slot = self.next_slot, self.slot
            self.event, self.next_event = self.next_event, self.event
            self.valid = True
        dt = dt if dt_limit is None else min(dt, dt_limit)
        self.spare.extend((h, qx, qy))
        return tuple(out), dt
