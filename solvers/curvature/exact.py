"""The exact solution of scenario `eoc-exact` ([P0], eq. (30); docs/MODELS.md §1.5) and its forcing.

    ζ(t, x, y) = cos(πt) X(x) Y(y),   X(x) = ((x/r)^n − 1) exp(−σx²)   (= (x^n − r^n) e^{−σx²} / r^n)

so every partial derivative is ∂x^a ∂y^b ζ = cos(πt) X^(a)(x) Y^(b)(y). The 1D derivatives come from
Leibniz's rule over ((x/r)^n − 1) (a falling factorial, any integer n ≥ 1) and exp(−σx²) (the
polynomials h_m derived by sympy in `derive_forcing.py`); the operators of docs/MODELS.md §1.1 applied to ζ are
the generated `exact_ops` functions of these derivatives. Since every derivative carries the factor
c = cos(πt), the operators are rational in c with fixed fields: w[ζ] = (b1 c + b3 c³)/(1 + c²B) and
L_w[ζ] = (a1 c + a3 c³ + ... + a9 c⁹)/(1 + c²B)⁴, B = |∇g|² (derive_forcing.py finds and checks these
forms); the coefficient fields are evaluated once in float64, so the forcing at any time costs a few
operations per node. F = ζ_t − L[ζ] is exact (no numerical differencing) for any r > 0, integer
n ≥ 1 and σ.

`space_time_errors` and `eoc` measure a run against ζ: the discrete space-time norms (31)–(33) and
the experimental order of convergence (34) of the paper's Tables 2–4.
"""
from __future__ import annotations

import math
from math import comb, cos, pi, sin

import numpy as np

from .exact_ops import (MC_DEN_POWER, W_DEN_POWER, gauss_derivative_polys,
                        mean_curvature_coefficients, willmore_coefficients)

KMAX = 4
T_END = 0.1  # the end time of the paper's convergence tables


def derivative_table(x, r: float, n: int, sigma: float) -> np.ndarray:
    """X^(k)(x) for k = 0..4 as a (5, len(x)) float64 array."""
    x = np.asarray(x, dtype=np.float64)
    s = x / r
    gauss = np.exp(-sigma * x * x)
    h = gauss_derivative_polys(x, sigma)
    # d^m/dx^m ((x/r)^n − 1) = n!/(n−m)! (x/r)^(n−m) / r^m for 1 ≤ m ≤ n, 0 beyond
    a = [s**n - 1]
    for m in range(1, KMAX + 1):
        if m > n:
            a.append(np.zeros_like(x))
        else:
            ff = 1
            for q in range(m):
                ff *= n - q
            a.append(ff * s ** (n - m) / r**m)
    out = np.empty((KMAX + 1, len(x)))
    for k in range(KMAX + 1):
        out[k] = gauss * sum(comb(k, m) * a[m] * h[k - m] for m in range(k + 1))
    return out


