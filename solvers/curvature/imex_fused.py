"""The IMEX scheme on the fused GPU path (integrator=imex, kernel=fused): the arithmetic of
imex.IMEXReference with its per-stage work in few launches.

CuPy array code spends ~18 µs per operation on a 256² grid (the array path's RKM step, ~360
operations, takes 6.4 ms on the H100, docs/BENCHMARKS.md), far more than the arithmetic; an IMEX
attempt in array code is ~1,000 operations. Here one attempt is ~300 launches plus 26 cuFFT calls:

* f: the fused right-hand-side kernel (mc_rhs / wm_rhs of kernels/curvature.cu, as FusedRKM.rhs)
  on a node field assembled by one elementwise kernel (interior values, Neumann copies or the
  Dirichlet data φ_b + (cos πt − cos πt₀) g);
* G: the 5-point Laplacian as one elementwise kernel (Willmore: w = Δ_h φ into a node field,
  its boundary by the boundary rule, then −Δ_h w), the factor cS folded in;
* the stage solve on Dirichlet boundaries: the odd extension built by one kernel, rfft2, the
  scaling and the division by 1 + cκ in one kernel, and the same back, adding r (Neumann: the
  array-code DCT of spectral.py);
* stage combinations u + Σ a x: one generated elementwise kernel per number of terms.
"""
from __future__ import annotations

import math

import numpy as np

from .fused import BLOCK, FLAG_EXACT, FLAG_NEUMANN, lean_grid, stage_kernels
from .imex import STABILIZATION, IMEXReference
from .reference import neumann_fill, set_boundary

_FULL_NEUMANN = ("raw T inner, int32 n1p1, int32 m1, int32 m2", "T out", """
    int j = i / n1p1, k = i % n1p1;
    int jj = min(max(j - 1, 0), m2 - 1), kk = min(max(k - 1, 0), m1 - 1);
    out = inner[jj * m1 + kk];""")
_FULL_DIRICHLET = ("raw T inner, raw T edge, raw T g, T dc, int32 n1p1, int32 m1, int32 m2",
                   "T out", """
    int j = i / n1p1, k = i % n1p1;
    if (j >= 1 && j <= m2 && k >= 1 && k <= m1) out = inner[(j - 1) * m1 + (k - 1)];
    else out = edge[i] + dc * g[i];""")
_LAP_OUT = ("raw T a, int32 n1p1, int32 m1, T ih1, T ih2, T scale", "T out", """
    int c = (i / m1 + 1) * n1p1 + i % m1 + 1;
    T v = a[c];
    out = scale * ((a[c + 1] - 2 * v + a[c - 1]) * ih1 + (a[c + n1p1] - 2 * v + a[c - n1p1]) * ih2);""")
_LAP_INTO = ("raw T a, int32 n1p1, int32 m1, T ih1, T ih2", "raw T w", """
    int c = (i / m1 + 1) * n1p1 + i % m1 + 1;
    T v = a[c];
    w[c] = (a[c + 1] - 2 * v + a[c - 1]) * ih1 + (a[c + n1p1] - 2 * v + a[c - n1p1]) * ih2;""")
_ODD_EXT = ("raw T a, int32 n1, int32 n2, int32 m1", "T e", """
    int r = i / (2 * n1), c = i % (2 * n1);
    if (r == 0 || r == n2 || c == 0 || c == n1) {
        e = 0;
    } else {
        T s = 1;
        int rr = r - 1, cc = c - 1;
        if (r > n2) { rr = 2 * n2 - r - 1; s = -s; }
        if (c > n1) { cc = 2 * n1 - c - 1; s = -s; }
        e = s * a[rr * m1 + cc];
    }""")
_DIVIDE = ("T y, T kappa, T s, T c", "T out", "out = y * s / (1 + c * kappa);")
_ADD_SCALED = ("T y, T r, T s", "T out", "out = r + y * s;")


