"""The curvature flows' domain parameters Lx, Ly (issue 16, item 4) and the advice their
divergence messages give (item 5)."""
import math

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers import ParameterError, SimulationDiverged
from pdestudio.solvers.curvature.exact import eoc, space_time_errors


@pytest.mark.parametrize("model", ["mean-curvature", "willmore"])
def test_default_domains_are_the_papers(model):
    rings = solvers.create(model, backend="numpy", nx=8)
    assert rings.params["Lx"] == 4.0 and rings.params["Ly"] is None
    assert rings.mesh.x[0] == -2.0 and rings.mesh.x[-1] == 2.0 and rings.mesh.y[0] == -2.0
    ex = solvers.create(model, backend="numpy", scenario="eoc-exact", nx=8)
    assert ex.params["Lx"] == 8.0 and ex.mesh.x[0] == -4.0 and ex.mesh.y[-1] == 4.0
    assert ex.h1 == ex.h2 == 1.0


def test_sine_rings_keep_their_formula_on_any_rectangle():
    sim = solvers.create("mean-curvature", backend="numpy", nx=12, ny=6, Lx=6.0, Ly=3.0)
    x, y = sim.mesh.x, sim.mesh.y
    assert (x[0], x[-1], y[0], y[-1]) == (-3.0, 3.0, -1.5, 1.5) and sim.h1 == sim.h2 == 0.5
    X, Y = np.meshgrid(x, y)
    phi = sim.fields()["phi"]
    np.testing.assert_allclose(phi[1:-1, 1:-1], np.sin(3 * np.pi * np.hypot(X, Y))[1:-1, 1:-1])
    np.testing.assert_array_equal(phi[0], phi[1])  # Neumann copies


def test_eoc_exact_converges_on_a_rectangle_where_zeta_is_not_zero_on_the_boundary():
    """ζ keeps r = 4 on [−2.5, 2.5] × [−1.5, 1.5] (h1 ≠ h2): the Dirichlet data g = ζ,
    w = w(ζ) are exact there, so mean curvature keeps EOC 2 and Willmore's errors fall (both
    integrators, to T = 0.02 on 10 × 6 and 20 × 12 cells), the two integrators agreeing to
    1e-4."""
    sizes = [16, 32, 64]
    errs = []
    for n in sizes:
        sim = solvers.create("mean-curvature", backend="numpy", scenario="eoc-exact", nx=n,
                             Lx=5.0, Ly=3.0)
        assert np.abs(sim.exact_phi()[0]).max() > 1e-2  # the data are not zero
        errs.append(space_time_errors(sim, 5))
    assert all(1.8 < o < 2.3 for o in eoc(errs, sizes)[-1]), errs
    w = {}
    for integ in ("rkm", "imex"):
        w[integ] = [space_time_errors(solvers.create(
            "willmore", backend="numpy", scenario="eoc-exact", nx=n, ny=3 * n // 5, Lx=5.0,
            Ly=3.0, integrator=integ), 3, t_end=0.02) for n in (10, 20)]
        assert all(o > 1.5 for o in eoc(w[integ], [10, 20])[-1]), (integ, w)
    np.testing.assert_allclose(w["imex"], w["rkm"], rtol=1e-4)


@pytest.mark.parametrize("bad,match", [({"Lx": 0}, "'Lx'.*allowed.*\\(0"),
                                       ({"Lx": -2.0}, "'Lx'"),
                                       ({"Ly": math.nan}, "'Ly'.*not finite"),
                                       ({"Lx": math.inf}, "'Lx'.*not finite"),
                                       ({"integrator": "euler"}, "'integrator'.*rkm.*imex")])
def test_bad_domain_or_integrator_names_the_parameter(bad, match):
    with pytest.raises(ParameterError, match=match):
        solvers.create("willmore", backend="numpy", **bad)


def test_rkm_divergence_advises_a_lower_tolerance_or_imex():
    sim = solvers.create("mean-curvature", backend="numpy", scenario="eoc-exact", nx=16,
                         tolerance=1e300, dt=1.0)
    with pytest.raises(SimulationDiverged) as err:
        sim.step(500)
    msg = str(err.value)
    assert "tolerance 1e+300" in msg and "integrator=imex" in msg and "h²" in msg
    assert "Reduce the time step" not in msg


def test_imex_divergence_advises_a_lower_tolerance_or_rkm():
    sim = solvers.create("willmore", backend="numpy", nx=16, integrator="imex",
                         tolerance=1e300, dt=1.0)
    with pytest.raises(SimulationDiverged) as err:
        sim.step(50)
    assert "integrator=rkm" in str(err.value) and "lower the tolerance" in str(err.value)
    assert np.isfinite(sim.fields()["phi"]).all()


def test_single_precision_advice():
    wm = solvers.create("willmore", backend="numpy", dtype="float32", nx=8)
    assert "float64" in wm.divergence_advice() and "paper" in wm.divergence_advice()
    mc = solvers.create("mean-curvature", backend="numpy", dtype="float32", nx=8,
                        tolerance=1e-8)
    assert "round-off" in mc.divergence_advice()
    assert "round-off" not in solvers.create("mean-curvature", backend="numpy",
                                             nx=8).divergence_advice()
