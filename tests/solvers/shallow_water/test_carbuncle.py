"""Strong shocks do not grow a transverse (carbuncle) instability (issue 28, item 5): the
hl/hr = 20 dam break (h = 10 | 0.5) with the shock cure of riemann.py (`shock_fix`, the default).

Before (no cure), on a 10 × 1 grid strip a transverse perturbation hv = 1e-6 N(0, 1) grew to
3.7e-4 (order 1, 400 × 40) and 3.1e-5 (order 3, 200 × 20) by t = 0.5, and on the generated
triangle strip (4,000 cells, stretched 10:1) max |hv| at the shock was 0.88 (roe, ir-roe,
pvm-ifcp); benchmarks/shallow_water/carbuncle.py has the figures. The cure is zero on a lake at
rest (float32 too; test_lake_float32.py runs every scheme with it) and conservative."""
import numpy as np
import pytest

from benchmarks.shallow_water.carbuncle import grid_growth, tri_strip
from pdestudio import solvers
from pdestudio.solvers.shallow_water import riemann


@pytest.mark.parametrize("order,size,hv_max", [(1, (400, 40), 2e-6), (3, (200, 20), 1e-5)])
def test_grid_transverse_perturbation_does_not_grow_at_a_strong_shock(order, size, hv_max):
    (_, hv, spread), = grid_growth(order, None, *size, (0.5,))  # default: cure on
    assert hv < hv_max, hv          # the initial max |hv| is 4.5e-6: it did not grow
    assert spread < 1e-4, spread    # hu stays the same across the strip (q behind the shock: 27)


@pytest.mark.parametrize("scheme", ["roe", "pvm-ifcp"])
def test_triangle_strip_shock_front_keeps_little_transverse_momentum(scheme):
    """(ir-roe is roe's solver for one layer.)"""
    assert riemann.FLUXES[1, "ir-roe"] is riemann.FLUXES[1, "roe"]
    hv, _, hu, l1 = tri_strip(scheme, 4000, None)  # default: cure on
    assert hv < 0.65, hv            # against 27 for the main flow; 0.88 without the cure
    assert hu < 29.4                # no overshoot (exact: 27.2 behind the shock, 29.35 at most)
    assert l1 < 5.0                 # and the profile is the exact one's (L1 over the 10 × 1 strip)


def _moving(sim, seed=2):
    rng = np.random.default_rng(seed)
    n = np.asarray(sim.fields()["h"]).shape
    for k, lo, hi in (("h", 0.5, 2.0), ("hu", -2.0, 2.0), ("hv", -2.0, 2.0)):
        sim.set_field(k, rng.uniform(lo, hi, n))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sensor_and_cure_are_exactly_zero_on_a_lake_at_rest(dtype):
    from benchmarks.shallow_water.lake_float32 import rough_lake
    from pdestudio.solvers.shallow_water.grid.reference import cell_sensor
    sim = rough_lake("grid", dtype, nx=16)
    s = sim.state
    assert np.all(cell_sensor(s["h"], s["hu"], s["hv"], np) == 0)
    # the fluxes with a large ν on rest edges (random bottom): exact zeros
    rng = np.random.default_rng(4)
    H = (rng.integers(-300, 700, (2, 500)) / 1024.0).astype(dtype)
    z = np.zeros(500, dtype)
    ang = rng.uniform(0, 2 * np.pi, 500)
    nx, ny = np.cos(ang).astype(dtype), np.sin(ang).astype(dtype)
    nu = np.full(500, 50.0, dtype)
    for flux in (riemann.roe1, riemann.pvm_ifcp1):
        DL, DR, _ = flux(np, (1 + H[0], z, z), (1 + H[1], z, z), H[0], H[1], nx, ny, None, 9.81,
                         nu=nu)
        assert all(np.all(d == 0) for d in DL + DR)
    _moving(sim)
    s = sim.state
    assert cell_sensor(s["h"], s["hu"], s["hv"], np).max() > 1  # and not zero where it flows


