"""The fused CUDA scheme of the structured shallow water on a rank's strip of rows (decomposed
runs: core/decomp.py, docs/DISTRIBUTED.md): grid/fused.py's first-order strip kernel, compiled
for the strip's edges (kernels/grid.cu SW_HALO_S / SW_HALO_N: an inner edge reads the
neighbour's rows instead of mirroring a wall), with everything a rank adds on the device:

- every state array (and the shock sensors S) lives in a buffer of ROWS extra rows on each side;
  the simulation's arrays are views of the owned rows, so the kernels read rows -3..-1 and
  ny..ny + 2 of their arguments where a neighbour's rows are;
- after each step (and the all-reduce below) the new state's edge rows go to the neighbours
  through NCCL send/recv on the solver's stream, straight between the buffers (the rows are
  contiguous: no packing); the bathymetry's rows go once, when a state array is adopted. The
  exchange's GPU time is measured with CUDA events and added to the communicator's `halo_s`
  (hence `--json`'s halo_s_max) once the steps are done;
- with the carbuncle cure the strip kernel folds the next step's shock sensors of the owned rows
  (grid/fused.py) and their edge rows go to the neighbours with the state's, so that no step
  needs a sensor pass (one runs over the owned and halo rows after the state was replaced);
- with PDESTUDIO_HALO_OVERLAP=1 the exchange overlaps the update instead: the strip kernel runs
  on the block rows near the strip's edges first, their new rows go to the neighbours on a
  second stream while the interior block rows are updated, and the solver's stream waits for the
  exchange before the all-reduce. Not the default: on 2 H200s at 16384² it made 72.3 Gcell/s
  against 75.1 in turn (one GPU: 37.6): the NCCL kernel waiting for its peer holds SMs the
  interior needs, and the exchange itself is 27.5 µs of a 3.6 ms step (docs/DISTRIBUTED.md);
- the z_max slot of the next step's Δt (the maximum over the owned cells, folded into the step
  kernel) is combined over the ranks by an NCCL all-reduce (max) of its bits before any kernel
  reads it: the maximum is exact, so Δt, t and every cell equal the one-process run bit for bit
  (the edge fluxes of a cell are the same arithmetic on the same numbers whatever band the
  kernel's warp sweeps).

Batched runs keep the device clock of grid/fused.py (the host waits once per batch) but launch
the steps one by one instead of replaying CUDA graphs (NCCL calls are not captured). Order 3,
the "cell" variant, halos through MPI (PDESTUDIO_HALOS=mpi) and strips thinner than ROWS rows
run the array path (`usable`).
"""
from __future__ import annotations

import os

import numpy as np

from .fused import BLOCK, BLOCK_STRIP, GridFused

ROWS = 3  # rows of the neighbours' state held beyond an inner edge (the sensor of row -2 reads -3)


def usable(sim) -> str | None:
    """None where this scheme runs the simulation's strip, else why not (the array path runs)."""
    d = sim.domain
    if os.environ.get("PDESTUDIO_DECOMP_FUSED", "1") == "0":
        return "PDESTUDIO_DECOMP_FUSED=0"
    if sim.params["order"] != 1:
        return "order 3 decomposed runs the array path"
    if d.comm.size > 1 and getattr(d.comm, "name", "") != "nccl":
        return "halos through MPI (PDESTUDIO_HALOS=mpi) run the array path"
    if min(d.counts) < ROWS:
        return f"strips thinner than {ROWS} rows run the array path"
    return None


