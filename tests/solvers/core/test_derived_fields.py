"""Derived fields (mean curvature, η, u and p, algebraic species) are computed only when asked
for: the live view asks every frame for the one field it shows, and a derivation it does not
show cost mean curvature 1024² about 4 % of its speed while drawing (docs/BENCHMARKS.md)."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.curvature import model as curvature_model
from pdestudio.solvers.swept import model as swept_model


def test_a_frame_of_phi_does_not_compute_the_mean_curvature(monkeypatch):
    sim = solvers.create("mean-curvature", backend="numpy", nx=16, ny=16)
    whole = sim.device_fields()
    calls = []
    real = curvature_model.mean_curvature_field

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(curvature_model, "mean_curvature_field", counted)
    phi = sim.device_fields(["phi"])
    assert list(phi) == ["phi"] and not calls
    both = sim.device_fields(["phi", "mean_curvature"])
    assert len(calls) == 1
    np.testing.assert_array_equal(both["mean_curvature"], whole["mean_curvature"])
    assert sim.fields()["mean_curvature"].shape == whole["phi"].shape and len(calls) == 2


def test_euler_frames_of_rho_skip_pressure_and_velocity(monkeypatch):
    sim = solvers.create("euler-1d", backend="numpy", nx=64)
    p = sim.device_fields(["p"])["p"]
    monkeypatch.setattr(swept_model, "pressure", lambda *a: pytest.fail("pressure computed"))
    assert set(sim.device_fields(["rho", "E"])) == {"rho", "E"}
    monkeypatch.undo()
    np.testing.assert_array_equal(sim.fields()["p"], p)
    assert sim.field_shape("u") == p.shape


def test_shallow_water_triangles_renumber_lazy_fields():
    sim = solvers.create("shallow-water", backend="numpy", geometry="triangles")
    s, f = sim.state, sim.device_fields(["eta", "bottom"])
    eta = np.empty_like(f["eta"])
    eta[sim._rank] = f["eta"]  # back to the internal (renumbered) order
    np.testing.assert_array_equal(eta, s["h"] - s["H"])
