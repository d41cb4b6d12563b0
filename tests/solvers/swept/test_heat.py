"""heat-1d: the exact decay of a cosine mode (discrete and continuous), the conserved mean."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.swept.exact import heat_mode, heat_mode_discrete


@pytest.mark.parametrize("mode", [1, 3])
def test_cosine_mode_decays_by_the_discrete_factor_to_round_off(mode):
    sim = solvers.create("heat-1d", backend="numpy", nx=101, mode=mode, Fo=0.45)
    x = sim.mesh.x
    sim.step(500)
    exact = heat_mode_discrete(x, 500, 0.45, sim.dx, 1.0, mode)
    np.testing.assert_allclose(sim.fields()["T"], exact, atol=1e-13)


def test_matches_continuous_decay_at_second_order():
    """Error against exp(−α (πk/L)² t) cos(kπx/L) falls as Δx² (EOC ≈ 2)."""
    errs = []
    for nx in (21, 41, 81):
        sim = solvers.create("heat-1d", backend="numpy", nx=nx, mode=2, Fo=0.25)
        sim.advance(0.01)
        exact = heat_mode(sim.mesh.x, 0.01, 1.0, 1.0, 2)
        errs.append(np.abs(sim.fields()["T"] - exact).max())
    eoc = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert np.all(np.abs(eoc - 2) < 0.1), eoc


def test_mean_is_conserved_by_insulated_ends():
    sim = solvers.create("heat-1d", backend="numpy", nx=64, T_mean=3.0)
    rng = np.random.default_rng(1)
    sim.set_field("T", rng.random(64))
    w = np.ones(64)
    w[[0, -1]] = 0.5  # trapezoidal weights: the discrete operator conserves this sum
    before = (w * sim.fields()["T"]).sum()
    sim.step(1000)
    assert abs((w * sim.fields()["T"]).sum() - before) < 1e-12 * 64


def test_fourier_number_above_half_is_refused():
    with pytest.raises(solvers.ParameterError, match=r"'Fo'.*\(0, 0.5\]"):
        solvers.create("heat-1d", Fo=0.51)



def test_divergence_advice_is_not_a_smaller_fourier_number():
    """With Fo ≤ ½ the scheme keeps a maximum principle, so only data at the edge of the real
    type can overflow; the divergence says so instead of "reduce the time step"."""
    sim = solvers.create("heat-1d", backend="numpy", nx=16)
    sim.set_field("T", np.full(16, 1.7e308))
    with pytest.raises(solvers.SimulationDiverged, match="maximum principle.*cannot help"):
        sim.step(1)
    assert (sim.fields()["T"] == 1.7e308).all()