class FusedIMEX(IMEXReference):
    """IMEXReference with the launches of the module docstring (CuPy only)."""

    def __init__(self, sim, cp=None):
        """`cp`: the CuPy module (tests pass a stand-in that runs the kernels on the CPU)."""
        super().__init__(sim)
        if cp is None:
            import cupy as cp
        self.cp = cp
        self.k = {name: cp.ElementwiseKernel(*spec, name=f"imex_{name}") for name, spec in
                  (("full_neumann", _FULL_NEUMANN), ("full_dirichlet", _FULL_DIRICHLET),
                   ("lap_out", _LAP_OUT), ("lap_into", _LAP_INTO), ("odd_ext", _ODD_EXT),
                   ("divide", _DIVIDE), ("add_scaled", _ADD_SCALED))}
        self._combine = {}
        self._rhs = None  # (kernel, tables, scalars, grid) on first use
        n2p1, n1p1 = self.shape
        self.n1p1, self.m1, self.m2 = n1p1, n1p1 - 2, n2p1 - 2
        self.ih = (sim.real(1.0 / (sim.h1 * sim.h1)), sim.real(1.0 / (sim.h2 * sim.h2)))
        self.dst_scale = -0.5 / math.sqrt((self.m1 + 1) * (self.m2 + 1))

    def _rhs_setup(self):
        sim, cp = self.sim, self.cp
        kernel = stage_kernels(sim.dtype)["wm_rhs" if sim.willmore else "mc_rhs"]
        if sim.exact is not None:
            tables = (*sim.exact.tables(sim.dtype), sim.exact.coef)
        else:
            tables = (cp.zeros(1, dtype=sim.dtype),) * 3
        n2p1, n1p1 = self.shape
        flags = (FLAG_NEUMANN if sim.neumann else 0) | (FLAG_EXACT if sim.exact is not None else 0)
        scalars = (np.int32(n1p1 - 1), np.int32(n2p1 - 1), sim.real(1.0 / sim.h1),
                   sim.real(1.0 / sim.h2), sim.real(sim.params["F"]), np.int32(flags))
        return kernel, tables, scalars, lean_grid(sim.willmore, n1p1 - 1, n2p1 - 1)

    # ---- node fields -----------------------------------------------------------------------------
    def full(self, inner, t: float):
        cp = self.cp
        inner = cp.ascontiguousarray(inner)
        out = cp.empty(self.shape, dtype=inner.dtype)
        if self.sim.neumann:
            self.k["full_neumann"](inner, self.n1p1, self.m1, self.m2, out)
            return out
        edge = cp.ascontiguousarray(self._edge)
        if self.sim.exact is not None:  # boundary_data of IMEXReference
            g = self.sim.exact.coef[0]
            dc = math.cos(math.pi * t) - math.cos(math.pi * self._t0)
        else:
            g, dc = edge, 0.0
        self.k["full_dirichlet"](inner, edge, g, dc, self.n1p1, self.m1, self.m2, out)
        return out

    def rhs_full(self, t: float, phi):
        """f(t, φ) at the interior nodes by one launch of the rhs kernel."""
        cp = self.cp
        if self._rhs is None:
            self._rhs = self._rhs_setup()
        kernel, tables, scalars, grid = self._rhs
        phi = cp.ascontiguousarray(phi, dtype=self.sim.dtype)
        f = cp.empty_like(phi)
        kernel(grid, BLOCK, (phi, f, *tables, np.float64(t), *scalars))
        return f[1:-1, 1:-1]

    def lin_scaled(self, phi, t: float, scale: float):
        """scale · L_h[φ] at the interior nodes (φ a contiguous node field)."""
        ih1, ih2 = self.ih
        out = self.cp.empty((self.m2, self.m1), dtype=phi.dtype)
        if not self.sim.willmore:
            self.k["lap_out"](phi, self.n1p1, self.m1, ih1, ih2, scale, out)
            return out
        w = self.cp.empty_like(phi)
        self.k["lap_into"](phi, self.n1p1, self.m1, ih1, ih2, w, size=self.m1 * self.m2)
        if self.sim.neumann:
            neumann_fill(w)
        else:
            set_boundary(w, self.w_boundary(t))
        self.k["lap_out"](w, self.n1p1, self.m1, ih1, ih2, -scale, out)
        return out

    def g(self, t: float, inner):
        return self.lin_scaled(self.full(inner, t), t, STABILIZATION)

    # ---- solves and combinations ------------------------------------------------------------------
    def _dst(self, a):
        """The unnormalised half of dst1_2d: the real part of the rfft2 of the odd extension."""
        cp = self.cp
        e = cp.empty((2 * (self.m2 + 1), 2 * (self.m1 + 1)), dtype=a.dtype)
        self.k["odd_ext"](cp.ascontiguousarray(a), self.m1 + 1, self.m2 + 1, self.m1, e)
        return cp.fft.rfft2(e).real[1:self.m2 + 1, 1:self.m1 + 1]

    def _dirichlet_solve(self, rhs, c: float, r=None):
        """(I − cS L)⁻¹ rhs, plus r if given (Dirichlet: DST-I both ways; fast.kappa holds S)."""
        s = self.dst_scale
        y = self.k["divide"](self._dst(rhs), self.fast.kappa, s, c)
        back = self._dst(y)
        return back * s if r is None else self.k["add_scaled"](back, r, s)

    def solve(self, t: float, r, c: float):
        if self.sim.neumann:
            return super().solve(t, r, c)
        cg = self.lin_scaled(self.full(r, t), t, c * STABILIZATION)
        return self._dirichlet_solve(cg, c, r)

    def smooth(self, e, c: float):
        if self.sim.neumann:
            return super().smooth(e, c)
        return self._dirichlet_solve(e, c)

    def combine(self, u, terms):
        """u + Σ a x in one generated kernel per number of terms."""
        n = len(terms)
        kern = self._combine.get(n)
        if kern is None:
            ins = ", ".join(["T u"] + [f"T x{j}" for j in range(n)] + [f"T a{j}" for j in
                                                                         range(n)])
            body = "out = u" + "".join(f" + a{j} * x{j}" for j in range(n)) + ";"
            kern = self._combine[n] = self.cp.ElementwiseKernel(ins, "T out", body,
                                                                name=f"imex_combine{n}")
        return kern(u, *[x for _, x in terms], *[self.sim.real(a) for a, _ in terms])