class GridFusedHalo(GridFused):
    RUN_AHEAD = False  # (a rank's steps wait for its neighbours' halos: no spare lane)

    def __init__(self, sim):
        d = sim.domain
        self.lo, self.hi = d.lo, d.hi
        self.comm = d.comm
        tuning = {"SW_HALO_S": int(self.lo is not None), "SW_HALO_N": int(self.hi is not None)}
        self._ours: dict[int, object] = {}  # data pointer -> the padded view made there
        super().__init__(sim, variant="strip", tuning=tuning)
        self.S = self._padded(zero=True)
        if self.fold:  # the fold writes the owned rows; the halo rows come with the exchange
            self.S_next = self._padded(zero=True)
        self.spare = []
        self.wide = ROWS if self.fix else 2  # rows exchanged per step (the sensor reads one more)
        self.alone = self.comm.size == 1  # (one rank: no NCCL, nothing to exchange)
        if not self.alone:
            nccl = self.comm.nccl
            self._word = nccl.NCCL_UINT32 if self.bits == np.uint32 else nccl.NCCL_UINT64
            self._real = nccl.NCCL_FLOAT32 if sim.dtype == "float32" else nccl.NCCL_FLOAT64
            self._max = nccl.NCCL_MAX
        cp = self.cp
        self.halo_stream = cp.cuda.Stream(non_blocking=True)
        self.edges_done = cp.cuda.Event(disable_timing=True)
        self.halo_done = cp.cuda.Event(disable_timing=True)
        self._timed: list = []  # (start, end) events of the exchanges not yet added to halo_s
        self.overlap = os.environ.get("PDESTUDIO_HALO_OVERLAP", "0") == "1"
        self._overlapped = False  # did the last step's _strip queue the exchange?

    # ---- padded buffers ----------------------------------------------------------------------
    def _padded(self, zero=False):
        """A view of the owned rows of a new buffer with ROWS rows beyond each edge."""
        cp = self.cp
        buf = (cp.zeros if zero else cp.empty)((self.ny + 2 * ROWS, self.nx), dtype=self.sim.dtype)
        if not zero:
            buf[:ROWS] = 0
            buf[-ROWS:] = 0
        view = buf[ROWS:ROWS + self.ny]
        self._ours[int(view.data.ptr)] = view
        return view

    def _buffers(self, like, count=3):
        while len(self.spare) < count:
            self.spare.append(self._padded())
        return [self.spare.pop() for _ in range(count)]

    def _adopt(self, refresh: bool = False) -> None:
        """State arrays put in place from outside (set-up, set_field, restore) move into padded
        buffers, and their halos are filled; `refresh`: every array's halos are filled again (a
        field written in place, e.g. by set_field, changed rows a neighbour holds)."""
        st = self.sim.state
        new = []
        for k in ("h", "hu", "hv", "H"):
            a = st[k]
            if self._ours.get(int(a.data.ptr)) is not a:
                v = self._padded()
                v[...] = a
                st[k] = v
                new.append(v)
        if refresh:
            new = [st[k] for k in ("h", "hu", "hv", "H")]
        if new:
            self._exchange(new, ROWS)
            keep = [st[k] for k in ("h", "hu", "hv", "H")] + list(self.spare) + [self.S]
            keep += [self.S_next] if self.fold else []
            self._ours = {int(v.data.ptr): v for v in keep}

    # ---- NCCL on the current stream ----------------------------------------------------------
    def _exchange(self, arrays, rows: int, stream=None) -> None:
        """The edge rows of `arrays` (padded views) to the neighbours, theirs into the halos (on
        `stream`, default the current one)."""
        if self.alone:
            return
        cp, nc, n = self.cp, self.comm.nc, rows * self.nx
        stream = (stream or cp.cuda.get_current_stream()).ptr
        row = self.nx * np.dtype(self.sim.dtype).itemsize
        self.comm.nccl.groupStart()
        for a in arrays:
            p = int(a.data.ptr)
            if self.lo is not None:  # my first rows down, its last rows into my rows -rows..-1
                nc.send(p, n, self._real, self.lo, stream)
                nc.recv(p - rows * row, n, self._real, self.lo, stream)
            if self.hi is not None:  # my last rows up, its first rows into my rows ny..
                nc.send(p + (self.ny - rows) * row, n, self._real, self.hi, stream)
                nc.recv(p + self.ny * row, n, self._real, self.hi, stream)
        self.comm.nccl.groupEnd()

    def _combine(self, s: int) -> None:
        """z_max in slot s: the maximum over the ranks (in place, on the current stream)."""
        if self.alone:
            return
        cp = self.cp
        ptr = self.slot[s].data.ptr
        self.comm.nc.allReduce(ptr, ptr, 1, self._word, self._max, cp.cuda.get_current_stream().ptr)

    # ---- the steps ----------------------------------------------------------------------------
    def _reduce_dt(self, h, qx, qy, stream) -> None:
        super()._reduce_dt(h, qx, qy, stream)
        self._combine(self.cur)
        self.events[self.cur].record(stream)

    def _sensor(self, h, qx, qy) -> None:
        """The sensors of the owned rows and of the two halo rows beyond each inner edge."""
        rows = self.ny + 2 * ((self.lo is not None) + (self.hi is not None))
        grid = ((self.nx + BLOCK[0] - 1) // BLOCK[0], (rows + BLOCK[1] - 1) // BLOCK[1])
        self.k["sw_sensor"](grid, BLOCK, (h, qx, qy, self.S, np.int32(self.nx),
                                          np.int32(self.ny)))

    def _strip(self, args, out) -> None:
        """The strip kernel; with `overlap`, the exchange of the new state's edge rows overlapped:
        the block rows holding the first and the last `wide` rows, then their exchange on
        halo_stream while the interior block rows run; the solver's stream waits for the
        exchange. Otherwise (or a strip of one band of block rows) one launch, and
        _queue_step exchanges after the all-reduce."""
        cp, k = self.cp, self.k["sw_strip1"]
        gx, gy = self.strip_grid
        band = self.rows * BLOCK_STRIP[1]  # rows of a block row
        top = max(1, (self.ny - self.wide) // band)  # the first block row of the top edge
        main = cp.cuda.get_current_stream()
        self._overlapped = not self.alone and self.overlap and top >= 2
        if not self._overlapped:
            k(self.strip_grid, BLOCK_STRIP, args + (np.int32(0),))
            return
        k((gx, 1), BLOCK_STRIP, args + (np.int32(0),))  # (writes the clock: first)
        k((gx, gy - top), BLOCK_STRIP, args + (np.int32(top),))
        self.edges_done.record(main)
        self.halo_stream.wait_event(self.edges_done)
        self._timed_exchange(out, self.halo_stream)
        self.halo_done.record(self.halo_stream)
        k((gx, top - 1), BLOCK_STRIP, args + (np.int32(1),))
        main.wait_event(self.halo_done)

    def _timed_exchange(self, out, stream) -> None:
        if self.alone:
            return
        cp = self.cp
        t0, t1 = cp.cuda.Event(), cp.cuda.Event()
        t0.record(stream)
        # the new state's edge rows, and the next step's folded sensors of those rows
        self._exchange(list(out) + ([self.S_next] if self.fold else []), self.wide, stream)
        t1.record(stream)
        self._timed.append((t0, t1))  # (harvested after each run / step)

    def _harvest(self) -> None:
        """Add the GPU time of the exchanges queued so far to the communicator's halo_s."""
        if not self._timed:
            return
        cp = self.cp
        self._timed[-1][1].synchronize()
        self.comm.halo_s += sum(cp.cuda.get_elapsed_time(a, b) for a, b in self._timed) / 1e3
        self._timed.clear()

    def _queue_step(self, limit, clk=GridFused.NO_CLOCK):
        self._adopt()
        out = super()._queue_step(limit, clk)  # (the strip kernel: _strip)
        nxt = (self.cur + 1) % 3
        main = self.cp.cuda.get_current_stream()
        self._combine(nxt)
        self.events[nxt].record(main)
        if not self._overlapped:
            self._timed_exchange(out, main)
        return out

    def run(self, count, t, t_end):
        result = super().run(count, t, t_end)
        self._harvest()
        return result

    def step(self, t, dt_limit):
        dt = super().step(t, dt_limit)
        self._harvest()
        return dt

    def _graph_ready(self, i: int) -> bool:
        return False  # steps are launched one by one (NCCL calls are not captured)

    def invalidate(self) -> None:
        super().invalidate()
        self._adopt(refresh=True)
