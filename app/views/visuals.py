"""The VisPy visuals of the views: custom shaders that draw fields held in float textures
(textures.py), so a frame changes only the textures' contents and a few uniforms.

    HeightField   a grid field as a lit surface: a grid of vertices (drawn in tiles of at most TILE²
                  vertices; a vertex every `step` texels, chosen from the surface's size on the
                  screen whenever the camera or the view changes), heights sampled from the height
                  texture in the vertex shader; colour (a field's texture through the colour map, or
                  one fixed colour) and normals (from neighbouring texels) per fragment
    FieldImage    a field texture on a rectangle (the image view), or a ring of rows (the
                  space–time image: one row written per frame, the oldest shown at the bottom)
    ScalarLine    a 1D field as a line: x fixed, y sampled from the field's texture (the min/max
                  envelope of runs of points beyond ENVELOPE points)
    ScalarMesh    a triangle mesh: positions and topology uploaded once; colour from a vertex or
                  cell field's texture; heights over a plane from a vertex field, or from a cell
                  field averaged over the cells around each vertex (gathered in the vertex
                  shader from a table of incident cells built once)
"""
from __future__ import annotations

import numpy as np
from vispy import gloo
from vispy.scene.visuals import create_visual_node
from vispy.visuals import Visual

from . import glsl
from .colors import lut

TILE = 2049          # vertices a side of one tile of a grid surface (a tile is one draw call,
#                      a quarter of a millisecond of Python in VisPy: a 4096² surface is 4)
LIGHT = tuple(np.array([0.35, -0.45, 1.0]) / np.linalg.norm([0.35, -0.45, 1.0]))


def lut_texture(cmap: str) -> gloo.Texture2D:
    """The colour map as a 256×1 RGBA float texture (nearest lookup)."""
    return gloo.Texture2D(lut(cmap)[None, :, :].astype(np.float32), internalformat="rgba32f",
                          interpolation="nearest", wrapping="clamp_to_edge")


class _TextureVisual(Visual):
    """What every field visual shares: the transform, colour map and range uniforms."""

    def _prepare_transforms(self, view):
        view.view_program.vert["transform"] = view.get_transform()

    def _prepare_draw(self, view):
        # nothing to draw before the first frame gave a colour map (a canvas rendered before
        # it, as the offscreen exports do to prove their context, drew it with unset uniforms
        # and VisPy warned "Program has unset variables: {'u_cmap', 'u_clim'}")
        return self.__dict__.get("_pdes_colored", False)

    def set_colormap(self, lut_tex, clim) -> None:
        p = self.shared_program
        p["u_cmap"] = lut_tex
        lo, hi = float(clim[0]), float(clim[1])
        p["u_clim"] = (lo, hi if hi > lo else lo + 1.0)
        self.__dict__["_pdes_colored"] = True  # (VisPy's visuals are frozen to new attributes)


