"""euler-1d: Sod's tube against the exact Riemann solution, conservation, positivity guards, and
which events set the fixed Δt."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.swept.reference import euler_dt
from pdestudio.solvers.swept.exact import riemann_exact, star_state


def test_exact_riemann_solver_gives_toros_star_state():
    p, u = star_state((1.0, 0.0, 1.0), (0.125, 0.0, 0.1), 1.4)
    assert abs(p - 0.30313) < 1e-5 and abs(u - 0.92745) < 1e-5  # Toro, Table 4.3, test 1


def test_sod_matches_exact_solution_with_l1_error_falling_under_refinement():
    errs = []
    for nx in (100, 200, 400):
        sim = solvers.create("euler-1d", backend="numpy", nx=nx)
        sim.advance(0.2)
        rho, u, p = riemann_exact(sim.mesh.x, 0.2, (1.0, 0.0, 1.0), (0.125, 0.0, 0.1))
        f = sim.fields()
        errs.append([np.abs(f[k] - e).mean() for k, e in (("rho", rho), ("u", u), ("p", p))])
    errs = np.array(errs)
    assert np.all(errs[1:] < 0.75 * errs[:-1]), errs   # L1 falls (≈ Δx^0.8 with a shock)
    assert errs[-1, 0] < 6e-3 and errs[-1, 2] < 4e-3, errs[-1]


def test_mass_and_energy_conserved_until_waves_reach_the_ends():
    sim = solvers.create("euler-1d", backend="numpy", nx=200)
    m0, e0 = (sim.fields()[k].sum() for k in ("rho", "E"))
    sim.advance(0.15)  # the shock (speed 1.75) is still inside [0, 1]
    m1, e1 = (sim.fields()[k].sum() for k in ("rho", "E"))
    assert abs(m1 - m0) < 1e-12 * m0 and abs(e1 - e0) < 1e-12 * e0


@pytest.mark.parametrize("name,value", [("rho_left", 0.0), ("p_right", -0.1), ("rho_right", -1.0),
                                        ("p_left", 0.0)])
def test_non_positive_density_or_pressure_is_refused(name, value):
    with pytest.raises(solvers.ParameterError, match=rf"'{name}'.*\(0, inf\)"):
        solvers.create("euler-1d", backend="numpy", **{name: value})


def test_field_giving_negative_pressure_is_refused_and_state_kept():
    sim = solvers.create("euler-1d", backend="numpy", nx=64)
    sim.step(3)
    before = sim.fields()
    E = before["E"].copy()
    E[10] = 0.01 * E[10]
    rhou = before["rhou"].copy()
    rhou[5] = 10.0
    with pytest.raises(solvers.ParameterError, match=r"'rhou'.*pressure.*cell 5.*> 0"):
        sim.set_field("rhou", rhou)
    with pytest.raises(solvers.ParameterError, match=r"'rho'.*allowed: values > 0"):
        sim.set_field("rho", -before["rho"])
    with pytest.raises(solvers.ParameterError, match="derived"):
        sim.set_field("p", before["p"])
    sim.set_field("E", E)  # still positive pressure: accepted
    for k in ("rho", "rhou"):
        np.testing.assert_array_equal(sim.fields()[k], before[k])


def test_time_step_is_fixed_while_running_and_set_only_by_state_or_cfl_from_outside(tmp_path):
    """Δt comes from the initial data; set_field and a cfl change take it from the state then;
    a checkpoint and the divergence restore bring back the Δt they were saved with."""
    sim = solvers.create("euler-1d", backend="numpy", nx=64)
    dt0 = sim.dt
    sim.step(20)
    assert sim.dt == dt0  # fixed during the run, although max |u| + c has grown
    f = sim.fields()
    Q = np.stack([f[k] for k in ("rho", "rhou", "E")])
    assert euler_dt(Q, 1.4, 0.4, 1 / 64) < dt0
    sim.set_field("rho", f["rho"])
    assert sim.dt == euler_dt(Q, 1.4, 0.4, 1 / 64)
    sim.set_param("cfl", 0.2)
    assert sim.dt == euler_dt(Q, 1.4, 0.2, 1 / 64)
    sim.step(5)
    dt1 = sim.dt
    sim.save(tmp_path / "c.npz")
    back = solvers.load(tmp_path / "c.npz", backend="numpy")
    assert back.dt == dt1

    class Poisoned:  # step 28 writes a NaN: the state after step 27 is kept
        def __init__(self, inner):
            self.inner = inner

        def step(self, t, dt_limit):
            dt = self.inner.step(t, dt_limit)
            if sim.steps == 27:
                sim.state["rho"][7] = np.nan
            return dt

        def invalidate(self):
            self.inner.invalidate()

    sim.scheme = Poisoned(sim.scheme)
    with pytest.raises(solvers.SimulationDiverged):
        sim.step(10)
    assert sim.steps == 27 and sim.dt == dt1
