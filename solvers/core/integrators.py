"""Generic time integrators (explicit, and linearly implicit IMEX), written once with array
arithmetic so that they run on NumPy and CuPy alike. `rhs(t, u)` returns du/dt for a state array
`u` of any shape; the IMEX integrator takes a problem object (see IMEXRungeKutta).

Fused GPU paths of a model may implement the same formulas in kernels; their tests compare with
these.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import NonFiniteStep


def forward_euler(rhs, u, t: float, dt: float):
    """u + dt f(t, u)."""
    return u + dt * rhs(t, u)


def midpoint_rk2(rhs, u, t: float, dt: float):
    """Midpoint RK2 (docs/MODELS.md §4): predictor u + dt/2 f(u), corrector u + dt f(t + dt/2, u_pred)."""
    up = u + (0.5 * dt) * rhs(t, u)
    return u + dt * rhs(t + 0.5 * dt, up)


def ssp_rk3(rhs, u, t: float, dt: float):
    """Third-order strong-stability-preserving Runge–Kutta of Shu and Osher."""
    u1 = u + dt * rhs(t, u)
    u2 = 0.75 * u + 0.25 * (u1 + dt * rhs(t + dt, u1))
    return u / 3.0 + (2.0 / 3.0) * (u2 + dt * rhs(t + 0.5 * dt, u2))


class RungeKuttaMerson:
    """Adaptive Runge–Kutta–Merson ([P0], Algorithm 4.1; docs/MODELS.md §1.3).

    k-values include τ: k1 = τ f(t, u), k2 = τ f(t+τ/3, u+k1/3), k3 = τ f(t+τ/3, u+k1/6+k2/6),
    k4 = τ f(t+τ/2, u+k1/8+3k3/8), k5 = τ f(t+τ, u+k1/2−3k3/2+2k4);
    e = max |0.2k1 − 0.9k3 + 0.8k4 − 0.1k5| / 3; accept if e < ε: u += (k1+4k4+k5)/6, t += τ;
    always τ ← 0.8 τ (ε/e)^(1/5). Time advances only on acceptance.

    Two guards the paper leaves implicit: the growth factor is capped at `max_growth` (e = 0 would
    give an infinite step), and a step shortened only to land on an end time does not shrink the
    step proposed for the next call.
    """

    max_growth = 5.0
    # the maximum over all parts of a state split over processes (core/decomp.py, `Strip.max`:
    # exact, so every rank accepts, rejects and sizes its steps as one process would); None: the
    # state is whole
    reduce_max = None

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
            e = float(xp.max(xp.abs(0.2 * k1 - 0.9 * k3 + 0.8 * k4 - 0.1 * k5)))
            e = (e if self.reduce_max is None else self.reduce_max(e)) / 3
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


@dataclass(frozen=True)
class IMEXTableau:
    """A linearly implicit IMEX Runge–Kutta method of the Ascher–Ruuth–Spiteri type for
    u' = N(t, u) + G(t, u), G affine in u (the stiff part, implicit), N the rest (explicit):

        U_1 = u,   U_i = u + τ Σ_{j<i} a^E_ij N_j + τ Σ_{1<j<i} a^I_ij G_j + τ γ G_i   (i = 2..s)

    with N_j = N(t + c_j τ, U_j), G_j = G(t + c_j τ, U_j). The first stage is explicit (a^I_i1 = 0,
    a^I_11 = 0), the implicit diagonal is γ, and the method is globally stiffly accurate:
    u_new = U_s (the last rows are the weights, b^E_s = 0). Global stiff accuracy keeps the
    amplification bounded where the explicit part is itself stiff (N ≈ r·G, 0 ≤ r < 1: the part of
    a variable-coefficient operator a constant-coefficient G over-compensates), which the usual
    ARK pairs (weights b ≠ last row) are not: their amplification grows like τ|λ| there."""

    name: str
    explicit: tuple
    implicit: tuple
    order: int

    @property
    def stages(self) -> int:
        return len(self.explicit)

    @property
    def gamma(self) -> float:
        return self.implicit[1][1]

    @property
    def c(self) -> tuple:
        return tuple(sum(row) for row in self.explicit)


_G2 = 1 - 1 / math.sqrt(2)
_D2 = 1 - 1 / (2 * _G2)
# ARS(2,2,2): second order, L-stable implicit part (Ascher, Ruuth & Spiteri 1997, §2.6)
ARS222 = IMEXTableau("ARS(2,2,2)",
                     ((0, 0, 0), (_G2, 0, 0), (_D2, 1 - _D2, 0)),
                     ((0, 0, 0), (0, _G2, 0), (0, 1 - _G2, _G2)), 2)
# ARS(4,4,3): third order, L-stable implicit part, γ = 1/2 (Ascher, Ruuth & Spiteri 1997, §2.8)
ARS443 = IMEXTableau("ARS(4,4,3)",
                     ((0, 0, 0, 0, 0), (1 / 2, 0, 0, 0, 0), (11 / 18, 1 / 18, 0, 0, 0),
                      (5 / 6, -5 / 6, 1 / 2, 0, 0), (1 / 4, 7 / 4, 3 / 4, -7 / 4, 0)),
                     ((0, 0, 0, 0, 0), (0, 1 / 2, 0, 0, 0), (0, 1 / 6, 1 / 2, 0, 0),
                      (0, -1 / 2, 1 / 2, 1 / 2, 0), (0, 3 / 2, -3 / 2, 1 / 2, 1 / 2)), 3)


class IMEXRungeKutta:
    """Adaptive linearly implicit IMEX Runge–Kutta (an `IMEXTableau`) with step-doubling error
    control, accepted/rejected like `RungeKuttaMerson`.

    The problem is an object with
        f(t, u)         the whole right-hand side N + G
        g(t, u)         the implicit part G(t, u) = L u + b(t) (L linear, constant)
        solve(t, r, c)  the U with U − c G(t, U) = r, i.e. (I − cL) U = r + c b(t)
        smooth(e, c)    (I − cL)⁻¹ e (optional): the error filter below
        combine(u, [(a, x), ...])  u + Σ a x in one pass (optional; default: term by term)
    G_i is never evaluated at an implicit stage: the stage equation gives τ G_i = (U_i − R_i)/γ.

    An attempt of size τ takes one step of τ (u_τ) and two of τ/2 (u_τ/2,τ/2, the result):
    e = max |S (u_τ/2,τ/2 − u_τ)| / (2^p − 1) estimates the local error of the result (order p),
    S = smooth(·, γτ) (Hairer & Wanner, Solving ODEs II, IV.8: the estimate's stiff components,
    which the next steps damp, would otherwise force τ ~ 1/|λ_max|). Accept if e < ε; always
    τ ← τ min(5, 0.8 (ε/e)^(1/(p+1))); time advances only on acceptance; f(t, u) and g(t, u) are
    evaluated once per accepted step (shared by both solutions and by retried attempts). The two
    guards of RungeKuttaMerson hold here too.
    """

    max_growth = 5.0

    def __init__(self, tableau: IMEXTableau, tolerance: float, tau: float):
        self.tableau = tableau
        self.tolerance = float(tolerance)
        self.tau = float(tau)
        self.rejected = 0  # rejected attempts in the last call of step()
        self.attempts = 0  # attempts in the last call of step()

    def advance(self, problem, u, t: float, tau: float, f0=None, g0=None):
        """One step of the tableau from (t, u) of size τ; f0, g0: f(t, u), g(t, u) if known."""
        tab = self.tableau
        gam = tab.gamma
        f0 = problem.f(t, u) if f0 is None else f0
        g0 = problem.g(t, u) if g0 is None else g0
        tn = [tau * (f0 - g0)]  # τ N_j
        tg = [tau * g0]  # τ G_j
        c = gam * tau
        U = u
        combine = getattr(problem, "combine", None)
        for i in range(1, tab.stages):
            terms = [(tab.explicit[i][j], tn[j]) for j in range(i) if tab.explicit[i][j]]
            terms += [(tab.implicit[i][j], tg[j]) for j in range(1, i) if tab.implicit[i][j]]
            if combine is not None:
                r = combine(u, terms)
            else:
                r = u
                for a, x in terms:
                    r = r + a * x
            ti = t + tab.c[i] * tau
            U = problem.solve(ti, r, c)
            if i < tab.stages - 1:
                tg.append((U - r) / gam)
                tn.append(tau * problem.f(ti, U) - tg[i])
        return U

    def step(self, problem, u, t: float, dt_limit: float | None, xp, max_attempts: int = 200):
        """One accepted step: returns (u_new, τ_used)."""
        self.rejected = self.attempts = 0
        f0 = problem.f(t, u)
        g0 = problem.g(t, u)
        smooth = getattr(problem, "smooth", None)
        div = 2 ** self.tableau.order - 1
        for _ in range(max_attempts):
            tau = self.tau if dt_limit is None else min(self.tau, dt_limit)
            clamped = tau < self.tau
            self.attempts += 1
            whole = self.advance(problem, u, t, tau, f0, g0)
            half = self.advance(problem, u, t, 0.5 * tau, f0, g0)
            u_new = self.advance(problem, half, t + 0.5 * tau, 0.5 * tau)
            d = u_new - whole
            if smooth is not None:
                d = smooth(d, self.tableau.gamma * tau)
            e = float(xp.max(xp.abs(d))) / div
            accepted, new_tau = self.control(e, tau)
            if accepted:
                self.tau = max(new_tau, self.tau) if clamped else new_tau
                return u_new, tau
            self.tau = new_tau
            self.rejected += 1
        raise NonFiniteStep(f"IMEX rejected {max_attempts} attempts in a row")

    def control(self, e: float, tau: float) -> tuple[bool, float]:
        """(accepted, next τ) for the error estimate e of a step of size τ."""
        if not math.isfinite(e):
            raise NonFiniteStep("non-finite IMEX error estimate")
        p1 = self.tableau.order + 1
        growth = self.max_growth if e == 0 else min(self.max_growth,
                                                    0.8 * (self.tolerance / e) ** (1 / p1))
        return e < self.tolerance, tau * growth