# ---- grid surfaces --------------------------------------------------------------------------------
class Tiles:
    """The vertex grid of a surface: one tile of up to TILE² vertices (index attribute a_ij and
    triangles, built once) drawn at several offsets, `step` texels between vertices."""

    def __init__(self, tex_shape, step: int = 1):
        ny, nx = tex_shape
        self.step = step
        nvx, nvy = -(-(nx - 1) // step) + 1, -(-(ny - 1) // step) + 1
        kx, ky = -(-(nvx - 1) // (TILE - 1)) or 1, -(-(nvy - 1) // (TILE - 1)) or 1
        tx, ty = max(2, -(-(nvx - 1) // kx) + 1), max(2, -(-(nvy - 1) // ky) + 1)
        i, j = np.meshgrid(np.arange(tx, dtype=np.float32), np.arange(ty, dtype=np.float32))
        self.a_ij = gloo.VertexBuffer(np.column_stack([i.ravel(), j.ravel()]))
        a = (np.arange(ty - 1)[:, None] * tx + np.arange(tx - 1)[None, :]).ravel()
        a = a.astype(np.uint32)
        self.index = gloo.IndexBuffer(np.column_stack([a, a + 1, a + tx + 1,
                                                       a, a + tx + 1, a + tx]).ravel())
        self.offsets = [(float(bx * (tx - 1) * step), float(by * (ty - 1) * step))
                        for by in range(ky) for bx in range(kx)]
        self.vertices = tx * ty * len(self.offsets)
        self.side = max(nvx, nvy)  # vertices along the longer side


class TileSet:
    """The vertex grids of one texture shape, one per step, each built when first drawn (the
    surfaces of a view share them)."""

    def __init__(self, tex_shape):
        self.tex_shape = tuple(tex_shape)
        self._by_step: dict[int, Tiles] = {}

    def at(self, step: int) -> Tiles:
        if step not in self._by_step:
            self._by_step[step] = Tiles(self.tex_shape, step)
        return self._by_step[step]


def framebuffer_px(visual, pts):
    """Points (N, 4: x, y, z, 1) of `visual`'s coordinates in framebuffer pixels (N, 2); None
    where the transforms are not set up yet (before the first draw) or a point lies behind the
    camera."""
    try:
        q = np.asarray(visual.get_transform("visual", "framebuffer").map(pts), np.float64)
    except Exception:  # noqa: BLE001  (no transform system before the first draw)
        return None
    if q.shape[1] < 4 or np.any(q[:, 3] <= 0) or not np.all(np.isfinite(q)):
        return None
    return q[:, :2] / q[:, 3:4]


def screen_step(corners_px, side: int, density: float, least: int,
                fallback_px: float = 0.0) -> int:
    """Texels between a surface's vertices so that it has about `density` vertices a pixel
    along its longer edge on the screen: `corners_px` are its four corners (in order around
    it) in framebuffer pixels, `side` its texels along the longer side. A power of two (so
    small camera moves rarely change it), at least `least`. Where the corners are unknown
    (None: behind the camera, or the view not laid out yet) the edge is taken as
    `fallback_px` (the canvas's size), or, without one, every value up to `least`."""
    if density <= 0:
        return least
    want = 0.0
    if corners_px is not None:
        c = np.asarray(corners_px, np.float64)
        want = density * float(np.linalg.norm(c - np.roll(c, -1, axis=0), axis=1).max())
    if not np.isfinite(want) or want < 1:
        want = density * fallback_px
        if want < 1:
            return least
    step = int((side - 1) // want)
    step = 1 << (step.bit_length() - 1) if step > 1 else 1
    return max(least, step)


_HF_VERT = glsl.TEXEL + """
attribute vec2 a_ij;
uniform vec2 u_offset;
uniform float u_step;
uniform sampler2D u_height;
uniform vec2 u_hsize;
uniform vec4 u_xy;
uniform vec2 u_z;
varying vec2 v_ij;
void main() {
    vec2 ij = min(u_offset + a_ij * u_step, u_hsize - 1.0);
    float h = texel(u_height, u_hsize, ij);
    v_ij = ij;
    gl_Position = $transform(vec4(u_xy.x + ij.x * u_xy.y, u_xy.z + ij.y * u_xy.w,
                                  (h - u_z.x) * u_z.y, 1.0));
}
"""

_HF_FRAG = glsl.TEXEL + glsl.COLORMAP + glsl.PICK + glsl.SHADE + """
uniform sampler2D u_height;
uniform vec2 u_hsize;
uniform sampler2D u_value;
uniform vec2 u_vsize;
uniform vec4 u_xy;
uniform vec2 u_z;
uniform float u_mode;
uniform vec4 u_color;
varying vec2 v_ij;
void main() {
    vec2 scale = (u_vsize - 1.0) / max(u_hsize - 1.0, vec2(1.0));
    vec2 vij = v_ij * scale;
    vec2 fp = max(abs(dFdx(vij)), abs(dFdy(vij)));
    vec2 at = floor(vij + 0.5);
    vec4 base = u_color;
    if (u_mode < 0.5) {
        base = colormap(pick(u_value, u_vsize, vij, fp, at));
    }
    vec2 h = clamp(floor(at / max(scale, vec2(1e-6)) + 0.5), vec2(0.0), u_hsize - 1.0);
    vec2 lo = max(h - 1.0, vec2(0.0));
    vec2 hi = min(h + 1.0, u_hsize - 1.0);
    float gx = (texel(u_height, u_hsize, vec2(hi.x, h.y)) - texel(u_height, u_hsize, vec2(lo.x, h.y)))
               / max((hi.x - lo.x) * abs(u_xy.y), 1e-30);
    float gy = (texel(u_height, u_hsize, vec2(h.x, hi.y)) - texel(u_height, u_hsize, vec2(h.x, lo.y)))
               / max((hi.y - lo.y) * abs(u_xy.w), 1e-30);
    gl_FragColor = vec4(shade(base.rgb, vec3(-gx * u_z.y, -gy * u_z.y, 1.0)), base.a);
}
"""


class HeightFieldVisual(_TextureVisual):
    """A lit surface z = height(x, y) from a grid field's texture (see the module docstring).

    Geometry: a vertex every `step` texels, where step is the least power of two that leaves
    about `density` vertices a pixel along the surface's longer edge as drawn (triangles
    smaller than a pixel add raster work and nothing to the picture, whose colour and
    shading are per pixel from every texel), and at least `least` (a cap on the vertices).
    `density` 0: always `least`. `tiles` is the step drawn last."""

    def __init__(self, tileset: TileSet, height, value, xy, z=(0.0, 1.0), least: int = 1,
                 density: float = 0.0, fallback_px: float = 0.0, lod_key=None):
        Visual.__init__(self, vcode=_HF_VERT, fcode=_HF_FRAG)
        self.tileset, self.least, self.density = tileset, int(least), float(density)
        self.fallback_px = float(fallback_px)  # the edge in pixels before the first layout
        # lod_key(): what the surface's size on the screen depends on (the camera, the view's
        # size); unchanged since the last choice, the geometry is kept without mapping corners
        self.lod_key, self._lod_seen = lod_key, None
        self.bounds_xyz = ((0.0, 1.0), (0.0, 1.0), (0.0, 1.0))
        p = self.shared_program
        self.tiles = None
        self.xy = (0.0, 1.0, 0.0, 1.0)
        self._use(tileset.at(screen_step(None, max(tileset.tex_shape), self.density,
                                         self.least, self.fallback_px)))
        p["u_offset"] = (0.0, 0.0)
        p["u_light"] = LIGHT
        p["u_mode"] = 0.0
        p["u_color"] = (0.6, 0.6, 0.6, 1.0)
        self.set_fields(height, value)
        self.set_xy(xy)
        self.set_z(*z)
        self._draw_mode = "triangles"
        self.set_gl_state("opaque", depth_test=True, cull_face=False)

    def set_fields(self, height, value) -> None:
        p = self.shared_program
        p["u_height"], p["u_hsize"] = height.texture, height.size
        p["u_value"], p["u_vsize"] = value.texture, value.size

    def set_xy(self, xy) -> None:
        """(x0, dx, y0, dy): the position of height texel (i, j) is (x0 + i dx, y0 + j dy)."""
        self.xy = tuple(float(v) for v in xy)
        self.shared_program["u_xy"] = self.xy

    def _use(self, tiles: Tiles) -> None:
        if tiles is not self.tiles:
            self.tiles = tiles
            self.shared_program["a_ij"] = tiles.a_ij
            self.shared_program["u_step"] = float(tiles.step)

    def corners_px(self):
        """The surface's four corners (at mid-height) in framebuffer pixels; None where the
        transforms are not set up yet or a corner lies behind the camera."""
        ny, nx = self.tileset.tex_shape
        x0, dx, y0, dy = self.xy
        x1, y1 = x0 + dx * (nx - 1), y0 + dy * (ny - 1)
        pts = np.array([[x0, y0, 0, 1], [x1, y0, 0, 1], [x1, y1, 0, 1], [x0, y1, 0, 1]],
                       np.float64)
        return framebuffer_px(self, pts)

    def pick_tiles(self) -> Tiles:
        """Choose the geometry for the surface's size on the screen now."""
        if self.density > 0:
            key = self.lod_key() if self.lod_key is not None else None
            if key is not None and key == self._lod_seen:
                return self.tiles
            corners = self.corners_px()
            step = screen_step(corners, max(self.tileset.tex_shape), self.density,
                               self.least, self.fallback_px)
            self._use(self.tileset.at(step))
            self._lod_seen = key if corners is not None else None
        return self.tiles

    def set_z(self, zmid: float, zscale: float) -> None:
        self.shared_program["u_z"] = (float(zmid), float(zscale))

    def set_color(self, color=None) -> None:
        """None: coloured by the value field through the colour map; else one RGBA colour."""
        p = self.shared_program
        p["u_mode"] = 0.0 if color is None else 1.0
        if color is not None:
            p["u_color"] = tuple(float(c) for c in color)

    def draw(self):
        if not self.visible or self._prepare_draw(view=self) is False:
            return
        self.pick_tiles()
        self._configure_gl_state()
        for off in self.tiles.offsets:
            self._program["u_offset"] = off
            self._program.draw("triangles", self.tiles.index)

    def _compute_bounds(self, axis, view):
        return self.bounds_xyz[axis]


# ---- images -------------------------------------------------------------------------------------
_IMG_VERT = """
attribute vec2 a_uv;
uniform vec4 u_rect;
varying vec2 v_uv;
void main() {
    v_uv = a_uv;
    gl_Position = $transform(vec4(u_rect.xy + a_uv * u_rect.zw, 0.0, 1.0));
}
"""

_IMG_FRAG = glsl.TEXEL + glsl.COLORMAP + glsl.PICK + """
uniform sampler2D u_field;
uniform vec2 u_size;
uniform vec3 u_ring;
varying vec2 v_uv;
void main() {
    vec2 ij = v_uv * u_size - 0.5;
    vec2 fp = max(abs(dFdx(ij)), abs(dFdy(ij)));
    if (u_ring.x > 0.0) {
        float r = clamp(floor(v_uv.y * u_ring.y), 0.0, u_ring.y - 1.0);
        ij.y = mod(u_ring.z - (u_ring.y - 1.0 - r) + u_ring.x, u_ring.x);
        fp.y = 0.0;
    }
    vec2 at;
    gl_FragColor = colormap(pick(u_field, u_size, ij, fp, at));
}
"""


class FieldImageVisual(_TextureVisual):
    """A field texture drawn on the rectangle `rect` = (x0, y0, width, height)."""

    def __init__(self, field, rect):
        Visual.__init__(self, vcode=_IMG_VERT, fcode=_IMG_FRAG)
        quad = np.array([[0, 0], [1, 0], [1, 1], [0, 0], [1, 1], [0, 1]], np.float32)
        p = self.shared_program
        p["a_uv"] = gloo.VertexBuffer(quad)
        p["u_ring"] = (0.0, 0.0, 0.0)
        self.set_field(field)
        self.set_rect(rect)
        self._draw_mode = "triangles"
        self.set_gl_state("opaque", depth_test=False, cull_face=False)

    def set_field(self, field) -> None:
        self.shared_program["u_field"] = field.texture
        self.shared_program["u_size"] = field.size

    def set_rect(self, rect) -> None:
        self.rect = tuple(float(v) for v in rect)
        self.shared_program["u_rect"] = self.rect

    def set_ring(self, rows: int, shown: int, newest: int) -> None:
        """Show the `shown` newest rows of a ring of `rows` (newest at `newest`), oldest at
        the bottom, each 1/shown of the height."""
        self.shared_program["u_ring"] = (float(rows), float(max(shown, 1)), float(newest))

    def _compute_bounds(self, axis, view):
        x0, y0, w, h = self.rect
        return [(x0, x0 + w), (y0, y0 + h), (0.0, 0.0)][axis]


# ---- lines --------------------------------------------------------------------------------------
ENVELOPE = 8192      # points of a line above which it is drawn as its min/max envelope
MAX_RUN = 512        # points a vertex of the envelope reads at most

_LINE_VERT = glsl.TEXEL + f"""
attribute float a_x;
attribute vec2 a_run;
uniform sampler2D u_field;
uniform vec2 u_fsize;
uniform float u_m;
uniform float u_n;
varying float v_value;
void main() {{
    float best = a_run.y > 0.5 ? -3.0e38 : 3.0e38;
    for (int i = 0; i < {MAX_RUN}; i++) {{
        float k = a_run.x + float(i);
        if (float(i) >= u_m || k >= u_n) break;
        float s = texture2D(u_field, packed_at(k, u_fsize)).r;
        if (s == s) {{
            best = a_run.y > 0.5 ? max(best, s) : min(best, s);
        }}
    }}
    v_value = best;
    gl_Position = $transform(vec4(a_x, best, 0.0, 1.0));
}}
"""

_LINE_FRAG = glsl.COLORMAP + """
varying float v_value;
void main() {
    gl_FragColor = colormap(v_value);
}
"""


class ScalarLineVisual(_TextureVisual):
    """y = field(x) as a line strip, coloured by value: through every point up to ENVELOPE
    points; beyond, the min/max envelope of runs of m points (m ≤ MAX_RUN, at least 4096 runs,
    several a pixel): every point is read each frame and no peak is lost."""

    def __init__(self, x, field, width: float = 2.0):
        x = np.asarray(x, dtype=np.float64)
        n = len(x)
        Visual.__init__(self, vcode=_LINE_VERT, fcode=_LINE_FRAG)
        if n <= ENVELOPE:
            m, first, parity, xs = 1, np.arange(n), np.zeros(n), x
        else:
            runs = max(4096, -(-n // MAX_RUN))
            m = -(-n // runs)
            starts = np.arange(0, n, m)
            first = np.repeat(starts, 2)
            parity = np.tile([0.0, 1.0], len(starts))
            xs = x[np.minimum(first + m // 2, n - 1)]
        self.run = m
        p = self.shared_program
        p["a_x"] = gloo.VertexBuffer(xs.astype(np.float32))
        p["a_run"] = gloo.VertexBuffer(np.column_stack([first, parity]).astype(np.float32))
        p["u_m"], p["u_n"] = float(m), float(n)
        self.set_field(field)
        self.xrange = (float(x.min()), float(x.max())) if n else (0.0, 1.0)
        self._draw_mode = "line_strip"
        self.set_gl_state("translucent", depth_test=False, line_width=width)

    def set_field(self, field) -> None:
        self.shared_program["u_field"] = field.texture
        self.shared_program["u_fsize"] = field.size

    def _compute_bounds(self, axis, view):
        return [self.xrange, (0.0, 1.0), (0.0, 0.0)][axis]


LineNode = create_visual_node(ScalarLineVisual)
ImageNode = create_visual_node(FieldImageVisual)
HeightFieldNode = create_visual_node(HeightFieldVisual)
