"""Fast solves of the linearised curvature operators on the interior nodes (the implicit part of
the IMEX integrator, imex.py).

Interior nodes i = 1..N1−1, j = 1..N2−1 (M1 = N1 − 1, M2 = N2 − 1 of them); Δ_h is the 5-point
Laplacian (the mean-curvature scheme (17) at Q = 1). Its eigenvectors on the interior:

* Neumann (the boundary nodes copy their inner neighbours, φ_0 = φ_1, φ_N = φ_{N−1}): row i of
  Δ_h is (φ_{i+1} − 2φ_i + φ_{i−1})/h² with φ_0 = φ_1 at i = 1, i.e. the cell-centred reflection
  of the interior values, diagonalised by the DCT-II: cos(πk(i − ½)/M), eigenvalue
  −μ_k = −4 sin²(πk/(2M))/h², k = 0..M−1 (k = 0: the constant, μ = 0);
* Dirichlet (boundary values known and moved to the right-hand side, see imex.py): the DST-I,
  sin(πki/N), −μ_k = −4 sin²(πk/(2N))/h², k = 1..N−1.

In 2D the eigenvalues add, μ = μ_x(k) + μ_y(l); the implicit operator is L = −κ with κ = μ (mean
curvature: L = Δ_h) or κ = μ² (Willmore: L = −Δ_h², w = Δ_h φ with the same boundary rule as φ).
`solve(r, c)` returns (I − cL)⁻¹ r = T⁻¹[T r / (1 + cκ)].

The transforms are orthonormal. NumPy: scipy.fft's dctn/dstn (types 2 and 1). CuPy: cupyx's DCT
and DST stop at types 2 and 3 (no DST-I), so both 2D transforms are built here from one
xp.fft.rfft2/irfft2 (cuFFT) of the extension even (DCT-II) or odd (DST-I) in both axes; with
xp = numpy the same code runs on the CPU, which is how the tests check it against scipy.
"""
from __future__ import annotations

import math

import numpy as np


def _dct_factors(n: int, xp, dtype):
    """The phases e^{−iπk/(2n)} and the orthonormal scales of the DCT-II of length n."""
    k = np.arange(n)
    scale = np.full(n, math.sqrt(1 / (2 * n)))
    scale[0] = math.sqrt(1 / (4 * n))
    cdtype = np.result_type(dtype, np.complex64)
    return xp.asarray(np.exp(-1j * np.pi * k / (2 * n)), dtype=cdtype), xp.asarray(scale, dtype)


def dst1_2d(a, xp):
    """The orthonormal 2D DST-I (its own inverse) in one rfft2: the extension odd in both axes
    (size 2(m2+1) × 2(m1+1)) has the real spectrum −4 ΣΣ a sin sin."""
    m2, m1 = a.shape
    n2, n1 = m2 + 1, m1 + 1
    e = xp.zeros((2 * n2, 2 * n1), dtype=a.dtype)
    e[1:n2, 1:n1] = a
    e[1:n2, n1 + 1:] = -a[:, ::-1]
    e[n2 + 1:, 1:n1] = -a[::-1, :]
    e[n2 + 1:, n1 + 1:] = a[::-1, ::-1]
    y = xp.fft.rfft2(e)
    return (y.real[1:n2, 1:n1] * (-0.5 / math.sqrt(n1 * n2))).astype(a.dtype, copy=False)


def _dct_2d_factors(shape, xp, dtype):
    """Phases e^{−iπl/(2n2)} (column) and e^{−iπk/(2n1)} (row), the orthonormal scale, and for
    the inverse the phases e^{iπl/(2n2)} of the full axis l = 0..2n2−1 times the sign of the
    coefficients' odd continuation (D(n2) = 0, D(2n2 − l) = −D(l)), and e^{iπk/(2n1)}."""
    (p2, s2), (p1, s1) = (_dct_factors(n, xp, dtype) for n in shape)
    n2 = shape[0]
    l2 = np.exp(1j * np.pi * np.arange(2 * n2) / (2 * n2)) * np.r_[np.ones(n2), 0, -np.ones(n2 - 1)]
    return (p2[:, None], p1[None, :], s2[:, None] * s1[None, :],
            xp.asarray(l2[:, None], dtype=p2.dtype), xp.conj(p1)[None, :])


