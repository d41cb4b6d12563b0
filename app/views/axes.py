"""Axes of the 3D views: the x and y edges of the domain at the foot of the picture with ticks
labelled in the mesh's coordinates, and a vertical scale bar at the right corner labelled in
the units of what the height shows (a field's values for height surfaces, z for a curved
mesh). They are drawn over the surfaces (no depth test), so they stay readable."""
from __future__ import annotations

import numpy as np
from vispy import scene

from .base import set_text
from .colors import tick_labels, ticks

AXIS = (0.72, 0.74, 0.78, 1.0)
TEXT = (0.92, 0.92, 0.92, 1.0)


class Axes3D:
    def __init__(self, parent, font_manager=None):
        fm = font_manager
        self.lines = scene.visuals.Line(parent=parent, color=AXIS, connect="segments",
                                        antialias=False)
        self.text = scene.visuals.Text(parent=parent, color=TEXT, font_size=7, font_manager=fm)
        self.ztext = scene.visuals.Text(parent=parent, color=TEXT, font_size=7, anchor_x="left",
                                        font_manager=fm)
        self.names = scene.visuals.Text(parent=parent, color=TEXT, font_size=8, bold=True,
                                        anchor_y="bottom", font_manager=fm)
        for v in (self.lines, self.text, self.ztext, self.names):
            v.order = 2  # after the surfaces, on top of them (no depth test): always readable
        self.lines.set_gl_state("translucent", depth_test=False)

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
        # the scale bar of the height beside the right corner (x1, y0), clear of the x labels
        zpos, zt = [], []
        bx, by = x1 + 2.5 * gap, y0 - 2.5 * gap
        if zr[1] > zr[0]:
            segs += [[bx, by, zs0], [bx, by, zs1]]
            zt = ticks(zr[0], zr[1], 4)
            for v in zt:
                z = z_to_scene(v)
                segs += [[bx, by, z], [bx + tick, by - tick, z]]
                zpos.append([bx + 1.5 * tick, by - 1.5 * tick, z])
        self.lines.set_data(pos=np.array(segs, np.float32))
        set_text(self.text, labels)
        self.text.pos = np.array(pos, np.float32)
        self.ztext.visible = bool(zt)
        if zt:
            set_text(self.ztext, tick_labels(zt))
            self.ztext.pos = np.array(zpos, np.float32)
        set_text(self.names, ["x", "y", zname if zt else ""])
        self.names.pos = np.array([[0.5 * (x0 + x1), y0 - 2.2 * gap, zs0],
                                   [x0 - 2.2 * gap, 0.5 * (y0 + y1), zs0],
                                   [bx, by, zs1 + 0.5 * gap]], np.float32)
