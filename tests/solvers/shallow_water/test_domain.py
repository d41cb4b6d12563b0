"""Domains as parameters (issue 16, item 4): `Lx`, `Ly` on both geometries and both models. A
2000 m × 1000 m basin conserves mass and keeps a lake at rest to round-off; a dam break on a
domain scaled by λ is the scaled image of the default one (lengths and times × λ, depths equal):
bit for bit where λ is a power of two (every operation of the schemes scales exactly), to
round-off otherwise; bad sizes are refused with the allowed range."""
import math

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers import ParameterError

BASIN = {"Lx": 2000.0, "Ly": 1000.0}
STATE = ("h", "hu", "hv")


def grid(**kw):
    return solvers.create("shallow-water", **{"backend": "numpy", "nx": 40, **kw})


def tri(**kw):
    return solvers.create("shallow-water", **{"backend": "numpy", "geometry": "triangles",
                                               "cells": 1000, **kw})


def areas(sim):
    if sim.params.get("geometry") == "grid":
        return np.full(sim.field_shape("h"), sim.dx * sim.dy)
    return np.asarray(sim.mesh.cell_areas)


def test_the_domain_is_the_rectangle_centred_at_0():
    g = grid(**BASIN)
    assert g.field_shape("h") == (20, 40)  # ny = round(nx·Ly/Lx): square cells
    assert g.dx == g.dy == 50.0
    assert (g.mesh.x[0], g.mesh.x[-1], g.mesh.y[0], g.mesh.y[-1]) == (-975, 975, -475, 475)
    assert grid(**BASIN, ny=30).field_shape("h") == (30, 40)  # ny given: kept
    assert grid().field_shape("h") == (40, 40) and grid().dx == 0.25  # the papers' [−5, 5]²
    est = type(g).memory_estimate  # the memory check counts the cells there are
    assert est(dict(g.params)) == est({**g.params, "ny": 20}) < est({**g.params, "ny": 40})
    for t in (tri(**BASIN), solvers.create("two-layer", backend="numpy", cells=800, **BASIN)):
        p = t.mesh.points
        assert (p[:, 0].min(), p[:, 0].max(), p[:, 1].min(), p[:, 1].max()) == \
            (-1000, 1000, -500, 500)
        assert math.isclose(areas(t).sum(), 2000 * 1000, rel_tol=1e-12)


def test_scenario_features_scale_with_the_shorter_side():
    """ℓ = min(Lx, Ly)/10 = 100 m: the dam's column has radius 0.6 ℓ = 60 m, depths unchanged."""
    g = grid(nx=400, **BASIN)
    f = g.fields()
    X, Y = np.meshgrid(g.mesh.x, g.mesh.y)
    r = np.hypot(X, Y)
    eta = f["eta"]
    assert np.abs(eta[r < 59] - 3).max() < 1e-15 and np.abs(eta[r > 61] - 1).max() < 1e-15
    np.testing.assert_allclose(f["H"], 1 - 0.4 * np.exp(-(r / 100) ** 2), rtol=0, atol=1e-15)


@pytest.mark.parametrize("kw", [{"order": 1}, {"order": 3}, {"geometry": "triangles"}],
                         ids=["grid-order1", "grid-order3", "triangles"])
def test_basin_conserves_mass_and_keeps_a_lake_at_rest(kw):
    make = tri if kw.get("geometry") else grid
    size = {"nx": 100} if make is grid else {"cells": 4000}
    sim = make(**BASIN, **size, **{k: v for k, v in kw.items() if k != "geometry"})
    a = areas(sim)
    m0 = a.ravel() @ sim.fields()["h"].ravel()
    sim.advance(80.0)  # the bore (~7 m/s) has met the walls at y = ±500 m
    f = sim.fields()
    assert abs(a.ravel() @ f["h"].ravel() - m0) < 1e-13 * m0
    edge = np.abs(f["eta"][[0, -1]] - 1).max() if make is grid else None
    assert np.abs(f["hv"]).max() > 0.1 and (edge is None or edge > 1e-3)  # it broke, and hit
    lake = make(scenario="lake-at-rest", **BASIN,
                **{k: v for k, v in kw.items() if k != "geometry"})
    assert lake.fields()["H"].min() < 0  # the bottom rises above the reference level
    lake.step(40)
    f = lake.fields()
    assert np.abs(f["eta"] - 1).max() < 1e-13
    assert max(np.abs(f["hu"]).max(), np.abs(f["hv"]).max()) < 1e-13


def _image_error(make, lam, t, **kw):
    """(steps, steps, max relative difference) of the default run to t and the run on the domain
    scaled by λ to λ t."""
    a, b = make(**kw), make(**{k: v * lam for k, v in {"Lx": 10.0, "Ly": 10.0}.items()}, **kw)
    a.advance(t)
    b.advance(lam * t)
    fa, fb = a.fields(), b.fields()
    names = [n for n in (*STATE, "h1", "q1x", "q1y", "h2", "q2x", "q2y") if n in fa]
    return a.steps, b.steps, max(np.abs(fa[n] - fb[n]).max() / np.abs(fa[n]).max()
                                 for n in names)


