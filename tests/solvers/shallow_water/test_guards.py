"""Guards that say why (issue 16, item 5): a step that leaves a depth <= 0 (a dry cell, out of
scope of these schemes) is caught by the finiteness check itself (before, only the NaN of the
step after it was, so the state kept had a negative depth and the message advised a smaller time
step), the state from before it is kept, and the message names the field, its minimum and where,
with advice that helps; the two-layer advice counts the edges that lost hyperbolicity."""
import warnings

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers import SimulationDiverged
from pdestudio.solvers.shallow_water.guards import DryCell, advice, nonhyperbolic_edges

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # √h of h < 0 in a chunk


def rarefaction(backend="numpy", **kw):
    """Still water 1 m deep over a flat bottom, split by flows of ±10 m/s moving apart: faster
    than 2(c_L + c_R) = 12.5 m/s, so the exact solution has a dry core (vacuum)."""
    kw.setdefault("scenario", "lake-at-rest")
    sim = solvers.create("shallow-water", backend=backend, **kw)
    n = sim.field_shape("h")
    x = (np.broadcast_to(sim.mesh.x[None, :], n) if sim.params["geometry"] == "grid"
         else sim.mesh.cell_centroids[:, 0])
    for name, v in (("H", 1.0), ("h", 1.0), ("hv", 0.0)):
        sim.set_field(name, np.full(n, v))
    sim.set_field("hu", np.where(x < 0, -10.0, 10.0))
    return sim


CASES = [({"nx": 40, "ny": 4, "order": 1}, 0.9), ({"nx": 40, "ny": 4, "order": 3}, 0.9),
         ({"nx": 200, "ny": 4, "order": 1}, 0.5),
         ({"geometry": "triangles", "cells": 600, "scheme": "roe"}, 0.5),
         ({"geometry": "triangles", "cells": 600, "scheme": "pvm-ifcp"}, 0.05)]


@pytest.mark.parametrize("kw,cfl", CASES)
def test_a_dry_cell_stops_the_run_with_the_state_before_it(kw, cfl):
    sim = rarefaction(cfl=cfl, **kw)
    with pytest.raises(DryCell) as e:
        sim.advance(2.0)  # chunks of 64 steps: the replay finds the step
    err = e.value
    assert isinstance(err, SimulationDiverged) and err.field == "h" and err.low <= 0
    assert err.step == sim.steps and err.t == sim.t < 2.0
    msg = str(err)
    assert f"the depth 'h' reached {err.low:.3g} (<= 0: a dry cell)" in msg
    assert f"in step {sim.steps + 1}" in msg and "out of scope" in msg
    assert "A smaller cfl is no cure" in msg and "only for a CFL instability" in msg
    assert abs(err.where[0]) < 1.0  # the core of the rarefaction, at x = 0
    f = sim.fields()
    assert f["h"].min() > 0 and all(np.isfinite(v).all() for v in f.values())
    # the state kept is the one after sim.steps steps, bit for bit
    ref = rarefaction(cfl=cfl, **kw)
    ref.step(sim.steps)
    for k, v in ref.fields().items():
        np.testing.assert_array_equal(v, f[k], err_msg=k)
    # and the next step is the one that empties the cell
    with pytest.raises(DryCell):
        sim.step(1)
    assert sim.steps == ref.steps


def test_a_vanished_layer_stops_a_two_layer_run():
    sim = solvers.create("two-layer", backend="numpy", cells=1000, scenario="renumbering-test-1")
    x = sim.mesh.cell_centroids[:, 0]
    h1 = np.full(len(x), 0.5)  # a thin upper layer pulled apart at x = 0
    sim.set_field("h1", h1)
    sim.set_field("h2", 6 - h1)
    sim.set_field("q1x", np.where(x < 0, -2.0, 2.0) * h1)
    with pytest.raises(DryCell) as e:
        sim.advance(1.0)
    assert e.value.field == "h1" and "A layer that vanishes (h1 or h2 <= 0)" in str(e.value)
    assert sim.fields()["h1"].min() > 0 and "A smaller cfl is no cure" in str(e.value)


def vortex(U, scheme="ir-roe"):
    """Two layers (2 m over 4 m, r = 0.98) turning in opposite directions: shear |u1 − u2| up to
    1.72 U against the hyperbolicity bound ≈ sqrt((1 − r) g (h1 + h2)) = 1.08 m/s."""
    sim = solvers.create("two-layer", backend="numpy", cells=1000, r=0.98, scheme=scheme,
                         scenario="renumbering-test-1")
    x, y = sim.mesh.cell_centroids[:, 0], sim.mesh.cell_centroids[:, 1]
    h1 = np.full(len(x), 2.0)
    h2 = 6 - h1
    f = U * np.exp(-(x * x + y * y) / 4)
    for name, v in (("h1", h1), ("h2", h2), ("q1x", -h1 * y * f), ("q1y", h1 * x * f),
                    ("q2x", h2 * y * f), ("q2y", -h2 * x * f)):
        sim.set_field(name, v)
    return sim


