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
and DST stop at types 2 and 3, so both transforms are built here from xp.fft.rfft/irfft (cuFFT)
with the even (DCT-II) and odd (DST-I) extensions; with xp = numpy the same code runs on the CPU,
which is how the tests check it against scipy.
"""
from __future__ import annotations

import math

import numpy as np


def _along(last, a, xp, axis: int):
    """Apply `last` (a transform along the last axis) along `axis`."""
    if axis in (-1, a.ndim - 1):
        return last(a)
    return xp.moveaxis(last(xp.moveaxis(a, axis, -1)), -1, axis)


def dst1(x, xp, axis: int = -1):
    """Orthonormal DST-I along `axis` (its own inverse): X_k = √(2/(n+1)) Σ_j x_j sin(π(j+1)(k+1)
    /(n+1)), from the rfft of the odd extension [0, x, 0, −x reversed] of length 2(n+1), whose
    coefficient k is −2i Σ_j x_j sin(π(j+1)k/(n+1))."""
    def last(a):
        n = a.shape[-1]
        z = xp.zeros(a.shape[:-1] + (1,), dtype=a.dtype)
        y = xp.fft.rfft(xp.concatenate([z, a, z, -a[..., ::-1]], axis=-1), axis=-1)
        return (y.imag[..., 1:n + 1] * (-1 / math.sqrt(2 * (n + 1)))).astype(a.dtype, copy=False)
    return _along(last, x, xp, axis)


def _dct_factors(n: int, xp, dtype):
    """The phases e^{−iπk/(2n)} and the orthonormal scales of the DCT-II of length n."""
    k = np.arange(n)
    scale = np.full(n, math.sqrt(1 / (2 * n)))
    scale[0] = math.sqrt(1 / (4 * n))
    cdtype = np.result_type(dtype, np.complex64)
    return xp.asarray(np.exp(-1j * np.pi * k / (2 * n)), dtype=cdtype), xp.asarray(scale, dtype)


def dct2(x, xp, axis: int = -1):
    """Orthonormal DCT-II along `axis` (scipy's norm="ortho"): coefficient k of the rfft of the
    even extension [x, x reversed] is e^{iπk/(2n)} · 2 Σ_j x_j cos(πk(2j+1)/(2n))."""
    def last(a):
        n = a.shape[-1]
        phase, scale = _dct_factors(n, xp, a.dtype)
        y = xp.fft.rfft(xp.concatenate([a, a[..., ::-1]], axis=-1), axis=-1)[..., :n]
        return ((y * phase).real * scale).astype(a.dtype, copy=False)
    return _along(last, x, xp, axis)


def idct2(y, xp, axis: int = -1):
    """The inverse of dct2 (the orthonormal DCT-III): the spectrum of the even extension rebuilt
    from the coefficients (and 0 at k = n), then irfft."""
    def last(a):
        n = a.shape[-1]
        phase, scale = _dct_factors(n, xp, a.dtype)
        spec = (a / scale) * xp.conj(phase)
        zero = xp.zeros(a.shape[:-1] + (1,), dtype=spec.dtype)
        ext = xp.fft.irfft(xp.concatenate([spec, zero], axis=-1), n=2 * n, axis=-1)
        return ext[..., :n].astype(a.dtype, copy=False)
    return _along(last, y, xp, axis)


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

    def forward(self, a):
        if self.use_scipy:
            from scipy import fft
            return (fft.dctn(a, type=2, norm="ortho") if self.neumann
                    else fft.dstn(a, type=1, norm="ortho"))
        xp = self.xp
        t = dct2 if self.neumann else dst1
        return t(t(a, xp, -1), xp, 0)

    def inverse(self, a):
        if self.use_scipy:
            from scipy import fft
            return (fft.idctn(a, type=2, norm="ortho") if self.neumann
                    else fft.idstn(a, type=1, norm="ortho"))
        xp = self.xp
        if self.neumann:
            return idct2(idct2(a, xp, 0), xp, -1)
        return dst1(dst1(a, xp, 0), xp, -1)

    def solve(self, r, c: float):
        """(I − cL)⁻¹ r = T⁻¹[T r / (1 + cκ)] for c ≥ 0."""
        return self.inverse(self.forward(r) / (1 + c * self.kappa))
