"""The batched device clock, host side: one service every fused path uses to queue many steps with
no host round trip (its device half is the protocol of kernels/clock.cuh).

    clock = DeviceClock(cp, batch=256)            records, history, pinned buffers (lazily)
    count = clock.arm(count, t, t_end)            clock record 0 := {t, 0, 0, t_end, has_end},
                                                  on the current stream; `count` trimmed so a
                                                  run towards t_end queues few steps past landing
    for i in range(count):                        queue step i: its kernels take
        kernel(..., *clock.args(i))               (clk_in, clk_out, hist) by parity, apply
                                                  d = clock_take(...) (0 once landed)
    k, t = clock.finish(count, t, t_end)          one host wait: the history comes back and is
                                                  replayed with core/clock.py (NonFiniteStep for
                                                  a non-finite or non-positive step)

Ensembles (`members=E`) keep one record pair and one history row per member; a member's kernels
find theirs with CLOCK_RECORD(base, m, parity) and `hist + m * batch` (`args_all(i)` gives the
bases and the parity). `finish_members` returns the members' steps for the ensemble's own
vectorised replay.

`GraphCache` keeps CUDA graphs of a fixed number of steps, keyed by what they were captured on
(the buffers in their roles): a graph replays from any clock because every step reads the clock
from device memory. Capture failures fall back to plain launches (the same arithmetic), once.
"""
from __future__ import annotations

import math

import numpy as np

from . import checks, clock
from .backend import on_stream

WORDS = 5  # {t, landed, i, t_end, has_end} (kernels/clock.cuh, CLOCK_WORDS)


class DeviceClock:
    """Double-buffered clock records and the step history of batched runs (module docstring)."""

    def __init__(self, cp, batch: int, members: int = 1):
        import cupyx
        self.cp, self.batch, self.members = cp, int(batch), int(members)
        self.records = cp.zeros((self.members, 2, WORDS), dtype=np.float64)
        self.hist = cp.zeros((self.members, self.batch), dtype=np.float64)
        self._start = cupyx.empty_pinned((self.members, 2, WORDS), dtype=np.float64)
        self._start[...] = 0.0
        self._hist_host = cupyx.empty_pinned((self.members, self.batch), dtype=np.float64)
        flat = self.records.reshape(self.members, 2 * WORDS)
        r0, r1, h = flat[0, :WORDS], flat[0, WORDS:], self.hist[0]
        self._pair = ((r0, r1, h), (r1, r0, h))
        self.last_dt = 0.0  # the largest whole step of the last batch (trims runs to an end)

    NULL = (np.uintp(0),) * 3  # the kernels' clock arguments on a per-step path (no clock)

    def args(self, i: int) -> tuple:
        """(clk_in, clk_out, hist) of the i-th step of a batch (solo runs)."""
        return self._pair[i % 2]

    def args_all(self, i: int) -> tuple:
        """(records, hist, parity) of the i-th step of an ensemble's batch."""
        return self.records, self.hist, np.int32(i % 2)

    def trim(self, count: int, t, t_end) -> int:
        """`count` at most `batch`, and towards an end time no more steps than it takes at the
        last batch's step size (and a few): steps queued after landing apply 0 but cost a pass."""
        count = min(int(count), self.batch)
        if t_end is not None and self.last_dt and np.ndim(t) == 0:
            count = min(count, max(1, math.ceil(1.1 * (t_end - t) / self.last_dt) + 1))
        return count

    def arm(self, count: int, t, t_end, stream=None, active=None) -> int:
        """Write the start records (t: a number, or one per member) on `stream` (default: the
        current one) and return the trimmed count."""
        count = self.trim(count, t, t_end)
        s = self._start
        s[:, 0, 0] = t
        s[:, 0, 1] = 0.0
        s[:, 0, 2] = 0.0
        s[:, 0, 3] = 0.0 if t_end is None else t_end
        s[:, 0, 4] = float(t_end is not None)
        # (the pinned buffer is free again: the previous batch's finish waited for its stream)
        self.records.set(s, stream=stream or self.cp.cuda.get_current_stream())
        return count

    def history(self, count: int, stream=None, then=None) -> np.ndarray:
        """The steps of the batch (members, count): one host wait. `then()`: queues more work
        after the copy (a run ahead), which the wait does not wait for."""
        stream = stream or self.cp.cuda.get_current_stream()
        if self.members == 1:  # (a contiguous slice: only the steps taken travel)
            self.hist[:, :count].get(out=self._hist_host[:, :count], stream=stream)
        else:
            self.hist.get(out=self._hist_host, stream=stream)
        if then is None:
            stream.synchronize()
        else:
            copied = stream.record()
            then()
            copied.synchronize()
        return self._hist_host[:, :count]

    def finish(self, count: int, t: float, t_end: float | None, stream=None,
               then=None) -> tuple[int, float]:
        """Bring the history back and replay it (core/clock.py): (steps taken, new t). The
        stepping's checks of the end state are queued first (core/checks.py), so the one wait
        covers them. `then`: see `history`."""
        checks.before_wait()
        hist = self.history(count, stream, then)[0]
        whole = hist[hist > 0]
        if whole.size:
            self.last_dt = float(whole.max())
        return clock.replay(t, t_end, hist)


