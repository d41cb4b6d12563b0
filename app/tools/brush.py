"""The brush (issue 17): Tools > Brush (B) paints on the canvas. Pick the field, the value, the
radius (in the mesh's units; geodesic along surfaces) and set/add in the Brush dock, then drag:
on images of grids the mouse maps through the 2D camera onto the data plane, on triangle meshes
(3D) the picked point is the mesh vertex under the mouse nearest to the camera. Each stroke is
one undo step (Ctrl+Z, Ctrl+Shift+Z), kept as snapshots of the simulation (`sim.snapshot()`, on
the device on the GPU). While the brush is on, dragging paints instead of turning the camera.
The painting itself runs in the solver thread (`sim.paint`)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QDoubleValidator, QKeySequence
from PySide6.QtWidgets import (QComboBox, QDockWidget, QFormLayout, QHBoxLayout, QLineEdit,
                               QPushButton, QWidget)

from .brush_core import Strokes
from .brush_core import pick as pick_point


def pick(window, pos) -> tuple | None:
    """The data point under canvas position `pos` (logical pixels), or None."""
    return pick_point(window.view, window.info, window.canvas, pos)


class Brush(QWidget):
    def __init__(self, window):
        super().__init__()
        self.window = window
        self.on = False
        self.strokes = Strokes(window.worker.submit)
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
        self.strokes.clear()
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
        self.strokes.dab(self.field.currentText(), p, radius, value, self.mode.currentText())
        return True

    @property
    def stroke(self):
        return self.strokes.stroke

    def end_stroke(self) -> None:
        self.strokes.end()

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
        self.strokes.undo_stroke()

    def redo_stroke(self):
        self.strokes.redo_stroke()


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
