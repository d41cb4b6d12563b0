"""The brush (issue 17): Tools > Brush (B) paints on the canvas. Pick the field, the value, the
radius (in the mesh's units; geodesic along surfaces) and set/add in the Brush dock, then drag:
on images of grids the mouse maps through the 2D camera onto the data plane, on triangle meshes
(3D) the picked point is the mesh vertex under the mouse nearest to the camera. Each stroke is
one undo step (Ctrl+Z, Ctrl+Shift+Z), kept as snapshots of the simulation (`sim.snapshot()`, on
the device on the GPU). While the brush is on, dragging paints instead of turning the camera.
The painting itself runs in the solver thread (`sim.paint`)."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QDoubleValidator, QKeySequence
from PySide6.QtWidgets import (QComboBox, QDockWidget, QFormLayout, QHBoxLayout, QLineEdit,
                               QPushButton, QWidget)

UNDO = 20  # strokes kept


def pick(window, pos) -> tuple | None:
    """The data point under canvas position `pos` (logical pixels), or None."""
    view, info = window.view, window.info
    vb = getattr(view, "vb", None)
    if vb is None or info is None:
        return None
    tr = vb.scene.node_transform(window.canvas.scene)
    mesh = info.mesh
    if hasattr(mesh, "points") and hasattr(mesh, "cells"):
        pts = np.asarray(mesh.points, dtype=np.float64)
        if pts.shape[1] == 2:
            pts = np.column_stack([pts, np.zeros(len(pts))])
        p = tr.map(pts)
        xy = p[:, :2] / p[:, 3:4]
        z = p[:, 2] / p[:, 3]
        cells = np.asarray(mesh.cells)
        a, b, c = (xy[cells[:, k]] for k in range(3))
        # barycentric coordinates of the mouse in every projected triangle
        v0, v1, v2 = b - a, c - a, np.asarray(pos[:2], float) - a
        den = v0[:, 0] * v1[:, 1] - v1[:, 0] * v0[:, 1]
        with np.errstate(all="ignore"):
            l1 = (v2[:, 0] * v1[:, 1] - v1[:, 0] * v2[:, 1]) / den
            l2 = (v0[:, 0] * v2[:, 1] - v2[:, 0] * v0[:, 1]) / den
        l0 = 1 - l1 - l2
        hit = np.flatnonzero((l0 >= 0) & (l1 >= 0) & (l2 >= 0) & np.isfinite(l1))
        if hit.size == 0:
            return None
        depth = (l0[hit] * z[cells[hit, 0]] + l1[hit] * z[cells[hit, 1]]
                 + l2[hit] * z[cells[hit, 2]])
        t = hit[np.argmin(depth)]  # the surface nearest to the camera under the mouse
        point = l0[t] * pts[cells[t, 0]] + l1[t] * pts[cells[t, 1]] + l2[t] * pts[cells[t, 2]]
        return tuple(float(x) for x in point)
    if getattr(vb.camera, "_name", "") == "PanZoomCamera" or "PanZoom" in type(vb.camera).__name__:
        q = tr.inverse.map([pos[0], pos[1], 0, 1])
        x, y = q[0] / q[3], q[1] / q[3]
        if hasattr(mesh, "y"):
            return (float(x), float(y))
        return (float(x),)
    return None


class Brush(QWidget):
    def __init__(self, window):
        super().__init__()
        self.window = window
        self.on = False
        self.undo: list = []
        self.redo: list = []
        self.stroke = None
        lay = QFormLayout(self)
        self.field = QComboBox()
        self.value = QLineEdit("1")
        self.radius = QLineEdit("1")
        for e in (self.value, self.radius):
            e.setValidator(QDoubleValidator())
        self.mode = QComboBox()
        self.mode.addItems(["set", "add"])
        lay.addRow("field", self.field)
        lay.addRow("value", self.value)
        lay.addRow("radius", self.radius)
        lay.addRow("mode", self.mode)
        row = QHBoxLayout()
        self.undo_button = QPushButton("Undo")
        self.undo_button.clicked.connect(self.undo_stroke)
        self.redo_button = QPushButton("Redo")
        self.redo_button.clicked.connect(self.redo_stroke)
        row.addWidget(self.undo_button)
        row.addWidget(self.redo_button)
        lay.addRow(row)
        window.worker.created.connect(self._new_setup)
        c = window.canvas.events
        c.mouse_press.connect(self._press)
        c.mouse_move.connect(self._move)
        c.mouse_release.connect(self._release)

    # ---- GUI thread -------------------------------------------------------------------------
    def _new_setup(self, info):
        cur = self.field.currentText()
        self.field.clear()
        self.field.addItems(list(info.settable))
        if cur in info.settable:
            self.field.setCurrentText(cur)
        self.undo.clear()
        self.redo.clear()
        self._camera()

    def _camera(self) -> None:
        vb = getattr(self.window.view, "vb", None)
        if vb is not None:
            vb.camera.interactive = not self.on

    def set_on(self, on: bool) -> None:
        self.on = on
        self._camera()
        self.window.show_message("brush on: drag on the picture to paint (Ctrl+Z undoes a "
                                 "stroke)" if on else "brush off")

    def dab(self, pos) -> bool:
        """Paint at canvas position `pos` (a stroke starts if none is open)."""
        w = self.window
        p = pick(w, pos)
        if p is None:
            return False
        try:
            value, radius = float(self.value.text()), float(self.radius.text())
        except ValueError:
            w.show_message("brush: value and radius must be numbers", True)
            return False
        if self.stroke is None:
            self.stroke = {"dabs": 0, "changed": 0}
            w.worker.submit("call", self._begin)
        w.worker.submit("call", self._paint, self.field.currentText(), p, radius, value,
                        self.mode.currentText())
        self.stroke["dabs"] += 1
        return True

    def end_stroke(self) -> None:
        if self.stroke is not None:
            self.window.worker.submit("call", self._end, self.stroke["dabs"])
            self.stroke = None

    def _press(self, event):
        if self.on and event.button == 1:
            event.handled = True
            self.dab(event.pos)

    def _move(self, event):
        if self.on and event.is_dragging and self.stroke is not None:
            event.handled = True
            self.dab(event.pos)

    def _release(self, event):
        if self.on:
            self.end_stroke()

    def undo_stroke(self):
        self.window.worker.submit("call", self._undo)

    def redo_stroke(self):
        self.window.worker.submit("call", self._redo)

    # ---- solver thread ----------------------------------------------------------------------
    def _begin(self, worker):
        self.undo.append(worker.sim.snapshot())
        del self.undo[:-UNDO]
        self.redo.clear()
        self._changed = 0

    def _paint(self, worker, field, center, radius, value, mode):
        self._changed += worker.sim.paint(field, center, radius, value, mode)
        worker.publish_now()

    def _end(self, worker, dabs):
        worker.message.emit(f"painted {self._changed} values of {self.field.currentText()} in "
                            f"{dabs} dabs (Ctrl+Z undoes the stroke)", False)

    def _undo(self, worker):
        self._swap(worker, self.undo, self.redo, "undo", "undid")

    def _redo(self, worker):
        self._swap(worker, self.redo, self.undo, "redo", "redid")

    def _swap(self, worker, source, target, verb, done):
        """Restore the newest state of `source`, keeping the current one in `target`."""
        if not source:
            worker.message.emit(f"brush: nothing to {verb}", False)
            return
        target.append(worker.sim.snapshot())
        worker.sim.restore(source.pop())
        worker.publish_now()
        worker.message.emit(f"{done} a brush stroke", False)

def install(window) -> None:
    window.brush = brush = Brush(window)
    dock = QDockWidget("Brush", window)
    dock.setWidget(brush)
    dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetClosable)
    window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
    dock.hide()
    act = QAction("Brush", window, checkable=True)
    act.setShortcut("B")
    act.setToolTip("Paint a field with the mouse (B)")

    def toggled(on):
        dock.setVisible(on)
        brush.set_on(on)
    act.toggled.connect(toggled)
    window.menus["Tools"].addAction(act)
    window.brush_action = act
    undo = QAction("Undo brush stroke", window)
    undo.setShortcut(QKeySequence.StandardKey.Undo)
    undo.triggered.connect(brush.undo_stroke)
    redo = QAction("Redo brush stroke", window)
    redo.setShortcut(QKeySequence.StandardKey.Redo)
    redo.triggered.connect(brush.redo_stroke)
    for a in (undo, redo):
        window.menus["Tools"].addAction(a)
