"""Side by side (issue 17): View > Compare… runs the window's setup (A) and a copy that differs
in some parameters, the scheme, the dtype or the backend (B) in a second window, stepped in
lockstep in SIMULATED time (A takes its steps, B advances exactly to A's time, so schemes with
other step sizes still meet), drawn side by side with linked cameras and a third view of A − B
(on the same mesh; other shapes: no difference view, and the window says why). Its own solver
thread owns both simulations; the profiler line shows both."""
from __future__ import annotations

import queue
import threading
import time
from dataclasses import replace

import numpy as np
from PySide6.QtCore import QThread, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QInputDialog, QLabel, QMainWindow,
                               QPushButton, QVBoxLayout, QWidget)
from vispy import scene

from pdestudio import solvers
from pdestudio.solvers import ParameterError, SimulationDiverged

from ..frames import Frame, SimInfo
from ..views import ColorScale, make_view
from ..views.base import BACKGROUND

FRAME_S = 0.04  # stepping time of A per frame
SCREEN_WAIT_MAX_S = 0.5  # longest wait of the worker for the screen to show its last frame
ROUNDOFF = 64  # differences below ROUNDOFF ε·max|field| are rounding (the difference view)


class CompareWorker(QThread):
    frame = Signal()              # a frame waits in the slot: the screen calls take()
    failed = Signal(str)

    def __init__(self, a, b, field):
        super().__init__()
        self.a, self.b, self.field = a, b, field
        self.running, self._stop, self._q = False, False, queue.Queue()
        self._chunk = 1
        # One slot with the newest frame (dict: t, steps (a, b), fields a, b, rates): frames
        # the screen has not drawn are replaced, never queued, and `shown` tells the worker
        # the screen has drawn the last one.
        self._lock = threading.Lock()
        self._newest = None
        self.shown = threading.Event()
        self.shown.set()

    def take(self):
        """The newest frame not yet taken, or None (the screen's thread)."""
        with self._lock:
            fr, self._newest = self._newest, None
        return fr

    def submit(self, cmd, *args):
        self._q.put((cmd, args))

    def run(self):
        try:
            self._emit(0.0, 0.0)
        except Exception as e:  # never let the thread die silently: report it
            self.failed.emit(f"{type(e).__name__}: {e}")
        while not self._stop:
            try:
                cmd, args = self._q.get(timeout=0.05) if not self.running else self._q.get_nowait()
            except queue.Empty:
                cmd = None
            try:
                if cmd == "run":
                    self.running = bool(args[0])
                elif cmd == "step":
                    self._frame(steps=1)
                elif cmd == "quit":
                    self._stop = True
                elif self.running:
                    self._frame()
            except Exception as e:  # a bug or an odd state: pause and say so, keep the thread
                self.running = False
                self.failed.emit(f"{type(e).__name__}: {e}")

    def _frame(self, steps=None):
        a, b = self.a, self.b
        try:
            t0 = time.perf_counter()
            if steps is None:
                a.step(self._chunk)
            else:
                a.step(steps)
            ta = time.perf_counter() - t0
            if steps is None:
                self._chunk = max(1, min(self._chunk * 2, 1 << 16)) if ta < FRAME_S / 2 else \
                    max(1, self._chunk // 2) if ta > 2 * FRAME_S else self._chunk
            t1 = time.perf_counter()
            b.advance(a.t)  # lockstep in simulated time: B lands exactly on A's time
            tb = time.perf_counter() - t1
        except (SimulationDiverged, ParameterError) as e:
            self.running = False
            self.failed.emit(str(e))
            return
        self._emit(ta, tb)
        # NumPy stepping is Python between small array operations: it holds the GIL that the
        # screen's thread needs for every OpenGL call of a draw, and a screen that only gets
        # the GIL every switch interval falls behind by seconds. Wait (GIL released) until the
        # screen has shown this frame, at most as long as the frame's stepping took: the
        # solvers keep at least half of the time.
        self.shown.wait(min(max(ta + tb, FRAME_S), SCREEN_WAIT_MAX_S))

    def _emit(self, ta, tb):
        a, b = self.a, self.b
        fa = {k: np.asarray(v, dtype=np.float64) for k, v in a.fields().items()}
        fb = {k: np.asarray(v, dtype=np.float64) for k, v in b.fields().items()}
        fr = {"t": (a.t, b.t), "steps": (a.steps, b.steps), "a": fa, "b": fb,
              "rate": (a.stats["steps_per_s"], b.stats["steps_per_s"]), "wall": (ta, tb),
              "eps": max(float(np.finfo(np.dtype(a.dtype)).eps),
                         float(np.finfo(np.dtype(b.dtype)).eps))}
        with self._lock:
            notify, self._newest = self._newest is None, fr
            self.shown.clear()
        if notify:
            self.frame.emit()


def _label(sim, other=None) -> str:
    keys = ("scheme", "method", "order", "integrator") + (("kernel",) if sim.backend != "numpy"
                                                          else ())
    diff = [f"{k}={v}" for k, v in sim.params.items() if k in keys]
    name = f"{sim.model} " if other is not None and other.model != sim.model else ""
    return f"{name}{sim.backend} {sim.dtype} " + " ".join(diff)


class CompareWindow(QMainWindow):
    def __init__(self, main, a, b, changes: dict):
        super().__init__(main)
        self.main, self.a, self.b = main, a, b
        what = ", ".join(f"{k}={v}" for k, v in changes.items()) or "same setup"
        self.setWindowTitle(f"Compare {a.model}: A vs B ({what})" if a.model == b.model else
                            f"Compare {a.model} (A) with {b.model} (B)")
        self.info_a, self.info_b = SimInfo.of(a), SimInfo.of(b)
        self.field = main.field if main.field in self.info_a.fields else self.info_a.default_field
        central = QWidget()
        lay = QVBoxLayout(central)
        row = QHBoxLayout()
        self.field_box = QComboBox()
        self.field_box.addItems([f for f in self.info_a.fields if f in self.info_b.fields])
        self.field_box.setCurrentText(self.field)
        self.field_box.currentTextChanged.connect(self._set_field)
        self.run_button = QPushButton("Run")
        self.run_button.setCheckable(True)
        self.run_button.toggled.connect(self._run)
        step = QPushButton("Step")
        step.clicked.connect(lambda: self.worker.submit("step"))
        row.addWidget(QLabel("field"))
        row.addWidget(self.field_box)
        row.addWidget(self.run_button)
        row.addWidget(step)
        self.status = QLabel("")
        row.addWidget(self.status, 1)
        lay.addLayout(row)
        views = QHBoxLayout()
        self.canvases = [scene.SceneCanvas(keys=None, size=(420, 380), bgcolor=BACKGROUND,
                                           show=False, app="pyside6") for _ in range(3)]
        for c in self.canvases:
            views.addWidget(c.native, 1)
        lay.addLayout(views, 1)
        self.profile = QLabel("")
        lay.addWidget(self.profile)
        self.setCentralWidget(central)
        self.same_mesh = all(self.info_a.shapes.get(k) == self.info_b.shapes.get(k)
                             for k in self.info_a.shapes)
        self.views = []
        self.scale = ColorScale()
        self.diff_scale = ColorScale("coolwarm", "symmetric")
        self.last = None
        self._build_views()
        self.worker = CompareWorker(a, b, self.field)
        self.worker.frame.connect(self._take_frame)
        self.worker.failed.connect(lambda msg: self.status.setText("stopped: " + msg))
        self.worker.start()
        self.resize(1320, 560)

    def _build_views(self):
        for v in self.views:
            if v is not None:
                v.remove()
        ia = replace(self.info_a, model="A", scenario=_label(self.a, self.b))
        ib = replace(self.info_b, model="B", scenario=_label(self.b, self.a))
        self.views = [make_view(self.canvases[0], ia), make_view(self.canvases[1], ib)]
        if self.same_mesh:
            f = self.field
            fi = dict(self.info_a.fields[f], range=None, help="A − B")
            idiff = replace(self.info_a, model="A − B", scenario="same time",
                            fields={f"{f} (A−B)": fi},
                            shapes={f"{f} (A−B)": self.info_a.shapes[f]},
                            default_field=f"{f} (A−B)", surfaces=())
            self.views.append(make_view(self.canvases[2], idiff))
        else:
            self.views.append(None)
            self.status.setText("A and B have different meshes: no difference view")
        cams = [getattr(v, "vb", None) for v in self.views if v is not None]
        cams = [vb.camera for vb in cams if vb is not None]
        for c in cams[1:]:
            cams[0].link(c)
        self.cameras = cams

    def _set_field(self, name):
        self.field = name
        self._build_views()
        if self.last is not None:
            self._on_frame(self.last)

    def _run(self, on):
        self.run_button.setText("Pause" if on else "Run")
        self.worker.submit("run", on)

    def difference(self, f=None) -> np.ndarray | None:
        """A − B of the field shown (host float64), from the last frame."""
        if self.last is None or not self.same_mesh:
            return None
        f = f or self.field
        return self.last["a"][f] - self.last["b"][f]

    def _take_frame(self):
        fr = self.worker.take()
        if fr is not None:
            self._on_frame(fr)
            for c in self.canvases:  # draw now, while the worker waits with the GIL released
                c.native.repaint()
        self.worker.shown.set()

    def _on_frame(self, fr):
        self.last = fr
        f = self.field
        lo = min(np.nanmin(fr["a"][f]), np.nanmin(fr["b"][f]))
        hi = max(np.nanmax(fr["a"][f]), np.nanmax(fr["b"][f]))
        self.scale.mode, self.scale.lo, self.scale.hi = "fixed", float(lo), float(max(hi, lo + 1e-12))
        for k, (v, key) in enumerate(zip(self.views[:2], ("a", "b"))):
            frame = Frame({n: a.astype(np.float32) for n, a in fr[key].items()},
                          t=fr["t"][k], steps=fr["steps"][k], generation=0)
            v.set_frame(frame, f, self.scale)
        if self.views[2] is not None:
            d = self.difference()
            name = f"{f} (A−B)"
            m = float(np.nanmax(np.abs(d))) if d.size else 0.0
            # the difference's colour (and height) range is at least ROUNDOFF ε·max|field| of
            # the coarser dtype: rounding differences draw as (nearly) nothing instead of
            # filling the whole scale with noise; a larger difference gets the whole range
            floor = ROUNDOFF * fr["eps"] * max(abs(lo), abs(hi))
            half = max(m, floor)
            if half > 0:
                self.diff_scale.mode, self.diff_scale.lo, self.diff_scale.hi = (
                    "fixed", -half, half)
            self.views[2].set_frame(Frame({name: d.astype(np.float32)}, t=fr["t"][0],
                                          steps=fr["steps"][0], generation=0), name,
                                    self.diff_scale)
            note = (" (identical)" if m == 0 else
                    f" (rounding: below {ROUNDOFF} ε·max|{f}|)" if m <= floor else "")
            self.status.setText(f"t = {fr['t'][0]:.6g} (A and B)   max |A − B| = {m:.3g}{note}")
        for c in self.canvases:
            c.update()
        ra, rb = fr["rate"]
        self.profile.setText(f"A: {fr['steps'][0]} steps, {ra:.4g} steps/s, "
                             f"{1e3 * fr['wall'][0]:.3g} ms/frame   |   B: {fr['steps'][1]} steps, "
                             f"{rb:.4g} steps/s, {1e3 * fr['wall'][1]:.3g} ms/frame")

    def closeEvent(self, event):
        self.worker.submit("quit")
        self.worker.wait(30000)
        super().closeEvent(event)


def parse_changes(text: str) -> dict:
    out = {}
    for item in (t.strip() for t in text.split(",") if t.strip()):
        k, eq, v = item.partition("=")
        if not eq or not k.strip():
            raise ParameterError(f"compare: '{item}' is malformed; allowed: NAME=VALUE, ...")
        out[k.strip()] = v.strip()
    return out


def open_compare(window, changes: dict | None = None, dtype: str | None = None,
                 backend: str | None = None):
    """A comparison of the window's setup (A) with B = A changed by `changes`, `dtype`,
    `backend`. Errors go to the status bar; returns the CompareWindow or None."""
    if window.info is None:
        window.show_message("compare: open a model first", True)
        return None
    info = window.info
    params = dict(window.panel.values())
    changes = dict(changes or {})
    b_model = changes.pop("model", info.model)
    try:
        if b_model not in solvers.available_models():
            raise ParameterError(f"compare: unknown model '{b_model}'; allowed: "
                                 + ", ".join(solvers.available_models()))
        b_names = {p["name"] for p in solvers.describe(b_model)["parameters"]}
        b_scenarios = [s["name"] for s in solvers.describe(b_model)["scenarios"]]
        b_scenario = info.scenario if info.scenario in b_scenarios else None
        b_params = {k: v for k, v in params.items() if k in b_names}  # another model: shared
        for k, v in changes.items():
            b_params[k] = solvers.check_param(b_model, k, v, b_scenario)
        a = solvers.create(info.model, backend=window.backend_box.currentText(),
                           dtype=window.dtype_box.currentText(), scenario=info.scenario,
                           **params)
        b = solvers.create(b_model, backend=backend or a.backend, dtype=dtype or a.dtype,
                           scenario=b_scenario, **b_params)
    except (ParameterError, solvers.MeshError) as e:
        window.show_message(f"compare: {e}", True)
        return None
    shown = dict(changes, **({"model": b_model} if b_model != info.model else {}),
                 **({"dtype": dtype} if dtype else {}),
                 **({"backend": backend} if backend else {}))
    cw = CompareWindow(window, a, b, shown)
    window.compare_window = cw
    cw.show()
    return cw


def install(window) -> None:
    window.compare_window = None

    def ask():
        text, ok = QInputDialog.getText(window, "Compare", "B differs from the current setup "
                                        "in (e.g. scheme=pvm-ifcp, order=3, dtype=float32):")
        if not ok:
            return
        try:
            ch = parse_changes(text)
        except ParameterError as e:
            window.show_message(str(e), True)
            return
        dtype, backend = ch.pop("dtype", None), ch.pop("backend", None)
        open_compare(window, ch, dtype, backend)
    act = QAction("Compare…", window)
    act.setToolTip("Run a second setup beside this one, in lockstep, with their difference")
    act.triggered.connect(ask)
    window.menus["View"].addAction(act)
    window.show_compare = ask
