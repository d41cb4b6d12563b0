"""The solver thread's loop, Qt-free: `SolverLoop` owns the `Simulation` (the screen's thread
never calls into it and never waits on the GPU), steps it in chunks, and hands the newest frame to
the screen through a one-slot mailbox (frames are dropped, never queued). Commands arrive through
a queue and are handled between chunks, so pause, reset and edits answer within ~0.1 s even on a
slow backend.

Two shells run it: the window's `SolverWorker` (app/worker.py, a QThread whose Qt signals are the
loop's outlets) and the notebook's live view (app/notebook/, a plain thread with callbacks). A
shell provides the outlets `created`, `frame_ready`, `message`, `running_changed`, `stats`,
`speedup` and `param_refused` (objects with `emit`) and calls `loop()` in its thread.

The hand-over path (transfer.py) is the screen's choice, sent with the `transfer` command after
each new view: 'interop' (device frames copied into the view's textures through CUDA–OpenGL
interop) when the canvas can take them, else pinned copies (CuPy) or plain copies (NumPy). The
statistics carry the path in use and why; an interop failure at run time switches to pinned.

Every error becomes a `message` (shown in the status bar), never a crash: a bad setup, mesh or
initial condition leaves the current simulation untouched.
"""
from __future__ import annotations

import math
import queue
import sys
import time
import traceback

from pdestudio import solvers
from pdestudio.solvers import MeshError, ParameterError, SimulationDiverged

from .frames import CallSizer, Frame, FramePacer, Mailbox, RunAhead, SimInfo, switch_interval
from .transfer import make_copier
from .views import interop

CHUNK_S = 0.05         # a stepping call lasts about this long, so commands are handled quickly
STATS_EVERY = 0.25     # seconds between statistics updates
SPEEDUP_BUDGET = 0.6   # seconds of stepping per backend in the speed-up measurement
GUI_WAIT_MAX_S = 0.05  # longest wait for a screen that is behind (see _frame_of_steps)


def _kernel_why(sim) -> str:
    """Why a model file runs the NumPy array path on the CPU (no compiler, ...), or ''."""
    why = getattr(sim, "cpu_reason", "")
    return f" ({why})" if why and sim.kernel == "numpy" else ""


