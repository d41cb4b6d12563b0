"""The generic integrators: orders of accuracy on u' = λu (arrays), and RKM step control."""
import math

import numpy as np
import pytest

from pdestudio.solvers.core.errors import NonFiniteStep
from pdestudio.solvers.core.integrators import (RungeKuttaMerson, forward_euler, midpoint_rk2, ssp_rk3)

LAM = np.array([-1.0, -0.5, 0.3])


def rhs(t, u):
    return LAM * u + np.cos(t)  # non-autonomous, so the stage times matter


def reference(T):
    # exact solution of u' = λu + cos t, u(0) = 1: u = e^{λt}(1 - c) + c', solved per component
    out = []
    for lam in LAM:
        a = 1 / (lam**2 + 1)
        part = a * (-lam * math.cos(T) + math.sin(T))
        u0p = a * (-lam)
        out.append((1 - u0p) * math.exp(lam * T) + part)
    return np.array(out)


@pytest.mark.parametrize("method,order", [(forward_euler, 1), (midpoint_rk2, 2), (ssp_rk3, 3)])
def test_fixed_step_orders(method, order):
    errs = []
    for n in (20, 40, 80):
        u, dt = np.ones(3), 1.0 / n
        for k in range(n):
            u = method(rhs, u, k * dt, dt)
        errs.append(np.abs(u - reference(1.0)).max())
    eoc = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert np.all(np.abs(eoc - order) < 0.15), eoc


def test_rkm_meets_the_tolerance_and_shrinks_the_step_when_it_must():
    loose, tight = [], []
    for tol, acc in ((1e-4, loose), (1e-9, tight)):
        rkm, u, t = RungeKuttaMerson(tol, tau=0.5), np.ones(3), 0.0
        rejected = 0
        while t < 1.0:
            u, tau = rkm.step(rhs, u, t, 1.0 - t, np)
            t = 1.0 if tau >= 1.0 - t else t + tau
            rejected += rkm.rejected
            acc.append(tau)
        err = np.abs(u - reference(1.0)).max()
        assert err < 50 * tol, (tol, err)
        if tol == 1e-9:
            assert rejected > 0, "a first step of 0.5 must be rejected at tolerance 1e-9"
    assert len(tight) > 3 * len(loose)
    assert max(tight[1:]) < max(loose[1:])


def test_rkm_step_shortened_to_land_does_not_shrink_the_next_proposal():
    rkm = RungeKuttaMerson(1e-3, tau=0.1)
    u, tau = rkm.step(rhs, np.ones(3), 0.0, 1e-6, np)
    assert tau == 1e-6 and rkm.tau >= 0.1


def test_rkm_non_finite_error_raises():
    rkm = RungeKuttaMerson(1e-3, tau=0.1)
    with pytest.raises(NonFiniteStep):
        rkm.step(lambda t, u: u * np.nan, np.ones(3), 0.0, None, np)
