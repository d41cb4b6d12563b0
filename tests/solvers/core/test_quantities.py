"""The quantities models declare (plots over time, sweep results): each one's property — heat
conserved and the error against the exact decay of second order; water volume conserved and
energy dissipated; cell mass conserved by the positive chemotaxis scheme without growth — and the
GPU's values equal to NumPy's."""
import math

import numpy as np
import pytest

from pdestudio import solvers

from .test_timeline import SMALL


def test_heat_is_conserved_and_the_error_is_second_order():
    errors = []
    for nx in (33, 65, 129):
        sim = solvers.create("heat-1d", backend="numpy", nx=nx, T_mean=0.3, mode=2)
        q0 = sim.quantities()
        sim.advance(0.01)
        q = sim.quantities()
        assert math.isclose(q["heat"], q0["heat"], rel_tol=1e-13) and q0["heat"] == \
            pytest.approx(0.3, rel=1e-13)
        errors.append(q["error"])
    orders = [math.log2(a / b) for a, b in zip(errors, errors[1:])]
    assert all(1.9 < o < 2.1 for o in orders), orders


def test_curvature_error_against_the_exact_solution_converges():
    errors = []
    for nx in (16, 32):
        sim = solvers.create("mean-curvature", backend="numpy", scenario="eoc-exact", nx=nx)
        sim.advance(0.05)
        q = sim.quantities()
        assert q["step size"] == sim.controller.tau > 0
        errors.append(q["error"])
    assert math.log2(errors[0] / errors[1]) > 1.8, errors
    sine = solvers.create("mean-curvature", backend="numpy", nx=16).quantities()
    assert math.isnan(sine["error"])


@pytest.mark.parametrize("kw", [{"nx": 40}, {"scenario": "bump-dambreak", "cells": 3000}])
def test_water_volume_is_conserved_and_energy_dissipated(kw):
    sim = solvers.create("shallow-water", backend="numpy", **kw)
    q0 = sim.quantities()
    energy = [q0["energy"]]
    for _ in range(8):
        sim.step(5)
        energy.append(sim.quantities()["energy"])
    q = sim.quantities()
    assert abs(q["volume"] - q0["volume"]) <= 1e-13 * q0["volume"]
    assert all(b <= a * (1 + 1e-13) for a, b in zip(energy, energy[1:]))
    assert energy[-1] < 0.99 * energy[0]  # the dam break loses energy at its bores


def test_positive_chemotaxis_conserves_the_cells_without_growth():
    sim = solvers.create("chemotaxis", backend="numpy", vertices=1500, r=0.0)
    q0 = sim.quantities()
    sim.advance(2.0)
    q = sim.quantities()
    assert abs(q["mass cells"] - q0["mass cells"]) <= 1e-12 * q0["mass cells"]
    assert q["max cells"] > q0["max cells"]  # and it did move (aggregation)


@pytest.mark.gpu
@pytest.mark.parametrize("model", sorted(SMALL))
def test_gpu_quantities_equal_numpy(model, gpu_backend):
    d = solvers.describe(model)
    kw = {d["size_param"]: SMALL[model]}
    a = solvers.create(model, backend="numpy", **kw)
    b = solvers.create(model, backend=gpu_backend, **kw)
    b.restore(a.snapshot())  # the same state on both
    qa, qb = a.quantities(), b.quantities()
    assert list(qa) == list(qb)
    for k in qa:
        assert np.isclose(qa[k], qb[k], rtol=1e-12, atol=1e-12 * (1 + abs(qa[k])),
                          equal_nan=True), (k, qa[k], qb[k])
