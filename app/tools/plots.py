"""Plots over time (issue 17): the quantities a model declares (`describe()["quantities"]`, e.g.
min/max/mean, mass, energy), sampled by the solver thread after frames (at most every
SAMPLE_S of wall time, and after every single step) and drawn live against simulated time with
VisPy in a dock; pick the quantities in the list, a log scale for errors and step sizes, and
"Export CSV…" (t, steps and every quantity). A new simulation starts new series."""
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


class Sampler(QObject):
    sample = Signal(int, float, int, dict)  # generation, t, steps, quantities (worker thread)

    def __init__(self, window):
        super().__init__(window)
        self._last = (None, -1, 0.0)  # generation, steps, wall time of the last sample
        window.worker.after_frame.append(self._after_frame)

    def _after_frame(self, worker) -> None:
        sim, now = worker.sim, time.perf_counter()
        gen, steps, t_wall = self._last
        if gen == worker.generation and (steps == sim.steps or (worker.running and
                                                                now - t_wall < SAMPLE_S)):
            return
        self._last = (worker.generation, sim.steps, now)
        self.sample.emit(worker.generation, float(sim.t), int(sim.steps), sim.quantities())


class PlotsPanel(QWidget):
    def __init__(self, window):
        super().__init__()
        self.window = window
        self.generation, self.model = None, None
        self.units: dict = {}
        self.t: list = []
        self.steps: list = []
        self.series: dict[str, list] = {}
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        self.canvas = scene.SceneCanvas(keys=None, size=(300, 220), bgcolor="#1c1e24",
                                        show=False, app="pyside6")
        grid = self.canvas.central_widget.add_grid(margin=4)
        self.view = grid.add_view(row=0, col=1, camera="panzoom")
        self.yaxis = scene.AxisWidget(orientation="left", text_color="w", axis_color="w",
                                      tick_color="w", axis_font_size=7, tick_font_size=6)
        self.yaxis.width_min = self.yaxis.width_max = 52  # fixed: a unique layout
        grid.add_widget(self.yaxis, row=0, col=0)
        self.xaxis = scene.AxisWidget(orientation="bottom", text_color="w", axis_color="w",
                                      tick_color="w", axis_label="t", axis_font_size=7,
                                      tick_font_size=6)
        self.xaxis.height_min = self.xaxis.height_max = 34
        grid.add_widget(self.xaxis, row=1, col=1)
        self.yaxis.link_view(self.view)
        self.xaxis.link_view(self.view)
        self.lines: dict[str, scene.visuals.Line] = {}
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
    def add(self, generation: int, t: float, steps: int, q: dict) -> None:
        if generation != self.generation:
            self._start(generation)
        if self.steps and steps <= self.steps[-1]:  # a restore went back: a new branch
            k = next((i for i, s in enumerate(self.steps) if s >= steps), len(self.steps))
            del self.t[k:], self.steps[k:]
            for v in self.series.values():
                del v[k:]
        self.t.append(t)
        self.steps.append(steps)
        for name in self.series:
            self.series[name].append(q.get(name, math.nan))
        self.redraw()

    def _start(self, generation: int) -> None:
        info = self.window.info
        model = info.model if info is not None else None
        self.generation = generation
        self.t, self.steps = [], []
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
    def redraw(self) -> None:
        names = self.chosen()
        for name in list(self.lines):
            if name not in names:
                self.lines.pop(name).parent = None
        t = np.asarray(self.t, dtype=np.float64)
        lo, hi = math.inf, -math.inf
        for i, name in enumerate(names):
            y = np.asarray(self.series.get(name, []), dtype=np.float64)
            if self.log.isChecked():
                with np.errstate(all="ignore"):
                    y = np.log10(np.abs(y))
            ok = np.isfinite(y)
            if name not in self.lines:
                self.lines[name] = scene.visuals.Line(parent=self.view.scene, width=2,
                                                      color=COLOURS[i % len(COLOURS)])
            if ok.sum() >= 1:
                pts = np.column_stack([t[ok], y[ok]]).astype(np.float32)
                if len(pts) == 1:
                    pts = np.vstack([pts, pts])
                self.lines[name].set_data(pos=pts, color=COLOURS[i % len(COLOURS)])
                lo, hi = min(lo, float(y[ok].min())), max(hi, float(y[ok].max()))
        unit = {self.units.get(n, "") for n in names}
        label = ", ".join(names) + (f" [{unit.pop()}]" if len(unit) == 1 and "" not in unit
                                    else "")
        self.yaxis.axis.axis_label = ("log10 " if self.log.isChecked() else "") + label
        if len(t) and math.isfinite(lo):
            pad = 0.05 * (hi - lo) if hi > lo else max(abs(hi), 1.0) * 0.05
            span = float(t[-1] - t[0]) or 1.0
            self.view.camera.set_range(x=(float(t[0]), float(t[0]) + span),
                                       y=(lo - pad, hi + pad), margin=0)
        self.canvas.update()

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
