"""Axes of the 3D views: the x and y edges of the domain at the foot of the picture with ticks
labelled in the mesh's coordinates, and a vertical scale standing on the box's right corner
(x1, y0), labelled in the units of what the height shows (a field's values for height surfaces,
z for a curved mesh). They are drawn over the surfaces (no depth test), so they stay readable.

`fit_camera` sets a turntable camera's distance so that the box and every label of the axes
lie inside the view box, whatever its aspect (a fixed distance cropped narrow views: the z
scale and its title were cut at the colour bar, Compare's three views lost their sides)."""
from __future__ import annotations

import numpy as np
from vispy import scene

from .base import set_text
from .colors import tick_labels, ticks

AXIS = (0.72, 0.74, 0.78, 1.0)
TEXT = (0.92, 0.92, 0.92, 1.0)
SIZES = (7, 8)    # font sizes (pt) of tick labels and axis titles
CHAR_EM = 0.62    # a label's width per character, in ems (DejaVu Sans digits: 0.64; letters less)
FLOOR_GAP = 0.15  # no z label this close to the floor (a fraction of the scale): the x labels


class Axes3D:
    def __init__(self, parent, font_manager=None):
        fm = font_manager
        self.lines = scene.visuals.Line(parent=parent, color=AXIS, connect="segments",
                                        antialias=False)
        self.text = scene.visuals.Text(parent=parent, color=TEXT, font_size=SIZES[0],
                                       font_manager=fm)
        self.ztext = scene.visuals.Text(parent=parent, color=TEXT, font_size=SIZES[0],
                                        anchor_x="left", font_manager=fm)
        self.names = scene.visuals.Text(parent=parent, color=TEXT, font_size=SIZES[1], bold=True,
                                        anchor_y="bottom", font_manager=fm)
        for v in (self.lines, self.text, self.ztext, self.names):
            v.order = 2  # after the surfaces, on top of them (no depth test): always readable
        self.lines.set_gl_state("translucent", depth_test=False)
        self.box = np.zeros((8, 3))   # the corners of the box the axes frame (scene units)
        self.corner = np.zeros(3)     # the foot of the z scale
        self.labels: list = []        # (scene position, text, pt size, anchor_x, anchor_y)

    def set(self, xr, yr, zr, z_to_scene=lambda z: z, zname: str = "z") -> None:
        """x range, y range, the range zr of the height quantity (data units) and the map of
        those values to scene z (a surface's z scale and offset)."""
        (x0, x1), (y0, y1) = xr, yr
        zs0, zs1 = z_to_scene(zr[0]), z_to_scene(zr[1])
        span = max(x1 - x0, y1 - y0, 1e-30)
        tick, gap = 0.015 * span, 0.05 * span
        segs, pos, labels = [], [], []
        segs += [[x0, y0, zs0], [x1, y0, zs0], [x0, y0, zs0], [x0, y1, zs0]]
        xt = ticks(x0, x1, 5)
        for v, s in zip(xt, tick_labels(xt)):
            segs += [[v, y0, zs0], [v, y0 - tick, zs0]]
            pos.append([v, y0 - gap, zs0])
            labels.append(s)
        yt = ticks(y0, y1, 5)
        for v, s in zip(yt, tick_labels(yt)):
            segs += [[x0, v, zs0], [x0 - tick, v, zs0]]
            pos.append([x0 - gap, v, zs0])
            labels.append(s)
        # the z scale stands on the right corner (x1, y0): ticks and labels point away from
        # the box; none at the floor, where the x labels end
        zpos, zt = [], []
        bx, by = x1, y0
        if zr[1] > zr[0]:
            segs += [[bx, by, zs0], [bx, by, zs1]]
            zt = [v for v in ticks(zr[0], zr[1], 4)
                  if z_to_scene(v) - zs0 >= FLOOR_GAP * (zs1 - zs0)]
            for v in zt:
                z = z_to_scene(v)
                segs += [[bx, by, z], [bx + tick, by - tick, z]]
                zpos.append([bx + 1.5 * tick, by - 1.5 * tick, z])
        self.lines.set_data(pos=np.array(segs, np.float32))
        set_text(self.text, labels)
        self.text.pos = np.array(pos, np.float32)
        zlabels = tick_labels(zt) if zt else []
        self.ztext.visible = bool(zt)
        if zt:
            set_text(self.ztext, zlabels)
            self.ztext.pos = np.array(zpos, np.float32)
        names = ["x", "y", zname if zr[1] > zr[0] else ""]
        npos = np.array([[0.5 * (x0 + x1), y0 - 2.2 * gap, zs0],
                         [x0 - 2.2 * gap, 0.5 * (y0 + y1), zs0],
                         [bx, by, zs1 + 1.6 * gap]], np.float32)  # clear of the top label
        set_text(self.names, names)
        self.names.pos = npos
        self.box = np.array([[x, y, z] for x in (x0, x1) for y in (y0, y1) for z in (zs0, zs1)])
        self.corner = np.array([bx, by, zs0])
        self.labels = ([(p, s, SIZES[0], "center", "center") for p, s in zip(pos, labels)]
                       + [(p, s, SIZES[0], "left", "center") for p, s in zip(zpos, zlabels)]
                       + [(p, s, SIZES[1], "center", "bottom") for p, s in zip(npos, names) if s])