@pytest.mark.parametrize("geometry,params", [("grid", {"order": 1, "nx": 24}),
                                             ("grid", {"order": 3, "nx": 24}),
                                             ("triangles", {"scheme": "pvm-ifcp",
                                                            "cells": 400})])
def test_cure_conserves_mass_and_acts(geometry, params):
    """The cure moves momentum between neighbours only (D⁻ + D⁺ unchanged): mass conserved to
    round-off with walls; and it changes the flow where there are compressions."""
    out = {}
    for fix in (False, True):
        sim = solvers.create("shallow-water", backend="numpy", geometry=geometry, shock_fix=fix,
                             **params)
        _moving(sim)
        area = 1.0 if geometry == "grid" else np.asarray(sim.mesh.cell_areas)
        m0 = (area * sim.fields()["h"]).sum()
        sim.step(20)
        out[fix] = sim.fields()
        assert abs((area * out[fix]["h"]).sum() - m0) < 1e-12 * m0
    assert np.abs(out[True]["hv"] - out[False]["hv"]).max() > 1e-3


def test_shock_tau_is_the_device_constant():
    text = (riemann.__file__.rsplit("/", 1)[0] + "/kernels/riemann.cuh")
    line = next(s for s in open(text) if s.startswith("#define SW_SHOCK_TAU"))
    assert float(line.split()[2]) == riemann.SHOCK_TAU


GPU_CASES = [("grid", 1, "strip"), ("grid", 1, "cell"), ("grid", 3, None)] + [
    ("triangles", s, a) for s in ("roe", "ir-roe", "pvm-ifcp") for a in ("edge", "atomic", "cell")]


@pytest.mark.gpu
@pytest.mark.parametrize("geometry,which,variant", GPU_CASES)
def test_gpu_cure_matches_reference_on_the_strong_shock(geometry, which, variant):
    """The fused kernels (sw_sensor + nu in sw_strip1 / sw_step1 / sw_stage3; sensor1 + nu in
    the edge, atomic and cell assemblies) equal the float64 reference on the dam break, and the
    cure acts there (the result differs from shock_fix off by far more than the tolerance)."""
    res = {}
    for backend, fix in (("numpy", True), ("cupy", True), ("cupy", False)):
        if geometry == "grid":
            kw = {"nx": 120, "ny": 12, "Lx": 10.0, "Ly": 1.0, "order": which}
        else:
            kw = {"geometry": "triangles", "cells": 2000, "Lx": 10.0, "Ly": 1.0,
                  "scheme": which, "assembly": variant}
        sim = solvers.create("shallow-water", backend=backend, shock_fix=fix, **kw)
        if geometry == "grid" and backend == "cupy":
            from pdestudio.solvers.shallow_water.grid.fused import GridFused
            sim.scheme = GridFused(sim, variant=variant or "strip")
        shape = np.asarray(sim.fields()["h"]).shape
        if geometry == "grid":
            x = np.broadcast_to(sim.mesh.x, shape)
        else:
            x = np.asarray(sim.mesh.points)[np.asarray(sim.mesh.cells)].mean(axis=1)[:, 0]
        h = np.where(x < -2.0, 10.0, 0.5)
        hv = 1e-3 * np.random.default_rng(1).standard_normal(shape)
        for k, v in (("H", 0 * h), ("h", h), ("hu", 0 * h), ("hv", hv)):
            sim.set_field(k, v)
        sim.advance(0.3)
        res[backend, fix] = {k: np.asarray(v.get() if hasattr(v, "get") else v)
                             for k, v in sim.fields().items()}
    ref, gpu, off = res["numpy", True], res["cupy", True], res["cupy", False]
    for k in ("h", "hu", "hv"):
        scale = np.abs(ref[k]).max() + 1.0
        assert np.abs(gpu[k] - ref[k]).max() < 1e-9 * scale, k
    assert np.abs(off["hv"] - ref["hv"]).max() > 1e-4


