"""Generic explicit time integrators, written once with array arithmetic so that they run on NumPy
and CuPy alike. `rhs(t, u)` returns du/dt for a state array `u` of any shape.

Fused GPU paths of a model may implement the same formulas in kernels; their tests compare with
these.
"""
from __future__ import annotations

import math

from .errors import NonFiniteStep


def forward_euler(rhs, u, t: float, dt: float):
    """u + dt f(t, u)."""
    return u + dt * rhs(t, u)


def midpoint_rk2(rhs, u, t: float, dt: float):
    """Midpoint RK2 (SPEC §4): predictor u + dt/2 f(u), corrector u + dt f(t + dt/2, u_pred)."""
    up = u + (0.5 * dt) * rhs(t, u)
    return u + dt * rhs(t + 0.5 * dt, up)


def ssp_rk3(rhs, u, t: float, dt: float):
    """Third-order strong-stability-preserving Runge–Kutta of Shu and Osher."""
    u1 = u + dt * rhs(t, u)
    u2 = 0.75 * u + 0.25 * (u1 + dt * rhs(t + dt, u1))
    return u / 3.0 + (2.0 / 3.0) * (u2 + dt * rhs(t + 0.5 * dt, u2))


class RungeKuttaMerson:
    """Adaptive Runge–Kutta–Merson (seed 000, Algorithm 4.1; SPEC §1.3).

    k-values include τ: k1 = τ f(t, u), k2 = τ f(t+τ/3, u+k1/3), k3 = τ f(t+τ/3, u+k1/6+k2/6),
    k4 = τ f(t+τ/2, u+k1/8+3k3/8), k5 = τ f(t+τ, u+k1/2−3k3/2+2k4);
    e = max |0.2k1 − 0.9k3 + 0.8k4 − 0.1k5| / 3; accept if e < ε: u += (k1+4k4+k5)/6, t += τ;
    always τ ← 0.8 τ (ε/e)^(1/5). Time advances only on acceptance.

    Two guards the paper leaves implicit: the growth factor is capped at `max_growth` (e = 0 would
    give an infinite step), and a step shortened only to land on an end time does not shrink the
    step proposed for the next call.
    """

    max_growth = 5.0

    def __init__(self, tolerance: float, tau: float):
        self.tolerance = float(tolerance)
        self.tau = float(tau)
        self.rejected = 0  # rejected attempts in the last call of step()

    def step(self, rhs, u, t: float, dt_limit: float | None, xp, max_attempts: int = 200):
        """One accepted step: returns (u_new, τ_used)."""
        self.rejected = 0
        for _ in range(max_attempts):
            tau = self.tau if dt_limit is None else min(self.tau, dt_limit)
            clamped = tau < self.tau
            k1 = tau * rhs(t, u)
            k2 = tau * rhs(t + tau / 3, u + k1 / 3)
            k3 = tau * rhs(t + tau / 3, u + (k1 + k2) / 6)
            k4 = tau * rhs(t + tau / 2, u + k1 / 8 + 0.375 * k3)
            k5 = tau * rhs(t + tau, u + 0.5 * k1 - 1.5 * k3 + 2 * k4)
            e = float(xp.max(xp.abs(0.2 * k1 - 0.9 * k3 + 0.8 * k4 - 0.1 * k5))) / 3
            accepted, new_tau = self.control(e, tau)
            if accepted:
                self.tau = max(new_tau, self.tau) if clamped else new_tau
                return u + (k1 + 4 * k4 + k5) / 6, tau
            self.tau = new_tau
            self.rejected += 1
        raise NonFiniteStep(f"RKM rejected {max_attempts} attempts in a row")

    def control(self, e: float, tau: float) -> tuple[bool, float]:
        """(accepted, next τ) for the error estimate e of a step of size τ."""
        if not math.isfinite(e):
            raise NonFiniteStep("non-finite RKM error estimate")
        growth = self.max_growth if e == 0 else min(self.max_growth,
                                                    0.8 * (self.tolerance / e) ** 0.2)
        return e < self.tolerance, tau * growth
