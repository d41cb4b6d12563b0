"""The `xp` scheme of the curvature flows ([P0]; docs/MODELS.md §1.2–1.3), written once with array code:
the float64 reference, the CPU backend and the GPU `array` path.

Complementary finite volumes, appendix (36)–(53). Arrays are node fields of shape (N2+1, N1+1),
index [j, i] (x along the last axis). Edges: an "x-edge" (i+½, j) joins nodes (i, j) and (i+1, j);
a "y-edge" (i, j+½) joins (i, j) and (i, j+1). Only the edges of interior nodes are formed: x-edges
of the rows j = 1..N2−1 (shape (N2−1, N1)) and y-edges of the columns i = 1..N1−1 (shape
(N2, N1−1)).

`RKMReference` integrates the method of lines (26) with the adaptive Runge–Kutta–Merson method
(Algorithm 4.1, `core.integrators.RungeKuttaMerson`); the IMEX scheme (integrator=imex) is in
imex.py and evaluates the same `interior_rhs`. Boundaries: Dirichlet keeps φ = g (the
boundary nodes follow dg/dt; w = 0, or w = w(ζ) for the exact solution of `eoc-exact`, docs/MODELS.md §1.5),
Neumann copies the inner neighbours (19)–(20), (24)–(25).
"""
from __future__ import annotations

import numpy as np

from ..core.integrators import ARS443, IMEXRungeKutta, RungeKuttaMerson
from ..core.scheme import SchemeBase


def corner_means(a):
    """ā at the cell corners (i+½, j+½): the mean of the four nodes (44)–(47); shape (N2, N1)."""
    return 0.25 * ((a[:-1, :-1] + a[:-1, 1:]) + (a[1:, :-1] + a[1:, 1:]))


def edge_gradients(a, h1: float, h2: float):
    """∂x a, ∂y a on the x-edges and on the y-edges, (40)–(43): the normal derivative from the two
    nodes of the edge, the tangential one from the corner means at its ends."""
    c = corner_means(a)
    x_edges = ((a[1:-1, 1:] - a[1:-1, :-1]) / h1, (c[1:, :] - c[:-1, :]) / h2)
    y_edges = ((c[:, 1:] - c[:, :-1]) / h1, (a[1:, 1:-1] - a[:-1, 1:-1]) / h2)
    return x_edges, y_edges


def edge_q(gx, gy, xp):
    """Q = sqrt(1 + (∂x φ)² + (∂y φ)²) at edges, (36)–(39)."""
    return xp.sqrt(1 + gx * gx + gy * gy)


def curvature_terms(phi, h1: float, h2: float, xp):
    """The pieces of scheme (17) at the interior nodes: node Q (49), the bracket H (48) (the mean
    curvature ∇·(∇φ/Q)), and the edge data the Willmore scheme reuses."""
    (gxx, gyx), (gxy, gyy) = edge_gradients(phi, h1, h2)
    qx = edge_q(gxx, gyx, xp)  # (N2−1, N1): x-edges of interior rows
    qy = edge_q(gxy, gyy, xp)  # (N2, N1−1): y-edges of interior columns
    fx = gxx / qx
    fy = gyy / qy
    H = (fx[:, 1:] - fx[:, :-1]) / h1 + (fy[1:, :] - fy[:-1, :]) / h2
    Q = 0.25 * ((qx[:, 1:] + qx[:, :-1]) + (qy[1:, :] + qy[:-1, :]))
    return Q, H, ((gxx, gyx, qx), (gxy, gyy, qy))


def mean_curvature_rhs(phi, h1: float, h2: float, xp):
    """Q ∇·(∇φ/Q) at the interior nodes: scheme (17) without forcing; shape (N2−1, N1−1)."""
    Q, H, _ = curvature_terms(phi, h1, h2, xp)
    return Q * H


def willmore_rhs(phi, w, h1: float, h2: float, xp):
    """−Q ∇·((1/Q) P ∇w − ½ (w²/Q³) ∇φ) at the interior nodes: scheme (21) with the sign of
    docs/MODELS.md §1.1; `w` is the full node field (boundary values set by the caller), (51)–(53)."""
    Q, _, ((gxx, gyx, qx), (gxy, gyy, qy)) = curvature_terms(phi, h1, h2, xp)
    (wxx, wyx), (wxy, wyy) = edge_gradients(w, h1, h2)
    wex = 0.5 * (w[1:-1, 1:] + w[1:-1, :-1])
    wey = 0.5 * (w[1:, 1:-1] + w[:-1, 1:-1])
    iqx, iqy = 1 / qx, 1 / qy
    iq3x, iq3y = iqx * iqx * iqx, iqy * iqy * iqy
    # E_mn = (1/Q)(δ_mn − ∂mφ ∂nφ / Q²) (53), the flux through the edge in its normal direction
    flux_x = (iqx - gxx * gxx * iq3x) * wxx - gxx * gyx * iq3x * wyx - 0.5 * wex * wex * iq3x * gxx
    flux_y = -gxy * gyy * iq3y * wxy + (iqy - gyy * gyy * iq3y) * wyy - 0.5 * wey * wey * iq3y * gyy
    div = (flux_x[:, 1:] - flux_x[:, :-1]) / h1 + (flux_y[1:, :] - flux_y[:-1, :]) / h2
    return -Q * div


