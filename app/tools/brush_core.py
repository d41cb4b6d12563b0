"""The brush's Qt-free core, shared by the window's Brush dock (tools/brush.py) and the notebook's
live view (app/notebook/): `pick` maps a canvas position through the view's camera to the data
point under it (on images of grids: the point of the data plane; on triangle meshes: the point
of the surface nearest to the camera), and `Strokes` paints through the solver thread's
`call` command (`sim.paint`, with one undo snapshot a stroke), so no other thread calls into
the Simulation."""
from __future__ import annotations

import numpy as np

UNDO = 20  # strokes kept


def pick(view, info, canvas, pos) -> tuple | None:
    """The data point under canvas position `pos` (logical pixels) in `view`, or None."""
    vb = getattr(view, "vb", None)
    if vb is None or info is None:
        return None
    tr = vb.scene.node_transform(canvas.scene)
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


class Strokes:
    """Brush strokes sent to a solver loop (`submit` is its `submit`): each stroke is one undo
    step, kept as a snapshot of the simulation (`sim.snapshot()`, on the device on the GPU)."""

    def __init__(self, submit):
        self.submit = submit
        self.undo: list = []
        self.redo: list = []
        self.stroke = None
        self.changed = 0
        self._field = ""

    def clear(self) -> None:
        self.undo.clear()
        self.redo.clear()

    # ---- the caller's thread --------------------------------------------------------------
    def dab(self, field: str, point, radius: float, value: float, mode: str = "set") -> None:
        """Paint at data point `point` (a stroke starts if none is open)."""
        if self.stroke is None:
            self.stroke = {"dabs": 0}
            self.submit("call", self._begin)
        self.submit("call", self._paint, field, tuple(point), float(radius), float(value), mode)
        self.stroke["dabs"] += 1

    def end(self) -> None:
        if self.stroke is not None:
            self.submit("call", self._end, self.stroke["dabs"])
            self.stroke = None

    def undo_stroke(self) -> None:
        self.submit("call", self._undo)

    def redo_stroke(self) -> None:
        self.submit("call", self._redo)

    # ---- the solver thread ----------------------------------------------------------------
    def _begin(self, worker):
        self.undo.append(worker.sim.snapshot())
        del self.undo[:-UNDO]
        self.redo.clear()
        self.changed = 0

    def _paint(self, worker, field, center, radius, value, mode):
        self._field = field
        self.changed += worker.sim.paint(field, center, radius, value, mode)
        worker.publish_now()

    def _end(self, worker, dabs):
        worker.message.emit(f"painted {self.changed} values of {self._field} in "
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
