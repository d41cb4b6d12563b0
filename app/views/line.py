"""1D fields (mesh kind 'grid1d'): a line plot coloured by value, and below it a space–time
image (one row per frame, time upwards, the oldest at the bottom; it scrolls once full). The x
axis is labelled in the mesh's coordinates; the space–time panel shows what history exists (a
single frame fills it).

Both draw from float textures: the line's x positions are uploaded once and its y values are
the field's texture (every point; beyond 8192 points the line is the min/max envelope of runs of
points, several a pixel, so no peak is lost: visuals.ScalarLine); the space–time image
is a ring of ROWS rows, one row written per frame (every point up to 16384 a row; beyond, every
s-th: level of detail by sampling, the panel is a few hundred pixels wide).
"""
from __future__ import annotations

import time
from collections import deque

import numpy as np
from vispy import scene

from .base import TEXT, View, add_axis, ranges_of, set_text
from .colors import ColorScale, decimate
from .textures import MAX_TEXTURE, Upload
from .visuals import ImageNode, LineNode

ROWS = 160           # frames kept in the space–time image


class LineView(View):
    def __init__(self, canvas, info):
        super().__init__(canvas, info)
        x = np.asarray(info.mesh.x, dtype=np.float64)
        self.n = len(x)
        self.x0 = float(x[0])
        self.x1 = float(x[-1]) if len(x) > 1 and x[-1] > x[0] else self.x0 + 1.0
        self.s_st = decimate(self.n, MAX_TEXTURE)
        self.x = x
        g = self.grid
        self.plot = g.add_view(row=1, col=1, camera="panzoom", border_color=(0.4, 0.4, 0.4, 1))
        self.yaxis = add_axis(g, "left", self.plot, row=1, col=0)
        self.xaxis = add_axis(g, "bottom", self.plot, row=2, col=1)
        self.st_label = scene.Label("space–time: one row per frame, time upwards", color=TEXT,
                                    font_size=8)
        self.st_label.height_min = self.st_label.height_max = 20
        g.add_widget(self.st_label, row=3, col=1)
        self.st = g.add_view(row=4, col=1, camera="panzoom", border_color=(0.4, 0.4, 0.4, 1))
        self.plot.height_min = 160
        # the space–time panel's height is fixed (0.36 of the canvas, kept on resize) and the
        # plot takes the rest: with two rows free the layout was not unique (see add_axis)
        self._st_height()
        canvas.events.resize.connect(self._st_height)
        g.add_widget(scene.Widget(), row=4, col=0)  # keep the image aligned with the plot
        width = -(-self.n // self.s_st)
        self.ring = self.texture("__space_time__", (ROWS, width))
        span = self.x1 - self.x0
        pad = 0.5 * span / max(width - 1, 1)
        self.st_node = ImageNode(self.ring, (self.x0 - pad, 0.0, span + 2 * pad, 1.0),
                                 parent=self.st.scene)
        self.line = None
        self.head, self.count = -1, 0
        self.st_field = None
        self.row_ranges: deque = deque(maxlen=ROWS)
        self.times: deque = deque(maxlen=ROWS)
        self.reset_camera()

    def set_frame(self, frame, field, scale: ColorScale):
        v = frame.fields[field]
        if field != self.st_field:
            self.head, self.count, self.st_field = -1, 0, field
            self.row_ranges.clear()
            self.times.clear()
        ft = self.texture(field, (self.n,))
        self.head = (self.head + 1) % ROWS
        self.count = min(self.count + 1, ROWS)
        t0 = time.perf_counter()
        up = Upload(self.canvas, frame)
        up.field(ft, v)
        up.row(self.ring, v, self.head, self.s_st)
        self.upload_path = up.finish() or self.upload_path
        self.upload_s = time.perf_counter() - t0
        if self.line is None:
            self.line = LineNode(self.x, ft, parent=self.plot.scene)
        self.line.set_field(ft)
        self.row_ranges.append(ranges_of(frame, [field])[field])
        self.times.append(frame.t)
        lo, hi = scale.limits_of(self.row_ranges)
        self.limits = (lo, hi)
        got = self.row_ranges[-1]  # the y axis takes in the curve too: a fixed colour range
        self.y_range = (min(lo, got[0]), max(hi, got[1])) if got else (lo, hi)  # never clips it
        lut = self.lut(scale.cmap)
        self.line.set_colormap(lut, (lo, hi))
        self.st_node.set_colormap(lut, (lo, hi))
        self.st_node.set_ring(ROWS, self.count, self.head)
        set_text(self.st_label, f"space–time: {self.count} frame{'s' if self.count > 1 else ''}, "
                                f"t = {self.times[0]:.4g} … {self.times[-1]:.4g}, time upwards")
        self._set_plot_range()
        self._set_title(field, frame)
        self._update_colorbar(scale, (lo, hi), field, row=1, col=2, row_span=4)
        return lo, hi

    def _set_plot_range(self) -> None:
        lo, hi = getattr(self, "y_range", self.limits)
        pad = 0.05 * (hi - lo)
        self.plot.camera.rect = (self.x0, lo - pad, self.x1 - self.x0, hi - lo + 2 * pad)

    def boxes(self) -> list:
        return [self.plot, self.st]

    def live_regions(self) -> list:
        return super().live_regions() + [self.st_label]  # (its frame count and times)

    def _st_height(self, event=None) -> None:
        self.st.height_min = self.st.height_max = max(120, int(0.36 * self.canvas.size[1]))

    def remove(self) -> None:
        self.canvas.events.resize.disconnect(self._st_height)
        super().remove()

    def reset_camera(self):
        self._set_plot_range()
        self.st.camera.rect = (self.x0, 0.0, self.x1 - self.x0, 1.0)
