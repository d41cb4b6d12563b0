"""Run-ahead for the schemes whose batched runs keep the clock on the device (DeviceClock): the
next run queued before a run's host wait, in a spare lane of buffers on a stream of its own.

`Simulation.step(n, ahead=m)` (a live view's loop) and each chunk of a long call
(`AHEAD_CHUNKS`) set the scheme's `ahead`; `run` then queues, right after the run's history copy, the next run of m steps
in the spare lane: a second set of whatever rotates with the state (the scheme's `LANE`
attributes and the state's arrays), given copies of the run's end state and flags. The next run
of m steps from that time takes it up (the lanes swap, the current stream waits for its
steps, its history is replayed from the host's time); any other call leaves it unused (the
current stream waits for it, GPU-side, so the two lanes never run at once), and a change of the
state or of a parameter first waits for it (`settle`, which the Simulation calls). The state a
caller reads between calls (a frame's copy, queued on the current stream) is never written by a
run ahead, and scratch buffers that are not in the lane are never used by both lanes at once.

A scheme using it (shallow water on grids and on triangles) provides:
    LANE                     attribute names of one lane (state arrays excluded)
    _lane_new() -> dict      a second lane: LANE attributes and the state's arrays
    _lane_bytes() -> int     the device memory it takes
    _swap_state(other)       exchange the simulation's state arrays with other's
    _lane_items() -> dict    the main lane's arrays and flags a lane starts from
    _lane_start(items, s)    in the swapped-in lane: copy them (on stream s), set the flags
    _ensure_clock()          make self._clock (a DeviceClock) where none is yet
    _queue_run(n, clock)     queue n steps of a batch on the current stream
"""
from __future__ import annotations

from .backend import on_stream


def copy_all(pairs, stream) -> None:
    """Device-to-device copies (dst, src) of whole arrays, queued on `stream`."""
    import cupy as cp
    kind = cp.cuda.runtime.memcpyDeviceToDevice
    for dst, src in pairs:
        cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, dst.nbytes, kind, stream.ptr)


class LaneRunAhead:
    """Mixin: `run` with run-ahead (module docstring)."""

    RUN_AHEAD = True     # may a run queue the next one ahead
    # and each chunk of a long call its successor (Simulation._run; H100, calls of 4,096 steps:
    # shallow water 256² order 3 +0.5 to +1 %, 1024² the same; mean curvature's own run-ahead
    # does not: there it measured 1.5 % faster in one call, 3 % slower in another)
    AHEAD_CHUNKS = True
    ahead = 0            # steps to run ahead after the next run (set by Simulation._run)
    adopted = 0          # runs queued ahead and taken up (tests)
    _other = None        # the spare lane
    _pending = None      # the run queued ahead: {"count", "armed", "t"}
    _ahead_done = None   # event after the run queued ahead (None: nothing in flight)
    ahead_error = None   # why the spare lane could not be made (then no run-ahead)
    _clock = None

    @property
    def runs_ahead(self) -> bool:
        return self.RUN_AHEAD and self.ahead_error is None

    def run(self, count, t, t_end):
        """Up to a batch of `count` steps from t without passing t_end, the clock on the
        device, one host wait: (steps taken, new t). With `ahead` set and no end time, the next
        run of `ahead` steps is queued in the spare lane before the wait."""
        ahead, self.ahead = self.ahead, 0
        if t_end is not None or not self.runs_ahead:
            ahead = 0
        then = (lambda: self._queue_ahead(ahead)) if ahead else None
        try:
            taken = self._take_ahead(count, t, t_end)
            if taken is not None:  # its steps are queued (the stream waits for them)
                k, t_new = self._clock.finish(taken, t, t_end, then=then)
            else:
                self._ensure_clock()
                n = self._clock.arm(count, t, t_end)
                self._queue_run(n, self._clock)
                k, t_new = self._clock.finish(n, t, t_end, then=then)
        except BaseException:
            self._pending = None
            raise
        if self._pending is not None:
            self._pending["t"] = t_new
        return k, t_new

    def settle(self) -> None:
        """Wait for a run queued ahead (it is not taken up after this): before the state or a
        parameter changes, or this scheme is dropped."""
        self._pending = None
        done, self._ahead_done = self._ahead_done, None
        if done is not None:
            done.synchronize()

    def _swap(self) -> None:
        o = self._other
        self._swap_state(o)
        for name in self.LANE:
            mine = getattr(self, name)
            setattr(self, name, o[name])
            o[name] = mine

    def _make_other(self) -> bool:
        """The spare lane, where it takes at most half of the device memory still free (else
        runs do not run ahead: `ahead_error` says why)."""
        cp = self.cp
        need = self._lane_bytes()
        free = cp.cuda.runtime.memGetInfo()[0] + cp.get_default_memory_pool().free_bytes()
        if need > free // 2:
            self.ahead_error = (f"a second set of buffers ({need / 2**20:.0f} MiB) would take "
                                f"more than half the free device memory ({free / 2**20:.0f} MiB)")
            return False
        try:
            self._other = self._lane_new()
        except cp.cuda.memory.OutOfMemoryError as e:
            self.ahead_error = f"no memory for a second set of buffers: {e}"
            return False
        self._ahead_stream = cp.cuda.Stream(non_blocking=True)
        return True

    def _take_ahead(self, count, t, t_end):
        """The count armed for the run queued ahead where this run is it (`count` steps from t,
        no end time): the lanes swap and the current stream waits for its steps; else None (a
        run queued ahead still runs first, GPU-side, in the spare lane: it changes nothing)."""
        p, self._pending = self._pending, None
        done, self._ahead_done = self._ahead_done, None
        if done is None:
            return None
        self.cp.cuda.get_current_stream().wait_event(done)
        if p is None or t_end is not None or p["count"] != count or p["t"] != t:
            return None
        self._swap()
        self.adopted += 1
        return p["armed"]

    def _queue_ahead(self, count: int) -> None:
        """Queue, after this run, the next run of `count` steps in the spare lane, on its own
        stream (what the caller then queues on the current stream, e.g. a frame's copy of the
        state, does not wait for it), its clock armed on the device with no end time (all
        zero: only the steps recorded matter, replayed from the host's time when taken up)."""
        cp = self.cp
        if self._other is None and not self._make_other():
            return
        items = self._lane_items()
        stream = self._ahead_stream
        stream.wait_event(cp.cuda.get_current_stream().record())
        self._swap()
        try:
            self._lane_start(items, stream)
            clk = self._clock
            cp.cuda.runtime.memsetAsync(clk.records.data.ptr, 0, clk.records.nbytes, stream.ptr)
            n = clk.trim(count, 0.0, None)
            with on_stream(stream):
                self._queue_run(n, clk)
            self._ahead_done = stream.record()
        finally:
            self._swap()
        self._pending = {"count": count, "armed": n, "t": None}


__all__ = ["LaneRunAhead", "copy_all"]