class GraphCache:
    """CUDA graphs of `steps` queued steps, keyed by the configuration they were captured on.
    `queue_steps(n)` queues n steps on the current stream and must leave the configuration as it
    found it when n == steps (the caller picks `steps` as a multiple of its buffers' period)."""

    def __init__(self, cp, steps: int, limit: int = 24):
        self.cp, self.steps, self.limit = cp, int(steps), limit
        self.graphs: dict = {}
        self.failed: str | None = None  # why capture failed (then plain launches from now on)

    def clear(self) -> None:
        self.graphs = {}

    def get(self, key, queue_steps, restore):
        """The graph for `key` (captured on first use by queue_steps(steps)); None where capture
        failed (`restore()` then puts the configuration back and the caller launches)."""
        if self.failed is not None:
            return None
        got = self.graphs.get(key)
        if got is not None:
            return got
        if len(self.graphs) >= self.limit:  # (buffers replaced many times)
            self.graphs = {}
        cp = self.cp
        capture = cp.cuda.Stream(non_blocking=True)
        cp.cuda.get_current_stream().synchronize()
        try:
            with on_stream(capture):
                capture.begin_capture()
                try:
                    queue_steps(self.steps)
                finally:
                    graph = capture.end_capture()
            graph.upload(capture)
            capture.synchronize()
        except Exception as e:  # noqa: BLE001  (no graphs: launches, the same arithmetic)
            self.failed = f"{type(e).__name__}: {e}"
            restore()
            return None
        self.graphs[key] = graph
        return graph


def run_fixed_steps(cp, count: int, t: float, t_end, dt: float, advance, graph, steps: int,
                    prepare=None, many=None) -> tuple[int, float]:
    """A scheme's `run` for a fixed step dt (the clock on the host: nothing on the device
    depends on t): up to `count` steps from t without passing t_end, exactly as step-by-step
    stepping (core/clock.py). The whole steps go in groups of `steps` through `graph()` (a CUDA
    graph to launch, or None: launch them one by one) after `prepare()` (optional: steps it
    took itself, e.g. one that makes the output buffers before a capture), the rest through
    `advance(d)`, then the shortened step that lands. `many(d, n)`, where a scheme's launch
    takes any number of steps: all the whole steps in one call instead of graphs. Returns
    (steps taken, new t)."""
    k = clock.full_steps(t, dt, count, t_end)
    done = 0
    if many is not None and k:
        many(dt, k)
        done = k
    elif k >= steps:
        done = prepare() if prepare is not None else 0
        while k - done >= steps:
            g = graph()
            if g is None:
                break
            g.launch(cp.cuda.get_current_stream())
            done += steps
    for _ in range(k - done):
        advance(dt)
    for _ in range(k):
        t += dt
    if k < count and not clock.landed(t, t_end):
        last = min(dt, clock.limit(t, t_end))
        advance(last)
        t = clock.after_step(t, last, t_end)
        k += 1
    return k, t


__all__ = ["DeviceClock", "GraphCache", "WORDS", "run_fixed_steps"]
