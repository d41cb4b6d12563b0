"""Plots over time (issue 17): the quantities a model declares (`describe()["quantities"]`, e.g.
min/max/mean, mass, energy), sampled by the solver thread after frames (at most every
SAMPLE_S of wall time, and after every single step) and drawn live against simulated time with
VisPy in a dock; pick the quantities in the list, a log scale for errors and step sizes, and
"Export CSV…" (t, steps and every quantity). A new simulation starts new series.

The plot is fitted to the data: time from the first sample to the last, values with a margin (a
quantity constant to 1e-6 of its size, such as a conserved mass, gets ±10 % around its value,
not a range of its rounding noise). A legend above the plot names each curve in its colour (and
stands for the y title). Setting an initial condition is an event, not a jump: the curves break
there, a vertical marker stands at that time and the legend names it. No axes until a model
opens."""
from __future__ import annotations

import csv
import io
import math
import time

import numpy as np
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QFileDialog, QHBoxLayout, QListWidget,
                               QListWidgetItem, QPushButton, QVBoxLayout, QWidget)
from vispy import scene

from pdestudio import solvers

SAMPLE_S = 0.1
COLOURS = ["#fde725", "#35b779", "#31688e", "#ff7f50", "#e377c2", "#17becf", "#bcbd22"]
EVENT = "#9aa0a6"      # the markers of events (an initial condition set)
LEGEND_ROW = 12        # pixels per legend entry
FLAT = 1e-6            # a quantity varying less than this, relative to its size, is constant
TINY = 1e-30           # values smaller than this in size are drawn as 0


def time_range(t0: float, t1: float) -> tuple[float, float]:
    """The samples' time span; around a single time, ±10 % of it (±1 at t = 0)."""
    if t1 > t0:
        return t0, t1
    half = 0.1 * abs(t0) or 1.0
    return t0 - half, t0 + half


def value_range(lo: float, hi: float) -> tuple[float, float]:
    """lo..hi with a 5 % margin; a constant (to FLAT of its size): ±10 % around it (±1 at 0).
    Values below TINY in size count as 0: the lines are drawn in float32, and VisPy's axis
    finds no ticks for a range like 1e-200..3e-200 (Barkley's min u decays to such numbers;
    the log scale shows them)."""
    size = max(abs(lo), abs(hi))
    if size < TINY:
        return -1.0, 1.0
    if hi - lo <= FLAT * size or not hi > lo:
        mid = 0.5 * (lo + hi)
        half = 0.1 * abs(mid) or 1.0
        return mid - half, mid + half
    pad = 0.05 * (hi - lo)
    return lo - pad, hi + pad


class Sampler(QObject):
    # generation, t, steps, quantities, event ("" or what edited the state: "set u")
    sample = Signal(int, float, int, dict, str)  # (emitted in the worker thread)

    def __init__(self, window):
        super().__init__(window)
        self._last = (None, -1, 0.0)  # generation, steps, wall time of the last sample
        window.worker.after_frame.append(self._after_frame)
        window.worker.after_edit.append(self._after_edit)

    def _after_edit(self, worker, what: str) -> None:
        sim = worker.sim
        self._last = (worker.generation, sim.steps, time.perf_counter())
        self.sample.emit(worker.generation, float(sim.t), int(sim.steps), sim.quantities(), what)

    def _after_frame(self, worker) -> None:
        sim, now = worker.sim, time.perf_counter()
        gen, steps, t_wall = self._last
        if gen == worker.generation and (steps == sim.steps or (worker.running and
                                                                now - t_wall < SAMPLE_S)):
            return
        self._last = (worker.generation, sim.steps, now)
        self.sample.emit(worker.generation, float(sim.t), int(sim.steps), sim.quantities(), "")


