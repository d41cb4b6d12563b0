"""On the GPU machine (EGL on the NVIDIA driver, see docs/BENCHMARKS.md for the command): the
CUDA–OpenGL interop path draws every view kind pixel for pixel like the pinned-copy path, with no
host copy of field data per frame (the transfer counters), and the device frames behave as
snapshots."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")
pytest.importorskip("vispy")

from pdestudio.app.transfer import COUNTS, DeviceCopier, PinnedCopier  # noqa: E402
from pdestudio.app.views import ColorScale, interop, make_view  # noqa: E402

from .test_views import canvas, grid2d, info_of  # noqa: E402,F401  (the EGL canvas fixture)


def sphere(m):
    th = np.linspace(0.1, np.pi - 0.1, m)
    ph = np.linspace(0, 2 * np.pi, 2 * m, endpoint=False)
    T, P = np.meshgrid(th, ph, indexing="ij")
    pts = np.column_stack([(np.sin(T) * np.cos(P)).ravel(), (np.sin(T) * np.sin(P)).ravel(),
                           np.cos(T).ravel()])
    i, j = np.meshgrid(np.arange(m - 1), np.arange(2 * m), indexing="ij")
    a, b = (i * 2 * m + j).ravel(), (i * 2 * m + (j + 1) % (2 * m)).ravel()
    cells = np.concatenate([np.column_stack([a, b, b + 2 * m]),
                            np.column_stack([a, b + 2 * m, a + 2 * m])])
    return SimpleNamespace(kind="triangles", points=pts, cells=cells)


def plane(m):
    x = np.linspace(0, 1, m)
    X, Y = np.meshgrid(x, x, indexing="ij")
    pts = np.column_stack([X.ravel(), Y.ravel(), np.zeros(m * m)])
    i, j = np.meshgrid(np.arange(m - 1), np.arange(m - 1), indexing="ij")
    a = (i * m + j).ravel()
    cells = np.concatenate([np.column_stack([a, a + m, a + m + 1]),
                            np.column_stack([a, a + m + 1, a + 1])])
    return SimpleNamespace(kind="triangles", points=pts, cells=cells)


def case(name):
    """(info, view mode, shown field, fields as float64 device arrays)."""
    rng = np.random.default_rng(1)
    if name in ("surface", "image", "surface2"):
        mesh = grid2d(512)
        X, Y = np.meshgrid(mesh.x, mesh.y)
        u = np.sin(7 * X) * np.cos(5 * Y) + 0.01 * rng.standard_normal(X.shape)
        f = {"u": u} if name != "surface2" else {"eta": 0.2 * u, "bottom": -1 + 0.3 * X * Y}
        info = info_of(mesh, f, ("eta", "bottom") if name == "surface2" else ())
        return info, "image" if name == "image" else "surface", next(iter(f)), f
    if name == "line":
        x = np.linspace(0, 1, 1 << 16)
        f = {"u": np.exp(-((x - 0.4) / 0.01) ** 2) + 0.001 * rng.standard_normal(len(x))}
        return info_of(SimpleNamespace(kind="grid1d", x=x), f), "line", "u", f
    if name == "mesh":
        mesh = sphere(100)
        f = {"v": np.sin(6 * mesh.points[:, 2]) + 0.01 * rng.standard_normal(len(mesh.points))}
        return info_of(mesh, f), "mesh", "v", f
    mesh = plane(120)
    c = mesh.points[mesh.cells].mean(axis=1)
    f = {"eta": 0.1 * np.sin(9 * c[:, 0]) + 0.01 * rng.standard_normal(len(c)),
         "bottom": -1 + 0.2 * c[:, 1]}
    return info_of(mesh, f, ("eta", "bottom"), location="cell"), "mesh", "eta", f


def frame_through(copier, fields):
    arrays = {k: cp.asarray(v) for k, v in fields.items()}
    assert copier.submit(arrays, 1.0, 3, 0)
    for a in arrays.values():
        a *= -7.0  # the solver goes on at once: the frame must keep the snapshot
    return copier.poll(wait=True)


@pytest.mark.parametrize("name", ["surface", "surface2", "image", "line", "mesh", "cells"])
def test_interop_draws_what_pinned_draws_without_host_copies(canvas, name):  # noqa: F811
    session, why = interop.probe(canvas, "cupy")
    assert session is not None, why
    info, mode, field, fields = case(name)
    scale = ColorScale()
    pictures, counts = [], []
    for copier in (PinnedCopier(), DeviceCopier()):
        view = make_view(canvas, info, mode)
        try:
            for k in range(2):  # the second frame: textures and registrations exist
                COUNTS.reset()
                f = frame_through(copier, fields)
                view.set_frame(f, field, scale)
                img = canvas.render(alpha=False)
                f.done()
            pictures.append(img)
            counts.append(COUNTS.snapshot())
            assert view.upload_path == ("interop" if copier.path == "interop" else "host")
        finally:
            view.remove()
    pinned, direct = counts
    assert pinned.get("device_to_host", 0) > 0 and pinned.get("host_to_gl", 0) > 0
    assert direct.get("device_to_host", 0) == 0 and direct.get("host_to_gl", 0) == 0
    assert direct.get("readback", 0) == 0 and direct.get("device_to_gl", 0) >= len(fields)
    np.testing.assert_array_equal(pictures[0], pictures[1])


def test_device_frames_are_snapshots_with_finite_ranges():
    c = DeviceCopier()
    a = cp.arange(1000, dtype=cp.float64)
    a[5] = cp.nan
    a[7] = cp.inf
    assert c.submit({"a": a}, 1.0, 3, 0)
    a[:] = -1.0
    f = c.poll(wait=True)
    got = cp.asnumpy(f.fields["a"])
    want = np.arange(1000, dtype=np.float32)
    want[5], want[7] = np.nan, np.inf
    np.testing.assert_array_equal(got, want)
    assert f.fields["a"].dtype == cp.float32 and f.ready is not None
    assert f.ranges["a"] == (0.0, 999.0)
    # a slot read by the GUI is overwritten only after the GUI's copy (GPU-side ordering)
    ev = cp.cuda.Event()
    ev.record()
    f.consumed = ev
    f.done()
    held = []
    for k in range(c.SLOTS):
        assert c.submit({"a": a}, 2.0 + k, 4 + k, 0)
        held.append(c.poll(wait=True))
    assert not c.submit({"a": a}, 9.0, 9, 0)  # every slot held by the GUI: dropped
    for h in held:
        np.testing.assert_array_equal(cp.asnumpy(h.fields["a"]), -1.0)
        h.done()
