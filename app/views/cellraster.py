"""Which cell of a planar triangle mesh lies under each texel of a raster over the mesh's
bounding box: the table a coarse level of detail reads its colours from.

A mesh finer than the pixels is drawn from coarser triangles (meshvisual.py, "Level of
detail"). A coarse triangle stands for many cells; coloured flat it shows one of them. With this
raster the fragment shader finds, for the point of the plane under each pixel, the cell of the
full mesh that covers it, so the colours are every cell's while the GPU rasterises far fewer
triangles (the geometry then only gives the surface its shape and shading).

The raster's texels are about a third of a typical cell's side (TEXELS_PER_CELL texels a
median cell), so every cell but slivers holds at least one texel centre; a texel holds the cell
whose triangle contains its centre (one of them on a shared edge), or -1 outside the mesh.
"""
from __future__ import annotations

import numpy as np

TEXELS_PER_CELL = 4.0   # texels a cell of the median area
MAX_SIDE = 8192         # texels a side at most
MAX_TEXELS = 1 << 24    # texels at most (64 MB of float32)
BOX = 4                 # a triangle whose texel box is at most BOX a side is done in passes
CHUNK = 1 << 20         # triangles at a time (bounds the temporary arrays)


class Raster:
    """The cell of each texel (`cells`, float32 (rows, columns), -1 outside the mesh); texel
    (i, j) spans x in [lo_x + i h, lo_x + (i + 1) h) and y likewise along the rows."""

    def __init__(self, cells: np.ndarray, lo, spacing: float):
        self.cells = cells
        self.lo = (float(lo[0]), float(lo[1]))
        self.spacing = float(spacing)

    @property
    def shape(self) -> tuple[int, int]:
        return self.cells.shape

    def box(self) -> tuple[float, float, float, float]:
        """(x0, y0, 1/width, 1/height) in the plane's units: texture coordinates of a point
        are ((x, y) - (x0, y0)) * (1/width, 1/height)."""
        rows, cols = self.shape
        return (self.lo[0], self.lo[1], 1.0 / (cols * self.spacing),
                1.0 / (rows * self.spacing))


def spacing_for(xy: np.ndarray, cells: np.ndarray) -> tuple[float, np.ndarray, tuple[int, int]]:
    """(texel side, lowest corner, (rows, columns)) of the raster of a mesh: TEXELS_PER_CELL
    texels a median cell, within MAX_SIDE and MAX_TEXELS."""
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    span = np.maximum(hi - lo, 1e-300)
    (ax, ay), (bx, by), (cx, cy) = ((xy[cells[:, k], 0], xy[cells[:, k], 1]) for k in range(3))
    area = 0.5 * np.abs((bx - ax) * (cy - ay) - (by - ay) * (cx - ax))
    area = area[area > 0]
    h = float(np.sqrt(np.median(area) / TEXELS_PER_CELL)) if len(area) else float(span.max())
    h = max(h, float(span.max()) / MAX_SIDE, float(np.sqrt(span[0] * span[1] / MAX_TEXELS)))
    shape = (max(1, int(np.ceil(span[1] / h))), max(1, int(np.ceil(span[0] / h))))
    return h, lo, shape


def cell_raster(xy: np.ndarray, cells: np.ndarray) -> Raster:
    """The raster of the cells (M, 3) of a planar mesh with vertices `xy` (N, 2)."""
    xy = np.asarray(xy, np.float64)[:, :2]
    cells = np.asarray(cells, np.int64)
    h, lo, shape = spacing_for(xy, cells)
    out = np.full(shape, -1.0, np.float32)
    for a in range(0, len(cells), CHUNK):
        _fill(out, xy, cells[a:a + CHUNK], a, h, lo)
    return Raster(out, lo, h)


def _fill(out, xy, cells, first: int, h: float, lo) -> None:
    rows, cols = out.shape
    # corners in texel-centre units (texel centre (i, j) is the point (i, j)), a column each
    px = [(xy[cells[:, k], 0] - lo[0]) / h - 0.5 for k in range(3)]
    py = [(xy[cells[:, k], 1] - lo[1]) / h - 0.5 for k in range(3)]
    lo_x, hi_x = np.minimum(np.minimum(*px[:2]), px[2]), np.maximum(np.maximum(*px[:2]), px[2])
    lo_y, hi_y = np.minimum(np.minimum(*py[:2]), py[2]), np.maximum(np.maximum(*py[:2]), py[2])
    i0 = np.maximum(np.ceil(lo_x), 0).astype(np.int64)
    j0 = np.maximum(np.ceil(lo_y), 0).astype(np.int64)
    ni = np.minimum(np.floor(hi_x), cols - 1).astype(np.int64) - i0 + 1
    nj = np.minimum(np.floor(hi_y), rows - 1).astype(np.int64) - j0 + 1
    x = [c - i0 for c in px]  # relative to the triangle's first texel centre
    y = [c - j0 for c in py]
    area2 = (x[1] - x[0]) * (y[2] - y[0]) - (y[1] - y[0]) * (x[2] - x[0])
    sign = np.sign(area2)  # counter-clockwise: the inside is left of every edge
    ok = (sign != 0) & (ni > 0) & (nj > 0)
    # edge k from corner k to k + 1: e_k(u, v) = A u + B v + C >= 0 inside
    edges = []
    for k in range(3):
        ax, ay, bx, by = x[k], y[k], x[(k + 1) % 3], y[(k + 1) % 3]
        A, B = (ay - by) * sign, (bx - ax) * sign
        edges.append((A, B, -(A * ax + B * ay)))
    ids = (first + np.arange(len(cells))).astype(np.float32)
    small = ok & (ni <= BOX) & (nj <= BOX)
    s = np.flatnonzero(small)
    if len(s):
        e32 = [tuple(np.ascontiguousarray(v[s], np.float32) for v in e) for e in edges]
        si, sj, sni, snj, sid = i0[s], j0[s], ni[s], nj[s], ids[s]
        for dj in range(int(snj.max())):
            rows_e = [C + B * dj for A, B, C in e32]
            for di in range(int(sni.max())):
                hit = (di < sni) & (dj < snj)
                for (A, _, _), base in zip(e32, rows_e):
                    hit &= base + A * di >= 0
                out[sj[hit] + dj, si[hit] + di] = sid[hit]
    big = np.flatnonzero(ok & ~small)
    if len(big):  # large triangles (a graded mesh's): every texel of their boxes, listed
        cnt = ni[big] * nj[big]
        tri = np.repeat(big, cnt)
        k = np.arange(len(tri)) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        du, dv = k % ni[tri], k // ni[tri]
        hit = np.ones(len(tri), bool)
        for A, B, C in edges:
            hit &= A[tri] * du + B[tri] * dv + C[tri] >= 0
        out[j0[tri][hit] + dv[hit], i0[tri][hit] + du[hit]] = ids[tri][hit]