def dct2_2d(a, xp, factors=None):
    """The orthonormal 2D DCT-II in one rfft2 of the extension even in both axes: its
    coefficient (l, k) is e^{iπl/(2n2)} e^{iπk/(2n1)} · 4 ΣΣ a cos cos. `factors`: those of
    _dct_2d_factors, if kept (on the GPU they are otherwise copied to the device every call)."""
    n2, n1 = a.shape
    e = xp.empty((2 * n2, 2 * n1), dtype=a.dtype)
    e[:n2, :n1] = a
    e[:n2, n1:] = a[:, ::-1]
    e[n2:, :] = e[n2 - 1::-1, :]
    y = xp.fft.rfft2(e)[:n2, :n1]
    q2, q1, scale = (factors or _dct_2d_factors(a.shape, xp, a.dtype))[:3]
    return ((y * q2 * q1).real * scale).astype(a.dtype, copy=False)


def idct2_2d(c, xp, factors=None):
    """The inverse of dct2_2d: the half spectrum of the even extension rebuilt from the
    coefficients D (D = 0 at index n, D(2n − l) = −D(l) along the full axis), then irfft2."""
    n2, n1 = c.shape
    _, _, scale, l2, k1 = factors or _dct_2d_factors(c.shape, xp, c.dtype)
    d = c / scale
    spec = xp.zeros((2 * n2, n1 + 1), dtype=l2.dtype)
    spec[:n2, :n1] = d
    spec[n2 + 1:, :n1] = d[:0:-1, :]
    spec[:, :n1] *= l2 * k1
    ext = xp.fft.irfft2(spec, s=(2 * n2, 2 * n1))
    return ext[:n2, :n1].astype(c.dtype, copy=False)


def eigenvalues(m: int, h: float, neumann: bool) -> np.ndarray:
    """μ_k ≥ 0 of −Δ_h in 1D on the m interior nodes (Neumann: DCT-II; Dirichlet: DST-I)."""
    if neumann:
        return 4 * np.sin(np.pi * np.arange(m) / (2 * m)) ** 2 / (h * h)
    return 4 * np.sin(np.pi * np.arange(1, m + 1) / (2 * (m + 1))) ** 2 / (h * h)


class FastSolver:
    """(I − cL)⁻¹ on the interior nodes for L = −κ (see the module docstring): `power` 1 is the
    Laplacian (mean curvature), 2 the bilaplacian (Willmore); `scale` multiplies L (the
    stabilising constant)."""

    def __init__(self, m1: int, m2: int, h1: float, h2: float, neumann: bool, power: int, xp,
                 dtype, scale: float = 1.0, use_scipy: bool | None = None):
        self.xp = xp
        self.neumann = neumann
        mu = eigenvalues(m2, h2, neumann)[:, None] + eigenvalues(m1, h1, neumann)[None, :]
        self.kappa = xp.asarray(scale * mu**power, dtype=dtype)
        self.use_scipy = (xp is np) if use_scipy is None else use_scipy
        self.factors = _dct_2d_factors((m2, m1), xp, dtype) if neumann else None

    def forward(self, a):
        if self.use_scipy:
            from scipy import fft
            return (fft.dctn(a, type=2, norm="ortho") if self.neumann
                    else fft.dstn(a, type=1, norm="ortho"))
        if self.neumann:
            return dct2_2d(a, self.xp, self.factors)
        return dst1_2d(a, self.xp)

    def inverse(self, a):
        if self.use_scipy:
            from scipy import fft
            return (fft.idctn(a, type=2, norm="ortho") if self.neumann
                    else fft.idstn(a, type=1, norm="ortho"))
        if self.neumann:
            return idct2_2d(a, self.xp, self.factors)
        return dst1_2d(a, self.xp)

    def solve(self, r, c: float):
        """(I − cL)⁻¹ r = T⁻¹[T r / (1 + cκ)] for c ≥ 0."""
        return self.inverse(self.forward(r) / (1 + c * self.kappa))
