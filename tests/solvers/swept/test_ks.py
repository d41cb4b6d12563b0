"""ks-1d: bounded chaos, the mean conserved to round-off, the stability guard on dt."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.swept.reference import ks_rhs, stable_dt


def test_chaotic_solution_stays_bounded_and_conserves_its_mean():
    sim = solvers.create("ks-1d", backend="numpy", nx=128)
    u0 = sim.fields()["u"]
    sim.set_field("u", u0 + 0.3)  # a non-zero mean
    mean0 = sim.fields()["u"].mean()
    peak = 0.0
    for t in np.linspace(10, 100, 10):
        sim.advance(t)
        u = sim.fields()["u"]
        peak = max(peak, np.abs(u).max())
        assert abs(u.mean() - mean0) < 1e-12
    assert peak < 6, peak                          # bounded (the KS attractor: |u| ≲ 3-4)
    assert sim.fields()["u"].std() > 0.5           # and not decayed: sustained chaos
    assert np.abs(sim.fields()["u"] - u0 - 0.3).max() > 1  # far from the initial state


def test_rhs_is_second_order_on_a_smooth_wave():
    """f(u) of eq. (7) vs the exact −(u u_x + u_xx + u_xxxx) of u = sin(kx): error ∝ Δx²."""
    errs = []
    for n in (64, 128, 256):
        L = 2 * np.pi
        dx = L / n
        x = np.arange(n) * dx
        u = np.sin(x)
        S = [np.roll(u, -r) for r in range(-2, 3)]
        exact = -(u * np.cos(x) - np.sin(x) + np.sin(x))
        errs.append(np.abs(ks_rhs(S, dx) - exact).max())
    eoc = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert np.all(np.abs(eoc - 2) < 0.1), eoc


def test_time_step_beyond_stability_is_refused():
    dx = 32 * np.pi / 256
    with pytest.raises(solvers.ParameterError, match=r"'dt'.*stability.*allowed: .*\(0, "):
        solvers.create("ks-1d", backend="numpy", nx=256, dt=1.01 * stable_dt(dx))
    sim = solvers.create("ks-1d", backend="numpy", nx=256, dt=0.5 * stable_dt(dx))
    sim.step(200)
    assert np.isfinite(sim.fields()["u"]).all()


def test_grid_too_coarse_for_its_length_is_refused_naming_the_minimum():
    """Below one node per unit length the grid is refused, naming nx, L and the minimum nx for
    that L (32π: 101); the guard scales with L."""
    with pytest.raises(solvers.ParameterError,
                       match=r"'nx' = 64 is too coarse for L = 100\.531.*allowed: nx ≥ 101 "):
        solvers.create("ks-1d", backend="numpy", nx=64)
    solvers.create("ks-1d", backend="numpy", nx=101)
    solvers.create("ks-1d", backend="numpy", nx=64, L=64.0)
    with pytest.raises(solvers.ParameterError, match=r"nx ≥ 202 for this L"):
        solvers.create("ks-1d", backend="numpy", nx=200, L=64 * np.pi)


def test_guard_sits_where_the_scheme_fails():
    """benchmarks/swept/ks_resolution.py: 0.7 nodes per unit length diverge (L = 32π, t ≈ 160),
    and then the advice names the nodes this L needs; the guard's minimum, one per unit length,
    runs to t = 300 with bounded chaos."""
    cls = solvers.core.registry.model_class("ks-1d")
    unguarded = type("UnguardedKS", (cls,), {"min_nodes_per_length": 0.0})
    sim = unguarded(backend="numpy", nx=70)
    with pytest.raises(solvers.SimulationDiverged, match=r"Use more nodes for this L: nx = 70 "
                       r".*0\.696 per unit length; nx = 202"):
        sim.advance(300)
    assert 100 < sim.t < 300
    sim = solvers.create("ks-1d", backend="numpy", nx=cls.min_nx(32 * np.pi))
    sim.advance(300)
    u = sim.fields()["u"]
    assert np.abs(u).max() < 6 and u.std() > 0.5
