"""The grid surface's geometry follows its size on the screen (app/views/surface.py, DENSITY):
about a vertex a pixel along its longer edge, a power of two of texels apart, every value again
when zoomed in; the picture (colours and shading per pixel from every value) is the one the
full geometry draws. Drawn offscreen (EGL: Mesa llvmpipe on CPU CI), with the renderer taken
for a GPU, as on the device machine."""
from __future__ import annotations

import numpy as np
import pytest

vispy = pytest.importorskip("vispy")

from pdestudio.app.views import ColorScale, make_view, surface  # noqa: E402
from pdestudio.app.views.visuals import screen_step  # noqa: E402

from .test_views import canvas, draw, grid2d, info_of  # noqa: E402,F401


def square(edge):
    return [(0, 0), (edge, 0), (edge, edge), (0, edge)]


def test_screen_step_is_a_power_of_two_leaving_a_vertex_a_pixel():
    assert screen_step(square(300), 1024, 1.0, 1) == 2      # 1023 / 300 = 3.4 -> 2
    assert screen_step(square(300), 4096, 1.0, 1) == 8      # 13.6 -> 8
    assert screen_step(square(300), 257, 1.0, 1) == 1       # fewer values than pixels
    assert screen_step(square(5000), 4096, 1.0, 1) == 1     # zoomed in: every value
    assert screen_step(square(300), 16384, 1.0, 4) == 32    # 54.6 -> 32
    assert screen_step(square(3000), 16384, 1.0, 4) == 4    # never below the cap's step
    assert screen_step(square(300), 4096, 2.0, 1) == 4      # two vertices a pixel
    assert screen_step(square(300), 4096, 0.0, 2) == 2      # density 0: the cap alone
    # the longest edge counts (a surface seen at a slant)
    assert screen_step([(0, 0), (600, 0), (600, 40), (0, 40)], 4096, 1.0, 1) == 4
    # corners unknown: the fallback (the canvas), else the cap alone
    assert screen_step(None, 4096, 1.0, 1, fallback_px=832) == 4
    assert screen_step(None, 4096, 1.0, 1) == 1


@pytest.fixture
def gpu_like(monkeypatch):
    """The surface view as on a GPU (llvmpipe would get the fixed software geometry)."""
    monkeypatch.setattr(surface, "software_renderer", lambda canvas: False)


def bumps(n):
    x = np.linspace(0.0, 1.0, n)
    X, Y = np.meshgrid(x, x)
    rng = np.random.default_rng(3)
    u = np.zeros((n, n))
    for cx, cy, w, a in zip(*rng.uniform([0.1, 0.1, 0.04, -1], [0.9, 0.9, 0.15, 1], (12, 4)).T):
        u += a * np.exp(-((X - cx) ** 2 + (Y - cy) ** 2) / w ** 2)
    return {"u": u.astype(np.float32)}


def picture(canvas, n, density, zoom, monkeypatch):
    """(pixels below the title, vertices a side) of the surface of `bumps(n)`, the camera
    `zoom` times nearer than fitted."""
    monkeypatch.setattr(surface, "DENSITY", density)
    fields = bumps(n)
    view = make_view(canvas, info_of(grid2d(n), fields), "surface")
    try:
        draw(canvas, view, fields, "u", ColorScale())
        view.autofit.fitted = None  # the user's camera from here on
        view.vb.camera.distance /= zoom
        img = draw(canvas, view, fields, "u", ColorScale())
        return img[40:], view.nodes[0].tiles.side
    finally:
        view.remove()


def test_far_surface_draws_fewer_vertices_and_the_same_picture(canvas, gpu_like, monkeypatch):
    n = 512
    full, full_side = picture(canvas, n, 0.0, 0.25, monkeypatch)   # seen from 4x farther
    lod, lod_side = picture(canvas, n, 1.0, 0.25, monkeypatch)
    assert full_side == n
    assert lod_side <= n // 4 + 1                                   # 16x fewer triangles
    differ = np.abs(full - lod).max(axis=2) > 24
    assert differ.mean() < 0.002, f"{differ.mean():.4f} of the pixels differ"
    drawn = np.abs(full - full[0, 0]).max(axis=2) > 24             # the picture is not empty
    assert drawn.mean() > 0.01


def test_zooming_in_brings_every_value_back_as_a_vertex(canvas, gpu_like, monkeypatch):
    _, far = picture(canvas, 512, 1.0, 0.25, monkeypatch)
    _, near = picture(canvas, 512, 1.0, 4.0, monkeypatch)
    assert far < 512 and near == 512
