"""Triangle meshes (mesh kind 'triangles': points (N, 3), cells (M, 3)): a lit, coloured 3D mesh.

Vertex/node fields colour the vertices (interpolated), cell fields colour each cell flat in its
own colour. A planar mesh (all z equal) with a `surfaces` hint is drawn as height surfaces over
the plane, like the grid surface view: a cell field's height at a vertex is the mean of the
cells around it; the shown field colours the surface named like it (else the first).

Positions and topology are uploaded once (meshvisual.py); each frame uploads only the fields'
values into their textures. A mesh finer than the pixels it covers is drawn from a coarser one
with about a vertex a pixel (meshvisual.py, "Level of detail"), chosen again when the camera or
the view changes; the title says so while it is. On a planar mesh the cell colours of a coarse
level come from a raster of the plane, so they are every cell's, and the title says the
"shape" comes from fewer vertices.
"""
from __future__ import annotations

import numpy as np
from vispy import scene

from . import meshvisual
from .axes import Axes3D, AutoFit
from .base import View, fonts
from .colors import ColorScale
from .meshvisual import MeshGeometry, MeshNode
from .surface import other_color, set_see_through
from .visuals import framebuffer_px


class TriMeshView(View):
    def __init__(self, canvas, info):
        super().__init__(canvas, info)
        self.vb = self.grid.add_view(row=1, col=0, col_span=2)
        pts = np.asarray(info.mesh.points, dtype=np.float64)
        if pts.shape[1] == 2:
            pts = np.column_stack([pts, np.zeros(len(pts))])
        self.points = pts
        self.cells = np.asarray(info.mesh.cells, dtype=np.int64)
        self.extent = max(float(np.ptp(pts[:, :2], axis=0).max()), float(np.ptp(pts[:, 2])),
                          1e-12)
        self.planar = float(np.ptp(pts[:, 2])) <= 1e-9 * self.extent
        self.names = list(info.surfaces) if self.planar and info.surfaces else [None]
        self.heights = self.planar and bool(info.surfaces)
        self.geoms: dict = {}
        self.nodes: list = []
        self.coloured_node = None
        self.layout = None
        self.fit = None
        self.vb.camera = scene.TurntableCamera(fov=40)
        self.axes = Axes3D(self.vb.scene, fonts(canvas))
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        self.xr, self.yr = (lo[0], hi[0]), (lo[1], hi[1])
        if not self.heights:
            self.axes.set(self.xr, self.yr, (lo[2], hi[2]))
        else:  # until data comes
            self.axes.set(self.xr, self.yr, (-0.35 * self.extent, 0.35 * self.extent))
        self.autofit = AutoFit(self.vb, self.axes)
        self.density = meshvisual.DENSITY  # (read here: benchmarks set it)
        self._lod: dict = {}  # id(geometry) -> (lod key, geometry, level) of its last choice
        self.lod_note = ""
        self.geometry = ""
        self.reset_camera()

    def needed(self, field):
        names = [n for n in self.names if n is not None]
        return list(dict.fromkeys(names + [field]))

    def _loc(self, name: str) -> str:
        n = int(np.prod(self.info.shapes.get(name, (0,))))
        if self.info.fields[name]["location"] == "cell" or (n == len(self.cells)
                                                            and n != len(self.points)):
            return "cell"
        return "vertex"

    def _geometry(self, flat, vertex_tc, ring, keep: dict) -> MeshGeometry:
        """The geometry of one layout: made once, kept in `keep` (the layouts in use)."""
        by_primitive = flat and meshvisual.primitive_ids(self.canvas, len(self.cells))
        key = (flat, vertex_tc, ring, by_primitive)
        if key not in keep:
            g = self.geoms.get(key)
            if g is None:
                g = MeshGeometry(self.points, self.cells, flat=flat, heights=self.heights,
                                 vertex_tc=vertex_tc, ring=ring, by_primitive=by_primitive)
                if g.ring is not None:
                    g.ring.set_static(g.ring_values)
            keep[key] = g
        return keep[key]

    def _build(self, field, hnames) -> None:
        color_loc = self._loc(field)
        hlocs = [self._loc(n) for n in hnames] if self.heights else [None] * len(self.names)
        coloured = hnames.index(field) if field in hnames else 0
        key = (color_loc, tuple(hlocs), coloured)
        if key == self.layout:
            return
        # the coloured surface is cell-coloured where its field lives on cells (by primitive
        # number, or three corners a cell where the shaders cannot read it); a surface in a
        # fixed colour needs no cell colours, so it is drawn indexed, every vertex shaded once
        keep: dict = {}
        geoms = [self._geometry(color_loc == "cell" and i == coloured,
                                "vertex" in ([hlocs[i]] + ([color_loc] if i == coloured else [])),
                                hlocs[i] == "cell", keep) for i in range(len(self.names))]
        self.geoms = keep
        self._lod = {}  # (the choices of geometries no longer drawn go with them)
        for node in self.nodes:
            node.parent = None
        bounds = (self.xr, self.yr, (-0.2 * self.extent, 0.2 * self.extent) if self.heights
                  else (float(self.points[:, 2].min()), float(self.points[:, 2].max())))
        self.nodes = [MeshNode(geoms[i], hlocs[i], color_loc if i == coloured else None, bounds,
                               parent=self.vb.scene) for i in range(len(self.names))]
        for node in self.nodes:
            node.pick_level = (lambda n=node: self._pick_level(n))
        self.coloured_node = self.nodes[coloured]
        self.layout = key
        self.fit = None

    def _px_per_unit(self, node) -> float | None:
        """The most framebuffer pixels a unit of length takes along the edges of the mesh's
        bounding box as drawn; None where the transforms are not set up yet or a corner lies
        behind the camera."""
        (x0, x1), (y0, y1), (z0, z1) = node.bounds_xyz
        corners = np.array([[x, y, z, 1.0] for x in (x0, x1) for y in (y0, y1) for z in (z0, z1)])
        px = framebuffer_px(node, corners)
        if px is None:
            return None
        best = 0.0
        for a in range(8):
            for b in range(a + 1, 8):
                if bin(a ^ b).count("1") == 1:  # the box's 12 edges
                    length = float(np.linalg.norm(corners[a, :3] - corners[b, :3]))
                    if length > 0:
                        best = max(best, float(np.linalg.norm(px[a] - px[b])) / length)
        return best or None

    def _pick_level(self, node=None):
        """The level of detail `node` (the coloured surface's by default) draws now; the
        surfaces' geometries choose at the same size on the screen."""
        node = node if node is not None else self.coloured_node
        geom = node.geom
        # a surface whose colours do not come from its triangles needs fewer of them: a fixed
        # colour, or cells from the raster once it is made (meshvisual.py)
        ready = not node.rastered or geom.raster_ready()
        shape = node.shape_only and ready
        key = (self._lod_key(), shape)
        seen = self._lod.get(id(geom))
        if seen is not None and seen[0] == key and seen[1] is geom:
            return seen[2]
        px = self._px_per_unit(node)
        if not ready and self.autofit.fitted != "pending" and \
                geom.level_for(px, self.density * meshvisual.SHAPE) is not geom.full:
            # a coarser level would use the raster (the camera laid out: before, any level
            # may look coarse): start making it (at once where meshvisual.RASTER_WAIT, and
            # then this frame takes that level already)
            geom.raster()
            shape = node.shape_only and geom.raster_ready()
            key = (key[0], shape)
        level = geom.level_for(px, self.density * (meshvisual.SHAPE if shape else 1.0))
        self._lod[id(geom)] = (key if px is not None else None, geom, level)
        if node is self.coloured_node:
            n = len(geom.points)
            self.geometry = f"geometry {level.vertices} of {n} vertices"
            how = "shape" if node.rastered and shape else "drawn"  # (colours from every cell)
            self.lod_note = "" if level is geom.full else \
                f"   [{how} from {level.vertices:,} of {n:,} vertices]"
        return level

    def set_frame(self, frame, field, scale: ColorScale):
        hnames = [n if n is not None else field for n in self.names] if self.heights else []
        ranges = self.upload(frame, hnames + [field])
        self._build(field, hnames)
        lo, hi = scale.limits_of([ranges[field]])
        if self.heights and (self.fit is None or self.fit[0] != tuple(hnames)):
            self._fit(hnames, ranges)
        coloured = self.layout[2]
        lut = self.lut(scale.cmap)
        for i, node in enumerate(self.nodes):
            if self.heights:
                node.set_height(self.textures[hnames[i]], self.fit[1], self.fit[2])
            if i == coloured:
                set_see_through(node, False)
                node.set_value(self.textures[field])
                node.set_colormap(lut, (lo, hi))
            else:
                up = self.heights and self.fit[3][i] > self.fit[3][coloured]
                set_see_through(node, up)
                node.set_color(other_color(i, up))
                node.set_colormap(lut, (lo, hi))  # unused by a fixed colour, but set
        self.limits = (lo, hi)
        self._pick_level()
        self._set_title(field, frame, self.lod_note)
        self._update_colorbar(scale, (lo, hi), field)
        return lo, hi

    def _fit(self, hnames, ranges) -> None:
        got = [ranges.get(n) for n in hnames]
        finite = [r for r in got if r is not None]
        zlo = min((r[0] for r in finite), default=0.0)
        zhi = max((r[1] for r in finite), default=1.0)
        span = zhi - zlo
        zscale = 0.35 * self.extent / span if span > 0 else 1.0
        zmid = 0.5 * (zlo + zhi)
        mids = [0.5 * (r[0] + r[1]) if r is not None else zmid for r in got]
        self.fit = (tuple(hnames), zmid, zscale, mids)
        name = self.names[0] or hnames[0]
        unit = self.info.fields[name].get("unit") or ""
        name = name if len(hnames) == 1 else "height"
        self.axes.set(self.xr, self.yr, (zlo, zhi), lambda z: (z - zmid) * zscale,
                      f"{name} [{unit}]" if unit else name)
        self.autofit.refit()

    def reset_camera(self):
        cam = self.vb.camera
        lo, hi = self.points.min(axis=0), self.points.max(axis=0)
        cam.center = tuple(0.5 * (lo + hi)) if not self.heights else \
            (0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), 0.0)
        if self.planar and not self.heights:
            cam.elevation, cam.azimuth = 90, 0
        else:
            cam.elevation, cam.azimuth = 30, -50
        cam.distance = (2.6 if self.planar else 2.2) * self.extent  # till laid out
        cam.scale_factor = self.extent
        self.autofit.fit()
