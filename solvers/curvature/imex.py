"""The linearly implicit IMEX scheme of the curvature flows (integrator=imex; issue 16).

Split of the method of lines (26), f(t, φ) = N(t, φ) + G(t, φ), on the interior nodes:

    G(t, φ) = S L_h[φ; g(t), w_b(t)]       the linearisation of the discrete operator about a
                                           flat graph (Q = 1, P = I, w² terms of second order):
        mean curvature  L_h φ = Δ_h φ      (the bracket of (17) with Q = 1: the 5-point Laplacian)
        Willmore        L_h φ = −Δ_h w,  w = Δ_h φ  (the fluxes of (21) with E = I, no w² term)
    N = f − G                              everything else (nonlinear terms, exact forcing, F),
                                           explicit

with S = STABILIZATION = 1. The boundary rule is the model's: Neumann boundary nodes copy their
inner neighbours (φ, and w for Willmore); Dirichlet boundary nodes carry the data g(t) and w_b(t)
(w(ζ(t)) on eoc-exact, else 0). G is affine: G = S (L φ_int + b(t)) with L the interior operator
(−κ in the DCT-II / DST-I basis of spectral.py) and b(t) the boundary data's contribution,
obtained by applying the same stencil to a field that is zero inside and carries the data on the
boundary. A stage solve (I − cS L) U = r + cS b(t) is then one forward and one inverse fast
transform ("lifting": the boundary contribution is moved to the right-hand side), done for the
increment U − r = (I − cS L)⁻¹ c G(t, r).

Why S = 1: linearised about any state, the principal symbol of the mean-curvature operator is
−ξᵀPξ ∈ [−|ξ|², −|ξ|²/Q²] and that of the Willmore operator −(ξᵀPξ)², so the implicit part is at
least as stiff as the true one and the explicit remainder N has symbol r·κ with 0 ≤ r < 1 (it
anti-diffuses at most as much as G diffuses). The globally stiffly accurate ARS(4,4,3) is stable
in that whole range (core/integrators.py), larger S only makes r larger (more steps: at 64²
Willmore eoc-exact 65 steps at S = 1, 88 at 1.5, 107 at 2, benchmarks/curvature/imex_variants.py),
S < 1 allows r < 0 where the method is not.

Dirichlet boundary nodes follow the data exactly like under RKM (dφ/dt = dg/dt): at a stage time
t_i they hold φ_b(t) + g(t_i) − g(t), g = ζ on eoc-exact (else fixed: φ_b(t)).

Time integration: core.integrators.IMEXRungeKutta with ARS(4,4,3) (third order, so at least the
second order asked for) and step-doubling error control with the `tolerance` ε, filtered by
(I − γτ S L)⁻¹. `IMEXReference` is array code (NumPy, CuPy `array` path); imex_fused.FusedIMEX
the same scheme on the fused GPU path (the fused right-hand-side kernels, few launches per stage)
— the transforms are cuFFT on both GPU paths.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.scheme import SchemeBase
from .reference import interior_rhs, neumann_fill, set_boundary
from .spectral import FastSolver

STABILIZATION = 1.0


def laplacian(a, h1: float, h2: float):
    """The 5-point Laplacian Δ_h of a node field at the interior nodes."""
    c = a[1:-1, 1:-1]
    return ((a[1:-1, 2:] - 2 * c + a[1:-1, :-2]) / (h1 * h1)
            + (a[2:, 1:-1] - 2 * c + a[:-2, 1:-1]) / (h2 * h2))


def linearised(phi, w_boundary, h1: float, h2: float, willmore: bool, neumann: bool, xp):
    """L_h[φ] at the interior nodes: Δ_h φ (mean curvature) or −Δ_h w with w = Δ_h φ inside and,
    on the boundary, w_boundary (Dirichlet: a node field or None for 0) or the inner neighbours
    (Neumann). `phi` is the full node field with its boundary values."""
    lap = laplacian(phi, h1, h2)
    if not willmore:
        return lap
    w = xp.empty_like(phi)
    w[1:-1, 1:-1] = lap
    if neumann:
        neumann_fill(w)
    else:
        set_boundary(w, w_boundary)
    return -laplacian(w, h1, h2)


class IMEXReference(SchemeBase):
    """The IMEX scheme in array code; it is also the problem object of IMEXRungeKutta (f, g,
    solve, smooth on the interior nodes)."""

    def __init__(self, sim):
        super().__init__(sim)
        n2p1, n1p1 = sim.state["phi"].shape
        self.shape = (n2p1, n1p1)
        self.fast = FastSolver(n1p1 - 2, n2p1 - 2, sim.h1, sim.h2, sim.neumann,
                               2 if sim.willmore else 1, sim.xp, sim.dtype,
                               scale=STABILIZATION)
        self._edge = None  # the state at the start of the step (its boundary values)
        self._t0 = 0.0
        self._w = {}  # w(ζ(t)) by stage time within the step

    # ---- the scheme protocol ---------------------------------------------------------------
    def step(self, t, dt_limit):
        sim = self.sim
        phi = sim.state["phi"]
        self.begin(phi, t)
        with np.errstate(over="ignore", invalid="ignore"):
            u, tau = sim.controller.step(self, phi[1:-1, 1:-1], t, dt_limit, sim.xp)
            sim.state["phi"] = self.full(u, t + tau)
        return tau

    def begin(self, phi, t: float) -> None:
        """Start a step from the node field φ at time t: its boundary values are the data."""
        self._edge, self._t0, self._w = phi, t, {}

    # ---- fields on all nodes -----------------------------------------------------------------
    def boundary_data(self, t: float):
        """The Dirichlet values at time t (a node field whose boundary is used), or None where the
        boundary is fixed (it keeps the state's values)."""
        sim = self.sim
        if sim.exact is None or t == self._t0:
            return None
        g = sim.exact.coef[0]  # ζ = cos(πt) g
        return self._edge + (math.cos(math.pi * t) - math.cos(math.pi * self._t0)) * g

    def full(self, inner, t: float):
        """The node field with `inner` at the interior nodes and the boundary rule at time t."""
        u = self.sim.xp.empty(self.shape, dtype=inner.dtype)
        u[1:-1, 1:-1] = inner
        if self.sim.neumann:
            return neumann_fill(u)
        data = self.boundary_data(t)
        set_boundary(u, self._edge if data is None else data)
        return u

    def w_boundary(self, t: float):
        """w on the Dirichlet boundary at time t: w(ζ(t)) on eoc-exact (kept per stage time of
        the step: the solves at one stage time share it), else None (0)."""
        sim = self.sim
        if sim.exact is None or sim.neumann:
            return None
        w = self._w.get(t)
        if w is None:
            w = self._w[t] = sim.exact.w(t)
        return w

    def lin(self, phi, t: float):
        sim = self.sim
        return linearised(phi, self.w_boundary(t), sim.h1, sim.h2, sim.willmore, sim.neumann,
                          sim.xp)

    # ---- the problem of IMEXRungeKutta --------------------------------------------------------
    def f(self, t: float, inner):
        """The whole right-hand side at the interior nodes."""
        return self.rhs_full(t, self.full(inner, t))

    def rhs_full(self, t: float, phi):
        return interior_rhs(self.sim, t, phi)

    def g(self, t: float, inner):
        """The implicit part S L_h[φ; boundary data at t]."""
        return STABILIZATION * self.lin(self.full(inner, t), t)

    def solve(self, t: float, r, c: float):
        """U with U − c G(t, U) = r, i.e. (I − cS L) U = r + cS b(t), as the increment
        U − r = (I − cS L)⁻¹ c G(t, r): the transforms' round-off is then relative to the
        increment, not to φ (in float32 a round trip through them costs ~1e-6 |φ|, the floor
        the step-doubling estimate would otherwise never get below)."""
        return r + self.fast.solve(c * self.g(t, r), c)

    def smooth(self, e, c: float):
        """(I − cS L)⁻¹ e: the filter of the error estimate."""
        return self.fast.solve(e, c)
