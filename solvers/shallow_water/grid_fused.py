"""The fused CUDA path of the structured shallow-water scheme: launches grid_kernels.cu.

A step is one reduction kernel (sw_cfl: the same-step CFL Δt into a device slot) and one fused
pass per stage (sw_step1 for order 1; three sw_stage3 launches for order 3), each computing all
four edges of its cell and the update, reading Δt from the slot. The host needs Δt only to advance
the clock: it is copied on a side stream as soon as sw_cfl has finished, while the update kernel
runs, so the GPU never waits for the host.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.backend import load_kernels

CU_FILE = Path(__file__).with_name("grid_kernels.cu")
BLOCK = (32, 8)
BLOCK3 = (32, 4)


class GridFusedSolver:
    def __init__(self, *, dtype: str, shape: tuple[int, int], g: float, dx: float, dy: float,
                 cfl: float, order: int):
        import cupy as cp
        self.cp = cp
        self.real = np.dtype(dtype).type
        self.ny, self.nx = shape
        self.g, self.dx, self.dy, self.cfl, self.order = g, dx, dy, cfl, order
        opts = ("--use_fast_math",) if dtype == "float32" else ()
        self.k = load_kernels(CU_FILE, dtype, ["sw_cfl", "sw_step1", "sw_stage3"], options=opts)
        self.bits = np.uint32 if dtype == "float32" else np.uint64
        self.slot = cp.empty(1, dtype=self.bits)
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

    def step(self, h, qx, qy, H, dt_limit):
        cp, r = self.cp, self.real
        stream = cp.cuda.get_current_stream()
        limit = np.float64(np.inf if dt_limit is None else dt_limit)
        nx, ny = np.int32(self.nx), np.int32(self.ny)
        rdx, rdy, g = r(1 / self.dx), r(1 / self.dy), r(self.g)
        cp.cuda.runtime.memsetAsync(self.slot.data.ptr, 0xFF, self.slot.nbytes, stream.ptr)
        self.k["sw_cfl"](self._grid(BLOCK), BLOCK, (h, qx, qy, nx, ny, r(self.dx), r(self.dy), g,
                                                  r(self.cfl), self.slot))
        self.event.record(stream)
        if self.order == 1:
            out = self._buffers(h)
            self.k["sw_step1"](self._grid(BLOCK), BLOCK,
                               (h, qx, qy, H, *out, nx, ny, rdx, rdy, g, self.slot, limit))
        else:
            eps = r(min(self.dx, self.dy) ** 2)
            u0 = (h, qx, qy)
            u = u0
            for a, b in ((0.0, 1.0), (0.75, 0.25), (1.0 / 3.0, 2.0 / 3.0)):
                out = self._buffers(h)
                self.k["sw_stage3"](self._grid(BLOCK3), BLOCK3,
                                    (*u, H, *u0, *out, nx, ny, rdx, rdy, g, eps, r(a), r(b),
                                     self.slot, limit))
                if u is not u0:
                    self.spare.extend(u)
                u = out
            out = u
        dt = self.dt()
        dt = dt if dt_limit is None else min(dt, dt_limit)
        self.spare.extend((h, qx, qy))
        return tuple(out), dt
