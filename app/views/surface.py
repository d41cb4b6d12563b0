"""2D structured fields (mesh kind 'grid2d', node or cell values): lit height surfaces, or a
flat image seen from above.

The surface view draws every field named in the model's `surfaces` hint as a height surface
(water over bathymetry, free surface over an interface, or the graph φ of a curvature flow);
the surface named like the shown field, else the first one, is coloured by the shown field, the
others get fixed colours. Without a hint the shown field is its own height. Large grids are
decimated for display (at most MAX_SIDE points a side); the image view shows every value.
"""
from __future__ import annotations

import numpy as np
from vispy import scene
from vispy.visuals.transforms import STTransform

from .base import View, as_float32
from .colors import ColorScale, decimate

MAX_SIDE = 256
OTHER_COLORS = ((0.62, 0.50, 0.36, 1.0), (0.85, 0.55, 0.25, 1.0), (0.55, 0.60, 0.65, 1.0))
LIGHT_DIR = (-0.6, -0.4, -1.0)
SEE_THROUGH = 0.45  # opacity of a surface lying above the coloured one (e.g. a free surface)


def other_color(i: int, above: bool) -> tuple:
    """The fixed colour of the i-th surface not coloured by the field; see-through when it
    lies above the coloured surface, so the coloured one stays visible."""
    c = OTHER_COLORS[(i - 1) % len(OTHER_COLORS)]
    return c[:3] + (SEE_THROUGH,) if above else c


_SEE: dict = {}  # id(visual) -> see-through (VisPy visuals take no new attributes)


def set_see_through(visual, on: bool) -> None:
    if _SEE.get(id(visual)) == on:
        return
    _SEE[id(visual)] = on
    if on:
        visual.set_gl_state("translucent", depth_test=True, cull_face=False)
        visual.order = 1  # drawn after the opaque surfaces
    else:
        visual.set_gl_state("opaque", depth_test=True, cull_face=False)
        visual.order = 0


def above(heights: list, i: int, coloured: int) -> bool:
    with np.errstate(all="ignore"):
        return bool(np.nanmean(heights[i]) > np.nanmean(heights[coloured]))


def _grid_axes(info):
    x = np.asarray(info.mesh.x, dtype=np.float64)
    y = np.asarray(info.mesh.y, dtype=np.float64)
    return x, y


class SurfaceView(View):
    def __init__(self, canvas, info):
        super().__init__(canvas, info)
        self.vb = self.grid.add_view(row=1, col=0, col_span=2)
        x, y = _grid_axes(info)
        self.stride = max(decimate(len(x), MAX_SIDE), decimate(len(y), MAX_SIDE))
        self.x, self.y = x[::self.stride], y[::self.stride]
        self.extent = max(float(np.ptp(x)), float(np.ptp(y)), 1e-12)
        self.names = list(info.surfaces) or [None]
        self.surfaces = []
        for i, _ in enumerate(self.names):
            s = scene.visuals.SurfacePlot(x=self.x, y=self.y,
                                          z=np.zeros((len(self.x), len(self.y)), np.float32),
                                          shading="smooth", parent=self.vb.scene,
                                          color=OTHER_COLORS[(i - 1) % len(OTHER_COLORS)])
            s.shading_filter.light_dir = LIGHT_DIR
            s.shading_filter.ambient_light = (1, 1, 1, 0.35)
            s.shading_filter.specular_light = (1, 1, 1, 0.25)
            s.transform = STTransform()
            self.surfaces.append(s)
        self.zscale = None
        self.vb.camera = scene.TurntableCamera(fov=40, elevation=32, azimuth=-50)

    def needed(self, field):
        names = [n for n in self.names if n is not None]
        return list(dict.fromkeys(names + [field]))

    def _sub(self, a):
        return as_float32(np.asarray(a)[::self.stride, ::self.stride].T)

    def set_frame(self, frame, field, scale: ColorScale):
        heights = [self._sub(frame.fields[n if n is not None else field]) for n in self.names]
        shown = self._sub(frame.fields[field])
        lo, hi = scale.limits(shown)
        if self.zscale is None:
            self._fit(heights)
        coloured = self.names.index(field) if field in self.names else 0
        for i, (s, z) in enumerate(zip(self.surfaces, heights)):
            if i == coloured:
                set_see_through(s, False)
                s.set_data(z=z, colors=scale.rgba(shown, (lo, hi)))
            else:
                up = above(heights, i, coloured)
                set_see_through(s, up)
                s.set_data(z=z, colors=np.broadcast_to(np.asarray(other_color(i, up), np.float32),
                                                       z.shape + (4,)).copy())
        self._set_title(field, frame)
        self._update_colorbar(scale, (lo, hi), field)
        return lo, hi

    def _fit(self, heights) -> None:
        finite = [h[np.isfinite(h)] for h in heights]
        zlo = min((float(h.min()) for h in finite if h.size), default=0.0)
        zhi = max((float(h.max()) for h in finite if h.size), default=1.0)
        span = zhi - zlo
        self.zscale = 0.35 * self.extent / span if span > 0 else 1.0
        self.zmid = 0.5 * (zlo + zhi)
        for s in self.surfaces:
            s.transform.scale = (1.0, 1.0, self.zscale)
            s.transform.translate = (0.0, 0.0, -self.zmid * self.zscale)
        self.reset_camera()

    def reset_camera(self):
        cam = self.vb.camera
        cam.elevation, cam.azimuth = 32, -50
        cam.center = (0.5 * (self.x[0] + self.x[-1]), 0.5 * (self.y[0] + self.y[-1]), 0.0)
        cam.distance = 2.6 * self.extent
        cam.scale_factor = self.extent


class ImageView(View):
    """A 2D grid field as an image seen from above (every value, no decimation)."""

    def __init__(self, canvas, info):
        super().__init__(canvas, info)
        self.vb = self.grid.add_view(row=1, col=0, col_span=2, camera="panzoom")
        self.vb.camera.aspect = 1.0
        x, y = _grid_axes(info)
        ny, nx = len(y), len(x)
        self.image = scene.visuals.Image(np.zeros((ny, nx), np.float32), cmap="viridis",
                                         clim=(0, 1), parent=self.vb.scene,
                                         interpolation="nearest")
        dx = (x[-1] - x[0]) / max(nx - 1, 1) if nx > 1 else 1.0
        dy = (y[-1] - y[0]) / max(ny - 1, 1) if ny > 1 else 1.0
        self.image.transform = STTransform(scale=(dx, dy), translate=(x[0] - dx / 2, y[0] - dy / 2))
        self.bounds = (x[0] - dx / 2, x[-1] + dx / 2, y[0] - dy / 2, y[-1] + dy / 2)
        self.reset_camera()

    def set_frame(self, frame, field, scale: ColorScale):
        v = as_float32(frame.fields[field])
        lo, hi = scale.limits(v)
        self.image.set_data(v)
        self.image.cmap = scale.cmap
        self.image.clim = (lo, hi)
        self._set_title(field, frame)
        self._update_colorbar(scale, (lo, hi), field)
        return lo, hi

    def reset_camera(self):
        x0, x1, y0, y1 = self.bounds
        self.vb.camera.set_range(x=(x0, x1), y=(y0, y1), margin=0.02)