class SolverLoop:
    """The solver thread's state and loop (see the module docstring); the shell calls
    `loop()` in its thread and provides the outlets."""

    def __init__(self):
        self.mailbox = Mailbox()
        self._q: queue.Queue = queue.Queue()
        self.sim = None
        self.info: SimInfo | None = None
        self.generation = 0
        self.running = False
        self.steps_per_frame = 0  # 0 = auto: as many steps as fit in the pacer's frame time
        self.pacer = FramePacer()  # 'smooth' or 'fast solver' (the window's profiler sets it)
        self.wanted: list[str] = []
        self.lockstep = False
        self._chunk = 1  # steps a call with a fixed number of steps per frame
        self._sizer = CallSizer()  # steps a call with steps per frame = auto
        self._ahead = RunAhead()  # the next frame's steps started by the last call (CuPy)
        self._copier = None
        self.transfer = ("pinned", "")  # (path asked by the GUI, why)
        self._stop = False
        self._behind = False
        self.after_frame: list = []  # fn(worker) after each published frame of steps (tools)
        self.after_edit: list = []   # fn(worker, what) after the state was set without a step
        self._reset_stats()

    # ---- called from the GUI thread: enqueue only ---------------------------------------
    def submit(self, command: str, *args) -> None:
        self._q.put((command, args))

    # ---- the thread ---------------------------------------------------------------------
    def loop(self) -> None:
        """The thread's body: until `quit`, handle commands and step while running."""
        while not self._stop:
            try:
                self._handle_commands(block=not self.running)
                if self.running and self.sim is not None and not self._stop:
                    self._frame_of_steps()
            except Exception as e:  # never let the thread die: report and pause
                self._fail(e)

    def _handle_commands(self, block: bool) -> bool:
        """Run queued commands; True if any ran. Blocks briefly when idle."""
        ran = False
        while True:
            try:
                cmd, args = self._q.get(timeout=0.1) if block and not ran else self._q.get_nowait()
            except queue.Empty:
                return ran
            ran = True
            try:
                getattr(self, "_cmd_" + cmd)(*args)
            except (ParameterError, MeshError, SimulationDiverged) as e:
                self.message.emit(str(e), True)
            except Exception as e:
                self._fail(e)
            if self._stop:
                return ran

    def _fail(self, e: Exception) -> None:
        traceback.print_exc(file=sys.stderr)
        self._set_running(False)
        if isinstance(e, (ParameterError, MeshError, SimulationDiverged)):
            self.message.emit(str(e), True)
        else:
            self.message.emit(f"{type(e).__name__}: {e}", True)

    def _set_running(self, on: bool) -> None:
        self.pacer.restart()
        if on != self.running:
            self.running = on
            self.running_changed.emit(on)
        self._reset_stats()

    # ---- commands -----------------------------------------------------------------------
    def _cmd_quit(self):
        self._stop = True
        self.running = False
        if self.sim is not None:
            self.sim.settle()

    def _cmd_setup(self, model, scenario, params, backend, dtype, note=""):
        """Create a new simulation; the current one stays if this fails."""
        sim = solvers.create(model, backend=backend, dtype=dtype, scenario=scenario, **params)
        self.adopt(sim, note, backend)

    def _cmd_open(self, path, backend="auto", note=""):
        """Continue from a checkpoint file (a saved state, a sweep member's final state, a data
        export); the current simulation stays if the file is refused."""
        sim = solvers.load(path, backend=backend)
        self.adopt(sim, note or f", from {path} at t = {sim.t:.6g}", backend)

    def adopt(self, sim, note: str = "", backend: str = "auto") -> None:
        """Make `sim` the worker's simulation (a new setup: new generation, views rebuilt)."""
        self.generation += 1
        info = SimInfo.of(sim, self.generation)
        was_running = self.running
        if self.sim is not None:
            self.sim.settle()  # its steps queued ahead end before its buffers go
        self.sim, self.info = sim, info
        self._ahead.reset()
        sys.setswitchinterval(switch_interval(sim.backend))  # (process-wide: see frames.py)
        self._copier = make_copier(sim.backend, self.transfer[0])
        self.mailbox.clear()
        self.wanted = list(dict.fromkeys(list(info.surfaces) + [info.default_field]))
        self._chunk, self._sizer = 1, CallSizer()
        self.created.emit(info)
        why = f" ({sim.backend_reason})" if backend == "auto" and sim.backend_reason else ""
        self.message.emit(f"{info.model}/{info.scenario}: backend {sim.backend}{why}, "
                          f"{sim.dtype}, kernel {sim.kernel}{_kernel_why(sim)}{note}", False)
        self._publish(wait=True)
        self._after_frame()
        self._set_running(was_running)

    def _cmd_call(self, fn, *args):
        """Run `fn(worker, *args)` in the solver thread, between two chunks of steps: how the
        window's tools (app/tools/) reach the Simulation without the GUI thread calling into it.
        Errors are reported like any command's."""
        fn(self, *args)

    def publish_now(self) -> None:
        """Hand the current state to the screen at once (after a tool changed it)."""
        self._publish(wait=True)

    def _after_frame(self) -> None:
        for fn in self.after_frame:
            fn(self)

    def _cmd_want(self, generation, names):
        if self.info is not None and generation == self.info.generation:
            self.wanted = [n for n in names if n in self.info.fields] or [self.info.default_field]
            self._publish(wait=True)

    def _cmd_transfer(self, path, reason=""):
        """The hand-over path the GUI can take ('interop' or 'pinned'; NumPy: host copies)."""
        self.transfer = (path, reason)
        if self.sim is not None and getattr(self._copier, "path", None) != path:
            self._copier = make_copier(self.sim.backend, path)
            self.mailbox.clear()
            self._publish(wait=True)

    def _transfer_state(self) -> tuple[str, str]:
        """(path in use, why), switching to pinned copies once interop failed at run time."""
        path = getattr(self._copier, "path", "?")
        why = self.transfer[1]
        if path == "interop" and interop.FAILED:
            self.transfer = ("pinned", interop.FAILED)
            self._copier = make_copier(self.sim.backend, "pinned")
            path, why = "pinned", interop.FAILED
        return path, why

    def _cmd_run(self, on):
        was = self.running
        if was and not on and self._acc["steps"] and self.info is not None:
            self._emit_stats(force=True)  # the numbers of the run up to the pause
        self._set_running(bool(on) and self.sim is not None)
        if was and not self.running:
            self._publish(wait=True)  # the screen shows the state it paused in

    def _cmd_pace(self, mode):
        self.pacer.set_mode(mode)

    def _cmd_drawn(self, seconds):
        self.pacer.drawn(float(seconds))

    def _cmd_step(self, n=1):
        if self.sim is None:
            return
        self._set_running(False)
        self.sim.step(int(n))
        self._publish(wait=True)
        self._after_frame()
        self._emit_stats(force=True, steps=int(n), wall=self.sim.stats["wall_s"])

    def _cmd_steps_per_frame(self, n):
        self.steps_per_frame = max(0, int(n))  # 0 = auto

    def _cmd_lockstep(self, on):
        self.lockstep = bool(on)

    def _cmd_live(self, name, value):
        if self.sim is None:
            return
        try:
            self.sim.set_param(name, value)  # validated; refused: nothing changed
        except ParameterError:
            self.param_refused.emit(name, self.sim.params.get(name))
            raise
        self.info = SimInfo.of(self.sim, self.generation)
        self.message.emit(f"{name} = {self.sim.params[name]!r} applied live at t = "
                          f"{self.sim.t:.6g}", False)

    def _cmd_init(self, field, source):
        """An initial condition from a file or a formula; validated before anything changes."""
        if self.sim is None:
            return
        from . import initial_conditions
        values = initial_conditions.load_values(self.sim, field, source)
        self.sim.set_field(field, values)
        self.message.emit(f"set {field} from {source}", False)
        self._publish(wait=True)
        for fn in self.after_edit:
            fn(self, f"set {field}")

    def _cmd_speedup(self):
        """Run the NumPy backend briefly on a fresh copy of the setup and compare steps/s with
        the current backend run the same way (also on a fresh copy)."""
        if self.sim is None:
            return
        s = self.sim
        self.message.emit("measuring the speed-up over NumPy on a copy of the setup…", False)
        args = dict(dtype=s.dtype, scenario=s.scenario_name, **dict(s.params))
        rates = {}
        for be in dict.fromkeys([s.backend, "numpy"]):
            copy = solvers.create(s.model, backend=be, **args)
            rates[be] = _steps_per_second(copy)
        cur, ref = rates[s.backend], rates["numpy"]
        self.speedup.emit({"backend": s.backend, "dtype": s.dtype, "rate": cur,
                           "numpy_rate": ref, "ratio": cur[0] / ref[0] if ref[0] > 0 else math.nan})

    def _cmd_export_data(self, path):
        if self.sim is None:
            return
        from .export import write_data
        write_data(self.sim, path)
        self.message.emit(f"wrote {path}", False)

    # ---- stepping and frames --------------------------------------------------------------
    def _frame_of_steps(self) -> None:
        sim = self.sim
        t0 = time.perf_counter()
        auto = self.steps_per_frame == 0
        target, done, kernel = self.steps_per_frame, 0, 0.0
        frame_s = self.pacer.frame_s
        paced = auto and not self.lockstep and sim.backend == "cupy"
        # a frame is one call that starts the next (RunAhead)
        ahead = paced and sim.runs_ahead and self._sizer.settled
        while True:
            k = self._sizer.next(done, time.perf_counter() - t0, frame_s) if auto else \
                min(target - done, self._chunk)
            if k <= 0 or (ahead and done):
                break
            try:
                if ahead:
                    k, wall = self._ahead.call(sim, self._sizer, k, self.pacer.period_s)
                else:
                    sim.step(k)
                    wall = sim.stats["wall_s"]
            except SimulationDiverged as e:
                self._ahead.reset()
                self._set_running(False)
                self.message.emit(str(e), True)
                self._publish(wait=True)
                return
            kernel += sim.stats["kernel_s"]
            done += k
            if auto:  # calls sized to land the frame on its time (a call's length: commands wait)
                self._sizer.called(k, wall, self.pacer.call_s)
            elif wall < 0.5 * CHUNK_S:
                self._chunk = min(self._chunk * 2, 1 << 20)
            elif wall > 2 * CHUNK_S and self._chunk > 1:
                self._chunk //= 2
            if not self._q.empty():
                self._handle_commands(block=False)
                if self.sim is not sim or not self.running:
                    return
        if paced:
            # frames on time with their hand-over (FramePacer.stepped). Not on NumPy, where the
            # screen shares the CPU and the GIL and is often behind: shortening the stepping
            # there made more frames than it drew and kept mean curvature at 18-20 % of its
            # speed alone against 27-28 % (docs/BENCHMARKS.md, "The screen's turns on the
            # GPU"); nor for a recording, whose frames wait for the screen. Run ahead, the
            # hand-over does not delay the steps: a frame's stepping runs from the last one's end
            self.pacer.stepped(*self._ahead.frame(t0, self.pacer.period_s, ahead))
        self._acc["steps"] += done
        self._acc["spf"] = done
        self._acc["kernel"] += kernel
        self._publish(wait=self.lockstep)
        self._after_frame()
        self._emit_stats()
        if self.lockstep:  # recording: every frame is shown, none dropped
            while not self.mailbox.wait_taken(0.05):
                if not self._q.empty():
                    self._handle_commands(block=False)
                if self._stop or not self.running or self.sim is not sim:
                    return
        stepping = time.perf_counter() - t0
        gap = 1.0 / self.pacer.fps - stepping
        if gap > 0:
            self._handle_commands(block=False)
            time.sleep(gap)
        elif self._behind and self.sim.backend == "numpy":
            # The screen is behind. NumPy stepping (Python between small array operations)
            # holds the GIL the GUI thread needs to draw, so wait (GIL released) until it takes
            # the frame, for at most as long as this frame's stepping took: the solver keeps
            # at least half of the time. (On CuPy the worker mostly waits on the device with
            # the GIL released, so it never waits for the screen.)
            self.mailbox.wait_taken(min(stepping, GUI_WAIT_MAX_S))

    def _publish(self, wait: bool) -> None:
        """Hand the newest state over: finish a copy in flight, start the next one."""
        sim, info = self.sim, self.info
        if sim is None:
            return
        cp = self._copier
        done = cp.poll(wait=wait)
        if done is not None:
            self._deliver(done)
        arrays = sim.device_fields([n for n in self.wanted if n in info.shapes])
        if cp.submit(arrays, sim.t, sim.steps, info.generation):
            self._acc["frames"] += 1
        if wait or not cp.busy:
            f = cp.poll(wait=True)
            if f is not None:
                self._deliver(f)

    def _deliver(self, frame: Frame) -> None:
        self._behind = not self.mailbox.wait_taken(0)  # the last frame is still unread
        self._acc["transfer"] += frame.transfer_s
        self.mailbox.put(frame)
        self.frame_ready.emit()

    def _reset_stats(self) -> None:
        self._acc = {"steps": 0, "kernel": 0.0, "transfer": 0.0, "frames": 0,
                     "t0": time.perf_counter(), "dropped0": self.mailbox.dropped
                     if hasattr(self, "mailbox") else 0}

    def _emit_stats(self, force: bool = False, steps: int | None = None, wall=None) -> None:
        a = self._acc
        now = time.perf_counter()
        span = now - a["t0"] if wall is None else wall
        if not force and span < STATS_EVERY:
            return
        n = a["steps"] if steps is None else steps
        frames = max(a["frames"], 1)
        path, why = self._transfer_state()
        sps = n / span if span > 0 else 0.0
        self.stats.emit({
            "steps_per_s": sps, "cell_updates_per_s": sps * self.info.cells_per_step,
            "kernel_ms": 1e3 * a["kernel"] / frames, "transfer_ms": 1e3 * a["transfer"] / frames,
            "frames_per_s": a["frames"] / span if span > 0 else 0.0,
            "dropped": self.mailbox.dropped, "t": self.sim.t, "steps": self.sim.steps,
            "steps_per_frame": a.get("spf", self.steps_per_frame), "backend": self.sim.backend,
            "dtype": self.sim.dtype, "kernel": self.sim.kernel,
            "transfer_path": path, "transfer_reason": why, "pace": self.pacer.describe()})
        self._reset_stats()


def _steps_per_second(sim, budget: float = SPEEDUP_BUDGET) -> tuple[float, int, float]:
    """(steps/s, steps, seconds) of `sim` stepping alone for about `budget` seconds, after one
    warm-up step (kernel compilation)."""
    sim.step(1)
    n, total_steps, total = 1, 0, 0.0
    while total < budget:
        t0 = time.perf_counter()
        sim.step(n)
        total += time.perf_counter() - t0
        total_steps += n
        n *= 2
    return total_steps / total, total_steps, total
