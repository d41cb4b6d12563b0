"""The main window (docs/MODELS.md §5): model, scenario, backend and dtype selectors, the parameter panel,
a VisPy canvas with the view for the mesh kind, run/pause/step/reset and steps per frame,
colormap and range, loading (mesh, initial condition), exports, and the profiler.

The GUI thread never calls into the Simulation: it sends commands to the SolverWorker and draws
the newest frame from its mailbox. Every error lands in the status bar.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QDoubleValidator
from PySide6.QtWidgets import (QComboBox, QDockWidget, QFileDialog, QGroupBox,
                               QHBoxLayout, QLabel, QLineEdit, QMainWindow, QPushButton,
                               QScrollArea, QSpinBox, QToolBar, QVBoxLayout, QWidget)
from vispy import scene

from pdestudio import solvers
from pdestudio.solvers import ParameterError

from .views import COLORMAPS, RANGE_MODES, ColorScale, make_view, view_modes
from .views.base import BACKGROUND
from .views.interop import transfer_path
from .widgets.params import ParamPanel
from .window_exports import ExportsMixin
from .widgets.profiler import ProfilerPanel
from .cpu_sizes import cpu_params
from .cpu_sizes import note as cpu_note
from .worker import SolverWorker

def _guard_pyside_refcounts() -> bool:
    """PySide6 6.12 on CPython < 3.12 drops a reference to None on every call returning void
    and to True on every signal emission (it relies on 3.12's immortal singletons): after a few
    thousand calls CPython deallocates None or True and aborts ("Fatal Python error:
    none_dealloc / bool_dealloc", often at interpreter exit). pyproject pins PySide6 < 6.12 on
    those Pythons; where that pin was not followed, give the three singletons the large
    reference count that makes them immortal on 3.12, so the lost references never reach zero."""
    import PySide6
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython" or \
            tuple(int(v) for v in PySide6.__version__.split(".")[:2]) < (6, 12):
        return False
    import ctypes
    for obj in (None, True, False):  # ob_refcnt is the first field of every object
        ctypes.c_ssize_t.from_address(id(obj)).value += 1 << 40
    return True


REFCOUNT_GUARD = _guard_pyside_refcounts()
CANVAS_SIZE = (832, 640)  # divisible by 16 (video frames)
# the smallest the picture gets in a small window (the docks give way first): at 800 × 600 the
# docks left it 127 px wide, and the line view's plots got no width at all (VisPy's cameras
# raised "Singular matrix" on every resize)
CANVAS_MIN = (400, 320)
SAMPLES = Path(__file__).resolve().parent.parent / "resources" / "initial_conditions"



def _keep_pixels(canvas) -> None:
    """Ask Qt to keep the canvas's pixels between paints (QOpenGLWidget's PartialUpdate), so a
    frame may redraw only the view's live regions (views/partial.py)."""
    from PySide6.QtOpenGLWidgets import QOpenGLWidget

    from .views.partial import keep_pixels
    native = canvas.native
    if isinstance(native, QOpenGLWidget):
        native.setUpdateBehavior(QOpenGLWidget.UpdateBehavior.PartialUpdate)
        keep_pixels(canvas)

class MainWindow(ExportsMixin, QMainWindow):
    def __init__(self, backend: str = "auto", dtype: str = "float64"):
        super().__init__()
        self.setWindowTitle("pdestudio")
        self.info = None
        self.view = None
        self.field = None
        self._field_model = None
        self._gpu = None  # whether a GPU is usable, asked once
        self.gl_renderer = None
        self._hints: dict = {}
        self.scale = ColorScale()
        self.recorder = None
        self.record_every = 1
        self._recorded = 0
        self.last_message = ("", False)
        self.frames_shown = 0
        self._shown_t0, self._shown_n = time.perf_counter(), 0
        self._draw_t0 = None
        self._prep_s = 0.0
        self.canvas = scene.SceneCanvas(keys=None, size=CANVAS_SIZE, bgcolor=BACKGROUND,
                                        show=False, app="pyside6")
        _keep_pixels(self.canvas)
        self.canvas.events.draw.connect(self._draw_start, position="first")
        self.canvas.events.draw.connect(self._draw_end, position="last")
        self.canvas.native.setMinimumSize(*CANVAS_MIN)
        self.setCentralWidget(self.canvas.native)
        self._build_model_dock(backend, dtype)
        self._build_toolbar()
        self.profiler = ProfilerPanel()
        self.profiler.measure.connect(lambda: self.worker.submit("speedup"))
        self.profiler.pace_changed.connect(lambda mode: self.worker.submit("pace", mode))
        dock = QDockWidget("Profiler", self)
        dock.setWidget(self.profiler)
        dock.setFeatures(QDockWidget.DockWidgetFeature.NoDockWidgetFeatures)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        self.worker = SolverWorker()
        self.worker.created.connect(self._on_created)
        self.worker.frame_ready.connect(self._on_frame)
        self.worker.message.connect(self.show_message)
        self.worker.running_changed.connect(self._on_running)
        self.worker.stats.connect(self._on_stats)
        self.worker.speedup.connect(self.profiler.show_speedup)
        self.worker.param_refused.connect(self._param_refused)
        self.worker.start()
        from . import menus
        menus.add_export_menu(self)
        menus.add_help_menu(self)
        from .tools import install_all
        install_all(self)  # brush, timeline, comparison, gallery, plots, sessions (app/tools/)
        menus.add_quit(self)

    # ---- layout ---------------------------------------------------------------------------
    def _build_model_dock(self, backend, dtype):
        w = QWidget()
        lay = QVBoxLayout(w)
        self.model_box = QComboBox()
        for m in solvers.available_models():
            self.model_box.addItem(m, m)
        self.scenario_box = QComboBox()
        self.backend_box = QComboBox()
        self.backend_box.addItems(list(solvers.BACKENDS))
        self.backend_box.setCurrentText(backend)
        self.dtype_box = QComboBox()
        self.dtype_box.addItems(sorted(solvers.DTYPES, key=lambda d: d != "float64"))  # f64 first
        self.dtype_box.setCurrentText(dtype)
        for label, box in (("model", self.model_box), ("scenario", self.scenario_box),
                           ("backend", self.backend_box), ("dtype", self.dtype_box)):
            row = QHBoxLayout()
            lab = QLabel(label)
            lab.setMinimumWidth(60)
            row.addWidget(lab)
            row.addWidget(box, 1)
            lay.addLayout(row)
        self.model_box.activated.connect(lambda i: self.open_model(self.model_box.itemData(i)))
        self.scenario_box.activated.connect(
            lambda i: self.open_model(self.model, self.scenario_box.itemData(i)))
        self.backend_box.activated.connect(lambda i: self.reset())
        self.dtype_box.activated.connect(lambda i: self.reset())
        self.hint = QLabel()  # what to look for in a gallery preset: stays until another model
        self.hint.setWordWrap(True)
        self.hint.setTextFormat(Qt.TextFormat.RichText)
        self.hint.setStyleSheet("QLabel { background: #2d3a4a; color: #e8eef5; padding: 6px; "
                                "border-radius: 4px; }")
        self.hint.hide()
        self._hint_model = None
        lay.addWidget(self.hint)
        self.panel = ParamPanel()
        self.panel.changed.connect(self._param_changed)
        self.panel.rejected.connect(lambda n, why: self.show_message(why, True))
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.panel)
        lay.addWidget(QLabel("parameters: (live) ones apply while running,\nthe others on Reset"))
        lay.addWidget(scroll, 1)
        box = QGroupBox("load")
        bl = QVBoxLayout(box)
        self.mesh_button = QPushButton("Load mesh…")
        self.mesh_button.clicked.connect(self._choose_mesh)
        bl.addWidget(self.mesh_button)
        row = QHBoxLayout()
        self.init_field = QComboBox()
        self.init_source = QLineEdit()
        self.init_source.setPlaceholderText("formula:exp(-r**2)  or a file")
        self.init_source.setToolTip("formula:EXPR in x, y, z, r, t (numbers, + - * / **, "
                                    "sin, exp, where, ...), a .npy/.npz file, or a grayscale "
                                    "image (file.png@lo,hi maps black..white to lo..hi)")
        self.init_source.returnPressed.connect(self._apply_init)
        pick = QPushButton("…")
        pick.setMaximumWidth(28)
        pick.clicked.connect(self._choose_init)
        row.addWidget(self.init_field)
        row.addWidget(self.init_source, 1)
        row.addWidget(pick)
        bl.addLayout(row)
        apply = QPushButton("Set initial condition")
        apply.clicked.connect(self._apply_init)
        bl.addWidget(apply)
        lay.addWidget(box)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        w.setMinimumWidth(330)
        dock = QDockWidget("Model", self)
        dock.setWidget(w)
        dock.setFeatures(QDockWidget.DockWidgetFeature.NoDockWidgetFeatures)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)

    def _build_toolbar(self):
        bar = self.menuBar()
        self.menus = {name: bar.addMenu(name) for name in ("File", "View", "Tools", "Help")}
        tb = QToolBar("controls")
        tb.setMovable(False)
        self.addToolBar(tb)
        self.run_action = QAction("Run", self, checkable=True)
        self.run_action.setShortcut("Space")
        self.run_action.setToolTip("Run / pause (Space)")
        self.run_action.toggled.connect(lambda on: self.worker.submit("run", on))
        tb.addAction(self.run_action)
        step = tb.addAction("Step", lambda: self.worker.submit("step", 1))
        step.setShortcut("S")
        step.setToolTip("One time step (S)")
        self.reset_action = tb.addAction("Reset", self.reset)
        self.reset_action.setShortcut("R")
        self.reset_action.setToolTip("Rebuild the simulation with the panel's parameters (R)")
        tb.addWidget(QLabel(" steps/frame "))
        self.spf = QSpinBox()
        self.spf.setRange(0, 10_000_000)
        self.spf.setSpecialValueText("auto")
        self.spf.setToolTip("Solver steps between two frames (auto: as many as fit in a frame of 1/31 s with its hand-over)")
        self.spf.valueChanged.connect(lambda n: self.worker.submit("steps_per_frame", n))
        tb.addWidget(self.spf)
        tb.addSeparator()
        self.field_box = QComboBox()
        self.field_box.setToolTip("Field shown")
        self.field_box.activated.connect(lambda i: self.set_field(self.field_box.itemData(i)))
        tb.addWidget(self.field_box)
        self.mode_box = QComboBox()
        self.mode_box.setToolTip("View (chosen by mesh kind)")
        self.mode_box.activated.connect(lambda i: self._rebuild_view())
        tb.addWidget(self.mode_box)
        self.cmap_box = QComboBox()
        self.cmap_box.addItems(COLORMAPS)
        self.cmap_box.setToolTip("Colormap")
        self.cmap_box.activated.connect(lambda i: self.set_scale(cmap=self.cmap_box.currentText()))
        tb.addWidget(self.cmap_box)
        self.range_box = QComboBox()
        self.range_box.addItems(RANGE_MODES)
        self.range_box.setToolTip("Colour range: auto (data min..max), fixed (lo..hi), "
                                  "symmetric (-max|v|..max|v|)")
        self.range_box.activated.connect(lambda i: self.set_scale(mode=self.range_box.currentText()))
        tb.addWidget(self.range_box)
        self.lo_edit, self.hi_edit = QLineEdit("0"), QLineEdit("1")
        for e in (self.lo_edit, self.hi_edit):
            e.setValidator(QDoubleValidator())
            e.setMaximumWidth(70)
            e.editingFinished.connect(self._range_edited)
            tb.addWidget(e)
        tb.addAction("Reset camera", self.reset_camera)
        tb.addSeparator()
        tb.addAction("PNG…", lambda: self._save_dialog("PNG image (*.png)", self.export_png))
        self.record_action = QAction("Record…", self, checkable=True)
        self.record_action.toggled.connect(self._record_toggled)
        tb.addAction(self.record_action)
        tb.addWidget(QLabel(" every "))
        self.every_box = QSpinBox()
        self.every_box.setRange(1, 10000)
        self.every_box.setToolTip("Record every k-th frame")
        tb.addWidget(self.every_box)
        tb.addAction("Data…", self.choose_data_export)

    # ---- model and setup ------------------------------------------------------------------
    @property
    def model(self) -> str | None:
        return self.model_box.currentData()

    def open_model(self, model: str, scenario: str | None = None, params: dict | None = None):
        """Select `model` (and scenario), rebuild the panel, and set it up in the worker."""
        try:
            self.schema = solvers.describe(model)
        except ParameterError as e:
            self.show_message(str(e), True)
            return
        if self.model_box.findData(model) < 0:  # registered after the window opened
            self.model_box.clear()
            for m in solvers.available_models():
                self.model_box.addItem(m, m)
        self.model_box.setCurrentIndex(self.model_box.findData(model))
        names = [s["name"] for s in self.schema["scenarios"]]
        scenario = scenario if scenario in names else names[0]
        self.scenario_box.clear()
        for s in self.schema["scenarios"]:
            self.scenario_box.addItem(s["name"], s["name"])
            self.scenario_box.setItemData(self.scenario_box.count() - 1, s["help"],
                                          Qt.ItemDataRole.ToolTipRole)
        self.scenario_box.setCurrentIndex(names.index(scenario))
        cpu = cpu_params(model, scenario, params) if self.on_cpu() else {}
        self.panel.build(self.schema, scenario, dict(params or {}, **cpu))
        self.show_hint("cpu", cpu_note(model, cpu) if cpu else "", model)
        has_mesh = "mesh" in self.panel.params
        self.mesh_button.setEnabled(has_mesh)
        self.mesh_button.setToolTip("Load a surface mesh (OBJ, PLY, STL, OFF, VTK/VTU, Gmsh)"
                                    if has_mesh else f"{model} does not take a mesh file")
        self.reset()

    def on_cpu(self) -> bool:
        """Whether the simulation runs on NumPy: chosen, or 'auto' without a usable GPU."""
        backend = self.backend_box.currentText()
        if backend != "auto":
            return backend == "numpy"
        if self._gpu is None:
            self._gpu = solvers.gpu_available()
        return not self._gpu

    def reset(self, note: str = ""):
        """(Re)create the simulation from the panel; the current one stays if that fails."""
        if self.model is None:
            return
        self._pending_open, self._session_view = False, None  # an open that failed is over
        self.profiler.reset_speedup()
        self.reset_action.setText("Reset")
        self.worker.submit("setup", self.model, self.scenario_box.currentData(),
                           self.panel.values(), self.backend_box.currentText(),
                           self.dtype_box.currentText(), note)

    def _param_changed(self, name, value, live):
        if live and self.info is not None:
            self.worker.submit("live", name, value)
        else:
            self.reset_action.setText("Reset *")
            self.show_message(f"{name} = {value!r} takes effect on Reset (not a live parameter)",
                              False)

    def _param_refused(self, name, value):
        """The simulation refused a live value: the panel (box and slider) shows its value."""
        if name in self.panel.params and value is not None:
            self.panel.blockSignals(True)  # the simulation has it already: nothing to send
            try:
                self.panel.set_value(name, value)
            finally:
                self.panel.blockSignals(False)

    def load_mesh(self, path: str):
        if "mesh" not in self.panel.params:
            self.show_message(f"{self.model} does not take a mesh file", True)
            return
        if not Path(path).is_file():
            self.show_message(f"mesh file '{path}' does not exist", True)
            return
        values = dict(self.panel.values(), mesh=str(path))
        sc = self.scenario_box.currentData()
        if "file" in [self.scenario_box.itemData(i) for i in range(self.scenario_box.count())]:
            sc = "file"
        self.worker.submit("setup", self.model, sc, values, self.backend_box.currentText(),
                           self.dtype_box.currentText(), f", mesh {Path(path).name}")
        self._pending_mesh = (sc, str(path))

    def apply_initial(self, field: str, source: str):
        self.worker.submit("init", field, source)

    def _choose_mesh(self):
        path, _ = QFileDialog.getOpenFileName(self, "Load mesh", "", "Meshes (*.obj *.ply *.stl "
                                              "*.off *.vtk *.vtu *.msh);;All files (*)")
        if path:
            self.load_mesh(path)

    def _choose_init(self):
        start = str(SAMPLES) if SAMPLES.is_dir() else ""
        path, _ = QFileDialog.getOpenFileName(self, "Initial condition", start, "Arrays and images "
                                              "(*.npy *.npz *.png *.jpg *.jpeg *.tif *.bmp);;"
                                              "All files (*)")
        if path:
            self.init_source.setText(path)

    def _apply_init(self):
        field, source = self.init_field.currentData(), self.init_source.text().strip()
        if field is None or not source:
            self.show_message("choose a field and a source (formula:EXPR or a file)", True)
            return
        self.apply_initial(field, source)

    # ---- worker signals -------------------------------------------------------------------
    def open_checkpoint(self, path: str, note: str = ""):
        """Continue from a checkpoint (a saved state, a sweep member, a data export .npz): the
        worker loads it; the model, scenario and panel then show it."""
        self._pending_open = True
        self.worker.submit("open", str(path), self.backend_box.currentText(), note)

    def _sync_to(self, info):
        """The model, scenario and panel show a simulation the worker adopted (a checkpoint or
        a sweep member), without a new setup."""
        self.schema = solvers.describe(info.model)
        self.model_box.setCurrentIndex(self.model_box.findData(info.model))
        self.scenario_box.clear()
        for s in self.schema["scenarios"]:
            self.scenario_box.addItem(s["name"], s["name"])
        self.scenario_box.setCurrentIndex(self.scenario_box.findData(info.scenario))
        self.panel.build(self.schema, info.scenario,
                         {k: v for k, v in info.params.items() if k != "kernel"})
        self.mesh_button.setEnabled("mesh" in self.panel.params)
        self.backend_box.setCurrentText(info.backend)
        self.dtype_box.setCurrentText(info.dtype)

    def _on_created(self, info):
        if getattr(self, "_pending_open", False):
            self._pending_open = False
            self._sync_to(info)
        pending = getattr(self, "_pending_mesh", None)
        if pending and info.params.get("mesh") == pending[1]:
            self.panel.set_value("mesh", pending[1])
            i = self.scenario_box.findData(pending[0])
            if i >= 0:
                self.scenario_box.setCurrentIndex(i)
        self._pending_mesh = None
        if self._hint_model is not None and info.model != self._hint_model:
            self.show_hint("", "", info.model)  # the notes were about another model
        if self.info is None or self.info.model != info.model:  # another model: no stale numbers
            self.profiler.clear()
            self._shown_t0, self._shown_n = time.perf_counter(), 0
        self.info = info
        self.setWindowTitle(f"pdestudio — {info.title or info.model} ({info.scenario}, "
                            f"{info.backend} {info.dtype})")
        self.field_box.clear()
        for name, fi in info.fields.items():
            self.field_box.addItem(name, name)
            self.field_box.setItemData(self.field_box.count() - 1, fi.get("help", ""),
                                       Qt.ItemDataRole.ToolTipRole)
        self.init_field.clear()
        for name in info.settable:
            self.init_field.addItem(name, name)
        modes = view_modes(info.kind)
        cur = self.mode_box.currentText()
        self.mode_box.clear()
        self.mode_box.addItems(modes)
        if cur in modes:
            self.mode_box.setCurrentText(cur)
        self.mode_box.setEnabled(len(modes) > 1)
        same_model = self._field_model == info.model  # a reset keeps the field shown; another
        self._field_model = info.model                # model opens on its own default field
        self.field = self.field if same_model and self.field in info.fields \
            else info.default_field
        self.field_box.setCurrentIndex(self.field_box.findData(self.field))
        self._field_range()
        self._rebuild_view()

    def _rebuild_view(self):
        if self.info is None:
            return
        if self.view is not None:
            self.view.remove()
        self.view = make_view(self.canvas, self.info, self.mode_box.currentText())
        self.worker.submit("want", self.info.generation, self.view.needed(self.field))
        self.worker.submit("transfer", *transfer_path(self.canvas, self.info.backend))

    def set_field(self, name: str):
        if self.info is None or name not in self.info.fields:
            return
        self.field = name
        self.field_box.setCurrentIndex(self.field_box.findData(name))
        self._field_range()
        self.worker.submit("want", self.info.generation, self.view.needed(name))

    def _field_range(self):
        rng = self.info.fields[self.field].get("range")
        if rng:
            self.lo_edit.setText(f"{rng[0]:g}")
            self.hi_edit.setText(f"{rng[1]:g}")
            self.scale.lo, self.scale.hi = float(rng[0]), float(rng[1])

    def _on_frame(self):
        frame = self.worker.mailbox.take()
        if frame is None:
            return
        try:
            if self.info is None or frame.generation != self.info.generation \
                    or not set(self.view.needed(self.field)) <= set(frame.fields):
                return
            t0 = time.perf_counter()
            limits = self.view.set_frame(frame, self.field, self.scale)
            self._prep_s = time.perf_counter() - t0
            self._show_limits(limits)
            self.last_frame = (frame.t, frame.steps)
        finally:
            frame.done()
        self.canvas.update()
        self.frames_shown += 1
        self._shown_n += 1
        if self.recorder is not None:
            if self._recorded % self.record_every == 0:
                self.recorder.add_image(self.canvas.render(alpha=False))
            self._recorded += 1

    def _show_limits(self, limits) -> None:
        """The lo/hi boxes show the colour range in use (auto and symmetric: the data's), unless
        the user is typing in one of them."""
        if limits is None or self.scale.mode == "fixed" or \
                self.lo_edit.hasFocus() or self.hi_edit.hasFocus():
            return
        for edit, v in zip((self.lo_edit, self.hi_edit), limits):
            text = f"{float(v):.4g}"
            if edit.text() != text:
                edit.setText(text)

    def _draw_start(self, event):
        self._draw_t0 = time.perf_counter()

    def _draw_end(self, event):
        if self.gl_renderer is None:  # Help > About names it; the context is current here
            try:
                from vispy.gloo import gl
                self.gl_renderer = f"{gl.glGetParameter(gl.GL_RENDERER)}, OpenGL " \
                                   f"{gl.glGetParameter(gl.GL_VERSION)}"
            except Exception as e:  # noqa: BLE001 (a driver that cannot say)
                self.gl_renderer = f"unknown ({type(e).__name__})"
        if self._draw_t0 is not None:
            drawn = time.perf_counter() - self._draw_t0 + self._prep_s
            self.profiler.values["draw_ms"] = 1e3 * drawn
            self.worker.submit("drawn", drawn)  # the 'fast solver' pace caps frames by it

    def _on_stats(self, s: dict):
        now = time.perf_counter()
        s = dict(s)
        span = now - self._shown_t0
        if span >= 2.0 or "shown_per_s" not in self.profiler.values:  # a 2 s window
            s["shown_per_s"] = self._shown_n / max(span, 1e-9)
            self._shown_t0, self._shown_n = now, 0
        self.profiler.update_stats(s)

    def _on_running(self, on: bool):
        self.run_action.blockSignals(True)
        self.run_action.setChecked(on)
        self.run_action.setText("Pause" if on else "Run")
        self.run_action.blockSignals(False)

    def show_hint(self, key: str, html: str, model: str | None = None) -> None:
        """A note above the parameters (a gallery preset's "Look for: ...", the CPU sizes),
        kept while `model` is open: the status bar's messages do not replace it. `key` names
        the note; an empty `html` removes it."""
        if model != self._hint_model:
            self._hints.clear()
            self._hint_model = model
        self._hints.pop(key, None)
        if html:
            self._hints[key] = html
        self.hint.setText("<br><br>".join(self._hints.values()))
        self.hint.setVisible(bool(self._hints))

    def show_message(self, text: str, error: bool = False):
        self.last_message = (text, error)
        self.statusBar().setStyleSheet("QStatusBar { color: #ff8080; }" if error else "")
        self.statusBar().showMessage(("error: " if error else "") + text)

    # ---- colours and camera ---------------------------------------------------------------
    def set_scale(self, cmap: str | None = None, mode: str | None = None, lo=None, hi=None):
        try:  # an unknown name is refused (ParameterError naming the allowed ones)
            self.scale.cmap = self.scale.cmap if cmap is None else cmap
            self.scale.mode = self.scale.mode if mode is None else mode
        except ParameterError as e:
            self.show_message(str(e), True)
            return
        self.cmap_box.setCurrentText(self.scale.cmap)
        self.range_box.setCurrentText(self.scale.mode)
        if lo is not None and hi is not None:
            if not float(hi) > float(lo):
                self.show_message(f"colour range {lo}..{hi} is empty; allowed: lo < hi", True)
                return
            self.scale.lo, self.scale.hi = float(lo), float(hi)
            self.lo_edit.setText(f"{float(lo):g}")
            self.hi_edit.setText(f"{float(hi):g}")
        self.worker.submit("want", self.info.generation if self.info else -1,
                           self.view.needed(self.field) if self.view else [])

    def _range_edited(self):
        if not (self.lo_edit.isModified() or self.hi_edit.isModified()):
            return  # focus left a box the frames filled in: nothing typed
        self.lo_edit.setModified(False)
        self.hi_edit.setModified(False)
        try:  # a range typed in applies: the mode becomes fixed
            self.set_scale(mode="fixed", lo=float(self.lo_edit.text()),
                           hi=float(self.hi_edit.text()))
        except ValueError:
            self.show_message("colour range: lo and hi must be numbers", True)

    def reset_camera(self):
        if self.view is not None:
            self.view.reset_camera()
            self.canvas.update()

    def closeEvent(self, event):
        if self.recorder is not None:
            self.stop_recording()
        self.worker.stop(60000)  # the worker quits between two calls into the solver
        super().closeEvent(event)