class ExactSolution:
    """ζ and the forcing of `eoc-exact` on the nodes x (len N1+1), y (len N2+1), as xp arrays.

    `coef` holds the fields [g, B, a1, a3, a5, a7, a9, b1, b3] (Willmore) or [g, B, b1, b3]
    (mean curvature), shape (rows, N2+1, N1+1), in the run's dtype."""

    def __init__(self, x, y, r: float, n: int, sigma: float, willmore: bool, xp, dtype,
                 rows=slice(None)):
        """rows: the node rows to hold (a strip of a decomposed run: its rows and halos); the
        table of y is computed for all of y, then cut, so a row's values do not depend on it."""
        self.tx = derivative_table(x, r, n, sigma)
        self.ty = derivative_table(y, r, n, sigma)[:, rows]
        self.willmore = willmore
        self.xp = xp
        kmax = 4 if willmore else 2
        q = {f"q{a}{b}": np.outer(self.ty[b], self.tx[a])  # ∂x^a ∂y^b g, float64
             for a in range(kmax + 1) for b in range(kmax + 1 - a)}
        rows = [q["q00"], q["q10"] ** 2 + q["q01"] ** 2]
        mc = [q[k] for k in ("q10", "q01", "q20", "q11", "q02")]
        if willmore:
            w_args = [q[k] for k in ("q10", "q01", "q20", "q11", "q02", "q30", "q21", "q12",
                                     "q03", "q40", "q31", "q22", "q13", "q04")]
            rows += willmore_coefficients(*w_args)
        rows += mean_curvature_coefficients(*mc)
        self.coef = xp.asarray(np.stack([np.broadcast_to(r_, q["q00"].shape) for r_ in rows]),
                               dtype=dtype)
        self._b = 7 if willmore else 2  # first row of b1, b3

    def zeta(self, t: float):
        return cos(pi * t) * self.coef[0]

    def zeta_t(self, t: float):
        return (-pi * sin(pi * t)) * self.coef[0]

    def w(self, t: float, sl=(slice(None), slice(None))):
        """w[ζ] = Q ∇·(∇ζ/Q) (the Willmore boundary value w(g) of docs/MODELS.md §1.2/§1.5)."""
        c = cos(pi * t)
        k = self._b
        co = self.coef[(slice(None),) + tuple(sl)]
        return (co[k] + co[k + 1] * (c * c)) * c / (1 + (c * c) * co[1]) ** MC_DEN_POWER

    def operator(self, t: float, sl=(slice(1, -1), slice(1, -1))):
        """L[ζ(t)] (the flow's right-hand side without forcing), default: interior nodes."""
        if not self.willmore:
            return self.w(t, sl)
        c = cos(pi * t)
        c2 = c * c
        co = self.coef[(slice(None),) + tuple(sl)]
        d = 1 + c2 * co[1]
        d2 = d * d
        num = ((((co[6] * c2 + co[5]) * c2 + co[4]) * c2 + co[3]) * c2 + co[2]) * c
        assert W_DEN_POWER == 4
        return num / (d2 * d2)

    def forcing(self, t: float):
        """F = ζ_t − L[ζ] at the interior nodes (shape (N2−1, N1−1))."""
        sl = (slice(1, -1), slice(1, -1))
        return self.zeta_t(t)[sl] - self.operator(t, sl)

    def tables(self, dtype):
        """The 1D tables (5, N1+1) and (5, N2+1) the fused kernels evaluate the forcing from."""
        return (self.xp.asarray(self.tx, dtype=dtype), self.xp.asarray(self.ty, dtype=dtype))


def space_time_errors(sim, samples: int = 10, t_end: float = T_END, advance=None):
    """(L1, L2, L∞) errors of φ_h − P_h(ζ) over t = kθ, θ = T/M, k = 0..M (M = `samples`), in the
    norms (31)–(33), advancing `sim` (an eoc-exact simulation at t = 0) to T = t_end; `advance(t)`
    (default sim.advance) does the advancing, so that a caller may time it."""
    advance = advance or sim.advance
    h1h2 = sim.h1 * sim.h2
    theta = t_end / samples
    l1 = l2 = linf = 0.0
    for k in range(samples + 1):
        if k:
            advance(k * theta)
        e = sim.fields()["phi"].astype(np.float64) - sim.exact_phi()
        l1 += theta * np.abs(e).sum() * h1h2
        l2 += theta * (e * e).sum() * h1h2
        linf = max(linf, float(np.abs(e).max()))
    return l1, math.sqrt(l2), linf


def eoc(errors, sizes):
    """EOC between consecutive grids (34), h ∝ 1/nx: [None, (EOC_L1, EOC_L2, EOC_L∞), ...]."""
    out = [None]
    for (e0, e1, n0, n1) in zip(errors[:-1], errors[1:], sizes[:-1], sizes[1:]):
        out.append(tuple(math.log(a / b) / math.log(n1 / n0) for a, b in zip(e0, e1)))
    return out