def label_box(text: str, size_pt: float, anchor_x: str, anchor_y: str, dpi: float = 96.0):
    """(left, right, up, down) pixels a label reaches from its anchor (an estimate: the camera
    fit runs before any glyph is laid out)."""
    em = size_pt / 72.0 * dpi
    w, h = CHAR_EM * em * len(text), 1.2 * em
    left = {"left": 0.0, "center": 0.5 * w, "right": w}[anchor_x]
    up = {"bottom": h, "center": 0.5 * h, "top": 0.0}[anchor_y]
    return left, w - left, up, h - up


def fit_camera(vb, axes: Axes3D, pad: float = 6.0) -> bool:
    """Set the turntable camera's distance (its angles and centre kept) to the nearest at which
    the axes' box and labels lie inside the view box, `pad` pixels from its edges. False (and
    nothing changed) while the view box has no size yet (the grid lays it out at draw time)."""
    cam = vb.camera
    w, h = (float(s) for s in vb.size)
    if w < 20 or h < 20 or not axes.labels:
        return False
    dpi = float(getattr(vb.canvas, "dpi", None) or 96.0)
    pts = [(p, (0.0, 0.0, 0.0, 0.0)) for p in axes.box]
    pts += [(p, label_box(s, size, ax, ay, dpi)) for p, s, size, ax, ay in axes.labels]
    xyz = np.array([p for p, _ in pts], np.float64)
    reach = np.array([r for _, r in pts], np.float64) + pad

    def fits(d: float) -> bool:
        cam.distance = d
        q = vb.scene.transform.map(xyz)
        if np.any(q[:, 3] <= 0):
            return False
        x, y = q[:, 0] / q[:, 3], q[:, 1] / q[:, 3]
        return bool(np.all(x - reach[:, 0] >= 0) and np.all(x + reach[:, 1] <= w)
                    and np.all(y - reach[:, 2] >= 0) and np.all(y + reach[:, 3] <= h))

    size = float(np.ptp(axes.box, axis=0).max()) or 1.0
    lo, hi = 0.5 * size, 2.0 * size
    while not fits(hi):
        lo, hi = hi, 1.5 * hi
        if hi > 1e3 * size:  # labels wider than the view box: as far as that goes
            break
    for _ in range(14):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    cam.distance = hi
    return True


class AutoFit:
    """Keeps a view's turntable camera fitted (`fit_camera`) through resizes and new axes until
    the user turns or zooms it; `fit()` (Reset camera) fits it again."""

    def __init__(self, vb, axes: Axes3D):
        self.vb, self.axes = vb, axes
        self.fitted = None  # the camera's state after the last fit; "pending": not laid out yet
        vb.events.resize.connect(lambda event: self.refit())

    def _state(self):
        c = self.vb.camera
        return (c.elevation, c.azimuth, tuple(c.center), c.distance, c.fov)

    def fit(self) -> None:
        self.fitted = self._state() if fit_camera(self.vb, self.axes) else "pending"

    def refit(self) -> None:
        """Fit again unless the user moved the camera since the last fit."""
        if self.fitted == "pending" or self.fitted == self._state():
            self.fit()
