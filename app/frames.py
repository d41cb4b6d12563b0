"""What travels from the solver thread to the GUI: a description of the simulation (`SimInfo`,
sent once per setup) and frames (`Frame`: float32 copies of a few fields with their finite
ranges: host arrays, or device arrays on the CUDA–OpenGL interop path), handed over through a
one-slot `Mailbox` that keeps only the newest frame (a slow screen drops frames, never queues
them and never slows the solver). Qt-free, so the headless exports and tests use it too."""
from __future__ import annotations

import statistics
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

# the solver thread's pace (app/worker.py; the benchmarks' screen loop follows it too)
MAX_FPS = 60.0         # frames produced per second at most (steps per frame sets the speed)
AUTO_FRAME_S = 1 / 31  # a frame's time with steps per frame = auto, its hand-over included (31
#                       frames/s: 3 % above 30): the frame's stepping is this less the time the
#                       solver thread spends on a frame outside its calls (FramePacer.stepped),
#                       and CallSizer sizes the calls so that the stepping lands on it
# The GIL switch interval of the window's process, by the solver's backend (`switch_interval`, set
# when the solver thread adopts a simulation: app/solver_loop.py; the notebook's view and the
# benchmarks' screen loops too): a thread that wants the GIL waits up to this long behind the
# other (Python's default: 5 ms). On CuPy the solver thread needs the GIL only for moments
# between device waits, and each wait for it leaves the GPU idle: beside the drawing, 50 µs kept
# shallow water 1024² at 85-92 % of its speed where 0.5 ms kept 68-83 % (docs/BENCHMARKS.md,
# "The GIL switch interval"). On NumPy both threads run Python for long stretches, and a short
# interval would only add switches.
SWITCH_INTERVAL = 0.0005
SWITCH_INTERVAL_GPU = 0.00005


def switch_interval(backend: str) -> float:
    """The GIL switch interval for a solver thread on `backend` (see SWITCH_INTERVAL)."""
    return SWITCH_INTERVAL_GPU if backend == "cupy" else SWITCH_INTERVAL


PACES = ("smooth", "fast solver")


class FramePacer:
    """How often the solver thread hands a frame over. 'smooth': a frame each AUTO_FRAME_S in
    all (31 frames/s) with steps per frame = auto, up to MAX_FPS with a fixed number of steps a
    frame. 'fast solver':
    an adaptive cap, so that drawing takes at most `share` of the time: the screen and the solver
    share one GPU (OpenGL and CUDA contexts take turns), and a frame costs the solver about the
    wall time the screen spends on it; the cap is share / (that time, smoothed), between MIN_FPS
    and MAX_FPS. The solver steps for the whole interval between two frames (it never sleeps
    to wait for the next one). Qt-free: the window's worker and the benchmarks use it.

    "That time, smoothed" is the median of the last DRAWS frames: a single slow frame (the
    first draws compile shaders and render glyphs) does not hold the cap at
    MIN_FPS for the seconds an average would take to forget it."""

    MIN_FPS = 2.0
    DRAWS = 5
    ASIDES = 9
    LATE_MAX = 0.5  # of the period
    LATE_GAIN = 0.25  # of a frame's time off its period, taken off the next frames' stepping

    def __init__(self, mode: str = "smooth", share: float = 0.1):
        self.mode, self.share = "smooth", share
        self.draw_s: float | None = None
        self._draws: deque = deque(maxlen=self.DRAWS)
        self.aside_s = 0.0
        self.late_s = 0.0
        self._asides: deque = deque(maxlen=self.ASIDES)
        self._start: float | None = None
        self._end: float | None = None
        self.set_mode(mode)

    def set_mode(self, mode: str) -> None:
        if mode not in PACES:
            raise ValueError(f"unknown pace '{mode}'; allowed: {', '.join(PACES)}")
        self.mode = mode

    def drawn(self, seconds: float) -> None:
        """The screen took `seconds` for a frame (wall time of its draw)."""
        if seconds > 0:
            self._draws.append(seconds)
            self.draw_s = statistics.median_low(self._draws)

    @property
    def fps(self) -> float:
        if self.mode == "smooth" or not self.draw_s:
            return MAX_FPS
        return min(MAX_FPS, max(self.MIN_FPS, self.share / self.draw_s))

    def stepped(self, start: float, end: float) -> None:
        """A frame's stepping ran from `start` to `end` (time.perf_counter). The time since the
        previous frame's stepping ended (its hand-over) is set aside in the next frames' stepping:
        the mean of the last ASIDES (their median missed the longer hand-overs of frames made
        while the screen held the GIL). And a quarter of each frame's time beyond its period is
        taken off the next frames' stepping (`late_s`; negative: added), so that frames come at
        their rate on average though a frame's steps come in powers of two (up to 6 % off its
        time) and a call may stall (a larger share made the frames after a stall uneven). A
        frame that waited more than a quarter of its period outside its calls (a command, a
        pause) counts for neither."""
        if self._end is not None and 0 <= start - self._end <= 0.25 * self.period_s:
            self._asides.append(start - self._end)
            self.aside_s = sum(self._asides) / len(self._asides)
            cap = self.LATE_MAX * self.period_s
            late = self.late_s + self.LATE_GAIN * (start - self._start - self.period_s)
            self.late_s = min(cap, max(-cap, late))
        self._start, self._end = start, end

    def restart(self) -> None:
        """Stepping paused (or a new simulation): the next frame has no previous one."""
        self._end = None

    @property
    def period_s(self) -> float:
        """A frame's time in all: the longer of AUTO_FRAME_S and the interval the cap leaves."""
        return max(AUTO_FRAME_S, 1.0 / self.fps)

    @property
    def frame_s(self) -> float:
        """Stepping time per frame: the period less the time set aside for the rest of a frame
        and what the frames were late (between half and 1.5 times the period)."""
        period = self.period_s
        return min(1.5 * period, max(0.5 * period, period - self.aside_s - self.late_s))

    CALL_MAX_S = 0.1  # the longest call into the solver (commands wait for it to end)

    @property
    def call_s(self) -> float:
        """How long one call into the solver should last: the frame's stepping time, at most
        CALL_MAX_S. Each call ends in a host wait (its checks) that leaves the GPU idle a while,
        so fewer, longer calls keep more of the solver's speed."""
        return min(self.frame_s, self.CALL_MAX_S)

    def describe(self) -> str:
        if self.mode == "smooth":
            return f"smooth (about {1 / AUTO_FRAME_S:.0f} frames/s, up to {MAX_FPS:.0f})"
        return f"fast solver (cap {self.fps:.3g} frames/s: drawing ≤ {100 * self.share:.0f} %)"


