"""Curvature flows ([P0], docs/MODELS.md §1, §6) on the CPU: orders of convergence on the exact solution,
the exact forcing against the discrete operators, energy decrease, RKM step control, boundaries and
bad input."""
import math

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers import ParameterError
from pdestudio.solvers.curvature.exact import (ExactSolution, derivative_table, eoc,
                                               space_time_errors)
from pdestudio.solvers.curvature.reference import RKMReference, mean_curvature_rhs, willmore_rhs


def errors(model, nx, samples=10, **kw):
    """The space-time errors of a NumPy run on eoc-exact to T = 0.1."""
    sim = solvers.create(model, backend="numpy", scenario="eoc-exact", nx=nx, **kw)
    return space_time_errors(sim, samples)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_mean_curvature_eoc_is_two(dtype):
    """Tables 2–3: EOC ≈ 2 in the L1, L2 and L∞ space-time norms (31)–(33)."""
    sizes = [16, 32, 64]
    errs = [errors("mean-curvature", n, dtype=dtype) for n in sizes]
    for e0, e1 in zip(errs[:-1], errs[1:]):
        assert all(b < a for a, b in zip(e0, e1)), errs
    last = eoc(errs, sizes)[-1]
    assert all(1.8 < o < 2.3 for o in last), last


def test_willmore_errors_fall_with_the_papers_trend():
    """Table 4 (double precision): the errors fall on refinement, faster than first order
    over the coarse grids (the paper: 0.8 then 3.8; EOC 2 only on its finest pair)."""
    sizes = [16, 24, 32]
    errs = [errors("willmore", n, samples=5) for n in sizes]
    for e0, e1 in zip(errs[:-1], errs[1:]):
        assert all(b < a for a, b in zip(e0, e1)), errs
    overall = eoc([errs[0], errs[-1]], [sizes[0], sizes[-1]])[-1]
    assert all(o > 1.5 for o in overall), overall


def _operator_error(n, willmore, r=4.0, zn=2, sigma=1.0, t=0.03):
    x = np.linspace(-4, 4, n + 1)
    h = 8 / n
    ex = ExactSolution(x, x, r, zn, sigma, willmore, np, "float64")
    z = ex.zeta(t)
    if willmore:
        w = ex.w(t)  # exact w on all nodes; interior replaced by the discrete w
        w[1:-1, 1:-1] = mean_curvature_rhs(z, h, h, np)
        disc = willmore_rhs(z, w, h, h, np)
    else:
        disc = mean_curvature_rhs(z, h, h, np)
    exact = ex.zeta_t(t)[1:-1, 1:-1] - ex.forcing(t)  # = L[ζ] at the interior nodes
    return np.abs(disc - exact).max() / np.abs(exact).max()


@pytest.mark.parametrize("willmore", [False, True], ids=["mean-curvature", "willmore"])
@pytest.mark.parametrize("params", [(4.0, 2, 1.0), (3.0, 3, 0.5)], ids=["default", "r3-n3-s0.5"])
def test_exact_forcing_matches_the_discrete_operator(willmore, params):
    """The sympy-generated L[ζ] (inside F = ζ_t − L[ζ]) agrees with the complementary finite
    volumes applied to ζ, with the error falling as h² — for other r, n, σ too."""
    e = [_operator_error(n, willmore, *params) for n in (32, 64, 128)]
    orders = [math.log2(a / b) for a, b in zip(e[:-1], e[1:])]
    assert e[-1] < 0.05 and orders[-1] > 1.7, (e, orders)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_derivative_tables_by_differences(n):
    """X^(k) of ((x/r)^n − 1) exp(−σx²) for any integer n, against central differences."""
    r, sigma, d = 2.5, 0.7, 1e-5
    x = np.linspace(-3, 3, 41)
    tab = derivative_table(x, r, n, sigma)
    hi, lo = derivative_table(x + d, r, n, sigma), derivative_table(x - d, r, n, sigma)
    np.testing.assert_allclose(tab[0], ((x / r) ** n - 1) * np.exp(-sigma * x * x), rtol=1e-14)
    for k in range(4):
        np.testing.assert_allclose(tab[k + 1], (hi[k] - lo[k]) / (2 * d), rtol=1e-6,
                                   atol=1e-7 * np.abs(tab[k + 1]).max())