def test_two_layer_advice_counts_the_edges_that_lost_hyperbolicity():
    calm, sheared = vortex(0.5), vortex(1.0)
    assert nonhyperbolic_edges(calm) == (0, calm.tables.n_edges)
    n, m = nonhyperbolic_edges(sheared)
    assert 0 < n < m
    # the approximate criterion (u1 − u2)² > (1 − r) g (h1 + h2) holds on the cells near them
    f = sheared.fields()
    shear2 = ((f["q1x"] / f["h1"] - f["q2x"] / f["h2"]) ** 2
              + (f["q1y"] / f["h1"] - f["q2y"] / f["h2"]) ** 2)
    assert shear2.max() > 0.02 * 9.81 * 6 > (0.5 / 1.0) ** 2 * shear2.max()
    dry = ("h1", (-0.1, 0))
    text = advice(sheared, dry)
    assert f"{n} of {m} edges have complex internal eigenvalues" in text
    assert "scheme=pvm-ifcp" in text and "density ratio r further below 1" in text
    assert "scheme=pvm-ifcp" not in advice(vortex(1.0, "pvm-ifcp"), dry)
    assert "complex internal eigenvalues" not in advice(calm, dry)


def test_third_order_near_a_dry_core_turns_non_finite_at_any_cfl():
    """Every cell average stays > 0, the CWENO3 edge values do not: non-finite, not DryCell."""
    for cfl in (0.5, 0.2):
        sim = rarefaction(nx=40, ny=4, order=3, cfl=cfl)
        with pytest.raises(SimulationDiverged) as e:
            sim.advance(1.0)
        assert not isinstance(e.value, DryCell) and e.value.field == "h"
        low = sim.fields()["h"].min()
        assert 0 < low < 0.01
        msg = str(e.value)
        assert "with order 3 the reconstruction dips below 0" in msg
        assert f"The smallest depth of the state kept: {low:.3g} (h) at x = " in msg
        assert "Reducing cfl helps only for a CFL instability" in msg


@pytest.mark.parametrize("model,kw", [("shallow-water", {"nx": 20}),
                                      ("shallow-water", {"geometry": "triangles", "cells": 300}),
                                      ("two-layer", {"cells": 300})])
def test_a_non_finite_step_without_a_dry_cell_gets_its_own_advice(model, kw):
    """g so large that g h overflows: non-finite at once, every depth still > 0 before."""
    sim = solvers.create(model, backend="numpy", g=1e308, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(SimulationDiverged) as e:
            sim.step(3)
    assert not isinstance(e.value, DryCell) and sim.steps == 0
    msg = str(e.value)
    assert "became non-finite in step 1" in msg and "one step turns non-finite where" in msg
    assert "Reducing cfl helps only for a CFL instability" in msg
    assert SimulationDiverged.DEFAULT_ADVICE not in msg


class _CountingBackend:
    """The simulation's backend with its device-to-host copies counted."""

    def __init__(self, be):
        self.be, self.copies = be, 0

    def __getattr__(self, name):
        return getattr(self.be, name)

    def asnumpy(self, a):
        self.copies += 1
        return self.be.asnumpy(a)


def test_the_depth_check_costs_one_sync_per_check_interval(monkeypatch):
    sim = solvers.create("shallow-water", backend="numpy", nx=16)
    be = _CountingBackend(sim._be)
    monkeypatch.setattr(sim, "_be", be)
    sim.step(3 * sim.check_interval)
    assert be.copies == 3 and sim.steps == 3 * sim.check_interval


# ---- GPU: the fused paths report a dry cell the same way (the lead runs these) ----------
@pytest.mark.gpu
@pytest.mark.parametrize("kw,dry", [
    ({"nx": 40, "ny": 4, "order": 1}, False),  # -4e-21 in NumPy: may go either way on the GPU
    ({"nx": 40, "ny": 4, "order": 3}, True),   # -0.16 at step 2
    ({"geometry": "triangles", "cells": 600}, True)])  # -0.06 at step 4
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gpu_fused_dry_cell_keeps_the_state_before_it(kw, dry, dtype):
    """The fused paths (the grid's strip and stage kernels, the triangles' batched run with the
    clock on the device) stop the same way: the state kept is finite with every h > 0."""
    sim = rarefaction(backend="cupy", dtype=dtype, **kw)
    try:
        sim.advance(2.0)
        assert not dry, "the run went through"
    except SimulationDiverged as e:
        assert e.field == "h" and e.step == sim.steps
        assert isinstance(e, DryCell) or not dry
    f = sim.fields()
    assert f["h"].min() > 0 and all(np.isfinite(v).all() for v in f.values())
