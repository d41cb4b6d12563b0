"""2D structured fields (mesh kind 'grid2d', node or cell values): lit height surfaces, or a
flat image seen from above, both drawn from float textures holding every value of the fields.

The surface view draws every field named in the model's `surfaces` hint as a height surface
(water over bathymetry, free surface over an interface, or the graph φ of a curvature flow);
the surface named like the shown field, else the first one, is coloured by the shown field, the
others get fixed colours (see-through when they lie above the coloured one). Without a hint the
shown field is its own height.

Resolution: colour and lighting are computed per pixel from every value of the field (where a pixel
covers several cells it shows the one that stands out most, glsl.PICK), up to 16384 values a side
(beyond, every s-th value: level of detail by texture sampling). The surface's geometry (its
silhouette and depth; not its colours or shading) has about DENSITY vertices a pixel along its
longer edge as drawn, chosen again whenever the camera or the view changes (zooming in brings every
value back as a vertex), and at most MAX_SIDE a side on a GPU: triangles smaller than a pixel cost
the GPU raster time, shared with the solver, and add nothing to the picture. On a software renderer
(Mesa llvmpipe), whose cost is per triangle, at most SOFT_SIDE vertices a side. `geometry` says
which.
"""
from __future__ import annotations

import numpy as np
from vispy import scene

from .axes import Axes3D, AutoFit
from .base import View, add_axis, fonts
from .colors import ColorScale
from .textures import software_renderer
from .visuals import HeightFieldNode, ImageNode, TileSet

MAX_SIDE = 4096   # vertices a side on a GPU at most
SOFT_SIDE = 128   # vertices a side on a software renderer
DENSITY = 1.0     # vertices a pixel along the surface's longer edge on a GPU (0: every value,
#                   up to MAX_SIDE)
GROWTH = 0.5      # heights beyond the fitted range by this fraction of its span: fit again
OTHER_COLORS = ((0.62, 0.50, 0.36, 1.0), (0.85, 0.55, 0.25, 1.0), (0.55, 0.60, 0.65, 1.0))
SEE_THROUGH = 0.45  # opacity of a surface lying above the coloured one (e.g. a free surface)


def other_color(i: int, above: bool) -> tuple:
    """The fixed colour of the i-th surface not coloured by the field; see-through when it
    lies above the coloured surface, so the coloured one stays visible."""
    c = OTHER_COLORS[(i - 1) % len(OTHER_COLORS)]
    return c[:3] + (SEE_THROUGH,) if above else c


def set_see_through(node, on: bool) -> None:
    if on:
        node.set_gl_state("translucent", depth_test=True, cull_face=False)
        node.order = 1  # drawn after the opaque surfaces
    else:
        node.set_gl_state("opaque", depth_test=True, cull_face=False)
        node.order = 0


def grid_axes(info):
    """(x0, dx, nx), (y0, dy, ny) of a uniform grid."""
    out = []
    for a in (np.asarray(info.mesh.x, np.float64), np.asarray(info.mesh.y, np.float64)):
        d = (a[-1] - a[0]) / (len(a) - 1) if len(a) > 1 else 1.0
        out.append((float(a[0]), float(d), len(a)))
    return out


