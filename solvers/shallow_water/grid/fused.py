"""The fused CUDA scheme of the structured shallow water: launches kernels/grid.cu.

The same-step CFL condition is kept on the device as z_max = max_i dy (sW + sE) + dx (sS + sN)
(the edge speeds of cell i) in a slot that the update kernels read (Δt = 2 δ dx dy / z_max); the
host needs Δt only to advance the clock, and copies the slot on a side stream as soon as it is
known, while the update runs, so the GPU never waits for the host. The host computes Δt from the
slot with the same correctly rounded division as the device.

- order 1, variant "strip" (production): ONE pass per step, sw_strip1, which updates the state
  and reduces z_max of the next step from the new state. Three slots are used in turn (this
  step's, the next step's, and the one the kernel clears for the step after), so a step costs one
  launch and no memset; the separate pass sw_cfl runs only for the first step and after the
  state was replaced (set_field, restore, load).
- order 1, variant "cell": sw_cfl then sw_step1 (one thread per cell, all four edges recomputed;
  the plain fused kernel, kept as the rung below "strip" in the benchmarks and tests).
- order 3: sw_cfl, then three sw_stage3 launches (SSP-RK3 stages; each block reconstructs its
  tile and one ring around it once, in shared memory, and solves every edge once). In float32 a
  step is three launches, not four: the first (SW3_RATES) writes L(u) and reduces z_max of u from
  the state it staged, and clears the next step's slot (three slots in turn, as the strip
  kernel); the second (SW3_FORMED) forms u + Δt L(u) as it stages its input, with the same
  rounding as a first stage writing it, so the states are those of sw_cfl + three stages bit for
  bit (a `gpu` test checks it). float64 keeps the pass: its tile has no room for h in the 48 KB
  of static shared memory.

The carbuncle cure (`shock_fix`, grid/reference.py): the update kernels read the cells' shock
sensors S from a buffer. The strip variant computes the NEXT step's sensors from the new state as
it computes the next step's z_max (into a second buffer; the two swap roles every step), so
sw_sensor runs only where that fold is not valid (the first step, and after the state was
replaced: the same bits as the fold, a `gpu` test checks it); the cell variant runs sw_sensor
before every step, order 3 before every stage in float64; in float32 each sw_stage3 computes the
sensors of its tile and one ring from the state it stages (the same bits, a `gpu` test checks
it). With shock_fix off S stays 0 (the same fluxes bit for bit) and sw_sensor never runs.

`variant`, `tuning` (the kernels' compile-time knobs, e.g. {"SW_STRIP_MINB": 0}) and `rows` (rows
per warp of the strip kernel) are for the benchmarks' sweeps (`sim.scheme = GridFused(sim, ...)`);
the defaults are production's.

`run` (what `Simulation` uses) queues a batch of up to BATCH steps
with no host round trip (every variant as CUDA graphs of GRAPH_STEPS steps, one launch each):
the clock is kept on the device by core's DeviceClock (kernels/grid.cu `step_size`, the protocol
of core's clock.cuh: Δt clamped to the end time, 0 once landed, each step's Δt recorded), and the
host replays the recorded steps with core/clock.py: one host wait per batch instead of one per
step, with the same times and states bit for bit. `step` keeps the per-step path (the host reads
Δt after each step).
"""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from ...core.device_clock import DeviceClock, GraphCache
from ...core.backend import load_kernels, resident_blocks
from ...core.run_ahead import LaneRunAhead, copy_all
from ...core.scheme import SchemeBase
from .reference import SSP3

