"""A triangle mesh finer than the pixels it covers is drawn from a coarser one (app/views/
meshvisual.py, "Level of detail"): vertex clustering leaves vertices of the mesh standing for
bins about a pixel wide, so the picture is the full mesh's to about a pixel while the GPU
rasterises several times fewer triangles; zoomed in, every vertex is drawn again. Drawn
offscreen (EGL: Mesa llvmpipe on CPU CI)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

vispy = pytest.importorskip("vispy")

from pdestudio.app.views import ColorScale, cellraster, make_view, meshvisual  # noqa: E402
from pdestudio.app.views.meshvisual import cluster_cells  # noqa: E402

from .test_views import canvas, draw, info_of  # noqa: E402,F401


def plane(n, jitter=0.0, seed=0):
    """An n × n vertex triangulation of the unit square (points (N, 3), cells (M, 3)), the
    interior vertices moved by up to `jitter` of a spacing."""
    x = np.linspace(0.0, 1.0, n)
    X, Y = np.meshgrid(x, x, indexing="ij")
    pts = np.column_stack([X.ravel(), Y.ravel(), np.zeros(n * n)])
    if jitter:
        rng = np.random.default_rng(seed)
        inner = (X.ravel() > 0) & (X.ravel() < 1) & (Y.ravel() > 0) & (Y.ravel() < 1)
        pts[inner, :2] += rng.uniform(-jitter, jitter, (inner.sum(), 2)) / (n - 1)
    i, j = np.meshgrid(np.arange(n - 1), np.arange(n - 1), indexing="ij")
    a = (i * n + j).ravel()
    cells = np.concatenate([np.column_stack([a, a + n, a + n + 1]),
                            np.column_stack([a, a + n + 1, a + 1])])
    return pts, cells


def area(pts, cells):
    p = pts[cells]
    return 0.5 * np.abs(np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])[:, 2]).sum()


def test_clusters_keep_vertices_of_the_mesh_and_cover_it_once():
    pts, cells = plane(201, jitter=0.3)
    spacing = 4.0 / 200                                 # four spacings a bin
    coarse, cid = cluster_cells(pts, cells, spacing)
    assert 0.04 * len(cells) < len(coarse) < 0.1 * len(cells)   # about 16x fewer
    # corners are vertices of the mesh, three different ones, no triangle twice
    assert coarse.min() >= 0 and coarse.max() < len(pts)
    assert np.all(np.diff(np.sort(coarse, axis=1), axis=1) > 0)
    assert len(np.unique(np.sort(coarse, axis=1), axis=0)) == len(coarse)
    # the cell a coarse triangle stands for has its corners in the triangle's three bins
    b = np.floor((pts - pts.min(axis=0)) / spacing).astype(int)
    key = lambda v: set(map(tuple, b[v]))  # noqa: E731
    for k in range(0, len(coarse), 97):
        assert key(cells[cid[k]]) == key(coarse[k])
    # the coarse triangles cover the square about once (vertex clustering folds a few)
    assert abs(area(pts, coarse) - 1.0) < 0.05


def bumps_at(p):
    rng = np.random.default_rng(5)
    u = np.zeros(len(p))
    for cx, cy, w, a in zip(*rng.uniform([0.1, 0.1, 0.05, -1], [0.9, 0.9, 0.15, 1], (10, 4)).T):
        u += a * np.exp(-((p[:, 0] - cx) ** 2 + (p[:, 1] - cy) ** 2) / w ** 2)
    return u.astype(np.float32)


def picture(canvas, n, density, zoom, monkeypatch, location="node", scramble=False):
    """(pixels below the title, the level's triangles, the mesh's) of a planar mesh coloured
    by smooth bumps, the camera `zoom` times nearer than fitted. `scramble`: the coarse
    triangles take the colours of other cells (the test's own check that it can fail)."""
    monkeypatch.setattr(meshvisual, "DENSITY", density)
    pts, cells = plane(n, jitter=0.3)
    at = pts if location == "node" else pts[cells].mean(axis=1)
    fields = {"u": bumps_at(at)}
    mesh = SimpleNamespace(kind="triangles", points=pts, cells=cells)
    view = make_view(canvas, info_of(mesh, fields, location=location))
    try:
        if scramble:
            real = meshvisual.cluster_cells

            def wrong(points, cells_, spacing):
                c, cid = real(points, cells_, spacing)
                return c, np.random.default_rng(0).permutation(len(cells_))[:len(cid)]
            monkeypatch.setattr(meshvisual, "cluster_cells", wrong)
        draw(canvas, view, fields, "u", ColorScale())
        view.autofit.fitted = None  # the user's camera from here on
        view.vb.camera.distance /= zoom
        img = draw(canvas, view, fields, "u", ColorScale())
        level = view.nodes[0].level
        return img[40:], level.triangles, len(cells)
    finally:
        view.remove()


@pytest.mark.parametrize("location", ["node", "cell"])
def test_far_mesh_draws_fewer_triangles_and_the_same_picture(canvas, monkeypatch, location):
    full, full_tris, m = picture(canvas, 401, 0.0, 0.25, monkeypatch, location)
    lod, lod_tris, _ = picture(canvas, 401, 1.0, 0.25, monkeypatch, location)
    assert full_tris == m
    assert lod_tris <= m / 4, (lod_tris, m)
    drawn = np.abs(full - full[0, 0]).max(axis=2) > 24             # the picture is not empty
    assert drawn.mean() > 0.05
    differ = np.abs(full - lod).max(axis=2) > 24
    assert differ.mean() < 0.01, f"{differ.mean():.4f} of the pixels differ"


def test_colours_of_other_cells_are_caught(canvas, monkeypatch):
    monkeypatch.setattr(meshvisual, "RASTER", False)  # (the raster's own test: below)
    full, _, _ = picture(canvas, 401, 0.0, 0.5, monkeypatch, "cell")
    wrong, _, _ = picture(canvas, 401, 1.0, 0.5, monkeypatch, "cell", scramble=True)
    differ = np.abs(full - wrong).max(axis=2) > 24
    assert differ.mean() > 0.02


def test_zooming_in_brings_every_vertex_back(canvas, monkeypatch):
    _, far, m = picture(canvas, 401, 1.0, 0.5, monkeypatch)
    _, near, _ = picture(canvas, 401, 1.0, 8.0, monkeypatch)
    assert far < m and near == m


def test_the_title_says_when_fewer_vertices_are_drawn(canvas, monkeypatch):
    monkeypatch.setattr(meshvisual, "DENSITY", 1.0)
    pts, cells = plane(401)
    fields = {"u": bumps_at(pts)}
    view = make_view(canvas, info_of(SimpleNamespace(kind="triangles", points=pts,
                                                     cells=cells), fields))
    try:
        draw(canvas, view, fields, "u", ColorScale())
        view.autofit.fitted = None
        view.vb.camera.distance *= 4
        for _ in range(2):  # (the title of a frame tells the level its last draw chose)
            draw(canvas, view, fields, "u", ColorScale())
        assert "of 160,801 vertices]" in view.title.text, view.title.text
        drawn = int(view.title.text.split("drawn from ")[1].split(" of")[0].replace(",", ""))
        assert drawn == view.nodes[0].level.vertices < 160801 / 4
    finally:
        view.remove()


def cell_mesh_view(canvas, n, heights):
    """(view, fields) of an n² planar mesh coloured by a cell field (bumps at the centroids),
    seen as two height surfaces of cell fields (heights) or flat from above."""
    pts, cells = plane(n, jitter=0.3)
    at = pts[cells].mean(axis=1)
    fields = {"u": bumps_at(at)}
    surfaces = ()
    if heights:
        fields["h"] = (0.3 * bumps_at(at[:, ::-1])).astype(np.float32)
        surfaces = ("u", "h")
    mesh = SimpleNamespace(kind="triangles", points=pts, cells=cells)
    view = make_view(canvas, info_of(mesh, fields, surfaces=surfaces, location="cell"))
    return view, fields


def cell_picture(canvas, monkeypatch, by_primitive: bool, heights: bool, density=0.0,
                 scramble=False):
    """(pixels below the title, the coloured surface's geometry) of a 161² planar mesh
    coloured by a cell field (bumps at the centroids), seen as two height surfaces of cell
    fields (heights) or flat from above, with cell colours by primitive number or by corners.
    `scramble`: the primitive table points at other cells (the test's own check)."""
    monkeypatch.setattr(meshvisual, "DENSITY", density)
    monkeypatch.setattr(meshvisual, "PRIMITIVE_IDS", by_primitive)
    if scramble:
        real = meshvisual.locality_order
        monkeypatch.setattr(meshvisual, "locality_order",
                            lambda p, c: np.random.default_rng(1).permutation(real(p, c)))
        real_level = meshvisual.MeshGeometry._level

        def wrong(self, cells, cell_ids, shared):
            return real_level(self, cells, np.roll(np.asarray(cell_ids), 37), shared)
        monkeypatch.setattr(meshvisual.MeshGeometry, "_level", wrong)
    view, fields = cell_mesh_view(canvas, 161, heights)
    try:
        for _ in range(2):
            img = draw(canvas, view, fields, "u", ColorScale())
        return img[40:], view.coloured_node.geom
    finally:
        view.remove()


@pytest.mark.parametrize("heights", [False, True])
@pytest.mark.parametrize("density", [0.0, 1.0])
def test_cell_colours_by_primitive_are_the_corner_pictures(canvas, monkeypatch, heights,
                                                           density):
    """Cells coloured through gl_PrimitiveID (indexed triangles, each vertex shaded once)
    draw the picture of the corner layout (three corners a cell), flat and as height
    surfaces whose heights are cell fields, at every vertex and a vertex a pixel."""
    corners, g0 = cell_picture(canvas, monkeypatch, False, heights, density)
    prim, g1 = cell_picture(canvas, monkeypatch, True, heights, density)
    assert g0.corners and g0.full.index is None
    if not g1.by_primitive:
        pytest.skip("this OpenGL offers no GL_EXT_gpu_shader4: cells stay corners")
    assert g1.full.index is not None and not g1.corners
    drawn = np.abs(corners - corners[0, 0]).max(axis=2) > 24
    assert drawn.mean() > 0.05
    differ = np.abs(corners - prim).max(axis=2) > 24
    assert differ.mean() < 0.002, f"{differ.mean():.4f} of the pixels differ"


def test_cells_of_other_primitives_are_caught(canvas, monkeypatch):
    corners, _ = cell_picture(canvas, monkeypatch, False, False)
    wrong, g = cell_picture(canvas, monkeypatch, True, False, scramble=True)
    if not g.by_primitive:
        pytest.skip("this OpenGL offers no GL_EXT_gpu_shader4")
    differ = np.abs(corners - wrong).max(axis=2) > 24
    assert differ.mean() > 0.02


def numbered_picture(canvas, monkeypatch, seed, location, wrong_rank=False):
    """The picture of a 161² planar mesh coloured by bumps, its vertices and cells numbered
    at random by `seed` (None: in order); `wrong_rank`: the index buffer ignores where the
    vertex buffers put each vertex (the test's own check)."""
    monkeypatch.setattr(meshvisual, "DENSITY", 0.0)
    pts, cells = plane(161, jitter=0.3)
    if seed is not None:
        rng = np.random.default_rng(seed)
        pv, pc = rng.permutation(len(pts)), rng.permutation(len(cells))
        inv = np.empty(len(pts), np.int64)
        inv[pv] = np.arange(len(pts))
        pts, cells = pts[pv], inv[cells[pc]]
    if wrong_rank:  # the buffers in Morton order, the index as if they were in file order
        monkeypatch.setattr(meshvisual.MeshGeometry, "vrank", property(
            lambda self: np.arange(len(self.points)), lambda self, v: None), raising=False)
    at = pts if location == "node" else pts[cells].mean(axis=1)
    fields = {"u": bumps_at(at), "h": (0.3 * bumps_at(at[:, ::-1])).astype(np.float32)}
    mesh = SimpleNamespace(kind="triangles", points=pts, cells=cells)
    view = make_view(canvas, info_of(mesh, fields, surfaces=("u", "h"), location=location))
    try:
        for _ in range(2):
            img = draw(canvas, view, fields, "u", ColorScale())
        return img[40:]
    finally:
        view.remove()


@pytest.mark.parametrize("location", ["node", "cell"])
def test_a_mesh_numbered_at_random_draws_the_same_picture(canvas, monkeypatch, location):
    """The vertex buffers hold the vertices along a Morton curve (the GPU then fetches a
    triangle's corners from nearby memory) and the index buffer follows them: a mesh whose
    vertices and cells are numbered at random draws the picture of the same mesh in order."""
    ordered = numbered_picture(canvas, monkeypatch, None, location)
    drawn = np.abs(ordered - ordered[0, 0]).max(axis=2) > 24
    assert drawn.mean() > 0.05
    for seed in (1, 2):
        other = numbered_picture(canvas, monkeypatch, seed, location)
        differ = np.abs(ordered - other).max(axis=2) > 24
        assert differ.mean() < 0.002, f"{differ.mean():.4f} of the pixels differ"


def test_an_index_buffer_not_following_the_vertex_order_is_caught(canvas, monkeypatch):
    ordered = numbered_picture(canvas, monkeypatch, None, "node")
    wrong = numbered_picture(canvas, monkeypatch, 1, "node", wrong_rank=True)
    differ = np.abs(ordered - wrong).max(axis=2) > 24
    assert differ.mean() > 0.05


# ---- colours from the raster of the plane (cellraster.py) ---------------------------------------
def inside(pts, cells, cell, xy, tol=1e-9):
    """Whether each point `xy` lies in (or on) its triangle `cell`."""
    t = pts[cells[cell], :2]
    e = [(t[:, b, 0] - t[:, a, 0]) * (xy[:, 1] - t[:, a, 1])
         - (t[:, b, 1] - t[:, a, 1]) * (xy[:, 0] - t[:, a, 0]) for a, b in ((0, 1), (1, 2), (2, 0))]
    e = np.stack(e, axis=1)
    return (e >= -tol).all(axis=1) | (e <= tol).all(axis=1)


def test_each_texel_of_the_raster_holds_the_cell_under_its_centre():
    pts, cells = plane(121, jitter=0.3)
    # a hole (the cells of a square removed) and a few large cells (a graded mesh's) on top
    c = pts[cells].mean(axis=1)
    keep = ~((np.abs(c[:, 0] - 0.3) < 0.1) & (np.abs(c[:, 1] - 0.6) < 0.1))
    cells = cells[keep]
    big_pts = np.array([[1.2, 0.0, 0.0], [1.8, 0.1, 0.0], [1.5, 0.9, 0.0]])
    cells = np.concatenate([cells, [[len(pts), len(pts) + 1, len(pts) + 2]]])
    pts = np.concatenate([pts, big_pts])
    r = cellraster.cell_raster(pts[:, :2], cells)
    rows, cols = r.shape
    assert 4 * 0.8 * len(cells) < rows * cols   # about four texels a cell and the margins
    j, i = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    xy = np.column_stack([r.lo[0] + (i.ravel() + 0.5) * r.spacing,
                          r.lo[1] + (j.ravel() + 0.5) * r.spacing])
    cell = r.cells.ravel().astype(np.int64)
    hit = cell >= 0
    assert inside(pts, cells, cell[hit], xy[hit]).all()
    # texels of no cell: in the hole, between the two parts, or beyond the edges, none inside
    # a cell (any cell's centre test: the mesh has few enough for all pairs near them)
    miss = xy[~hit]
    in_hole = (np.abs(miss[:, 0] - 0.3) < 0.09) & (np.abs(miss[:, 1] - 0.6) < 0.09)
    assert in_hole.sum() > 0.8 * (0.18 / r.spacing) ** 2
    assert not inside(pts, cells, np.full(len(miss), len(cells) - 1), miss).any()
    # every cell of the regular part holds a texel; the large one many
    counts = np.bincount(cell[hit], minlength=len(cells))
    assert (counts[:-1] > 0).mean() > 0.99 and counts[-1] > 0.27 / r.spacing ** 2 * 0.9


def raster_picture(canvas, monkeypatch, density, heights, zoom=0.5, scramble=False):
    """(pixels below the title, the coloured node) of a 201² planar mesh coloured by a cell
    field, far away (`zoom`), drawn with DENSITY `density`; `scramble`: the raster's cells
    are others (the test's own check)."""
    monkeypatch.setattr(meshvisual, "DENSITY", density)
    if scramble:
        real = cellraster.cell_raster

        def wrong(xy, cells):
            r = real(xy, cells)
            perm = np.random.default_rng(3).permutation(len(cells)).astype(np.float32)
            r.cells = np.where(r.cells >= 0, perm[r.cells.astype(np.int64)], -1.0)
            return r
        monkeypatch.setattr(meshvisual, "cell_raster", wrong)
    view, fields = cell_mesh_view(canvas, 201, heights)
    try:
        draw(canvas, view, fields, "u", ColorScale())
        view.autofit.fitted = None
        view.vb.camera.distance /= zoom
        for _ in range(2):
            img = draw(canvas, view, fields, "u", ColorScale())
        return img[40:], view.coloured_node, view.title.text
    finally:
        view.remove()


@pytest.mark.parametrize("heights", [False, True])
def test_a_coarse_level_takes_its_colours_from_every_cell(canvas, monkeypatch, heights):
    """A planar cell-coloured mesh seen from afar: drawn from a coarse level at SHAPE times
    a vertex a pixel (here 41 % of the triangles; coloured flat, its level of a vertex a pixel
    would keep more than WORTH of them, so the whole mesh was drawn), its colours from the
    raster, the picture is the full mesh's to a few pixels."""
    full, n0, _ = raster_picture(canvas, monkeypatch, 0.0, heights)
    lod, n1, title = raster_picture(canvas, monkeypatch, 1.0, heights)
    monkeypatch.setattr(meshvisual, "RASTER", False)
    _, n2, _ = raster_picture(canvas, monkeypatch, 1.0, heights)
    assert n0.level is n0.geom.full and n1.rastered and not n2.rastered
    assert n1.level.triangles <= 0.5 * n2.level.triangles, \
        (n1.level.triangles, n2.level.triangles)
    assert "[shape from " in title
    drawn = np.abs(full - full[0, 0]).max(axis=2) > 24
    assert drawn.mean() > 0.03
    differ = np.abs(full - lod).max(axis=2) > 24
    assert differ.mean() < 0.002, f"{differ.mean():.4f} of the pixels differ"


def test_a_raster_of_other_cells_is_caught(canvas, monkeypatch):
    full, _, _ = raster_picture(canvas, monkeypatch, 0.0, False)
    wrong, node, _ = raster_picture(canvas, monkeypatch, 1.0, False, scramble=True)
    assert node.rastered and node.level is not node.geom.full
    differ = np.abs(full - wrong).max(axis=2) > 24
    assert differ.mean() > 0.02


def test_the_raster_is_made_on_a_worker_thread(canvas, monkeypatch):
    """The first frames of a large mesh do not wait for its raster: until the worker thread
    made it, the cell-coloured surface is drawn as without one (flat-coloured levels of a
    vertex a pixel); the next frame after it is there takes the coarser level and the colours
    of every cell."""
    import threading
    monkeypatch.setattr(meshvisual, "RASTER_WAIT", False)
    release = threading.Event()
    real = cellraster.cell_raster

    def slow(xy, cells):
        assert threading.current_thread() is not threading.main_thread()
        release.wait(30)
        return real(xy, cells)
    monkeypatch.setattr(meshvisual, "cell_raster", slow)
    monkeypatch.setattr(meshvisual, "DENSITY", 1.0)
    view, fields = cell_mesh_view(canvas, 201, False)
    try:
        draw(canvas, view, fields, "u", ColorScale())
        view.autofit.fitted = None
        view.vb.camera.distance /= 0.5
        before = draw(canvas, view, fields, "u", ColorScale())[40:]
        node = view.coloured_node
        assert node.geom.raster_job is not None and not node.geom.raster_job.done()
        assert node.level is node.geom.full and "[shape" not in view.title.text
        release.set()
        node.geom.raster_job.result(timeout=60)
        after = None
        for _ in range(2):  # (the title tells the level its last draw chose)
            after = draw(canvas, view, fields, "u", ColorScale())[40:]
        assert node.rastered and node.level is not node.geom.full
        assert "[shape from " in view.title.text
        differ = np.abs(before - after).max(axis=2) > 24
        assert differ.mean() < 0.002, f"{differ.mean():.4f} of the pixels differ"
    finally:
        release.set()
        view.remove()


def test_a_mesh_no_coarser_level_would_use_makes_no_raster(canvas, monkeypatch):
    """The raster is made only where a coarser level would take its colours from it: a mesh
    coarser than the pixels is drawn whole and starts none (a second of a worker's time and a
    texture for a million cells)."""
    monkeypatch.setattr(meshvisual, "DENSITY", 1.0)
    made = []
    real = meshvisual.cell_raster
    monkeypatch.setattr(meshvisual, "cell_raster", lambda xy, c: made.append(1) or real(xy, c))
    view, fields = cell_mesh_view(canvas, 21, False)
    try:
        for _ in range(2):
            draw(canvas, view, fields, "u", ColorScale())
        node = view.coloured_node
        assert node.rastered and node.level is node.geom.full
        assert node.geom.raster_job is None and not made
    finally:
        view.remove()