class SurfaceView(View):
    def __init__(self, canvas, info):
        super().__init__(canvas, info)
        self.vb = self.grid.add_view(row=1, col=0, col_span=2)
        (self.x0, self.dx, nx), (self.y0, self.dy, ny) = grid_axes(info)
        self.xr = (self.x0, self.x0 + self.dx * (nx - 1))
        self.yr = (self.y0, self.y0 + self.dy * (ny - 1))
        self.extent = max(abs(self.xr[1] - self.xr[0]), abs(self.yr[1] - self.yr[0]), 1e-12)
        self.names = list(info.surfaces) or [None]
        self.nodes: list = []
        self.built = None     # (height field names, step, provisional) of the nodes
        self.fit = None       # (height names, zmid, zscale, zlo, zhi)
        self.mids: list = []  # mid-height of each surface at the fit (which lies above)
        self.geometry = ""
        self.soft = False
        self.lod_note = ""    # said in the title when not every value is a vertex
        self.vb.camera = scene.TurntableCamera(fov=40, elevation=32, azimuth=-50)
        self.axes = Axes3D(self.vb.scene, fonts(canvas))
        self.axes.set(self.xr, self.yr, (-0.35 * self.extent, 0.35 * self.extent))  # till data
        self.autofit = AutoFit(self.vb, self.axes)
        self.reset_camera()

    def needed(self, field):
        names = [n for n in self.names if n is not None]
        return list(dict.fromkeys(names + [field]))

    def _heights(self, field) -> list[str]:
        return [n if n is not None else field for n in self.names]

    def _build(self, heights) -> None:
        for node in self.nodes:
            node.parent = None
        soft = software_renderer(self.canvas)
        self.nodes, tilesets = [], {}
        for name in heights:
            ft = self.textures[name]
            side = SOFT_SIDE if soft is not False else MAX_SIDE
            least = max(1, -(-max(ft.tex_shape) // side))
            if ft.tex_shape not in tilesets:
                tilesets[ft.tex_shape] = TileSet(ft.tex_shape)
            s = ft.stride
            node = HeightFieldNode(tilesets[ft.tex_shape], ft, ft,
                                   (self.x0, self.dx * s, self.y0, self.dy * s), least=least,
                                   density=DENSITY if soft is False else 0.0,
                                   fallback_px=max(self.canvas.physical_size),
                                   lod_key=self._lod_key, parent=self.vb.scene)
            node.bounds_xyz = (self.xr, self.yr, (-0.2 * self.extent, 0.2 * self.extent))
            self.nodes.append(node)
        self.built = (tuple(heights), soft is None)
        self.soft = soft is not False
        self.fit = None

    def _geometry_note(self) -> None:
        """`geometry` and the title's note from the geometry drawn last."""
        node, ft = self.nodes[0], self.textures[self.built[0][0]]
        t = node.tiles
        self.geometry = (f"geometry {t.side}² vertices"
                         + (" (software renderer)" if self.soft and t.step > 1 else ""))
        lod = [f"every {ft.stride}th value"] if ft.stride > 1 else []
        if t.step > 1:
            lod.append(f"shape from {t.side}² vertices"
                       + (", software renderer" if self.soft else ""))
        self.lod_note = f"   [{'; '.join(lod)}]" if lod else ""

    def set_frame(self, frame, field, scale: ColorScale):
        heights = self._heights(field)
        ranges = self.upload(frame, heights + [field])
        if self.built is None or self.built[0] != tuple(heights) or self.built[1]:
            self._build(heights)
        lo, hi = scale.limits_of([ranges[field]])
        if scale.mode == "fixed" and field in heights and ranges.get(field) is not None:
            # a fixed colour range is the field's range for its heights too (Compare's
            # difference: rounding drawn flat, not stretched to the whole box)
            r = ranges[field]
            ranges = {**ranges, field: (min(r[0], lo), max(r[1], hi))}
        if self.fit is None or self.fit[0] != tuple(heights) or self._outgrown(heights, ranges):
            self._fit(heights, ranges)
        coloured = heights.index(field) if field in heights else 0
        lut = self.lut(scale.cmap)
        for i, node in enumerate(self.nodes):
            node.set_fields(self.textures[heights[i]],
                            self.textures[field] if i == coloured else self.textures[heights[i]])
            if i == coloured:
                set_see_through(node, False)
                node.set_color(None)
                node.set_colormap(lut, (lo, hi))
            else:
                up = self.mids[i] > self.mids[coloured]
                set_see_through(node, up)
                node.set_color(other_color(i, up))
                node.set_colormap(lut, (lo, hi))  # unused by a fixed colour, but set
        self.limits = (lo, hi)
        self.nodes[0].pick_tiles()
        self._geometry_note()
        self._set_title(field, frame, self.lod_note)
        self._update_colorbar(scale, (lo, hi), field)
        return lo, hi

    def _outgrown(self, heights, ranges) -> bool:
        """Whether the heights left the fitted range by more than GROWTH of its span (a pattern
        growing out of a nearly flat start: fitted to its first frame, its heights would be
        stretched hundreds of times). A range that shrinks keeps the fit: a flattening flow
        is seen to flatten."""
        got = [ranges.get(n) for n in heights]
        finite = [r for r in got if r is not None and np.isfinite(r[0]) and np.isfinite(r[1])]
        if not finite:
            return False
        _, _, _, zlo, zhi = self.fit
        span = max(zhi - zlo, 1e-12 * max(abs(zlo), abs(zhi), 1e-30))
        lo, hi = min(r[0] for r in finite), max(r[1] for r in finite)
        return lo < zlo - GROWTH * span or hi > zhi + GROWTH * span

    def _fit(self, heights, ranges) -> None:
        got = [ranges.get(n) for n in heights]
        finite = [r for r in got if r is not None]
        zlo = min((r[0] for r in finite), default=0.0)
        zhi = max((r[1] for r in finite), default=1.0)
        span = zhi - zlo
        zscale = 0.35 * self.extent / span if span > 0 else 1.0
        zmid = 0.5 * (zlo + zhi)
        self.mids = [0.5 * (r[0] + r[1]) if r is not None else zmid for r in got]
        for node in self.nodes:
            node.set_z(zmid, zscale)
        name = self.names[0] or heights[0]
        unit = self.info.fields[name].get("unit") or ""
        name = name if len(heights) == 1 else "height"
        self.axes.set(self.xr, self.yr, (zlo, zhi), lambda z: (z - zmid) * zscale,
                      f"{name} [{unit}]" if unit else name)
        self.autofit.refit()
        self.fit = (tuple(heights), zmid, zscale, zlo, zhi)

    def reset_camera(self):
        cam = self.vb.camera
        cam.elevation, cam.azimuth = 32, -50
        cam.center = (0.5 * sum(self.xr), 0.5 * sum(self.yr), 0.0)
        cam.distance = 2.6 * self.extent  # until the view box is laid out
        cam.scale_factor = self.extent
        self.autofit.fit()


class ImageView(View):
    """A 2D grid field as an image seen from above (every value, in its own colour), with x
    and y axes in the mesh's coordinates."""

    def __init__(self, canvas, info):
        super().__init__(canvas, info)
        g = self.grid
        self.vb = g.add_view(row=1, col=1, camera="panzoom")
        self.vb.camera.aspect = 1.0
        self.yaxis = add_axis(g, "left", self.vb, row=1, col=0)
        self.xaxis = add_axis(g, "bottom", self.vb, row=2, col=1)
        (x0, dx, nx), (y0, dy, ny) = grid_axes(info)
        self.bounds = (x0 - dx / 2, x0 + dx * (nx - 0.5), y0 - dy / 2, y0 + dy * (ny - 0.5))
        self.node = None
        self.reset_camera()

    def set_frame(self, frame, field, scale: ColorScale):
        ranges = self.upload(frame, [field])
        lo, hi = scale.limits_of([ranges[field]])
        ft = self.textures[field]
        if self.node is None:
            x0, x1, y0, y1 = self.bounds
            self.node = ImageNode(ft, (x0, y0, x1 - x0, y1 - y0), parent=self.vb.scene)
        self.node.set_field(ft)
        self.node.set_colormap(self.lut(scale.cmap), (lo, hi))
        self.limits = (lo, hi)
        self._set_title(field, frame, f"   [every {ft.stride}th value]" if ft.stride > 1 else "")
        self._update_colorbar(scale, (lo, hi), field, row=1, col=2)
        return lo, hi

    def reset_camera(self):
        x0, x1, y0, y1 = self.bounds
        pad = 0.02 * max(x1 - x0, y1 - y0)
        self.vb.camera.rect = (x0 - pad, y0 - pad, x1 - x0 + 2 * pad, y1 - y0 + 2 * pad)