def _samples(sim, times, fn):
    out = [fn()]
    for t in times:
        sim.advance(t)
        out.append(fn())
    return out


def test_area_decreases_under_mean_curvature_flow():
    sim = solvers.create("mean-curvature", backend="numpy", nx=32)
    areas = _samples(sim, [0.002, 0.005, 0.01, 0.02], sim.surface_area)
    assert all(b < a for a, b in zip(areas[:-1], areas[1:])), areas
    assert areas[-1] < 0.9 * areas[0]


def test_willmore_energy_decreases_under_willmore_flow():
    sim = solvers.create("willmore", backend="numpy", nx=24)
    energies = _samples(sim, [1e-5, 3e-5, 1e-4], sim.willmore_energy)
    assert all(b < a for a, b in zip(energies[:-1], energies[1:])), energies
    assert energies[-1] < 0.8 * energies[0]


def test_rkm_rejects_and_shrinks_the_step():
    """A far too large initial τ is rejected (time does not advance on rejection) and shrunk
    until the error estimate is below ε; a tighter ε takes more steps."""
    tau0 = 0.05
    sim = solvers.create("mean-curvature", backend="numpy", scenario="eoc-exact", nx=32,
                         dt=tau0, tolerance=1e-8)
    sim.step(1)
    assert sim.rejected >= 1
    assert 0 < sim.t < tau0 and sim.steps == 1
    steps = {}
    for tol in (1e-4, 1e-9):
        s = solvers.create("mean-curvature", backend="numpy", scenario="eoc-exact", nx=32,
                           tolerance=tol)
        s.advance(0.05)
        assert s.t == 0.05
        steps[tol] = s.steps
    assert steps[1e-9] > steps[1e-4]


def test_neumann_copies_and_dirichlet_data():
    sim = solvers.create("willmore", backend="numpy", nx=16)
    sim.step(5)
    phi = sim.fields()["phi"]
    np.testing.assert_array_equal(phi[0], phi[1])
    np.testing.assert_array_equal(phi[:, -1], phi[:, -2])
    ex = solvers.create("mean-curvature", backend="numpy", scenario="eoc-exact", nx=16,
                        zeta_n=3, zeta_r=3.0)
    ex.advance(0.05)
    phi, z = ex.fields()["phi"], ex.exact_phi()
    for a, b in ((phi[0], z[0]), (phi[-1], z[-1]), (phi[:, 0], z[:, 0]), (phi[:, -1], z[:, -1])):
        np.testing.assert_allclose(a, b, atol=1e-9 * np.abs(z).max())


def test_a_scheme_swapped_in_continues_the_run():
    """`sim.scheme = RKMReference(sim)` mid-run takes over the adaptive step: the run goes on
    exactly as without the swap."""
    a = solvers.create("willmore", backend="numpy", scenario="eoc-exact", nx=16)
    b = solvers.create("willmore", backend="numpy", scenario="eoc-exact", nx=16)
    for s in (a, b):
        s.step(4)
    b.scheme = RKMReference(b)
    assert b.tau == a.tau
    t_end = 3 * a.t
    for s in (a, b):
        s.advance(t_end)
    assert a.steps == b.steps and a.t == b.t
    np.testing.assert_array_equal(a.fields()["phi"], b.fields()["phi"])