@pytest.mark.parametrize("order", [1, 3])
def test_scaled_dam_break_is_the_scaled_image_on_the_grid(order):
    n_a, n_b, err = _image_error(grid, 256.0, 0.25, order=order)
    assert n_a == n_b > 10 and err == 0.0  # λ = 2^8: every operation scales exactly
    n_a, n_b, err = _image_error(grid, 200.0, 0.25, order=order)
    assert n_a == n_b and err < 1e-13  # λ = 200 (a 2 km basin): round-off


@pytest.mark.parametrize("model,kw", [
    ("shallow-water", {"scenario": "bump-dambreak"}),
    ("two-layer", {"scenario": "internal-dambreak", "scheme": "ir-roe"})])
def test_scaled_dam_break_is_the_scaled_image_on_triangles(model, kw):
    make = lambda **k: solvers.create(model, backend="numpy", cells=600, **kw, **k)  # noqa
    n_a, n_b, err = _image_error(make, 4.0, 0.05)
    assert n_a == n_b > 3 and err == 0.0
    n_a, n_b, err = _image_error(make, 200.0, 0.05)
    assert n_a == n_b and err < 1e-12


def test_anisotropic_basin_is_the_image_of_the_20_by_10_domain():
    """Lx ≠ Ly: ℓ = min(Lx, Ly)/10 = 100 for 2000 × 1000, 1 for 20 × 10, both 80 × 40 cells."""
    a, b = grid(nx=80, Lx=20.0, Ly=10.0), grid(nx=80, **BASIN)
    a.advance(0.3)
    b.advance(30.0)
    assert a.steps == b.steps
    for n in STATE:
        fa = a.fields()[n]
        assert np.abs(fa - b.fields()[n]).max() < 1e-13 * np.abs(fa).max()


def test_checkpoint_of_a_basin_run_continues_identically(tmp_path):
    a = grid(**BASIN, order=3)
    a.step(3)
    a.save(tmp_path / "basin.npz")
    b = solvers.load(tmp_path / "basin.npz", backend="numpy")
    assert (b.params["Lx"], b.params["Ly"], b.dx, b.dy) == (2000, 1000, 50, 50)
    a.step(4)
    b.step(4)
    assert a.t == b.t
    for k, v in a.fields().items():
        np.testing.assert_array_equal(v, b.fields()[k], err_msg=k)


@pytest.mark.parametrize("value", [0, -10.0, 1e-4, 2e7, math.nan, math.inf, "wide"])
@pytest.mark.parametrize("name", ["Lx", "Ly"])
@pytest.mark.parametrize("model", ["shallow-water", "two-layer"])
def test_bad_domain_sizes_are_refused_with_the_allowed_range(model, name, value):
    with pytest.raises(ParameterError, match=rf"'{name}'.*allowed: a finite number in "
                                             r"\[0\.001, 1e\+07\] \(m\)"):
        solvers.create(model, backend="numpy", **{name: value})


def test_domain_conflicts_are_refused(tmp_path):
    from pdestudio.solvers.mesh.io import write_mesh
    from pdestudio.solvers.mesh.square import square_mesh
    path = tmp_path / "m.vtu"
    write_mesh(path, square_mesh(300, seed=1))
    for model in ("shallow-water", "two-layer"):
        with pytest.raises(ParameterError, match="'Lx' = 2000.*a mesh file brings its own"):
            solvers.create(model, backend="numpy", mesh=str(path), Lx=2000)
        sim = solvers.create(model, backend="numpy", mesh=str(path))  # the default is fine
        assert sim.length_scale == 1.0
    with pytest.raises(ParameterError, match=r"default ny = round\(nx·Ly/Lx\) = 131072.*"
                                             r"allowed: ny <= 65536"):
        solvers.create("shallow-water", backend="numpy", nx=2**16, Lx=10, Ly=20)


# ---- GPU: the fused kernels on a scaled, non-square domain (the lead runs these) ----------
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("order", [1, 3])
def test_gpu_fused_grid_on_the_basin_matches_the_reference(order, dtype):
    kw = dict(nx=96, order=order, **BASIN)
    ref = grid(**kw)
    gpu = solvers.create("shallow-water", backend="cupy", dtype=dtype, **kw)
    for sim in (ref, gpu):
        sim.advance(20.0)
    tol = 1e-12 if dtype == "float64" else 1e-5
    assert ref.steps == gpu.steps and ref.t == gpu.t == 20.0
    fr, fg = ref.fields(), gpu.fields()
    for n in STATE:
        assert np.abs(fr[n] - fg[n]).max() < tol * np.abs(fr[n]).max(), n


@pytest.mark.gpu
@pytest.mark.parametrize("model,kw", [
    ("shallow-water", {"scenario": "bump-dambreak"}),
    ("two-layer", {"scenario": "internal-dambreak", "scheme": "ir-roe"})])
def test_gpu_fused_triangles_on_the_basin_match_the_reference(model, kw):
    ref = solvers.create(model, backend="numpy", cells=4000, **BASIN, **kw)
    gpu = solvers.create(model, backend="cupy", cells=4000, **BASIN, **kw)
    for sim in (ref, gpu):
        sim.advance(5.0)
    assert ref.steps == gpu.steps
    fr, fg = ref.fields(), gpu.fields()
    for n in gpu.state:
        assert np.abs(fr[n] - fg[n]).max() < 1e-12 * np.abs(fr[n]).max(), n