@dataclass(frozen=True)
class SimInfo:
    """Everything the views and panels need to know about a simulation, read once in the
    worker thread (the GUI never calls into the Simulation)."""

    model: str
    title: str
    scenario: str
    backend: str
    backend_reason: str
    dtype: str
    kernel: str
    params: dict
    mesh: Any                       # Grid1D / Grid2D / triangle mesh (immutable data)
    fields: dict                    # name -> field_info dict (location, unit, range, ...)
    shapes: dict                    # name -> shape
    default_field: str
    surfaces: tuple
    settable: tuple
    cells_per_step: int
    generation: int = 0             # increases with every new setup (reset, new model)

    @classmethod
    def of(cls, sim, generation: int = 0) -> "SimInfo":
        names = list(sim.field_infos)
        fields = {n: sim.field_info(n) for n in names}
        shapes = {n: tuple(a.shape) for n, a in sim.device_fields().items() if n in fields}
        default = getattr(sim, "default_field", None) or names[0]
        return cls(model=sim.model, title=sim.title, scenario=sim.scenario_name,
                   backend=sim.backend, backend_reason=getattr(sim, "backend_reason", ""),
                   dtype=sim.dtype, kernel=sim.kernel, params=dict(sim.params), mesh=sim.mesh,
                   fields=fields, shapes=shapes, default_field=default,
                   surfaces=tuple(s for s in getattr(sim, "surfaces", ()) if s in fields),
                   settable=tuple(sim.settable_fields()), cells_per_step=int(sim.work()[0]),
                   generation=generation)

    @property
    def kind(self) -> str:
        return mesh_kind(self.mesh)


def mesh_kind(mesh) -> str:
    kind = getattr(mesh, "kind", None)
    if kind:
        return kind
    if hasattr(mesh, "cells") and hasattr(mesh, "points"):
        return "triangles"
    return "grid2d" if hasattr(mesh, "y") else "grid1d"


@dataclass
class Frame:
    """Copies of some fields at one instant. `release` hands pinned buffers or device
    snapshots back. `ranges`: name -> finite (min, max) or None, where the frame was made
    (None: the view computes them). Device frames (CuPy arrays) carry `ready`, the CUDA event
    after which the arrays hold the snapshot; the consumer sets `consumed`, the event after
    which it no longer reads them, before calling `done`."""

    fields: dict[str, np.ndarray]
    t: float
    steps: int
    generation: int
    transfer_s: float = 0.0
    kernel_s: float = 0.0
    seq: int = 0
    release: Callable[[], None] | None = field(default=None, repr=False)
    ranges: dict | None = field(default=None, repr=False)
    ready: Any = field(default=None, repr=False)
    consumed: Any = field(default=None, repr=False)

    def done(self) -> None:
        if self.release is not None:
            self.release()
            self.release = None


