"""A chunk's checks, and on the GPU their place before the chunk's one host wait.

Stepping runs in chunks (Simulation._run): a chunk's steps, the checks of the state (every field
finite, every bounded quantity above its bound: `state_checks`, read back and judged by
`judge_state_checks` or a model's own pair), then a snapshot of the state that the next chunk
restores if it diverges.

On the GPU a host wait leaves the device idle until the host queues more work, and while another
thread holds the GIL (the window's or a notebook's drawing) every call that releases it costs up
to the interpreter's switch interval to get it back. Checked after the wait, the checks and the
snapshot were some twenty such calls with the device idle between a chunk and the next: a
screen thread holding the GIL for 10 ms a frame cost the solver 18 % of its steps/s
(docs/BENCHMARKS.md, "The solver's waits and the GIL"). `Ahead` queues them before the wait
instead: inside the scheme's run where it ends in the device clock's wait (`DeviceClock.finish`
calls the hook that `queued_before_wait` installs; mean curvature's RKM run before its read-back,
on the buffer a full run ends in), or right after a run that queued its steps without waiting
(fixed-step runs of CUDA graphs). The checks travel to pinned host memory on the
same stream, so the chunk's one wait returns with them read and the snapshot made, and the
device idles only while the next chunk is launched. The values and the verdicts are those of
the checks after the wait (the same reductions of the same arrays), and where the scheme
replaced a state array after the hook ran, the checks are made again after the wait.
"""
from __future__ import annotations

import contextlib
import contextvars

import numpy as np

AHEAD = True  # on the GPU: checks queued ahead (False: after the wait, as on NumPy; tests)
BEFORE_WAIT: contextvars.ContextVar = contextvars.ContextVar("pdestudio_before_wait",
                                                            default=None)
_D2H = 2  # cudaMemcpyDeviceToHost


def state_checks(sim) -> list:
    """Simulation._check_arrays: whether each state field is finite, then the minimum of each
    bounded quantity, as 0-d arrays (no host sync)."""
    with np.errstate(all="ignore"):  # a derived bound of a broken state (P from ρ = 0)
        sim._bounds_checked = sim._bounded()
        return ([sim._be.all_finite(v) for v in sim.state.values()]
                + [a.min() for _, a, _, _ in sim._bounds_checked])


def judge_state_checks(sim, vals) -> str | None:
    """Simulation._judge_checks: the first field not finite, else the first bounded quantity
    below its bound (kept in `_violation`), else None."""
    from .simulation import BOUND_SLACK
    names = list(sim.state)
    sim._violation = None
    for name, ok in zip(names, vals):
        if not ok:
            return name
    for (name, _, lo, lo_open), low in zip(sim._bounds_checked, vals[len(names):]):
        if low < lo - (0.0 if lo_open else BOUND_SLACK * max(1.0, abs(lo))) or (
                lo_open and low <= lo):
            sim._violation = (name, float(low), lo, lo_open)
            return name
    return None


def stacked(xp, got: list):
    """The checks as one float64 array (one copy to the host reads them all); None if none."""
    return xp.stack([xp.asarray(c, dtype=xp.float64).reshape(()) for c in got]) if got else None


def read(sim, got: list) -> np.ndarray:
    """The checks' values on the host, read with one copy (one host sync on the GPU)."""
    s = stacked(sim.xp, got)
    return sim._be.asnumpy(s) if s is not None else np.zeros(0)


def base_first_nonfinite(sim) -> str | None:
    """The base class's checks alone (not a model's own): checkpoint loading asks whether a
    state breaks the physical bounds that stepping checks."""
    from .simulation import Simulation
    return Simulation._judge_checks(sim, read(sim, Simulation._check_arrays(sim)))


@contextlib.contextmanager
def queued_before_wait(ahead):
    """While stepping a chunk: `ahead.queue` is what the device clock calls before its wait."""
    if ahead is None:
        yield
        return
    token = BEFORE_WAIT.set(ahead)
    try:
        yield
    finally:
        BEFORE_WAIT.reset(token)


@contextlib.contextmanager
def hooks_off():
    """While a scheme is stepped one step at a time: a step that is a run of one (mean
    curvature's) must not queue the chunk's checks before its own wait."""
    token = BEFORE_WAIT.set(None)
    try:
        yield
    finally:
        BEFORE_WAIT.reset(token)


def before_wait() -> None:
    """Called by a scheme's run just before its one host wait (DeviceClock.finish)."""
    ahead = BEFORE_WAIT.get()
    if ahead is not None:
        ahead.queue()


def stale() -> None:
    """Called by a scheme's run that queued more steps after `before_wait` (mean curvature's
    second batch of attempts): the checks queued are not of the end state, and are made again
    after the wait."""
    ahead = BEFORE_WAIT.get()
    if ahead is not None and ahead.state is not None:
        ahead.stale = True


