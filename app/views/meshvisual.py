"""The triangle-mesh visual: positions and topology uploaded once, fields from textures.

`MeshGeometry` holds the vertex buffers of one mesh for one layout, shared by the stacked
surfaces of a view:
- vertex-coloured: indexed triangles (every vertex once), colour interpolated;
- cell-coloured, where fragment shaders can read gl_PrimitiveID (GLSL 1.20 with
  GL_EXT_gpu_shader4, as Mesa and the NVIDIA driver offer it): indexed triangles too, each
  fragment reading its triangle's cell from a table in draw order (`by_primitive`), so every
  cell is drawn flat in its own colour and every vertex is shaded once;
- cell-coloured elsewhere: the triangles un-indexed once (each triangle its own three corners,
  each corner carrying the texel of its cell). A vertex is then shaded for each of its
  corners, six times on a triangulation, and with heights from cell fields each time gathers
  the cells around it: two 1M-cell surfaces took 3.80 ms of an H100 a frame this way against
  2.29 by primitive (docs/BENCHMARKS.md, "Issue 25 on the H100").
Heights over a plane come from a vertex field (each vertex's texel) or from a cell field: each
vertex averages the cells around it, gathered in the vertex shader from a table of incident
cells (CSR, a float texture built once; at most MAX_RING cells a vertex are averaged, more than
any mesh generator here makes). Surfaces with heights are lit by facet normals (derivatives of
the position in the fragment shader); fixed surfaces (a sphere) by vertex normals built once.

Level of detail: a mesh finer than the pixels it covers is drawn from a coarser one made by
vertex clustering (`cluster_cells`: the vertices binned in cubes of a side, each bin's first
vertex standing for the bin, the triangles between three bins kept once), with about DENSITY
vertices a pixel as drawn (`MeshGeometry.level_for`, chosen again when the camera or the view
changes; zooming in brings every vertex back). A coarse triangle's corners are vertices of the
mesh, so they read their fields' texels as the full mesh does, and a cell-coloured coarse
triangle takes the colour of one of the cells it stands for: the picture is the full mesh's to
about a pixel. The triangles a GPU rasterises are its time, taken from the solver beside it
(docs/BENCHMARKS.md, "Meshes drawn with a vertex a pixel").

Colours from every cell at a coarse level: on a planar mesh (heights over a plane, or seen flat)
a cell-coloured surface drawn from a coarser level finds each fragment's cell in a raster of the
plane (cellraster.py: the cell under each texel, texels a third of a cell), so its colours are
the full mesh's while its triangles give only the shape and shading. Such a surface, and one in
a fixed colour, is drawn with SHAPE times DENSITY vertices a pixel. The raster is made on a
worker thread (a second for a million cells), so the first frames of a large mesh do not wait
for it: until it is there, the surface is drawn as without one.
"""
from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
from vispy import gloo
from vispy.scene.visuals import create_visual_node
from vispy.visuals import Visual

from . import glsl
from .cellraster import cell_raster
from .textures import FieldTexture
from .visuals import LIGHT, _TextureVisual

MAX_RING = 32
MAX_PRIMITIVE = 1 << 24  # triangle and cell numbers exact in float32 texels
PRIMITIVE_IDS = os.environ.get("PDESTUDIO_MESH_PRIMID", "1") != "0"  # 0: cells as corners
DENSITY = 1.0    # vertices a pixel along the mesh as drawn (0: always every vertex)
# a coarser level is used only with at most this share of the triangles. At 0.5 the two-layer
# model's 1.024M cells on an 832 x 640 canvas (about 1.2 vertices a pixel) were drawn whole: their
# level of 0.85 vertices a pixel keeps 51 % of the triangles and draws in 1.26 ms instead of 2.27
# (H100; beside the solver it kept 82 % instead of 76-79 %: docs/BENCHMARKS.md, "One host wait a
# frame")
WORTH = 0.6
RASTER = os.environ.get("PDESTUDIO_MESH_RASTER", "1") != "0"  # 0: coarse cells drawn flat
# vertices a pixel, times DENSITY, of a surface whose colours do not come from its triangles (a
# planar mesh's cells from the raster, or a fixed colour): the shape and shading are all they
# give (docs/BENCHMARKS.md, "Cell colours from a raster")
SHAPE = 0.5
RASTER_WAIT = False  # True: the raster is made when first asked for, not on the worker thread
_WORKER: list = []   # the worker thread's executor, made when first needed


