"""The exact solution of scenario `eoc-exact` (seed 000, eq. (30); SPEC §1.5) and its forcing.

    ζ(t, x, y) = cos(πt) X(x) Y(y),   X(x) = ((x/r)^n − 1) exp(−σx²)   (= (x^n − r^n) e^{−σx²} / r^n)

so every partial derivative is ∂x^a ∂y^b ζ = cos(πt) X^(a)(x) Y^(b)(y). The 1D derivatives come from
Leibniz's rule over ((x/r)^n − 1) (a falling factorial, any integer n ≥ 1) and exp(−σx²) (the
polynomials h_m derived by sympy in `derive_forcing.py`); the operators of SPEC §1.1 applied to ζ are
the generated `exact_ops` functions of these derivatives. F = ζ_t − L[ζ] is therefore exact (no
numerical differencing) for any r > 0, integer n ≥ 1 and σ.
"""
from __future__ import annotations

from math import comb, cos, pi, sin

import numpy as np

from .exact_ops import MC_ARGS, W_ARGS, gauss_derivative_polys, mean_curvature_op, willmore_op

KMAX = 4


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
    """ζ and the forcing of `eoc-exact` on the nodes x (len N1+1), y (len N2+1), as xp arrays."""

    def __init__(self, x, y, r: float, n: int, sigma: float, willmore: bool, xp, dtype):
        self.tx = derivative_table(x, r, n, sigma)
        self.ty = derivative_table(y, r, n, sigma)
        self.willmore = willmore
        self.xp = xp
        kmax = 4 if willmore else 2
        # D_ab = X^(a)(x) Y^(b)(y) on all nodes, computed in float64, stored in the run's dtype
        self.d = {(a, b): xp.asarray(np.outer(self.ty[b], self.tx[a]), dtype=dtype)
                  for a in range(kmax + 1) for b in range(kmax + 1 - a)}

    def zeta(self, t: float, xp=None):
        return cos(pi * t) * self.d[0, 0]

    def zeta_t(self, t: float):
        return (-pi * sin(pi * t)) * self.d[0, 0]

    def _derivs(self, t: float, names, sl):
        c = cos(pi * t)
        return [c * self.d[int(p[1]), int(p[2])][sl] for p in names]

    def w(self, t: float, sl=(slice(None), slice(None))):
        """w[ζ] = Q ∇·(∇ζ/Q) (the Willmore boundary value w(g) of SPEC §1.2/§1.5)."""
        return mean_curvature_op(*self._derivs(t, MC_ARGS, sl), xp=self.xp)

    def forcing(self, t: float):
        """F = ζ_t − L[ζ] at the interior nodes (shape (N2−1, N1−1))."""
        sl = (slice(1, -1), slice(1, -1))
        if self.willmore:
            op = willmore_op(*self._derivs(t, W_ARGS, sl), xp=self.xp)
        else:
            op = mean_curvature_op(*self._derivs(t, MC_ARGS, sl), xp=self.xp)
        return self.zeta_t(t)[sl] - op

    def tables(self, dtype):
        """The 1D tables (5, N1+1) and (5, N2+1) the fused kernels evaluate the forcing from."""
        return (self.xp.asarray(self.tx, dtype=dtype), self.xp.asarray(self.ty, dtype=dtype))
