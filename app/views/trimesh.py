"""Triangle meshes (mesh kind 'triangles': points (N, 3), cells (M, 3)): a lit, coloured 3D mesh.

Vertex/node fields colour the vertices (smoothly interpolated), cell fields colour the faces.
A planar mesh (all z equal) with a `surfaces` hint is drawn as height surfaces over the plane,
like the grid surface view: cell values are averaged onto the vertices for the heights, and the
shown field colours the surface named like it (else the first).
"""
from __future__ import annotations

import numpy as np
from vispy import scene
from vispy.visuals.transforms import STTransform

from .base import View, as_float32
from .colors import ColorScale
from .surface import LIGHT_DIR, OTHER_COLORS, above, other_color, set_see_through


def cell_to_vertex(cells: np.ndarray, n_points: int):
    """A function mapping cell values to vertex values (mean over the incident cells)."""
    from scipy.sparse import csr_matrix
    m = len(cells)
    rows = cells.ravel()
    cols = np.repeat(np.arange(m), 3)
    a = csr_matrix((np.ones(3 * m), (rows, cols)), shape=(n_points, m))
    deg = np.asarray(a.sum(axis=1)).ravel()
    deg[deg == 0] = 1.0
    return lambda v: (a @ np.asarray(v, dtype=np.float64)) / deg


class TriMeshView(View):
    def __init__(self, canvas, info):
        super().__init__(canvas, info)
        self.vb = self.grid.add_view(row=1, col=0, col_span=2)
        pts = np.asarray(info.mesh.points, dtype=np.float64)
        if pts.shape[1] == 2:
            pts = np.column_stack([pts, np.zeros(len(pts))])
        self.points = pts
        self.cells = np.asarray(info.mesh.cells, dtype=np.uint32)
        self.extent = max(float(np.ptp(pts[:, :2], axis=0).max()), float(np.ptp(pts[:, 2])),
                          1e-12)
        self.planar = float(np.ptp(pts[:, 2])) <= 1e-9 * self.extent
        self.names = list(info.surfaces) if self.planar and info.surfaces else [None]
        self.heights = self.planar and bool(info.surfaces)
        self._c2v = None
        self.meshes = []
        for i, _ in enumerate(self.names):
            m = scene.visuals.Mesh(vertices=pts.astype(np.float32), faces=self.cells,
                                   color=OTHER_COLORS[(i - 1) % len(OTHER_COLORS)],
                                   shading="smooth", parent=self.vb.scene)
            m.shading_filter.light_dir = LIGHT_DIR
            m.shading_filter.ambient_light = (1, 1, 1, 0.4)
            m.shading_filter.specular_light = (1, 1, 1, 0.2)
            m.transform = STTransform()
            self.meshes.append(m)
        self.zscale = None
        self.vb.camera = scene.TurntableCamera(fov=40)
        self.reset_camera()

    def needed(self, field):
        names = [n for n in self.names if n is not None]
        return list(dict.fromkeys(names + [field]))

    def _on_vertices(self, name, values) -> np.ndarray:
        v = np.asarray(values, dtype=np.float64)
        if self.info.fields[name]["location"] == "cell" or len(v) != len(self.points):
            if self._c2v is None:
                self._c2v = cell_to_vertex(self.cells.astype(np.int64), len(self.points))
            v = self._c2v(v)
        return v

    def set_frame(self, frame, field, scale: ColorScale):
        shown = as_float32(frame.fields[field])
        lo, hi = scale.limits(shown)
        colours = scale.rgba(shown, (lo, hi))
        per_cell = len(shown) == len(self.cells) and len(shown) != len(self.points)
        coloured = self.names.index(field) if field in self.names else 0
        if self.heights:
            hs = [self._on_vertices(n, frame.fields[n]) for n in self.names]
            if self.zscale is None:
                self._fit(hs)
        for i, m in enumerate(self.meshes):
            verts = self.points
            if self.heights:
                verts = self.points.copy()
                verts[:, 2] = hs[i]
            if i == coloured:
                set_see_through(m, False)
                kw = {"face_colors": colours} if per_cell else {"vertex_colors": colours}
            else:
                up = self.heights and above(hs, i, coloured)
                set_see_through(m, up)
                kw = {"color": other_color(i, up)}
            m.set_data(vertices=verts.astype(np.float32), faces=self.cells, **kw)
        self._set_title(field, frame)
        self._update_colorbar(scale, (lo, hi), field)
        return lo, hi

    def _fit(self, hs) -> None:
        zlo = min(float(np.nanmin(h)) for h in hs)
        zhi = max(float(np.nanmax(h)) for h in hs)
        span = zhi - zlo
        self.zscale = 0.35 * self.extent / span if span > 0 else 1.0
        mid = 0.5 * (zlo + zhi)
        for m in self.meshes:
            m.transform.scale = (1.0, 1.0, self.zscale)
            m.transform.translate = (0.0, 0.0, -mid * self.zscale)

    def reset_camera(self):
        cam = self.vb.camera
        lo, hi = self.points.min(axis=0), self.points.max(axis=0)
        cam.center = tuple(0.5 * (lo + hi)) if not self.heights else \
            (0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), 0.0)
        if self.planar and not self.heights:
            cam.elevation, cam.azimuth = 90, 0
        else:
            cam.elevation, cam.azimuth = 30, -50
        cam.distance = (2.6 if self.planar else 1.5) * self.extent
        cam.scale_factor = self.extent