def run_chunk(sim, chunk: int, t_end, marks, last: bool = False):
    """One chunk of Simulation._run: (steps taken, the first bad field or None ("?": a step
    size that was not finite), kernel seconds, the `Ahead` holding the next snapshot or None).
    `marks` None: checked after the steps, timed with the backend's timer (NumPy); else
    checked ahead, timed by `marks` (its `seconds()` at the end of the run). `last`: the run's
    last chunk (no next snapshot to make)."""
    from .errors import SimulationDiverged
    if marks is None:
        with sim._be.timer() as tm:
            try:
                k = sim._steps_unchecked(chunk, t_end)
                bad = sim._first_nonfinite()
            except SimulationDiverged:  # a non-finite step size: state may be half-updated
                k, bad = chunk, "?"
        return k, bad, tm.seconds, None
    ahead = Ahead(sim, marks, copy=not last)
    marks.start()
    with queued_before_wait(ahead):
        try:
            k = sim._steps_unchecked(chunk, t_end)
            bad = ahead.result()
        except SimulationDiverged:
            k, bad = chunk, "?"
    return k, bad, 0.0, ahead


def replay_to_failure(sim, count: int, t_end) -> None:
    """A chunk of Simulation._run produced non-finite values: redo it one checked step at a
    time from its start, so that the state from before the failing step is the one kept."""
    from .errors import SimulationDiverged
    for _ in range(count):
        snap = sim._snapshot()
        try:
            sim._steps_unchecked(1, t_end)
        except SimulationDiverged as e:
            sim._restore(snap)  # the message and its advice describe the state kept
            raise sim._diverged(e.field) from None
        bad = sim._first_nonfinite()
        if bad is not None:
            sim._restore(snap)
            raise sim._diverged(bad)
    # Not reproduced step by step (non-deterministic kernel?): report at the chunk's end.
    raise sim._diverged(sim._worst_field() or "?")


class Marks:
    """The device time of a run's chunks from CUDA events: a chunk's start is recorded as it
    begins, its end where its steps are queued (before the checks); the elapsed times are read
    with no wait of their own, those of finished chunks every FOLD chunks, the rest at the end
    of the run. Each next start event is made while the device is busy, so a chunk's beginning
    costs one call."""

    FOLD = 32  # pairs kept at most before the finished ones are read (a long run's events)

    def __init__(self, cp):
        self.cp = cp
        self.pairs: list = []
        self.total = 0.0
        self._next = cp.cuda.Event()

    def start(self) -> None:
        if len(self.pairs) >= self.FOLD:
            self._fold()
        self._next.record()
        self.pairs.append([self._next, None])

    def _fold(self) -> None:
        """Read the pairs that finished (their events then go), keep the others."""
        keep = []
        for a, b in self.pairs:
            if b is not None and b.done:
                self.total += self.cp.cuda.get_elapsed_time(a, b) / 1e3
            else:
                keep.append([a, b])
        self.pairs = keep

    def stop(self) -> None:
        if self.pairs and self.pairs[-1][1] is None:
            e = self.cp.cuda.Event()
            e.record()
            self.pairs[-1][1] = e
            self._next = self.cp.cuda.Event()

    def seconds(self) -> float:
        done = [(a, b) for a, b in self.pairs if b is not None]
        if done:
            done[-1][1].synchronize()  # (complete already: the run's last wait came after it)
        return self.total + sum(self.cp.cuda.get_elapsed_time(a, b) for a, b in done) / 1e3


class Ahead:
    """One chunk's checks and its end state's copies, queued before its wait (module docstring)."""

    def __init__(self, sim, marks: Marks, copy: bool = True):
        self.sim, self.marks, self.copy = sim, marks, copy
        self.state = None   # the state arrays checked and copied (the objects themselves)
        self.copies = None
        self.stale = False  # more steps were queued after the checks (`stale()`)

    def queue(self) -> None:
        if self.state is not None:
            return
        sim = self.sim
        cp = sim.xp
        self.marks.stop()
        self.state = dict(sim.state)
        got = sim._check_arrays()
        host = getattr(sim, "_checks_host", None)
        if host is None or host.shape != (len(got),):
            import cupyx
            host = sim._checks_host = cupyx.empty_pinned((len(got),), dtype=np.float64)
        self.vals = stacked(cp, got)  # (kept alive until the copy is done)
        if self.vals is not None:
            stream = cp.cuda.get_current_stream()
            cp.cuda.runtime.memcpyAsync(host.ctypes.data, self.vals.data.ptr, self.vals.nbytes,
                                        _D2H, stream.ptr)
        self.host = host
        if self.copy:
            self.copies = {k: v.copy() for k, v in self.state.items()}

    def result(self) -> str | None:
        """The chunk's verdict (Simulation._first_nonfinite's), after its wait."""
        sim = self.sim
        self.queue()  # (a run that did not wait: queued now, then the one wait)
        sim.xp.cuda.get_current_stream().synchronize()
        if self.stale or self.state.keys() != sim.state.keys() or any(
                sim.state[k] is not v for k, v in self.state.items()):
            self.copies = None  # stepped or replaced after the hook: checked again, snapshot
            #                     made again
            return sim._first_nonfinite()
        return sim._judge_checks(np.array(self.host))

    def snapshot(self):
        """The next chunk's snapshot (Simulation._snapshot's), or None to make one."""
        return self.sim._snapshot(self.copies) if self.copies is not None else None