class PlotsPanel(QWidget):
    def __init__(self, window):
        super().__init__()
        self.window = window
        self.generation, self.model = None, None
        self.units: dict = {}
        self.t: list = []
        self.steps: list = []
        self.series: dict[str, list] = {}
        self.events: list = []  # (index of the first sample after it, t, what)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        self.canvas = scene.SceneCanvas(keys=None, size=(300, 220), bgcolor="#1c1e24",
                                        show=False, app="pyside6")
        grid = self.grid = self.canvas.central_widget.add_grid(margin=4)
        self.legend = scene.Widget()
        self.legend.height_min = self.legend.height_max = LEGEND_ROW + 4
        grid.add_widget(self.legend, row=0, col=0, col_span=2)
        self.view = grid.add_view(row=1, col=1, camera="panzoom")
        self.yaxis = scene.AxisWidget(orientation="left", text_color="w", axis_color="w",
                                      tick_color="w", axis_font_size=7, tick_font_size=6)
        self.yaxis.width_min = self.yaxis.width_max = 52  # fixed: a unique layout
        grid.add_widget(self.yaxis, row=1, col=0)
        self.xaxis = scene.AxisWidget(orientation="bottom", text_color="w", axis_color="w",
                                      tick_color="w", axis_label="t", axis_font_size=7,
                                      tick_font_size=6)
        self.xaxis.height_min = self.xaxis.height_max = 34
        grid.add_widget(self.xaxis, row=2, col=1)
        self.yaxis.link_view(self.view)
        self.xaxis.link_view(self.view)
        self.lines: dict[str, scene.visuals.Line] = {}
        self.labels: list = []  # the legend's entries (Text, Line) per quantity shown
        self.markers = scene.visuals.Line(parent=self.view.scene, color=EVENT, width=1,
                                          connect="segments")
        self._show_axes(False)
        # room for the legend, the axes and a plot (squeezed to 5 px high in a small window,
        # the plot's camera raised "Singular matrix" on every resize)
        self.canvas.native.setMinimumSize(200, 100)
        lay.addWidget(self.canvas.native, 1)
        self.list = QListWidget()
        self.list.setMaximumHeight(110)
        self.list.itemChanged.connect(lambda _: self.redraw())
        lay.addWidget(self.list)
        row = QHBoxLayout()
        self.log = QCheckBox("log |value|")
        self.log.toggled.connect(lambda _: self.redraw())
        export = QPushButton("Export CSV…")
        export.clicked.connect(self._export_dialog)
        row.addWidget(self.log)
        row.addStretch(1)
        row.addWidget(export)
        lay.addLayout(row)

    # ---- data -----------------------------------------------------------------------------
    def add(self, generation: int, t: float, steps: int, q: dict, event: str = "") -> None:
        if generation != self.generation:
            self._start(generation)
        if self.steps and (steps < self.steps[-1] or (steps == self.steps[-1] and not event)):
            # a restore went back: a new branch from there
            k = next((i for i, s in enumerate(self.steps) if s >= steps), len(self.steps))
            del self.t[k:], self.steps[k:]
            for v in self.series.values():
                del v[k:]
            self.events = [e for e in self.events if e[0] < k]
        if event and self.t:
            self.events.append((len(self.t), t, event))
        self.t.append(t)
        self.steps.append(steps)
        for name in self.series:
            self.series[name].append(q.get(name, math.nan))
        self.redraw()

    def _start(self, generation: int) -> None:
        info = self.window.info
        model = info.model if info is not None else None
        self.generation = generation
        self.t, self.steps, self.events = [], [], []
        if model != self.model or not self.series:
            self.model = model
            qs = solvers.describe(model)["quantities"] if model else []
            self.units = {q["name"]: q["unit"] for q in qs}
            self.series = {q["name"]: [] for q in qs}
            self.list.blockSignals(True)
            self.list.clear()
            for i, q in enumerate(qs):
                item = QListWidgetItem(q["name"] + (f" [{q['unit']}]" if q["unit"] else ""))
                item.setData(Qt.ItemDataRole.UserRole, q["name"])
                item.setToolTip(q["help"])
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked if i == 0 else Qt.CheckState.Unchecked)
                self.list.addItem(item)
            self.list.blockSignals(False)
        else:
            self.series = {k: [] for k in self.series}

    def chosen(self) -> list[str]:
        return [self.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.list.count())
                if self.list.item(i).checkState() == Qt.CheckState.Checked]

    # ---- drawing --------------------------------------------------------------------------
    def _show_axes(self, on: bool) -> None:
        for w in (self.xaxis, self.yaxis):
            w.visible = on

    def legend_text(self) -> list[str]:
        """The legend's entries, in the curves' order (and colours)."""
        log = self.log.isChecked()
        return [(f"log10 |{n}|" if log else n)
                + (f" [{self.units[n]}]" if self.units.get(n) else "") for n in self.chosen()]

    def _set_legend(self) -> None:
        texts = self.legend_text()
        colours = [COLOURS[i % len(COLOURS)] for i in range(len(texts))]
        texts += [f"{what} at t = {t:.4g}" for _, t, what in self.events[-2:]]  # the markers
        colours += [EVENT] * (len(texts) - len(colours))
        height = LEGEND_ROW * max(len(texts), 1) + 4
        if height != self.legend.height_min:
            self.legend.height_min = self.legend.height_max = height
            # VisPy's grid solves its layout again only when told (a private flag)
            self.grid._need_solver_recreate = True
            self.grid._update_child_widget_dim()
        while len(self.labels) > len(texts):
            for v in self.labels.pop():
                v.parent = None
        for i, s in enumerate(texts):
            if i == len(self.labels):
                self.labels.append((scene.visuals.Text("", parent=self.legend, color="w",
                                                       font_size=7, anchor_x="left"),
                                    scene.visuals.Line(parent=self.legend, width=2)))
            text, line = self.labels[i]
            y = 2 + LEGEND_ROW * (i + 0.5)
            text.text, text.pos = s, (80, y)
            line.set_data(pos=np.array([[58, y], [76, y]], np.float32), color=colours[i])

    def redraw(self) -> None:
        names = self.chosen()
        for name in list(self.lines):
            if name not in names:
                self.lines.pop(name).parent = None
        t = np.asarray(self.t, dtype=np.float64)
        breaks = {k for k, _, _ in self.events}
        lo, hi = math.inf, -math.inf
        for i, name in enumerate(names):
            y = np.asarray(self.series.get(name, []), dtype=np.float64)
            if self.log.isChecked():
                with np.errstate(all="ignore"):
                    y = np.log10(np.abs(y))
            ok = np.flatnonzero(np.isfinite(y))
            if name not in self.lines:
                self.lines[name] = scene.visuals.Line(parent=self.view.scene, width=2)
            if len(ok):
                pts = np.column_stack([t[ok], y[ok]]).astype(np.float32)
                # consecutive finite samples are joined, except across an event
                pairs = np.array([[a, a + 1] for a in range(len(ok) - 1)
                                  if not any(ok[a] < k <= ok[a + 1] for k in breaks)],
                                 np.int32).reshape(-1, 2)
                if len(pts) == 1:  # one sample: its value across the view
                    xr = time_range(t[0], t[-1])
                    pts = np.array([[xr[0], pts[0, 1]], [xr[1], pts[0, 1]]], np.float32)
                    pairs = np.array([[0, 1]], np.int32)
                elif not len(pairs):
                    pairs = np.array([[0, 0]], np.int32)
                self.lines[name].set_data(pos=pts, color=COLOURS[i % len(COLOURS)],
                                          connect=pairs)
                lo, hi = min(lo, float(y[ok].min())), max(hi, float(y[ok].max()))
        self._set_legend()
        self._show_axes(bool(len(t)))
        if len(t) and math.isfinite(lo):
            xr, yr = time_range(t[0], t[-1]), value_range(lo, hi)
            # (not set_range: its margin=0 means 0.1 absolute, the "−0.1…0.1" of issue 27)
            self.view.camera.rect = (xr[0], yr[0], xr[1] - xr[0], yr[1] - yr[0])
            self._set_markers(yr)
        self.canvas.update()

    def _set_markers(self, yr) -> None:
        ev = self.events
        if ev:
            self.markers.set_data(pos=np.array([[t, v] for _, t, _ in ev for v in yr],
                                               np.float32))
        self.markers.visible = bool(ev)

    # ---- export ---------------------------------------------------------------------------
    def csv_text(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf)
        names = list(self.series)
        w.writerow(["t", "steps"] + names)
        for k in range(len(self.t)):
            w.writerow([repr(self.t[k]), self.steps[k]] + [repr(self.series[n][k]) for n in names])
        return buf.getvalue()

    def export_csv(self, path) -> None:
        try:
            with solvers.atomic_write(path) as f:
                f.write(self.csv_text().encode())
        except (solvers.ParameterError, OSError) as e:
            self.window.show_message(f"CSV export: {e}", True)
            return
        self.window.show_message(f"wrote {path} ({len(self.t)} samples)")

    def _export_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export quantities", "", "CSV (*.csv)")
        if path:
            self.export_csv(path)


def install(window) -> None:
    window.plots = PlotsPanel(window)
    window.sampler = Sampler(window)
    window.sampler.sample.connect(window.plots.add)
    from . import add_dock
    add_dock(window, "Quantities over time", window.plots, "right")
