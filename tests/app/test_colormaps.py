"""Every entry of the colour-map list draws in every view kind (issue 27: 'fire' and 'hot' raised
in VisPy 0.17 and froze the window): the colour bar shows the map's lookup table, and the field's
pixels are that table's colours (times the lighting's shade on lit surfaces). A name outside
the list is refused with the allowed ones named, and the scale keeps its map."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("vispy")

from pdestudio.app.views import COLORMAPS, ColorScale, make_view  # noqa: E402
from pdestudio.app.views.colors import lut  # noqa: E402
from pdestudio.solvers import ParameterError  # noqa: E402

from .test_views import canvas, draw, grid2d, info_of, to_pixel  # noqa: E402,F401

N = 48


def ramp2d():
    return np.tile(((np.arange(N) + 0.5) / N).astype(np.float32), (N, 1))


def views(canvas):
    """(kind, view, fields, field, node, domain corners in node coordinates, shaded)."""
    x = np.linspace(0.0, 1.0, N)
    line = SimpleNamespace(kind="grid1d", x=x)
    u1 = ((np.arange(N) + 0.5) / N).astype(np.float32)
    yield ("line", make_view(canvas, info_of(line, {"u": u1}), "line"), {"u": u1},
           lambda v: (v.st.scene, [(0, 0), (1, 1)]), False)
    g = grid2d(N)
    for mode, shaded in (("image", False), ("surface", True)):
        yield (mode, make_view(canvas, info_of(g, {"u": ramp2d()}), mode), {"u": ramp2d()},
               lambda v: (v.vb.scene, [(0, 0), (1, 1)]), shaded)
    X, Y = np.meshgrid(x, x, indexing="ij")
    pts = np.column_stack([X.ravel(), Y.ravel(), np.zeros(N * N)])
    i, j = np.meshgrid(np.arange(N - 1), np.arange(N - 1), indexing="ij")
    a = (i * N + j).ravel()
    cells = np.concatenate([np.column_stack([a, a + N, a + N + 1]),
                            np.column_stack([a, a + N + 1, a + 1])])
    mesh = SimpleNamespace(kind="triangles", points=pts, cells=cells)
    u = X.ravel().astype(np.float32)
    yield ("mesh", make_view(canvas, info_of(mesh, {"u": u})), {"u": u},
           lambda v: (v.vb.scene, [(0, 0), (1, 1)]), True)


def centre(canvas, node, corners):
    """The middle 40 % (each way) of the domain's picture: field pixels only, no axes."""
    cols, rows = zip(*[to_pixel(canvas, node, [x, y, 0, 1]) for x in (0, 1) for y in (0, 1)])
    c0, c1, r0, r1 = min(cols), max(cols), min(rows), max(rows)
    return (slice(int(r0 + 0.3 * (r1 - r0)), int(r1 - 0.3 * (r1 - r0))),
            slice(int(c0 + 0.3 * (c1 - c0)), int(c1 - 0.3 * (c1 - c0))))


def misfit(pixels, table, shaded):
    """Per pixel, the distance (0..255) to the nearest table colour, scaled by the lighting's
    shade (0.42..1, visuals.LIGHT) on lit views."""
    p = pixels.reshape(-1, 3).astype(float)
    t = table[:, :3].astype(float) * 255
    if shaded:
        s = np.clip((p @ t.T) / np.maximum((t * t).sum(1), 1e-9), 0.42, 1.0)  # (P, 256)
        d = np.linalg.norm(p[:, None, :] - s[:, :, None] * t[None], axis=2)
    else:
        d = np.linalg.norm(p[:, None, :] - t[None], axis=2)
    return d.min(axis=1)


def test_every_colour_map_draws_in_every_view_kind(canvas):
    seen = 0
    for kind, view, fields, where, shaded in views(canvas):
        try:
            pictures = {}
            for cmap in COLORMAPS:
                img = draw(canvas, view, fields, "u", ColorScale(cmap, "fixed", 0.0, 1.0))
                table = lut(cmap)
                assert table.shape == (256, 4) and np.isfinite(table).all()
                # the colour bar: its pixels are the table's colours, bottom to top
                bar = view.colorbar.image
                for k in range(8, 256, 16):
                    c, r = to_pixel(canvas, bar, [0.5, k + 0.5, 0, 1])
                    got = img[int(r), int(c)]
                    assert np.abs(got - np.round(table[k, :3] * 255)).max() <= 2, \
                        (kind, cmap, k, got, table[k])
                # the field: the table's colours, and as many as the ramp spans
                node, corners = where(view)
                box = img[centre(canvas, node, corners)]
                assert box.size > 300, (kind, box.shape)
                off = misfit(box[::2, ::2], table, shaded)
                assert np.percentile(off, 95) <= 8, (kind, cmap, np.percentile(off, 95))
                assert len(np.unique(box.reshape(-1, 3), axis=0)) >= 8, (kind, cmap)
                pictures[cmap] = box
                seen += 1
            first = pictures["viridis"]
            for cmap, box in pictures.items():  # each map gives its own picture
                assert cmap == "viridis" or np.abs(box - first).max() > 40, (kind, cmap)
        finally:
            view.remove()
    assert seen == 4 * len(COLORMAPS)


def test_a_view_still_draws_after_an_unknown_map_was_refused(canvas):
    g = grid2d(N)
    view = make_view(canvas, info_of(g, {"u": ramp2d()}), "image")
    try:
        scale = ColorScale("hot", "fixed", 0.0, 1.0)
        with pytest.raises(ParameterError, match="colour map 'magma' is unknown; allowed: "
                                                 + ", ".join(COLORMAPS)):
            scale.cmap = "magma"
        assert scale.cmap == "hot"
        img = draw(canvas, view, {"u": ramp2d()}, "u", scale)
        box = img[centre(canvas, view.vb.scene, None)]
        assert np.percentile(misfit(box[::2, ::2], lut("hot"), False), 95) <= 8
    finally:
        view.remove()


@pytest.mark.parametrize("bad", ["magma", "Viridis", "", None])
def test_unknown_names_are_refused_with_the_allowed_ones(bad):
    with pytest.raises(ParameterError) as e:
        ColorScale(bad)
    assert repr(bad) in str(e.value) and all(c in str(e.value) for c in COLORMAPS)
    with pytest.raises(ParameterError, match="allowed: auto, fixed, symmetric"):
        ColorScale("viridis", "log")
    with pytest.raises(ParameterError):
        lut(bad)
