"""`LiveView`: a Simulation drawn live in a notebook (docs/NOTEBOOK.md).

The window's pieces, without Qt: the solver thread is the window's loop (app/solver_loop.py) in
a plain thread, its outlets callbacks; the picture is the window's view for the mesh kind
(app/views/) on a jupyter_rfb canvas (canvas.py); the brush is the window's (tools/
brush_core.py); the sliders span what the window's do (widgets/spans.py).

Threads. The solver thread steps the simulation and hands the newest frame over through its
one-slot mailbox. Drawing happens in the kernel's main thread, in its event loop, when the
browser is ready for a frame (jupyter_rfb's frame feedback). jupyter_rfb also asks for frames
from ipykernel's subshell threads (JupyterLab sends some of the widgets' messages on a subshell),
and an OpenGL context is current in one thread at a time: a frame asked for there is drawn in
the main thread instead (a draw is scheduled on its loop), the page's events (pointer, resize)
and the choices that rebuild the view are handled there too, so the VisPy scene and the context
have one thread, as in the window. Every draw also releases the context (canvas.py), so that
where no event loop runs (a script, a test) any thread may draw, one at a time. The view takes
the newest frame in the draw, uploads it into the view's textures (on CuPy through the window's hand-over path:
CUDA–OpenGL interop where the context allows it, else pinned copies) and draws. A slow browser
drops frames; it never slows the solver. Calls a cell makes on the simulation while the view is
open run in the solver thread between two chunks of steps (router.py), so `sim.snapshot()`
never sees half a step; `sim.t` is read directly.
"""
from __future__ import annotations

import collections
import threading
import time

import ipywidgets as w

from pdestudio import solvers

from ..frames import PACES
from ..solver_loop import SolverLoop
from ..tools.brush_core import Strokes, pick
from ..views import ColorScale, make_view, view_modes
from ..views.interop import transfer_path
from .canvas import SIZE, make_canvas
from .controls import Controls
from .canvas import OffscreenGL
from .router import Router, in_main, main_loop

SHOWN_WINDOW_S = 2.0  # frames/s drawn: counted over this many seconds


class Outlet:
    """A signal without Qt: `emit(*args)` calls every connected function."""

    def __init__(self):
        self._fns: list = []

    def connect(self, fn) -> None:
        self._fns.append(fn)

    def emit(self, *args) -> None:
        for fn in list(self._fns):
            fn(*args)


class NotebookLoop(SolverLoop):
    """The window's solver loop in a plain thread, its outlets `Outlet`s."""

    def __init__(self):
        for name in ("created", "frame_ready", "message", "running_changed", "stats",
                     "speedup", "param_refused"):
            setattr(self, name, Outlet())
        super().__init__()
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        self.thread = threading.Thread(target=self.loop, name="pdestudio-solver", daemon=True)
        self.thread.start()

    def _deliver(self, frame) -> None:
        """The window takes each frame as it arrives and the loop waits (briefly) for a screen
        that is behind; here the browser asks for frames at its own pace (jupyter_rfb's frame
        feedback) and the view takes the newest then, so the loop never waits for it."""
        super()._deliver(frame)
        self._behind = False

    def stop(self, timeout: float = 10.0) -> None:
        self.submit("quit")
        if self.thread is not None:
            self.thread.join(timeout)


def _extent(mesh) -> float:
    """The mesh's largest extent (the brush's default radius is a twentieth of it)."""
    import numpy as np
    if hasattr(mesh, "points"):
        return float(np.ptp(np.asarray(mesh.points, float), axis=0).max())
    spans = [float(np.ptp(np.asarray(getattr(mesh, a)))) for a in ("x", "y") if hasattr(mesh, a)]
    return max(spans) if spans else 1.0


def _check_pace(pace: str) -> str:
    if pace not in PACES:
        raise solvers.ParameterError(f"pace '{pace}' is unknown; allowed: " + ", ".join(PACES))
    return pace