def neumann_fill(a, top: bool = True, bottom: bool = True):
    """Copy the inner neighbours onto the boundary nodes, (19)–(20) and (24)–(25), in place.
    top / bottom False: the first / last row is not a boundary (a strip's inner edge of a
    decomposed run, strips.py) and is left as it is."""
    if top:
        a[0, :] = a[1, :]
    if bottom:
        a[-1, :] = a[-2, :]
    a[:, 0] = a[:, 1]
    a[:, -1] = a[:, -2]
    return a


def set_boundary(f, src):
    """The boundary nodes of f from src (None: 0): Dirichlet data or its rate."""
    if src is None:
        f[0, :] = 0
        f[-1, :] = 0
        f[:, 0] = 0
        f[:, -1] = 0
    else:
        f[0, :] = src[0, :]
        f[-1, :] = src[-1, :]
        f[:, 0] = src[:, 0]
        f[:, -1] = src[:, -1]


def mean_curvature_field(phi, h1: float, h2: float, xp):
    """H = ∇·(∇φ/Q) on all nodes (scheme (48); boundary nodes copy their inner neighbours)."""
    H = xp.empty_like(phi)
    H[1:-1, 1:-1] = curvature_terms(phi, h1, h2, xp)[1]
    return neumann_fill(H)


def surface_area(phi, h1: float, h2: float, xp) -> float:
    """∫ Q dx over the interior control volumes (node Q (49) × h1 h2)."""
    Q = curvature_terms(phi, h1, h2, xp)[0]
    return float(Q.sum()) * h1 * h2


def willmore_energy(phi, h1: float, h2: float, xp) -> float:
    """∫ H² dS = ∫ H² Q dx over the interior control volumes."""
    Q, H, _ = curvature_terms(phi, h1, h2, xp)
    return float((H * H * Q).sum()) * h1 * h2


def initial_tau(sim) -> float:
    """The first step τ: the `dt` parameter, or else 0.1 h² (mean curvature) / 0.01 h⁴
    (Willmore)."""
    tau0 = sim.params["dt"]
    if tau0 is None:
        h = min(sim.h1, sim.h2)
        tau0 = 0.01 * h**4 if sim.willmore else 0.1 * h * h
    return tau0


def step_controller(sim):
    """The adaptive step of a simulation (held by the simulation: its schemes share it and its
    checkpoints keep τ), for its `integrator`: RungeKuttaMerson (rkm) or IMEXRungeKutta with
    ARS(4,4,3) (imex), with tolerance ε and the first τ of initial_tau."""
    if sim.params["integrator"] == "imex":
        return IMEXRungeKutta(ARS443, sim.params["tolerance"], initial_tau(sim))
    return RungeKuttaMerson(sim.params["tolerance"], initial_tau(sim))


def interior_rhs(sim, t: float, phi):
    """f(t, φ) of the method of lines (26) at the interior nodes: the discrete operator, the
    exact forcing of eoc-exact and F; `phi` is the full node field with its boundary values."""
    fi = _operator(sim, t, phi)
    if sim.exact is not None:
        fi = fi + sim.exact.forcing(t)
    if sim.params["F"] != 0:
        fi = fi + sim.params["F"]
    return fi


def _operator(sim, t: float, phi):
    """The flow's discrete operator at the interior nodes (Willmore: w on the boundary from the
    boundary condition)."""
    xp = sim.xp
    if not sim.willmore:
        return mean_curvature_rhs(phi, sim.h1, sim.h2, xp)
    w = xp.empty_like(phi)
    w[1:-1, 1:-1] = mean_curvature_rhs(phi, sim.h1, sim.h2, xp)
    if sim.neumann:
        neumann_fill(w)
    else:  # w on the Dirichlet boundary: w(ζ(t)) for eoc-exact (docs/MODELS.md §1.5), else 0
        set_boundary(w, sim.exact.w(t) if sim.exact is not None else None)
    return willmore_rhs(phi, w, sim.h1, sim.h2, xp)


class RKMReference(SchemeBase):
    """Adaptive Runge–Kutta–Merson (the simulation's controller `sim.controller`) on the
    right-hand side `rhs` below (array code). Decomposed (`sim.nodes`, strips.py) it steps the
    owned node rows: `rhs` runs on them extended by the neighbours' halo rows, and the
    controller's error estimate is the maximum over the ranks."""

    def step(self, t, dt_limit):
        sim = self.sim
        # overflow in a blowing-up run is reported as SimulationDiverged, not as warnings
        with np.errstate(over="ignore", invalid="ignore"):
            u, tau = sim.controller.step(self.rhs, sim.state["phi"], t, dt_limit, sim.xp)
        sim.state["phi"] = u
        return tau

    def rhs(self, t: float, u):
        """f(t, u) of the method of lines (26) on all nodes."""
        sim = self.sim
        nodes = sim.nodes
        ext = nodes.extend(u, sim.xp)  # one process: u itself
        phi = neumann_fill(ext.copy(), nodes.top, nodes.bottom) if sim.neumann else ext
        f = sim.xp.empty_like(ext)
        f[1:-1, 1:-1] = interior_rhs(sim, t, phi)
        if sim.neumann:
            neumann_fill(f)
        else:  # dg/dt: ζ_t for eoc-exact, 0 for fixed data
            set_boundary(f, sim.exact.zeta_t(t) if sim.exact is not None else None)
        return nodes.cut(f)