def test_checkpoint_keeps_the_adaptive_step(tmp_path):
    a = solvers.create("mean-curvature", backend="numpy", scenario="eoc-exact", nx=16)
    a.step(3)
    a.save(tmp_path / "c.npz")
    b = solvers.load(tmp_path / "c.npz", backend="numpy")
    assert b.tau == a.tau
    a.advance(0.08)
    b.advance(0.08)
    assert a.steps == b.steps
    np.testing.assert_array_equal(a.fields()["phi"], b.fields()["phi"])


@pytest.mark.parametrize("model", ["mean-curvature", "willmore"])
def test_bad_input_names_the_parameter_and_keeps_state(model):
    for bad, match in [({"tolerance": 0}, "'tolerance'.*allowed.*\\(0"),
                       ({"tolerance": -1e-6}, "'tolerance'"),
                       ({"tolerance": math.inf}, "'tolerance'.*not finite"),
                       ({"nx": 3}, "'nx'.*\\[4"), ({"ny": 2}, "'ny'.*\\[4"),
                       ({"dt": 0}, "'dt'"), ({"dt": math.nan}, "'dt'.*not finite"),
                       ({"zeta_n": 1.5}, "'zeta_n'"), ({"zeta_r": 0}, "'zeta_r'"),
                       ({"boundary": "periodic"}, "'boundary'.*neumann")]:
        with pytest.raises(ParameterError, match=match):
            solvers.create(model, backend="numpy", scenario="eoc-exact", **bad)
    sim = solvers.create(model, backend="numpy", nx=8)
    sim.step(1)
    before = sim.fields()["phi"].copy()
    with pytest.raises(ParameterError, match="derived"):
        sim.set_field("mean_curvature", np.zeros_like(before))
    bad = before.copy()
    bad[3, 3] = np.inf
    with pytest.raises(ParameterError, match="non-finite"):
        sim.set_field("phi", bad)
    np.testing.assert_array_equal(sim.fields()["phi"], before)


def test_ny_defaults_to_nx_and_may_differ():
    a = solvers.create("mean-curvature", backend="numpy", nx=12)
    assert a.fields()["phi"].shape == (13, 13)
    b = solvers.create("mean-curvature", backend="numpy", scenario="eoc-exact", nx=16, ny=24)
    assert b.fields()["phi"].shape == (25, 17) and len(b.mesh.y) == 25
    b.advance(0.02)
    err = np.abs(b.fields()["phi"] - b.exact_phi()).max()
    assert err < 0.05


def test_rational_coefficient_form_equals_the_expanded_operators():
    """ζ = c g: the coefficient fields (what the forcing is evaluated from) reproduce the
    expanded sympy operators at random derivative values and several c."""
    from pdestudio.solvers.curvature import exact_ops as eo
    rng = np.random.default_rng(5)
    q = rng.normal(size=(14, 50))
    B = q[0] ** 2 + q[1] ** 2
    a = eo.willmore_coefficients(*q)
    b = eo.mean_curvature_coefficients(*q[:5])
    for c in (1.0, 0.6, -0.3):
        d = 1 + c * c * B
        lw = sum(am * c ** (2 * m + 1) for m, am in enumerate(a)) / d**eo.W_DEN_POWER
        w = sum(bm * c ** (2 * m + 1) for m, bm in enumerate(b)) / d**eo.MC_DEN_POWER
        np.testing.assert_allclose(lw, eo.willmore_op(*(c * q)), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(w, eo.mean_curvature_op(*(c * q[:5])), rtol=1e-12, atol=1e-14)


def test_unstable_run_raises_diverged_and_keeps_the_last_finite_state():
    """A tolerance that accepts everything with a huge step blows up (explicit RKM beyond its
    stability limit): SimulationDiverged, and the state is the last finite one."""
    sim = solvers.create("mean-curvature", backend="numpy", scenario="eoc-exact", nx=16,
                         tolerance=1e300, dt=1.0)
    with pytest.raises(solvers.SimulationDiverged, match="phi"):
        sim.step(500)
    assert 0 < sim.steps < 500
    assert np.isfinite(sim.fields()["phi"]).all()