def _rough_flow(seed):
    """A 41 × 100 state with compressions everywhere: random depths, momenta and bottom."""
    rng = np.random.default_rng(seed)
    shape = (41, 100)  # (ny, nx)
    return {"H": 0.1 * rng.random(shape), "h": 0.5 + rng.random(shape),
            "hu": rng.uniform(-0.6, 0.6, shape), "hv": rng.uniform(-0.6, 0.6, shape)}


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gpu_folded_sensors_are_the_sensor_pass_bit_for_bit(dtype, monkeypatch):
    """The strip kernel writes the next step's sensors from the new state (grid/fused.py, the
    fold); they are sw_sensor's of that state bit for bit, at the walls and across warps and
    bands (a grid that is no multiple of the 29-column strips or the bands of rows), so a run
    with the fold equals a run with a sensor pass before every step."""
    from pdestudio.solvers.shallow_water.grid.fused import GridFused
    fields = _rough_flow(7)
    runs = []
    for fold in (True, False):
        monkeypatch.setattr(GridFused, "FOLD_SENSOR", fold)
        sim = solvers.create("shallow-water", backend="cupy", dtype=dtype, nx=100, ny=41,
                             order=1, shock_fix=True)
        sim.scheme = GridFused(sim, rows=4)
        for k, v in fields.items():
            sim.set_field(k, v)
        sim.step(110)  # single steps, then CUDA graphs of 48
        s = sim.scheme
        assert s.fold is fold and (s.s_valid or not fold)
        if fold:
            folded = s.S.get()
            assert (folded > 0).mean() > 0.3  # compressions everywhere: a test that can fail
            st = sim.state
            s._sensor(st["h"], st["hu"], st["hv"])
            np.testing.assert_array_equal(folded, s.S.get())
        runs.append({k: np.asarray(v.get()) for k, v in sim.state.items()})
    for k in ("h", "hu", "hv"):
        np.testing.assert_array_equal(runs[0][k], runs[1][k], err_msg=k)


@pytest.mark.gpu
def test_gpu_order3_stage_sensors_are_the_sensor_pass_bit_for_bit(monkeypatch):
    """float32 order 3: each stage computes the sensors of its tile and one ring from the state it
    stages (wall ghosts by the mirror symmetry of the compression) instead of a sensor pass
    before the stage, and a step is three launches (the Δt pass folded into the first stage, the
    second forming its input from the first's rates); a run equals a run with the passes and
    four stage-kernel launches bit for bit (walls on every side, a grid that is no multiple of
    the 32 × 8 tiles, strong compressions everywhere; single steps, then CUDA graphs)."""
    from pdestudio.solvers.shallow_water.grid.fused import GridFused
    fields = _rough_flow(11)
    runs = []
    for fold in (True, False):
        monkeypatch.setattr(GridFused, "FOLD_SENSOR", fold)
        sim = solvers.create("shallow-water", backend="cupy", dtype="float32", nx=100, ny=41,
                             order=3, shock_fix=True)
        sim.scheme = GridFused(sim)
        assert sim.scheme.fold3 is fold and sim.scheme.cfl3 is fold
        for k, v in fields.items():
            sim.set_field(k, v)
        if not fold:
            st = sim.state
            sim.scheme._sensor(st["h"], st["hu"], st["hv"])
            assert (sim.scheme.S.get() > 0).mean() > 0.3  # compressions: a test that can fail
        sim.step(60)  # single steps, then CUDA graphs of 48
        runs.append({k: np.asarray(v.get()) for k, v in sim.state.items()})
    for k in ("h", "hu", "hv"):
        assert np.abs(runs[1][k] - fields[k]).max() > 1e-3  # the run moved the state
        np.testing.assert_array_equal(runs[0][k], runs[1][k], err_msg=k)