CU_FILE = Path(__file__).parent / "kernels" / "grid.cu"
RIEMANN = Path(__file__).parents[1] / "kernels"  # riemann.cuh
BLOCK = (32, 8)
BLOCK_STRIP = (32, 4)
STRIP = 29  # columns owned by a warp of sw_strip1 (kernels/grid.cu)
BATCH = 960  # steps a batched run queues at most between two host waits (20 graphs: no
#             steps launched one by one at the end of a full batch). A host wait leaves the GPU
#             idle while the host replays the clock and queues the next batch: on small grids
#             that was a fifth of the time at 240 steps (H200, order 3 at 256²: +5 to +10 % at
#             960; docs/BENCHMARKS.md, "Longer batches on small grids"), and beside the window's
#             drawing each wait also waits for the GIL: at 1024² a window's call (1/32 s) is now
#             one wait instead of four (H100: 88 % → 90 % kept; "One host wait a frame")
# float32 strip kernel: up to 2048² the register cap of 6 blocks a SM (80 registers, no spills)
# beats the default 8 (64 registers, spilling): H200, cure on, 1024² +11 %, 2048² +1.5 %; above,
# a cap of 7 (72 registers, no spills) beats both: 4096² +2.5 %, 8192² +2 % over 8, while up to
# 2000² 6 with its rows beats 7 with its by 2-5 % (docs/BENCHMARKS.md, "Rows per warp by waves")
MINB6_CELLS = 2048 * 2048
# float32 sw_stage3: on launch-bound grids a cap of 3 resident blocks a SM (more registers, fewer
# spills) beats the default 4 (H200, docs/BENCHMARKS.md, "Shallow water order 3 in three
# launches": 256² +3 to +5 %; 1024² and 2048² −5 %)
STAGE_MINB3_CELLS = 2**17
SW3_STAGE, SW3_RATES, SW3_FORMED = 0, 1, 2  # sw_stage3's modes (kernels/stage3.cuh)
GRAPH_STEPS = 48  # steps of one CUDA graph (a multiple of 12: the output buffers take the
#                   state's roles in a cycle of 4 steps, the z_max slots in one of 3)


