"""The triangle-mesh visual: positions and topology uploaded once, fields from textures.

`MeshGeometry` holds the vertex buffers of one mesh for one layout, shared by the stacked
surfaces of a view:
- vertex-coloured: indexed triangles (every vertex once), colour interpolated;
- cell-coloured: the triangles un-indexed once (each triangle its own three corners, each corner
  carrying the texel of its cell), so every cell is drawn flat in its own colour.
Heights over a plane come from a vertex field (each vertex's texel) or from a cell field: each
vertex averages the cells around it, gathered in the vertex shader from a table of incident
cells (CSR, a float texture built once; at most MAX_RING cells a vertex are averaged, more than
any mesh generator here makes). Surfaces with heights are lit by facet normals (derivatives of
the position in the fragment shader); fixed surfaces (a sphere) by vertex normals built once.
"""
from __future__ import annotations

import os

import numpy as np
from vispy import gloo
from vispy.scene.visuals import create_visual_node
from vispy.visuals import Visual

from . import glsl
from .textures import FieldTexture
from .visuals import LIGHT, _TextureVisual

MAX_RING = 32


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


def locality_order(points: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """The order the triangles of an indexed mesh are drawn in: along a Morton (Z-order) curve
    through their centroids, so that triangles drawn one after another share vertices the GPU
    has just transformed (its cache of transformed vertices is small: a mesh numbered ring by
    ring, such as a latitude-longitude sphere, had every vertex shaded about twice). Only the
    draw order changes: cell numbers, fields and the picture of an opaque surface do not.
    PDESTUDIO_MESH_ORDER=0 keeps the file's order."""
    m = len(cells)
    if m < 2 or os.environ.get("PDESTUDIO_MESH_ORDER", "1") == "0":
        return np.arange(m)
    c = points[cells].mean(axis=1)
    lo, span = c.min(axis=0), np.ptp(c, axis=0)
    q = ((c - lo) / np.where(span > 0, span, 1.0) * 1023).astype(np.uint64)
    code = np.zeros(m, np.uint64)
    for bit in range(10):
        for axis in range(q.shape[1]):
            code |= ((q[:, axis] >> np.uint64(bit)) & np.uint64(1)) << \
                np.uint64(q.shape[1] * bit + axis)
    return np.argsort(code, kind="stable")


class MeshGeometry:
    """Vertex buffers of a mesh for one layout (see the module docstring): `flat` (cell
    colours, un-indexed), `vertex_tc` (texels of vertex fields), `ring` (cell heights)."""

    def __init__(self, points, cells, *, flat: bool, heights: bool, vertex_tc: bool,
                 ring: bool):
        points = np.asarray(points, np.float64)
        cells = np.asarray(cells, np.int64)
        n, m = len(points), len(cells)
        self.flat, self.heights = flat, heights
        corners = cells.ravel() if flat else None
        pick = (lambda a: a[corners]) if flat else (lambda a: a)
        self.buffers = {"a_pos": gloo.VertexBuffer(pick(points).astype(np.float32))}
        if not heights:
            self.buffers["a_normal"] = gloo.VertexBuffer(pick(vertex_normals(points, cells)))
        self.vertex_field = FieldTexture((n,))
        self.cell_field = FieldTexture((m,))
        if vertex_tc:
            self.buffers["a_vtc"] = gloo.VertexBuffer(pick(self.vertex_field.texcoords(
                np.arange(n))))
        if flat:
            self.buffers["a_ctc"] = gloo.VertexBuffer(self.cell_field.texcoords(
                np.repeat(np.arange(m), 3)))
        self.ring = None
        self.max_ring = 0
        if ring:
            idx, offsets, counts = incident_cells(cells, n)
            self.ring = FieldTexture((len(idx),))
            self.ring_values = idx
            self.max_ring = int(min(max(int(counts.max(initial=1)), 1), MAX_RING))
            self.buffers["a_ring"] = gloo.VertexBuffer(pick(
                np.column_stack([offsets, counts]).astype(np.float32)))
        self.index = None if flat else gloo.IndexBuffer(
            cells[locality_order(points, cells)].astype(np.uint32).ravel())
        self.count = 3 * m


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
    if color_loc is not None:
        tc = "a_ctc" if color_loc == "cell" else "a_vtc"
        body.append(f"v_value = texture2D(u_value, {tc}).r;")
    else:
        body.append("v_value = 0.0;")
    body.append("v_pos = pos;")
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
""" + ("" if geom.heights else "varying vec3 v_normal;\n")
    vert = glsl.TEXEL + uniforms + "\n".join(attrs) + "\nvoid main() {\n    " \
        + "\n    ".join(body) + "\n}\n"
    normal = ("vec3 n = cross(dFdx(v_pos), dFdy(v_pos));\n"
              "    if (!(dot(n, n) > 0.0)) n = vec3(0.0, 0.0, 1.0);" if geom.heights
              else "vec3 n = v_normal;")
    frag = glsl.COLORMAP + glsl.SHADE + """
uniform float u_mode;
uniform vec4 u_color;
varying float v_value;
varying vec3 v_pos;
""" + ("" if geom.heights else "varying vec3 v_normal;\n") + f"""
void main() {{
    {normal}
    vec4 base = u_mode < 0.5 ? colormap(v_value) : u_color;
    gl_FragColor = vec4(shade(base.rgb, n), base.a);
}}
"""
    return vert, frag


class ScalarMeshVisual(_TextureVisual):
    """One surface of a mesh view: heights and colour as `_shaders` describes."""

    def __init__(self, geom: MeshGeometry, height_loc, color_loc, bounds):
        vert, frag = _shaders(geom, height_loc, color_loc)
        Visual.__init__(self, vcode=vert, fcode=frag)
        self.geom = geom
        self.bounds_xyz = bounds
        p = self.shared_program
        for k, buf in geom.buffers.items():
            p[k] = buf
        p["u_light"] = LIGHT
        p["u_mode"] = 0.0 if color_loc is not None else 1.0
        p["u_color"] = (0.6, 0.6, 0.6, 1.0)
        p["u_z"] = (0.0, 1.0)
        if geom.ring is not None:
            p["u_ring"] = geom.ring.texture
            p["u_rsize"] = geom.ring.size
        self._draw_mode = "triangles"
        self._index_buffer = geom.index
        self.set_gl_state("opaque", depth_test=True, cull_face=False)

    def set_value(self, tex: FieldTexture) -> None:
        self.shared_program["u_value"] = tex.texture

    def set_height(self, tex: FieldTexture, zmid: float, zscale: float) -> None:
        p = self.shared_program
        p["u_height"], p["u_hsize"] = tex.texture, tex.size
        p["u_z"] = (float(zmid), float(zscale))

    def set_color(self, color) -> None:
        self.shared_program["u_color"] = tuple(float(c) for c in color)

    def _compute_bounds(self, axis, view):
        return self.bounds_xyz[axis]


MeshNode = create_visual_node(ScalarMeshVisual)