def vertex_normals(points: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """Area-weighted unit vertex normals (float32)."""
    p = points[cells]
    fn = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    n = np.zeros_like(points)
    for k in range(3):
        np.add.at(n, cells[:, k], fn)
    norm = np.linalg.norm(n, axis=1, keepdims=True)
    norm[norm == 0] = 1.0
    return (n / norm).astype(np.float32)


def incident_cells(cells: np.ndarray, n_points: int):
    """(cell index of every (vertex, cell) incidence sorted by vertex, offset and count of
    each vertex's run): the table of cells around each vertex."""
    v = cells.ravel()
    order = np.argsort(v, kind="stable")
    counts = np.bincount(v, minlength=n_points)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return (order // 3).astype(np.float32), offsets, counts


def morton_order(xyz: np.ndarray) -> np.ndarray:
    """The order of points along a Morton (Z-order) curve through their bounding box (10 bits
    an axis); the identity with PDESTUDIO_MESH_ORDER=0."""
    m = len(xyz)
    if m < 2 or os.environ.get("PDESTUDIO_MESH_ORDER", "1") == "0":
        return np.arange(m)
    lo, span = xyz.min(axis=0), np.ptp(xyz, axis=0)
    q = ((xyz - lo) / np.where(span > 0, span, 1.0) * 1023).astype(np.uint64)
    code = np.zeros(m, np.uint64)
    for bit in range(10):
        for axis in range(q.shape[1]):
            code |= ((q[:, axis] >> np.uint64(bit)) & np.uint64(1)) << \
                np.uint64(q.shape[1] * bit + axis)
    return np.argsort(code, kind="stable")


def locality_order(points: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """The order the triangles of an indexed mesh are drawn in: along a Morton (Z-order) curve
    through their centroids, so that triangles drawn one after another share vertices the GPU
    has just transformed (its cache of transformed vertices is small: a mesh numbered ring by
    ring, such as a latitude-longitude sphere, had every vertex shaded about twice). Only the
    draw order changes: cell numbers, fields and the picture of an opaque surface do not.
    PDESTUDIO_MESH_ORDER=0 keeps the file's order."""
    if len(cells) < 2:
        return np.arange(len(cells))
    return morton_order(points[cells].mean(axis=1))


def cluster_cells(points: np.ndarray, cells: np.ndarray, spacing: float):
    """Vertex clustering: the vertices binned in cubes of side `spacing` from the mesh's lowest
    corner, each bin's lowest-numbered vertex standing for it; the triangles whose corners fall
    in three different bins, once each. Returns (triangles as vertex numbers of the mesh, for
    each the number of one cell of the mesh it stands for)."""
    q = np.floor((points - points.min(axis=0)) / spacing).astype(np.int64)
    key = np.ravel_multi_index(tuple(q.T), tuple(q.max(axis=0) + 1))
    uniq, inv = np.unique(key, return_inverse=True)
    rep = np.full(len(uniq), len(points), np.int64)
    np.minimum.at(rep, inv, np.arange(len(points), dtype=np.int64))
    c = rep[inv[cells]]
    keep = (c[:, 0] != c[:, 1]) & (c[:, 1] != c[:, 2]) & (c[:, 2] != c[:, 0])
    c, cid = c[keep], np.flatnonzero(keep)
    s = np.sort(c, axis=1)
    order = np.lexsort((s[:, 2], s[:, 1], s[:, 0]))
    s = s[order]
    first = np.ones(len(s), bool)
    first[1:] = np.any(s[1:] != s[:-1], axis=1)
    pick = order[first]
    return c[pick], cid[pick]


def primitive_ids(canvas, cells: int) -> bool:
    """Whether a cell-coloured mesh of `cells` triangles is drawn indexed, its fragments
    reading their cell by gl_PrimitiveID (see the module docstring)."""
    from .textures import gl_extension
    return PRIMITIVE_IDS and cells <= MAX_PRIMITIVE and \
        gl_extension(canvas, "GL_EXT_gpu_shader4") is True


class Level:
    """The buffers one level of detail draws: attributes, index (None: un-indexed), the
    vertices and triangles it has; `cell_of`: the cell of each triangle in draw order (a
    FieldTexture), where fragments find their cell by primitive number."""

    def __init__(self, buffers: dict, index, vertices: int, triangles: int, cell_of=None):
        self.buffers, self.index = buffers, index
        self.vertices, self.triangles = vertices, triangles
        self.cell_of = cell_of


class MeshGeometry:
    """Vertex buffers of a mesh for one layout (see the module docstring): `flat` (cell
    colours: by primitive number where `by_primitive`, else un-indexed corners), `vertex_tc`
    (texels of vertex fields), `ring` (cell heights); the coarser levels of detail built when
    first drawn (`level_for`)."""

    def __init__(self, points, cells, *, flat: bool, heights: bool, vertex_tc: bool,
                 ring: bool, by_primitive: bool = False):
        points = np.asarray(points, np.float64)
        cells = np.asarray(cells, np.int64)
        n, m = len(points), len(cells)
        self.points, self.cells = points, cells
        self.flat, self.heights = flat, heights
        self.by_primitive = flat and by_primitive and m <= MAX_PRIMITIVE
        self.corners = flat and not self.by_primitive  # each triangle its own three corners
        self.vertex_field = FieldTexture((n,))
        self.cell_field = FieldTexture((m,))
        # per-vertex attributes, picked per corner (flat) or indexed
        self._per_vertex = {"a_pos": points.astype(np.float32)}
        if not heights:
            self._per_vertex["a_normal"] = vertex_normals(points, cells)
        if vertex_tc:
            self._per_vertex["a_vtc"] = self.vertex_field.texcoords(np.arange(n))
        self.ring = None
        self.max_ring = 0
        if ring:
            idx, offsets, counts = incident_cells(cells, n)
            self.ring = FieldTexture((len(idx),))
            self.ring_values = idx
            self.max_ring = int(min(max(int(counts.max(initial=1)), 1), MAX_RING))
            self._per_vertex["a_ring"] = np.column_stack([offsets, counts]).astype(np.float32)
        # the vertex buffers of an indexed layout hold the vertices along a Morton curve too:
        # the GPU fetches a triangle's corners from nearby memory (numbered at random, as a
        # mesh file may number them, two 1M-cell surfaces took 4.80 ms of GPU a frame instead
        # of 2.29: docs/BENCHMARKS.md, "Issue 25 on the H100")
        self._vorder = morton_order(points) if not self.corners else np.arange(n)
        self.vrank = np.empty(n, np.int64)  # a vertex's place in the vertex buffers
        self.vrank[self._vorder] = np.arange(n)
        self.full = self._level(cells, np.arange(m), shared=None)
        self._vorder = None
        if not self.corners:  # (coarser indexed levels share the full level's vertex buffers)
            self._per_vertex = None
        self.buffers = self.full.buffers  # (the attributes every level has: the shaders declare them)
        lo, hi = points.min(axis=0), points.max(axis=0)
        self.extent = float(np.max(hi - lo)) if n else 0.0
        planar = n > 0 and float(hi[2] - lo[2]) <= 1e-9 * max(self.extent, 1e-300)
        self.rasterable = flat and planar and RASTER and m > 0  # cells from a raster (above)
        self._raster = None  # (FieldTexture, box) once made (`raster`)
        self.raster_job = None  # the worker's future of the cellraster.Raster
        e = points[cells[:, 1]] - points[cells[:, 0]] if m else np.zeros((1, 3))
        self.edge = float(np.median(np.linalg.norm(e, axis=1))) if m else 0.0
        self._levels: dict = {}

    def _level(self, cells, cell_ids, shared) -> Level:
        """The buffers drawing `cells` (vertex numbers of the mesh), cell-coloured ones taking
        the colours of `cell_ids`; `shared`: the full level, whose per-vertex buffers an
        indexed layout reuses."""
        verts = len(np.unique(cells)) if shared is not None else len(self.points)
        if self.corners:
            corners = cells.ravel()
            bufs = {k: gloo.VertexBuffer(np.ascontiguousarray(v[corners]))
                    for k, v in self._per_vertex.items()}
            bufs["a_ctc"] = gloo.VertexBuffer(self.cell_field.texcoords(np.repeat(cell_ids, 3)))
            return Level(bufs, None, verts, len(cells))
        bufs = shared.buffers if shared is not None else {
            k: gloo.VertexBuffer(np.ascontiguousarray(v[self._vorder]))
            for k, v in self._per_vertex.items()}
        order = locality_order(self.points, cells)
        index = gloo.IndexBuffer(self.vrank[cells[order]].astype(np.uint32).ravel())
        cell_of = None
        if self.by_primitive:  # triangle k of the draw colours like cell cell_ids[order[k]]
            cell_of = FieldTexture((max(len(cells), 1),))
            cell_of.set_static(np.asarray(cell_ids, np.float32)[order])
        return Level(bufs, index, verts, len(cells), cell_of)

    def raster(self):
        """(texture of the cell under each texel, its box uniform (cellraster.Raster.box))
        of a planar cell-coloured mesh once made, else None: the first call starts making it
        on the worker thread (at once where RASTER_WAIT); a failure there (memory) leaves the
        mesh without one."""
        if self._raster is not None or not self.rasterable:
            return self._raster
        if self.raster_job is None:
            if RASTER_WAIT:
                self.raster_job = Future()
                try:
                    self.raster_job.set_result(cell_raster(self.points[:, :2], self.cells))
                except Exception as e:  # noqa: BLE001  (as the worker's future would hold it)
                    self.raster_job.set_exception(e)
            else:
                if not _WORKER:
                    _WORKER.append(ThreadPoolExecutor(1, thread_name_prefix="cell-raster"))
                self.raster_job = _WORKER[0].submit(cell_raster, self.points[:, :2], self.cells)
        if not self.raster_job.done():
            return None
        try:
            r = self.raster_job.result()
        except Exception:  # noqa: BLE001  (no raster: the flat colours of the levels)
            self.rasterable = False
            return None
        tex = FieldTexture(r.shape)
        tex.set_static(r.cells)
        self._raster = (tex, r.box())
        return self._raster

    def raster_ready(self) -> bool:
        """Whether `raster` has its raster now (without starting to make one)."""
        job = self.raster_job
        return self._raster is not None or (job is not None and job.done()
                                             and job.exception() is None)

    def level_for(self, px_per_unit: float | None, density: float = DENSITY) -> Level:
        """The level with about `density` vertices a pixel where the mesh is drawn at
        `px_per_unit` pixels a unit of length at most (None: unknown, every vertex): bins of
        a side extent / 2^k, the k nearest (in octaves) to a pixel's share, so 0.7 to 1.4
        vertices a pixel; every vertex where the bins would be smaller than the triangles or
        keep more than WORTH of them."""
        if not px_per_unit or density <= 0 or not np.isfinite(px_per_unit) or self.extent <= 0:
            return self.full
        want = 1.0 / (density * px_per_unit)
        k = max(0, int(np.round(np.log2(self.extent / want))))
        spacing = self.extent / 2 ** k
        if spacing < self.edge:
            return self.full
        if k not in self._levels:
            cells, cid = cluster_cells(self.points, self.cells, spacing)
            self._levels[k] = self._level(cells, cid, self.full) \
                if len(cells) <= WORTH * len(self.cells) else self.full
        return self._levels[k]


def _shaders(geom: MeshGeometry, height_loc: str | None, color_loc: str | None):
    """(vertex, fragment) code for one surface: heights from a 'vertex' or 'cell' field (or
    none: fixed positions), colour from a 'vertex' or 'cell' field (or none: fixed colour)."""
    attrs = ["attribute vec3 a_pos;"] + [f"attribute vec{2 if k != 'a_normal' else 3} {k};"
                                         for k in geom.buffers if k != "a_pos"]
    body = ["vec3 pos = a_pos;"]
    if height_loc == "vertex":
        body.append("pos.z = (texture2D(u_height, a_vtc).r - u_z.x) * u_z.y;")
    elif height_loc == "cell":
        body += ["float s = 0.0;", "float c = 0.0;",
                 f"for (int k = 0; k < {geom.max_ring}; k++) {{",
                 "    if (float(k) >= a_ring.y) break;",
                 "    float idx = texture2D(u_ring, packed_at(a_ring.x + float(k), u_rsize)).r;",
                 "    s += texture2D(u_height, packed_at(idx, u_hsize)).r;",
                 "    c += 1.0;", "}",
                 "pos.z = (s / max(c, 1.0) - u_z.x) * u_z.y;"]
    by_primitive = color_loc == "cell" and geom.by_primitive
    if color_loc is not None and not by_primitive:
        tc = "a_ctc" if color_loc == "cell" else "a_vtc"
        body.append(f"v_value = texture2D(u_value, {tc}).r;")
    else:
        body.append("v_value = 0.0;")
    body.append("v_pos = pos;")
    rastered = color_loc == "cell" and geom.rasterable
    if rastered:
        body.append("v_xy = a_pos.xy;")
    if not geom.heights:
        body.append("v_normal = a_normal;")
    body.append("gl_Position = $transform(vec4(pos, 1.0));")
    uniforms = """
uniform sampler2D u_value;
uniform sampler2D u_height;
uniform vec2 u_hsize;
uniform sampler2D u_ring;
uniform vec2 u_rsize;
uniform vec2 u_z;
varying float v_value;
varying vec3 v_pos;
""" + ("" if geom.heights else "varying vec3 v_normal;\n") + \
        ("varying vec2 v_xy;\n" if rastered else "")
    vert = glsl.TEXEL + uniforms + "\n".join(attrs) + "\nvoid main() {\n    " \
        + "\n    ".join(body) + "\n}\n"
    normal = ("vec3 n = cross(dFdx(v_pos), dFdy(v_pos));\n"
              "    if (!(dot(n, n) > 0.0)) n = vec3(0.0, 0.0, 1.0);" if geom.heights
              else "vec3 n = v_normal;")
    # the cell of a fragment by its triangle's number in the draw (by_primitive)
    value = "v_value"
    cell = ""
    if by_primitive:
        cell = ("#extension GL_EXT_gpu_shader4 : require\n" + glsl.TEXEL
                + "uniform sampler2D u_value;\nuniform vec2 u_vsize;\n"
                + "uniform sampler2D u_cellof;\nuniform vec2 u_csize;\n")
        value = ("texture2D(u_value, packed_at(texture2D(u_cellof, packed_at("
                 "float(gl_PrimitiveID), u_csize)).r, u_vsize)).r")
    # at a coarse level, the cell under the fragment from the raster of the plane (where the
    # raster has one), else the triangle's own cell as above
    pick = ""
    if rastered:
        if not by_primitive:
            cell = glsl.TEXEL + "uniform sampler2D u_value;\nuniform vec2 u_vsize;\n"
        cell += ("uniform sampler2D u_raster;\nuniform vec4 u_rbox;\n"
                 "uniform float u_rasterize;\nvarying vec2 v_xy;\n")
        pick = (f"float value = {value};\n"
                "    if (u_rasterize > 0.5) {\n"
                "        float c = texture2D(u_raster, (v_xy - u_rbox.xy) * u_rbox.zw).r;\n"
                "        if (c >= 0.0) value = texture2D(u_value, packed_at(c, u_vsize)).r;\n"
                "    }\n    ")
        value = "value"
    frag = cell + glsl.COLORMAP + glsl.SHADE + """
uniform float u_mode;
uniform vec4 u_color;
varying float v_value;
varying vec3 v_pos;
""" + ("" if geom.heights else "varying vec3 v_normal;\n") + f"""
void main() {{
    {normal}
    {pick}vec4 base = u_mode < 0.5 ? colormap({value}) : u_color;
    gl_FragColor = vec4(shade(base.rgb, n), base.a);
}}
"""
    return vert, frag


class ScalarMeshVisual(_TextureVisual):
    """One surface of a mesh view: heights and colour as `_shaders` describes."""

    def __init__(self, geom: MeshGeometry, height_loc, color_loc, bounds, pick_level=None):
        vert, frag = _shaders(geom, height_loc, color_loc)
        Visual.__init__(self, vcode=vert, fcode=frag)
        self.geom = geom
        self.by_primitive = color_loc == "cell" and geom.by_primitive
        self.rastered = color_loc == "cell" and geom.rasterable  # cells from the raster
        self._raster_on = False
        self.shape_only = self.rastered or color_loc is None  # (drawn with SHAPE x DENSITY)
        self.bounds_xyz = bounds
        self.pick_level = pick_level  # () -> the Level to draw (the view's choice), or None
        self.level = None
        p = self.shared_program
        p["u_light"] = LIGHT
        p["u_mode"] = 0.0 if color_loc is not None else 1.0
        p["u_color"] = (0.6, 0.6, 0.6, 1.0)
        p["u_z"] = (0.0, 1.0)
        if geom.ring is not None:
            p["u_ring"] = geom.ring.texture
            p["u_rsize"] = geom.ring.size
        if self.rastered:
            p["u_rasterize"] = 0.0
            p["u_rbox"] = (0.0, 0.0, 1.0, 1.0)
            p["u_raster"] = geom.cell_field.texture  # (not read until a coarse level sets it)
        self._draw_mode = "triangles"
        self._use(geom.full)
        self.set_gl_state("opaque", depth_test=True, cull_face=False)

    def _use(self, level: Level) -> None:
        if level is not self.level:
            p = self.shared_program
            for k, buf in level.buffers.items():
                p[k] = buf
            if self.by_primitive:
                p["u_cellof"], p["u_csize"] = level.cell_of.texture, level.cell_of.size
            self._index_buffer = level.index
            self.level = level
        if self.rastered:  # a coarse level's colours from the raster, once it is there
            got = self.geom.raster() if level is not self.geom.full else None
            on = got is not None
            if on != self._raster_on:
                p = self.shared_program
                if on:
                    p["u_raster"], p["u_rbox"] = got[0].texture, got[1]
                p["u_rasterize"] = 1.0 if on else 0.0
                self._raster_on = on

    def draw(self):
        if self.visible and self.pick_level is not None:
            self._use(self.pick_level())
        super().draw()

    def set_value(self, tex: FieldTexture) -> None:
        self.shared_program["u_value"] = tex.texture
        if self.by_primitive or self.rastered:
            self.shared_program["u_vsize"] = tex.size

    def set_height(self, tex: FieldTexture, zmid: float, zscale: float) -> None:
        p = self.shared_program
        p["u_height"], p["u_hsize"] = tex.texture, tex.size
        p["u_z"] = (float(zmid), float(zscale))

    def set_color(self, color) -> None:
        self.shared_program["u_color"] = tuple(float(c) for c in color)

    def _compute_bounds(self, axis, view):
        return self.bounds_xyz[axis]


MeshNode = create_visual_node(ScalarMeshVisual)