class LiveView(w.VBox):
    """See the module docstring. `pdestudio.show(sim)` makes one; display it as a cell's value."""

    def __init__(self, sim, size=SIZE, field: str | None = None, cmap: str = "viridis",
                 mode: str | None = None, steps_per_frame: int = 0, pace: str = "smooth"):
        _check_pace(pace)
        super().__init__()
        self.add_class("pdestudio-live")
        self.sim = sim
        self.info = None
        self.view = None
        self.field = field
        self.mode = mode
        self.scale = ColorScale(cmap=cmap)
        self.messages: list[tuple[str, bool]] = []
        self.frames_sent = 0
        self.frames_drawn = 0  # draws that showed a new frame of the solver
        self.last_frame = None  # (t, steps) of the frame drawn last
        self.draw_s = 0.0
        self._shown: collections.deque = collections.deque()
        self._stats: dict = {}
        self._probed = False
        self._syncing = False
        self._closed = True  # until the solver thread runs
        self._loop = main_loop()  # the kernel's main thread's (the view draws in it)
        self._gl_lock = threading.RLock()  # one draw (or scene change) at a time
        self.canvas = make_canvas(size)
        self.canvas.native.add_class("pdestudio-canvas")
        self.ctl = Controls(solvers.describe(sim.model), dict(sim.params))
        self.children = self.ctl.rows(self.canvas.native)
        self.worker = NotebookLoop()
        self.worker.steps_per_frame = int(steps_per_frame)
        self.set_pace(pace)
        self.strokes = Strokes(self.worker.submit)
        self.router = Router(lambda fn: self.worker.submit("call", lambda _w: fn()),
                             lambda: self.worker.thread, after=self._changed_by_call)
        self._wire()
        self.worker.adopt(sim)  # here, before its thread starts: the view exists at once
        self.worker.start()
        self.router.install(sim)
        self._closed = False

    # ---- wiring -------------------------------------------------------------------------
    def _wire(self) -> None:
        wk, c = self.worker, self.ctl
        wk.created.connect(lambda info: self._main(self._on_created, info))
        wk.frame_ready.connect(lambda: self._main(self._request_draw))
        wk.message.connect(lambda text, err: self._main(self._on_message, text, err))
        wk.stats.connect(lambda s: self._main(self._on_stats, s))
        wk.param_refused.connect(lambda n, v: self._main(self._set_slider, n, v))
        wk.running_changed.connect(lambda on: self._main(self._on_running, on))
        c.run.on_click(lambda _b: self.run())
        c.pause.on_click(lambda _b: self.pause())
        c.step.on_click(lambda _b: self.step())
        for box, fn in ((c.field, self.set_field), (c.mode, self._set_mode),
                        (c.cmap, lambda v: self.set_scale(cmap=v)),
                        (c.range, lambda v: self.set_scale(mode=v)), (c.brush, self._brush_on)):
            box.observe(lambda ch, fn=fn: None if self._syncing else self._main(fn, ch["new"]),
                        names="value")
        c.undo.on_click(lambda _b: self.strokes.undo_stroke())
        for name, sl in c.sliders.items():
            sl.observe(lambda ch, n=name: self._slider_moved(n, ch["new"]), names="value")
        rfb = self.canvas.native
        rfb.get_frame = self._get_frame  # what jupyter_rfb calls for a frame
        self._draw_frame = type(rfb).get_frame.__get__(rfb)
        self._handle_event = type(rfb).handle_event.__get__(rfb)
        rfb.handle_event = lambda ev: self._main(self._event, ev)  # the page's events
        ev = self.canvas.events
        ev.mouse_press.connect(self._press)
        ev.mouse_move.connect(self._move)
        ev.mouse_release.connect(self._release)

    def _main(self, fn, *args) -> None:
        """fn(*args) in the kernel's main thread (its event loop), or here when no loop runs
        (a script or a test driving the view without a browser)."""
        in_main(self._loop, fn, *args)

    def _off_main(self) -> bool:
        """Called in another thread while the kernel's main loop runs (jupyter_rfb's draws and
        the page's events from ipykernel's subshell threads)."""
        return self._loop is not None and self._loop.is_running() and \
            threading.current_thread() is not threading.main_thread()

    def _event(self, ev) -> None:
        with self._gl_lock:
            self._handle_event(ev)

    # ---- the public interface -----------------------------------------------------------
    @property
    def running(self) -> bool:
        return bool(self.worker.running)

    def run(self) -> None:
        """Start stepping in the solver thread (returns at once)."""
        self.worker.submit("run", True)

    def pause(self) -> None:
        """Stop stepping; returns once the solver thread has paused."""
        self.worker.submit("run", False)
        self.router.call(lambda: None)

    def step(self, n: int = 1) -> None:
        """n steps (pauses first); returns once they are done."""
        self.worker.submit("step", int(n))
        self.router.call(lambda: None)

    def set_pace(self, pace: str) -> None:
        """How often the solver hands a frame over, as the window's profiler sets it:
        "smooth" (about 30 frames/s, as many as the browser takes) or "fast solver" (drawing
        takes at most a tenth of the time: where the drawing shares the processor with the
        solver, a CPU's software OpenGL, the solver keeps about 90 % of its steps/s)."""
        self.worker.submit("pace", _check_pace(pace))

    def stats(self) -> dict:
        """The profiler's numbers: steps/s of the solver, frames/s drawn for the browser
        (over the last SHOWN_WINDOW_S seconds), frames/s handed over by the solver thread, the
        draw time and the hand-over path."""
        s = dict(self._stats)
        return {"steps_per_s": s.get("steps_per_s", 0.0), "frames_per_s": self._shown_rate(),
                "frames_made_per_s": s.get("frames_per_s", 0.0), "draw_ms": 1e3 * self.draw_s,
                "transfer_path": s.get("transfer_path", ""), "t": self.sim.t,
                "steps": self.sim.steps, "dropped": self.worker.mailbox.dropped,
                "pace": self.worker.pacer.describe()}

    def brush_stroke(self, points, radius: float | None = None, value: float | None = None,
                     field: str | None = None, mode: str = "set") -> int:
        """Paint at the data points `points` (in the mesh's coordinates) as one stroke, with
        the brush's code (the mouse's, after its pick); returns, once it is painted, how many
        values it set."""
        c = self.ctl
        field = field or (c.brush_field.value if c.brush_field.value in self.info.settable
                          else self.info.settable[0])
        if field not in self.info.settable:
            raise solvers.ParameterError(f"brush: field '{field}' cannot be painted; allowed: "
                                         + ", ".join(self.info.settable))
        radius = float(c.brush_radius.value if radius is None else radius)
        value = float(c.brush_value.value if value is None else value)
        for p in points:
            self.strokes.dab(field, tuple(float(x) for x in p), radius, value, mode)
        self.strokes.end()
        return self.router.call(lambda: self.strokes.changed)

    def close(self) -> None:
        """Stop the solver thread and close the canvas (the simulation stays usable)."""
        if getattr(self, "_closed", True):  # (closed, or its __init__ failed)
            return super().close()
        self._closed = True
        self.router.uninstall()
        self.worker.stop()
        self.worker.mailbox.clear()
        self.canvas.close()
        super().close()

    # ---- worker outlets -----------------------------------------------------------------
    def _on_created(self, info) -> None:
        self._syncing = True  # the boxes follow the simulation: no callbacks
        try:
            self._show_setup(info)
        finally:
            self._syncing = False
        self._rebuild_view()

    def _show_setup(self, info) -> None:
        self.info = info
        c = self.ctl
        self.field = self.field if self.field in info.fields else info.default_field
        c.field.options = list(info.fields)
        c.field.value = self.field
        modes = view_modes(info.kind)
        self.mode = self.mode if self.mode in modes else modes[0]
        c.mode.options = list(modes)
        c.mode.value = self.mode
        c.mode.disabled = len(modes) < 2
        c.brush_field.options = list(info.settable) or ["-"]
        c.brush_field.value = self.field if self.field in info.settable else c.brush_field.options[0]
        c.brush_radius.value = float(f"{_extent(info.mesh) / 20:.3g}")
        rng = info.fields[c.brush_field.value].get("range") if info.settable else None
        c.brush_value.value = float(rng[1]) if rng and rng[1] is not None else 1.0

    def _rebuild_view(self) -> None:
        with self._gl_lock:
            if self.view is not None:
                self.view.remove()
            self.view = make_view(self.canvas, self.info, self.mode)
            self._camera()
            self._probed = False
        self._want()

    def _want(self) -> None:
        self.worker.submit("want", self.info.generation, self.view.needed(self.field))

    def _request_draw(self) -> None:
        if not self._closed:
            self.canvas.native.request_draw()  # (not canvas.update(): see _get_frame)

    def _on_message(self, text: str, error: bool) -> None:
        self.messages.append((text, bool(error)))
        del self.messages[:-50]
        colour = "#c0392b" if error else "#555"
        from html import escape
        self.ctl.status.value = f"<span style='color:{colour}'>{escape(text)}</span>"

    def _on_stats(self, s: dict) -> None:
        self._stats = s
        fps = self._shown_rate()
        self.ctl.profiler.value = (
            f"<tt>{s['steps_per_s']:.4g} steps/s &nbsp; {fps:.3g} frames/s drawn "
            f"({s['frames_per_s']:.3g} handed over) &nbsp; draw {1e3 * self.draw_s:.3g} ms "
            f"&nbsp; t = {s['t']:.6g}, step {s['steps']} &nbsp; {s['backend']} {s['dtype']}, "
            f"{s['transfer_path']}</tt>")

    def _on_running(self, on: bool) -> None:
        self.ctl.run.button_style = "success" if on else ""

    # ---- controls -----------------------------------------------------------------------
    def set_field(self, name: str) -> None:
        if self.info is None or name not in self.info.fields or name == self.field:
            return
        self.field = name
        rng = self.info.fields[name].get("range")
        if rng:
            self.scale.lo, self.scale.hi = float(rng[0]), float(rng[1])
        self._want()

    def _set_mode(self, mode: str) -> None:
        if self.info is not None and mode != self.mode and mode in view_modes(self.info.kind):
            self.mode = mode
            self._rebuild_view()

    def set_scale(self, cmap: str | None = None, mode: str | None = None, lo=None,
                  hi=None) -> None:
        """Colour map, range mode (auto, fixed, symmetric) and the fixed range's ends."""
        if cmap is not None:
            self.scale.cmap = cmap  # an unknown name: ParameterError naming the allowed ones
        if mode is not None:
            self.scale.mode = mode
        if lo is not None and hi is not None:
            if not float(hi) > float(lo):
                raise solvers.ParameterError(f"colour range {lo}..{hi} is empty; allowed: "
                                             "lo < hi")
            self.scale.lo, self.scale.hi = float(lo), float(hi)
        if self.info is not None:
            self._want()

    def _slider_moved(self, name: str, value) -> None:
        if not self._syncing:
            self.worker.submit("live", name, value)  # validated there; refused: slider reset

    def _set_slider(self, name: str, value) -> None:
        sl = self.ctl.sliders.get(name)
        if sl is None or value is None:
            return
        self._syncing = True
        try:
            sl.value = value  # (ipywidgets clamps it to the slider's span)
        finally:
            self._syncing = False

    def _changed_by_call(self, name: str) -> None:
        """After a cell changed the simulation (routed into the solver thread): show it, and
        let the sliders follow a parameter set from code."""
        self.worker.publish_now()
        if name == "set_param":
            params = dict(self.sim.params)
            for n in self.ctl.sliders:
                if n in params:
                    self._main(self._set_slider, n, params[n])

    # ---- the brush ----------------------------------------------------------------------
    def _brush_on(self, on: bool) -> None:
        if on and self.info is not None and self.info.kind == "grid2d" and self.mode != "image":
            self.ctl.mode.value = "image"  # the brush paints on the flat image of a grid
        self._camera()

    def _camera(self) -> None:
        vb = getattr(self.view, "vb", None)
        if vb is not None:
            vb.camera.interactive = not self.ctl.brush.value

    def dab(self, pos) -> bool:
        """Paint at canvas position `pos` (logical pixels), as a mouse drag does."""
        p = pick(self.view, self.info, self.canvas, pos)
        c = self.ctl
        if p is None or c.brush_field.value not in self.info.settable:
            return False
        self.strokes.dab(c.brush_field.value, p, c.brush_radius.value, c.brush_value.value,
                         c.brush_mode.value)
        return True

    def _press(self, event) -> None:
        if self.ctl.brush.value and event.button == 1:
            event.handled = True
            self.dab(event.pos)

    def _move(self, event) -> None:
        if self.ctl.brush.value and event.is_dragging and self.strokes.stroke is not None:
            event.handled = True
            self.dab(event.pos)

    def _release(self, event) -> None:
        if self.ctl.brush.value:
            self.strokes.end()

    # ---- drawing (the kernel's main thread) ---------------------------------------------
    def _get_frame(self):
        """The canvas's frame for the browser: the newest frame of the solver uploaded into
        the view's textures, then VisPy's draw into the backend's framebuffer (the upload
        comes first: making the context current inside that draw would unbind it). Asked for
        in another thread of a kernel: None, and the frame is drawn in the main thread (asked
        for with jupyter_rfb's request_draw: VisPy's canvas.update() would do nothing, its
        scene waits for the draw this call did not make)."""
        if self._off_main():
            self._loop.call_soon_threadsafe(self._request_draw)
            return None
        with self._gl_lock:
            try:
                return self._draw()
            finally:
                ctx = getattr(self.canvas.native, "_context", None)
                if isinstance(ctx, OffscreenGL):
                    ctx.release()  # never left current in this thread (canvas.py)

    def _draw(self):
        t0 = time.perf_counter()
        # current in this thread before anything of VisPy's runs (with no frame to take yet,
        # the draw itself was the first to touch GL: it parsed with no context current)
        self.canvas.set_current()
        new = self._take_frame()
        img = self._draw_frame()
        if img is None:
            return None
        now = time.perf_counter()
        self.draw_s = now - t0
        self.frames_sent += 1
        if new:
            self.frames_drawn += 1
            self._shown.append(now)
            self.worker.submit("drawn", self.draw_s)  # (the 'fast solver' pace caps by it)
        return img

    def _take_frame(self) -> bool:
        """Upload the newest frame, if any; True if one was."""
        if self.info is None or self.view is None or min(self.canvas.physical_size) <= 1:
            return False
        self.canvas.set_current()
        if not self._probed:  # the window's hand-over path, now that a context is current
            self._probed = True
            self.worker.submit("transfer", *transfer_path(self.canvas, self.info.backend))
        frame = self.worker.mailbox.take()
        if frame is None:
            return False
        try:
            if frame.generation != self.info.generation or \
                    not set(self.view.needed(self.field)) <= set(frame.fields):
                return False
            self.view.set_frame(frame, self.field, self.scale)
            self.last_frame = (frame.t, frame.steps)
            return True
        finally:
            frame.done()

    def _shown_rate(self) -> float:
        now = time.perf_counter()
        while self._shown and now - self._shown[0] > SHOWN_WINDOW_S:
            self._shown.popleft()
        if len(self._shown) < 2:
            return 0.0
        return (len(self._shown) - 1) / max(now - self._shown[0], 1e-9)