def strip_rows(nx: int, ny: int, resident: int) -> int:
    """Rows per warp of sw_strip1 on a grid of fewer than 2^22 cells. A warp's loop passes its M
    rows, one on each side and one more before (kernels/grid.cu), and the kernel is bound by
    instruction issue, so a launch costs about M + 3 row passes times the waves of blocks it needs
    (`resident` blocks run at once; a wave only partly filled costs nearly a whole one on the SMs
    that hold more than the others): the M in [6, 32] with the least ceil(blocks / resident)
    (M + 3), the smallest among equals. H200, float32, 1024²: M = 12 fills exactly one wave of
    792 blocks, 29.3k steps/s against 24.9k with M = 8 (1.45 waves); 512²: M = 6, 71.3k against
    63.5k; float64 (396 resident) +15 to +20 % from 512² to 2000² (docs/BENCHMARKS.md, "Rows per
    warp by waves"). On larger grids many waves make the tail small and the halo rows count: 16
    and 32."""
    def ceil(a: int, b: int) -> int:
        return -(-a // b)

    def cost(m: int) -> int:
        blocks = ceil(nx, STRIP) * ceil(ceil(ny, m), BLOCK_STRIP[1])
        return ceil(blocks, max(1, resident)) * (m + 3)

    return min(range(6, 33), key=cost)  # (min keeps the first, the smallest, among equals)


class GridFused(LaneRunAhead, SchemeBase):
    """Buffers and launches of the fused structured shallow water (module docstring).

    Run-ahead (core/run_ahead.py; `Simulation.step(n, ahead=m)`, the window's loop): a run with
    no end time may queue the next run of m steps before its host wait, in a spare lane (a
    second set of the state's arrays, their spare outputs, sensors, z_max slots and device
    clock) on a stream of its own, so the GPU is not idle while the host hands a frame over and
    calls again. The lane starts from device copies of the run's end state, sensors and slots
    (16 MB at 1024² in float32)."""

    FOLD_SENSOR = True  # may the kernels fold the sensors (a test turns it off)

    def __init__(self, sim, variant: str = "strip", tuning: dict | None = None,
                 rows: int | None = None):
        import cupy as cp
        self.cp = cp
        super().__init__(sim)
        dtype, order = sim.dtype, sim.params["order"]
        self.real = np.dtype(dtype).type
        self.ny, self.nx = sim.state["h"].shape  # (a decomposed run's strip: its rows)
        self.g, self.dx, self.dy, self.order = sim.params["g"], sim.dx, sim.dy, order
        opts = ("--use_fast_math",) if dtype == "float32" else ()
        from ..model import grid_shape  # (model.py imports this module)
        tuning = dict(tuning or {})
        cells = math.prod(grid_shape(sim.params))  # the whole grid (a decomposed run: all ranks')
        if dtype == "float32" and "SW_STRIP_MINB" not in tuning:
            tuning["SW_STRIP_MINB"] = 6 if cells <= MINB6_CELLS else 7
        if dtype == "float32" and "SW_STAGE_MINB" not in tuning and cells <= STAGE_MINB3_CELLS:
            tuning["SW_STAGE_MINB"] = 3
        opts += tuple(f"-D{k}={int(v)}" for k, v in sorted(tuning.items()))
        self.k = load_kernels(CU_FILE, dtype, ["sw_cfl", "sw_step1", "sw_strip1", "sw_stage3",
                                               "sw_sensor"], options=opts, include_dirs=(RIEMANN,))
        self.fix = bool(sim.params.get("shock_fix", False))
        self.S = cp.zeros((self.ny, self.nx), dtype=dtype)  # the cells' shock sensors
        self.variant = variant if order == 1 else "stages"
        # the strip kernel writes the next step's sensors into S_next (then the two swap)
        self.fold = self.fix and self.variant == "strip" and self.FOLD_SENSOR
        # float32 order 3: a step is three launches (SW3_RATES, SW3_FORMED, SW3_STAGE: the Δt
        # pass folded into the first, which then clears the next step's slot as the strip kernel
        # does) and each computes its tile's sensors itself (S passed as null)
        self.cfl3 = order == 3 and dtype == "float32" and self.FOLD_SENSOR
        self.fold3 = self.fix and self.cfl3
        self.S_next = cp.zeros_like(self.S) if self.fold else None
        self.s_valid = False  # does S hold the sensors of the current state (folded)?
        self.bits = np.uint32 if dtype == "float32" else np.uint64
        self.slots = cp.zeros(3, dtype=self.bits)
        self.slot = [self.slots[s:s + 1] for s in range(3)]
        self.events = [cp.cuda.Event(disable_timing=True) for _ in range(3)]
        self.cur = 0        # the slot that holds z_max of the current state
        self.valid = False  # does it (strip variant: the one folded into the last step)?
        n = self.nx * self.ny
        if rows is None:  # rows per warp (strip); PDESTUDIO_STRIP_ROWS: a tuning/test knob
            rows = int(os.environ.get("PDESTUDIO_STRIP_ROWS", "0") or 0) or (
                strip_rows(self.nx, self.ny, resident_blocks(self.k["sw_strip1"], 128))
                if n < 2**22 else (16 if n < 2**24 else 32))
        self.rows = rows
        self.pinned = cp.cuda.alloc_pinned_memory(8)
        self.host_z = np.frombuffer(self.pinned, dtype=self.real, count=1)
        self.side = cp.cuda.Stream(non_blocking=True)
        self.spare: list = []  # output buffers, recycled from the previous step's inputs
        M = self.rows
        segs = (self.ny + M - 1) // M
        self.strip_grid = ((self.nx + STRIP - 1) // STRIP,
                           (segs + BLOCK_STRIP[1] - 1) // BLOCK_STRIP[1])
        self.block3 = (32, 8) if dtype == "float32" else (32, 4)  # Tile3 in kernels/stage3.cuh
        self._launch_args()
        self.batch = BATCH
        sim.check_interval = self.batch  # one batch between two finiteness checks

    def _launch_args(self) -> None:
        """The constant launch arguments (k_dt = 2 δ dx dy holds the live cfl)."""
        r, g, dx, dy = self.real, self.g, self.dx, self.dy
        self.k_dt = r(2 * self.sim.params["cfl"] * dx * dy)
        nx_, ny_ = np.int32(self.nx), np.int32(self.ny)
        rdx, rdy, gg = r(1 / dx), r(1 / dy), r(g)
        self.cfl_args = (nx_, ny_, r(dx), r(dy), gg)
        self.cell_args = (nx_, ny_, rdx, rdy, gg, self.k_dt)
        self.strip_args = (nx_, ny_, np.int32(self.rows), rdx, rdy, r(dx), r(dy), gg, self.k_dt)
        eps = r(self.sim.weno_eps)  # CWENO3's ε = (min(dx, dy)/ℓ)² (grid/reference.py)
        self.stage_args = [(nx_, ny_, rdx, rdy, gg, eps, r(a), r(b), self.k_dt) for a, b in SSP3]
        self.dxy = (r(dx), r(dy))

    def _grid(self, block):
        return ((self.nx + block[0] - 1) // block[0], (self.ny + block[1] - 1) // block[1])

    def _buffers(self, like, count=3):
        while len(self.spare) < count:
            self.spare.append(self.cp.empty_like(like))
        return [self.spare.pop() for _ in range(count)]

    def dt(self) -> float:
        """Wait for the reduction of this step and return its Δt (the update keeps running)."""
        cp, s = self.cp, self.cur
        self.side.wait_event(self.events[s])
        cp.cuda.runtime.memcpyAsync(self.pinned.ptr, self.slot[s].data.ptr, self.slots.itemsize,
                                    cp.cuda.runtime.memcpyDeviceToHost, self.side.ptr)
        self.side.synchronize()
        z = self.host_z[0]
        if not z > 0:  # every z_i was NaN: the step diverged (the base class restores)
            return math.inf
        return float(self.k_dt / z)  # the device's division (correctly rounded, same type)

    def invalidate(self) -> None:
        """The state was replaced (the Δt folded into the last step no longer applies) or cfl
        changed. The CUDA graphs are kept while the launch arguments stay the same (a snapshot
        for the window's timeline invalidates every few frames): a graph is looked up by the
        buffers it was captured on, and captured again for new ones."""
        self.valid = self.s_valid = False
        before = (self.strip_args, self.cell_args, self.stage_args)
        self._launch_args()
        if self._graphs and (self.strip_args, self.cell_args, self.stage_args) != before:
            self._graphs.clear()

    def _reduce_dt(self, h, qx, qy, stream) -> None:
        cp = self.cp
        # all three slots: the strip kernel's output slot must start at 0 too
        cp.cuda.runtime.memsetAsync(self.slots.data.ptr, 0, self.slots.nbytes, stream.ptr)
        self.k["sw_cfl"](self._grid(BLOCK), BLOCK, (h, qx, qy, *self.cfl_args,
                                                    self.slot[self.cur]))
        if not stream.is_capturing():  # (dt() waits on it: the per-step path, never a graph)
            self.events[self.cur].record(stream)

    NO_CLOCK = DeviceClock.NULL  # the kernels' clock arguments on the per-step path (null)

    def _queue_step(self, limit, clk=NO_CLOCK):
        """Queue one step on the current stream (Δt from this step's z_max slot, at most
        `limit`; `clk`: the clock arguments of a batched run). Returns the new state."""
        cp, state = self.cp, self.sim.state
        h, qx, qy, H = state["h"], state["hu"], state["hv"], state["H"]
        stream = cp.cuda.get_current_stream()
        strip = self.variant == "strip"
        if self.cfl3:  # the first stage reduces z_max into a slot that must start at 0
            if not self.valid:
                cp.cuda.runtime.memsetAsync(self.slots.data.ptr, 0, self.slots.nbytes, stream.ptr)
        elif not (strip and self.valid):
            self._reduce_dt(h, qx, qy, stream)
        out = self._buffers(h)
        cur = self.cur
        if self.fix and self.variant != "stages" and not (self.fold and self.s_valid):
            self._sensor(h, qx, qy)
        if strip:
            nxt, clr = (cur + 1) % 3, (cur + 2) % 3
            so = self.S_next if self.fold else np.uintp(0)
            self._strip((h, qx, qy, H, self.S, *out, so, *self.strip_args, self.slot[cur],
                         self.slot[nxt], self.slot[clr], limit, *clk), out)
            if clk is self.NO_CLOCK:  # (per-step path: dt() waits on it; never in a capture)
                self.events[nxt].record(stream)
        elif self.variant == "cell":
            self.k["sw_step1"](self._grid(BLOCK), BLOCK,
                               (h, qx, qy, H, self.S, *out, *self.cell_args, self.slot[cur], limit,
                                *clk))
        else:
            grid = self._grid(self.block3)
            u0 = (h, qx, qy)
            u = u0
            S = np.uintp(0) if self.fold3 else self.S
            null = np.uintp(0)
            for n, args in enumerate(self.stage_args):
                # only the last stage writes the clock after the step
                c = clk if n == 2 else (clk[0], null, clk[2])
                if self.fix and not self.fold3:
                    self._sensor(*u)
                mode, base, rates, clr = SW3_STAGE, u, (null,) * 3, null
                if self.cfl3 and n == 0:  # L(u0) into out, z_max(u0) into this step's slot
                    mode, c, clr = SW3_RATES, self.NO_CLOCK, self.slot[(cur + 1) % 3]
                elif self.cfl3 and n == 1:  # stage 2 of u0 + Δt L(u0), formed as it is staged
                    mode, base, rates = SW3_FORMED, u0, u
                self.k["sw_stage3"](grid, self.block3,
                                    (*base, H, S, *u0, *out, *args, self.slot[cur], limit, *c,
                                     np.int32(mode), *rates, clr, *self.dxy))
                if mode == SW3_RATES and clk is self.NO_CLOCK:  # (per-step path: dt() waits)
                    self.events[cur].record(stream)
                if u is not u0:
                    self.spare.extend(u)
                u = out
                if n < 2:
                    out = self._buffers(h)
            out = u
        return out

    def _strip(self, args, out) -> None:
        """The strip kernel over every band of rows (one launch from block row 0)."""
        self.k["sw_strip1"](self.strip_grid, BLOCK_STRIP, args + (np.int32(0),))

    def _sensor(self, h, qx, qy) -> None:
        """The cells' shock sensors of the state (h, qx, qy) into self.S."""
        self.k["sw_sensor"](self._grid(BLOCK), BLOCK,
                            (h, qx, qy, self.S, np.int32(self.nx), np.int32(self.ny)))

    def _advance(self, out) -> None:
        """The queued step's state becomes the current one."""
        state = self.sim.state
        if self.variant == "strip" or self.cfl3:  # the next step's slot is ready (strip: z_max
            self.cur = (self.cur + 1) % 3          # once its event passed; cfl3: cleared)
            self.valid = True
            if self.fold:  # and its sensors in S_next
                self.S, self.S_next = self.S_next, self.S
                self.s_valid = True
        self.spare.extend((state["h"], state["hu"], state["hv"]))
        state["h"], state["hu"], state["hv"] = out
        self._queued += 1

    def step(self, t, dt_limit):
        limit = np.float64(np.inf if dt_limit is None else dt_limit)
        out = self._queue_step(limit)
        dt = self.dt()
        self._advance(out)
        return dt if dt_limit is None else min(dt, dt_limit)

    _graphs = None

    # `run` (LaneRunAhead's): up to `batch` (BATCH) of `count` steps queued back to back, the
    # clock on the device (core's DeviceClock, see the module docstring); one host wait. The
    # strip variant replays CUDA graphs of GRAPH_STEPS steps (one launch each); every variant
    # replays graphs (order 3: three launches a step in float32, five in float64, the
    # launch-bound case at small sizes). Returns (steps taken, new t) as core/clock.py walks
    # them; NonFiniteStep where a step's Δt is not finite.

    def _ensure_clock(self) -> None:
        if self._clock is None:
            self._clock = DeviceClock(self.cp, self.batch)

    def _queue_run(self, count: int, clk) -> None:
        """Queue `count` steps of a batch on the current stream, the clock `clk` armed."""
        cp = self.cp
        inf = np.float64(np.inf)
        i = 0
        if count >= GRAPH_STEPS:
            while i < count and not self._graph_ready(i):
                self._advance(self._queue_step(inf, clk.args(i)))
                i += 1
            stream = cp.cuda.get_current_stream()
            while count - i >= GRAPH_STEPS:
                graph = self._graph()
                if graph is None:
                    break
                graph.launch(stream)
                i += GRAPH_STEPS
        while i < count:
            self._advance(self._queue_step(inf, clk.args(i)))
            i += 1

    # ---- run-ahead: a lane (core/run_ahead.py) --------------------------------------------------
    # what rotates with the state's arrays h, hu, hv
    LANE = ("spare", "S", "S_next", "s_valid", "slots", "slot", "events", "cur", "valid",
            "_queued", "_clock")
    STATE = ("h", "hu", "hv")

    def _swap_state(self, other) -> None:
        st = self.sim.state
        for k in self.STATE:
            st[k], other[k] = other[k], st[k]

    def _lane_bytes(self) -> int:
        return (7 + (self.S_next is not None)) * self.sim.state["h"].nbytes

    def _lane_new(self) -> dict:
        cp, st = self.cp, self.sim.state
        o = {k: cp.empty_like(st[k]) for k in self.STATE}
        o["spare"] = [cp.empty_like(st["h"]) for _ in range(3)]
        o["S"] = cp.zeros_like(self.S)
        o["S_next"] = cp.zeros_like(self.S) if self.S_next is not None else None
        o["slots"] = cp.zeros(3, dtype=self.bits)
        o["_clock"] = DeviceClock(cp, self.batch)
        o.update(s_valid=False, cur=0, valid=False, _queued=0,
                 slot=[o["slots"][s:s + 1] for s in range(3)],
                 events=[cp.cuda.Event(disable_timing=True) for _ in range(3)])
        return o

    def _lane_items(self) -> dict:
        """The end state, its sensors and z_max slots, and whether they hold the state's."""
        st = self.sim.state
        return {"state": [st[k] for k in self.STATE], "S": self.S, "slots": self.slots,
                "flags": (self.cur, self.valid, self.s_valid)}

    def _lane_start(self, items, stream) -> None:
        st = self.sim.state
        self.cur, self.valid, self.s_valid = items["flags"]
        pairs = list(zip([st[k] for k in self.STATE], items["state"]))
        pairs += [(self.slots, items["slots"])] if self.valid else []
        pairs += [(self.S, items["S"])] if self.s_valid else []
        copy_all(pairs, stream)

    def _graph_ready(self, i: int) -> bool:
        """Whether a graph may start at step i of a batch: an even step (the clock records
        alternate), the buffers in their steady rotation (a few steps queued since they were
        made) and, for the strip variant, z_max of the current state folded into the last step."""
        return (i % 2 == 0 and self._queued >= 4
                and (self.valid or not (self.variant == "strip" or self.cfl3)))

    _queued = 0

    def _config(self) -> tuple:
        """What a captured graph depends on: the buffers in their roles and the slot in use."""
        st = self.sim.state
        return (tuple(int(st[k].data.ptr) for k in ("h", "hu", "hv", "H")),
                tuple(int(a.data.ptr) for a in self.spare), self.cur, self.valid,
                int(self.S.data.ptr), self.s_valid)

    def _graph(self):
        """The CUDA graph of GRAPH_STEPS steps from the current configuration (captured on
        first use; GRAPH_STEPS is a multiple of the period of the buffer and slot rotation, so
        the configuration after the graph is the one before). None where capture fails (then
        the steps are launched one by one, the same arithmetic)."""
        if self._graphs is None:
            self._graphs = GraphCache(self.cp, GRAPH_STEPS, limit=48)  # (two lanes)
        key = self._config()
        saved = (dict(self.sim.state), list(self.spare), self.cur, self.S, self.S_next)
        inf = np.float64(np.inf)

        def queue(n):
            for k in range(n):
                self._advance(self._queue_step(inf, self._clock.args(k)))
            if self._config() != key:
                raise RuntimeError("the buffers did not come back to their roles")

        def restore():
            self.sim.state.update(saved[0])
            self.spare[:], self.cur = saved[1], saved[2]
            self.S, self.S_next = saved[3], saved[4]

        graph = self._graphs.get(key, queue, restore)
        self.graph_error = self._graphs.failed
        return graph

