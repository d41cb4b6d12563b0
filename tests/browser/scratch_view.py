"""A stand-in for pdestudio.show(sim), used by the browser test to prove its harness without the
real notebook view: a jupyter_rfb canvas that shows a Gray-Scott simulation (its vertices binned
onto a pixel grid and coloured), one ipywidgets slider per bounded live float parameter, a brush
toggle, Run/Pause and a profiler label, with the DOM classes of the notebook view (the browser
test finds elements by them). The solver steps in a background thread; the canvas asks for the
newest frame in the kernel's event loop. Not part of the package: the kernel imports it from the
temporary folder the test copies it into."""
import asyncio
import threading
import time

import ipywidgets as w
import numpy as np
from jupyter_rfb import RemoteFrameBuffer


class _Canvas(RemoteFrameBuffer):
    def __init__(self, view, **kw):
        super().__init__(**kw)
        self._view = view

    def get_frame(self):
        return self._view._picture()

    def handle_event(self, event):
        self._view._event(event)


class ScratchView(w.VBox):
    def __init__(self, sim, field=None, width=512, height=256):
        self.sim, self.field = sim, field or sim.default_field
        self.running, self.frames_sent, self._steps_done = False, 0, 0
        self._lock, self._stop = threading.Lock(), threading.Event()
        self._loop = asyncio.get_event_loop()
        self._wh = (width, height)
        pts = np.asarray(sim.mesh.points)[:, :2]
        lo, hi = pts.min(0), pts.max(0)
        aspect = (hi[0] - lo[0]) / (hi[1] - lo[1])
        gw = max(2, int(np.sqrt(len(pts) * aspect) * 0.9))
        gh = max(2, int(gw / aspect))
        ij = np.minimum(((pts - lo) / (hi - lo) * [gw, gh]).astype(int), [gw - 1, gh - 1])
        self._flat, self._grid = (gh - 1 - ij[:, 1]) * gw + ij[:, 0], (gh, gw)
        self._count = np.maximum(np.bincount(self._flat, minlength=gw * gh), 1)
        self._rows = np.arange(height) * gh // height
        self._cols = np.arange(width) * gw // width
        self._range = sim.field_info(self.field)["range"]
        self.canvas = _Canvas(self, css_width=f"{width}px", css_height=f"{height}px",
                              resizable=False)
        self.canvas.add_class("pdestudio-canvas")
        self.run_button = w.Button(description="Run")
        self.run_button.add_class("pdestudio-run")
        self.run_button.on_click(lambda _: self.run())
        self.pause_button = w.Button(description="Pause")
        self.pause_button.add_class("pdestudio-pause")
        self.pause_button.on_click(lambda _: self.pause())
        self.brush = w.ToggleButton(description="Brush", value=False)
        self.brush.add_class("pdestudio-brush")
        self.profiler = w.Label("0 steps/s, 0 frames/s")
        self.profiler.add_class("pdestudio-profiler")
        self.sliders = {}
        for p in sim.describe()["parameters"]:
            rng = p.get("range") or [None, None]
            if p["type"] == "float" and p["live"] and None not in rng:
                s = w.FloatSlider(value=sim.params[p["name"]], min=rng[0], max=rng[1],
                                  step=(rng[1] - rng[0]) / 1000, description=p["name"],
                                  readout_format=".4f")
                s.add_class(f"pdestudio-param-{p['name']}")
                s.observe(lambda ch, n=p["name"]: self._set(n, ch["new"]), names="value")
                self.sliders[p["name"]] = s
        super().__init__([w.HBox([self.run_button, self.pause_button, self.brush]),
                          self.canvas, *self.sliders.values(), self.profiler])
        self.add_class("pdestudio-live")
        self._t0, self._f0, self._s0 = time.perf_counter(), 0, 0
        self.canvas.request_draw()

    # solver thread -------------------------------------------------------------------------
    def run(self):
        if self.running:
            return
        self.running = True
        self._stop.clear()
        self._thread = threading.Thread(target=self._work, daemon=True)
        self._thread.start()

    def pause(self):
        self._stop.set()
        if self.running:
            self._thread.join()
        self.running = False

    def close(self):
        self.pause()
        super().close()

    def _work(self):
        while not self._stop.is_set():
            with self._lock:
                self.sim.step(1)
            self._steps_done += 1
            self._loop.call_soon_threadsafe(self.canvas.request_draw)

    def _set(self, name, value):
        with self._lock:
            self.sim.set_param(name, value)

    # drawing and the brush ------------------------------------------------------------------
    def _picture(self):
        with self._lock:
            values = np.asarray(self.sim.fields()[self.field], dtype=float)
        gh, gw = self._grid
        img = (np.bincount(self._flat, weights=values, minlength=gw * gh) / self._count)
        lo, hi = self._range
        x = np.clip((img.reshape(gh, gw)[self._rows][:, self._cols] - lo) / (hi - lo), 0, 1)
        rgb = np.stack([x, np.sqrt(x), 0.3 + 0.7 * x ** 2], -1)
        self.frames_sent += 1
        now = time.perf_counter()
        if now - self._t0 > 1:
            fps = (self.frames_sent - self._f0) / (now - self._t0)
            sps = (self._steps_done - self._s0) / (now - self._t0)
            self.profiler.value = f"{sps:.1f} steps/s, {fps:.1f} frames/s"
            self._t0, self._f0, self._s0 = now, self.frames_sent, self._steps_done
        return (rgb * 255).astype(np.uint8)

    def _event(self, event):
        kind = event.get("type", event.get("event_type"))
        if not self.brush.value or kind not in ("pointer_down", "pointer_move"):
            return
        if kind == "pointer_move" and not event.get("buttons"):
            return
        pts = np.asarray(self.sim.mesh.points)[:, :2]
        lo, hi = pts.min(0), pts.max(0)
        width, height = self._wh
        fx, fy = event["x"] / width, 1 - event["y"] / height
        center = [lo[0] + fx * (hi[0] - lo[0]), lo[1] + fy * (hi[1] - lo[1]), 0.0]
        with self._lock:
            self.sim.paint(self.field, center, radius=1.0, value=0.5)
        self.canvas.request_draw()
