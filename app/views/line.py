"""1D fields (mesh kind 'grid1d'): a line plot coloured by value, and below it a growing
space–time image (one row per frame, time upwards; it scrolls once full)."""
from __future__ import annotations

import numpy as np
from vispy import scene
from vispy.visuals.transforms import STTransform

from .base import TEXT, View, as_float32
from .colors import ColorScale, decimate

LINE_POINTS = 4096     # at most this many points in the line
IMAGE_COLUMNS = 1024   # and this many columns in the space–time image
ROWS = 160             # frames kept in the space–time image


class LineView(View):
    def __init__(self, canvas, info):
        super().__init__(canvas, info)
        x = np.asarray(info.mesh.x, dtype=np.float64)
        self.n = len(x)
        self.s_line = decimate(self.n, LINE_POINTS)
        self.s_img = decimate(self.n, IMAGE_COLUMNS)
        self.x = x[::self.s_line]
        self.x0, self.x1 = float(x[0]), float(x[-1]) if len(x) > 1 else float(x[0]) + 1.0
        g = self.grid
        self.plot = g.add_view(row=1, col=1, camera="panzoom", border_color=(0.4, 0.4, 0.4, 1))
        self.yaxis = scene.AxisWidget(orientation="left", text_color=TEXT, axis_color=TEXT,
                                      tick_color=TEXT, axis_font_size=8, tick_font_size=7)
        self.yaxis.width_max = 60
        g.add_widget(self.yaxis, row=1, col=0)
        self.yaxis.link_view(self.plot)
        self.xaxis = scene.AxisWidget(orientation="bottom", text_color=TEXT, axis_color=TEXT,
                                      tick_color=TEXT, axis_font_size=8, tick_font_size=7)
        self.xaxis.height_max = 30
        g.add_widget(self.xaxis, row=2, col=1)
        self.xaxis.link_view(self.plot)
        pos = np.column_stack([self.x, np.zeros_like(self.x)]).astype(np.float32)
        self.line = scene.visuals.Line(pos=pos, color=(0.95, 0.8, 0.3, 1), width=2,
                                       parent=self.plot.scene, antialias=False)
        st_label = scene.Label("space–time: one row per frame, time upwards", color=TEXT,
                               font_size=8)
        st_label.height_max = 20
        g.add_widget(st_label, row=3, col=1)
        self.st = g.add_view(row=4, col=1, camera="panzoom", border_color=(0.4, 0.4, 0.4, 1))
        self.st.height_min = max(120, int(0.36 * canvas.size[1]))
        self.plot.height_min = 160
        self.width = len(range(0, self.n, self.s_img))
        self.rows = np.zeros((ROWS, self.width), dtype=np.float32)
        self.count = 0
        self.st_field = None
        self.image = scene.visuals.Image(self.rows[:1], cmap="viridis", clim=(0, 1),
                                         parent=self.st.scene, interpolation="nearest")
        span = (self.x1 - self.x0) or 1.0
        self.image.transform = STTransform(scale=(span / self.width, 1.0),
                                           translate=(self.x0, 0.0))
        self.limits = (0.0, 1.0)
        g.add_widget(scene.Widget(), row=4, col=0)  # keep the image aligned with the plot
        self.reset_camera()

    def set_frame(self, frame, field, scale: ColorScale):
        v = np.asarray(frame.fields[field])
        vals = as_float32(v[::self.s_line])
        if field != self.st_field:
            self.count, self.st_field = 0, field
        row = as_float32(v[::self.s_img])
        if self.count < ROWS:
            self.rows[self.count] = row
            self.count += 1
        else:
            self.rows[:-1] = self.rows[1:]
            self.rows[-1] = row
        lo, hi = scale.limits(vals, self.rows[:self.count]) if scale.mode != "fixed" \
            else scale.limits()
        self.limits = (lo, hi)
        self.line.set_data(pos=np.column_stack([self.x, vals]).astype(np.float32),
                           color=scale.rgba(vals, (lo, hi)))
        self.image.set_data(self.rows[:self.count].copy())
        self.image.cmap = scale.cmap
        self.image.clim = (lo, hi)
        pad = 0.05 * (hi - lo)
        self.plot.camera.set_range(x=(self.x0, self.x1), y=(lo - pad, hi + pad), margin=0)
        self._set_title(field, frame)
        self._update_colorbar(scale, (lo, hi), field, row=1, col=2, row_span=4)
        return lo, hi

    def reset_camera(self):
        lo, hi = self.limits
        pad = 0.05 * (hi - lo)
        self.plot.camera.set_range(x=(self.x0, self.x1), y=(lo - pad, hi + pad), margin=0)
        self.st.camera.set_range(x=(self.x0, self.x1), y=(0, ROWS), margin=0)