def steps_for(rate: float, seconds: float) -> int:
    """About `seconds` of steps at `rate` steps/s, rounded to the nearest multiple of the
    largest power of two not above an eighth of them (within 6.25 %): batches and CUDA graphs
    come in powers of two, so a call of 384 steps replays whole graphs of 128 where one of 406
    would end in single launches. At least 1."""
    n = int(rate * seconds) if rate > 0 else 1
    if n < 8:
        return max(1, n)
    q = 1 << ((n // 8).bit_length() - 1)
    return (n + q // 2) // q * q


class CallSizer:
    """How many steps each call into the solver takes, so that a frame's stepping lands on its
    time (the solver thread's loop, app/solver_loop.py, and the benchmarks that replay it).
    Each call ends in a host wait, so a frame is one call where it can be: the first call of a
    frame takes `chunk` steps, sized from the last call's rate to last `call_s`; a frame that
    still has more than LAND of its time left gets one more call sized to the rest. The chunk
    grows at most GROW times a call (the first calls of a run are slow: kernels compile, graphs
    are captured) and shrinks at once (docs/BENCHMARKS.md, "Issue 25 on the H100")."""

    GROW = 4
    LAND = 0.15

    def __init__(self):
        self.chunk = 1
        self.rate = 0.0
        self.settled = False  # the chunk is the rate's, not held back by GROW

    def called(self, steps: int, wall: float, call_s: float) -> None:
        """A call of `steps` took `wall` seconds: the rate, and the next frame's first call."""
        if wall > 0 and steps > 0:
            self.rate = steps / wall
            want = steps_for(self.rate, call_s)
            grow = self.GROW * max(steps, self.chunk)
            self.settled = want <= grow
            self.chunk = max(1, min(want, grow))

    def next(self, steps: int, elapsed: float, frame_s: float) -> int:
        """Steps for the next call of a frame that took `steps` steps in `elapsed` seconds of
        its `frame_s`; 0 ends the frame (its time is up, or too little is left to be worth a
        host wait)."""
        if elapsed >= frame_s:
            return 0
        if steps == 0:
            return self.chunk
        left = frame_s - elapsed
        if left < self.LAND * frame_s or self.rate <= 0:
            return 0
        return min(steps_for(self.rate, left), self.chunk)


class RunAhead:
    """The solver thread's run-ahead (Simulation.step's `ahead`; app/solver_loop.py and the
    benchmarks that replay it): on a simulation that `runs_ahead` a frame is one call, which
    also starts the next frame's steps on the device, so the GPU works on while the thread
    hands the frame over and calls again; once the sizer has settled on the rate (before, a
    frame of one call would be short). The next call's size is chosen a frame early (the
    sizer's chunk); a call's steps began before it, so its rate and its frame's stepping are
    measured between two returns."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self.queued = 0       # steps the last call started ahead
        self.returned = None  # when the last call returned
        self.frame_end = None

    def call(self, sim, sizer: "CallSizer", k: int, period: float) -> tuple[int, float]:
        """One frame's call: (steps, seconds to size the next calls by)."""
        k = self.queued or k
        self.queued = 0
        sim.step(k, ahead=sizer.chunk)
        self.queued = sizer.chunk
        now = time.perf_counter()
        wall = sim.stats["wall_s"]
        if self.returned is not None and now - self.returned < 2 * period:
            wall = max(wall, now - self.returned)
        self.returned = now
        return k, wall

    def frame(self, start: float, period: float, ahead: bool) -> tuple[float, float]:
        """(start, end) of a frame's stepping for FramePacer.stepped; a frame whose steps were
        started ahead by the last call (`ahead`) began at the previous frame's end (later where
        the loop waited: a command, a pause)."""
        end = time.perf_counter()
        if ahead and self.frame_end is not None:
            start = max(self.frame_end, start - 0.25 * period)
        self.frame_end = end
        return start, end


class Mailbox:
    """One slot holding the newest frame. `put` replaces an unread frame (counted as dropped)
    and never blocks; `take` returns the newest unread frame or None."""

    def __init__(self):
        self._lock = threading.Lock()
        self._frame: Frame | None = None
        self._seq = 0
        self.dropped = 0
        self._taken = threading.Event()
        self._taken.set()

    def put(self, frame: Frame) -> None:
        with self._lock:
            old, self._frame = self._frame, frame
            self._seq += 1
            frame.seq = self._seq
            self._taken.clear()
            if old is not None:
                self.dropped += 1
        if old is not None:
            old.done()

    def take(self) -> Frame | None:
        with self._lock:
            f, self._frame = self._frame, None
            self._taken.set()
        return f

    def wait_taken(self, timeout: float) -> bool:
        """True once the last frame put has been taken (for lock-step recording)."""
        return self._taken.wait(timeout)

    def clear(self) -> None:
        f = self.take()
        if f is not None:
            f.done()
