"""One-layer shallow water on a structured grid, written once with `xp` (NumPy or CuPy): the float64
reference, the CPU backend and the GPU `array` path ([P2] §4, §6; docs/MODELS.md §3.1, §3.3).

Unknowns W = (h, qx, qy, H) per cell of a uniform grid (cell centres, x along the last axis).
The system W_t + A1(W) W_x + A2(W) W_y = 0 (docs/MODELS.md [P2] eq. (10)) with the bottom H as a fourth,
stationary unknown, discretised by the path-conservative Roe scheme in upwind form (eq. (15))

    W_i' = −1/|V_i| Σ_j |E_ij| D^∓_ij,

with the edge fluctuations D⁻ (to the left/south cell) and D⁺ (to the right/north cell) of the
path-conservative Roe solver that the triangles use too (riemann.roe1: segment paths, closed-form
eigenstructure, Harten–Hyman entropy fix, bottom source upwinded on the same eigenvectors; a lake
at rest gives D^± = 0 exactly: well-balanced). The grid's x- and y-edges are the normals (1, 0)
and (0, 1).

Strong shocks (`shock_fix`, the default): the carbuncle cure of riemann.py, each edge's shear
wave gets the viscosity ν = shock_nu(S_L, S_R) from the cell sensors `cell_sensor` (the largest
compression max(0, un_L − un_R) over a cell's four edges, from the cell averages; the ghosts
mirror it), at both orders (order 3: the sensor of the stage's cell averages, the viscosity on
the Gauss points' Δqt − ut Δh).

Walls (q·n = 0): ghost cells are mirror images with the normal momentum reversed.

Time step ([P2] §7.1, docs/MODELS.md §3.3): Δt = min_i 2δ|V_i| / Σ_j |E_ij| max_k |λ_ij,k| from the
Roe eigenvalues of the cell averages at the cell's four edges, computed from the state that the
step advances ("same-step" form of docs/MODELS.md [P2]; [P4] lags it by one step).

order = 3 (eq. (26)): CWENO3 reconstruction (below) of (η = h − H, qx, qy, H) in every cell,
two-point Gauss quadrature on each edge, the volume term ∫_V (A1 ∂x P + A2 ∂y P) by the 2 × 2
Gauss rule, and the three-stage SSP Runge–Kutta scheme of Shu and Osher. Reconstructing η rather
than h makes a lake at rest reconstruct to P_η = const, so both the edge fluctuations and the
volume term vanish: still well-balanced.

Reconstruction: the compact two-dimensional CWENO3 of Levy, Puppo & Russo (SIAM J. Sci. Comput.
22, 2000; analysed by Kolb, SINUM 52, 2014). In cell coordinates ξ, η ∈ [−½, ½] the optimal
polynomial is the full quadratic of the 3 × 3 stencil,
    P_opt = ū + c_x ξ + c_y η + c_xx (ξ² − 1/12) + c_yy (η² − 1/12) + c_xy ξη,
(it reproduces the cell averages of the stencil's five-point cross and the corner mixed
difference), blended with the four one-sided linear polynomials of the NE, NW, SE, SW corners;
linear weights d_0 = ½ (central), d_k = ⅛, nonlinear weights ω ∝ d/(ε + IS)², Jiang–Shu
smoothness indicators, ε = (min(Δx, Δy)/ℓ)² with ℓ = min(Lx, Ly)/10 the length unit of the
scenarios (of the size of the indicators on smooth data, so the weights stay near the linear ones
there; the cell size relative to the domain, not in metres, so that a scaled domain gives the
scaled solution: ε = Δx² in metres made a 2 km basin's weights linear, 9 % off at the dam's
jump). It is conservative, third order on smooth data and non-oscillatory at jumps (the central
polynomial's weight collapses and the smoothest one-sided slope is kept).
"""
from __future__ import annotations

import math

import numpy as np

from ...core.decomp import WHOLE
from ...core.scheme import SchemeBase
from ..riemann import compression, roe1, shock_nu, speed1

GAUSS = 0.5 / math.sqrt(3.0)   # two-point Gauss abscissae ±1/(2√3) on [−½, ½]; GAUSS² = 1/12
D0, DK = 0.5, 0.125            # CWENO3 linear weights: central, each of the four corner stencils
X_EDGE, Y_EDGE = (1, 0), (0, 1)  # the normals of the x- and y-edges (ints: riemann.rotate picks)


def mirror_index(n: int, w: int) -> np.ndarray:
    """Indices of n cells with w wall ghosts on each side (ghost −1 mirrors cell 0, …); n ≥ w."""
    i = np.arange(-w, n + w)
    i = np.where(i < 0, -1 - i, i)
    return np.where(i >= n, 2 * n - 1 - i, i)


def pad_walls(h, qx, qy, H, w: int, xp):
    """The state with w layers of wall ghost cells: mirror images with q·n reversed."""
    ny, nx = h.shape
    iy = xp.asarray(mirror_index(ny, w))[:, None]
    ix = xp.asarray(mirror_index(nx, w))[None, :]
    sx = np.ones(nx + 2 * w)
    sx[:w] = sx[-w:] = -1
    sy = np.ones(ny + 2 * w)
    sy[:w] = sy[-w:] = -1
    sx = xp.asarray(sx, dtype=h.dtype)[None, :]
    sy = xp.asarray(sy, dtype=h.dtype)[:, None]
    return h[iy, ix], qx[iy, ix] * sx, qy[iy, ix] * sy, H[iy, ix]


def edge_fluxes(L, R, normal, g, xp, nu=None):
    """(D⁻, D⁺, max |λ|) at edges with the axis normal from the cells L to R, each (h, qx, qy, H)
    or (h, qx, qy, H, η) (then Δη = η_R − η_L exactly: a lake at rest stays at rest in float32);
    D^∓ in Cartesian components. `nu`: the shock cure's shear viscosity (None: none)."""
    deta = R[4] - L[4] if len(L) > 4 else None
    return roe1(xp, L[:3], R[:3], L[3], R[3], *normal, None, g, deta=deta, nu=nu)


def cell_sensor(h, qx, qy, xp):
    """The shock sensor S of every cell (riemann.py): the largest compression max(0, un_L − un_R)
    over its four edges (walls: the mirror state), from the cell averages."""
    hp, qxp, qyp, _ = pad_walls(h, qx, qy, h, 1, xp)
    cx = compression(xp, hp[1:-1, :-1], qxp[1:-1, :-1], hp[1:-1, 1:], qxp[1:-1, 1:])
    cy = compression(xp, hp[:-1, 1:-1], qyp[:-1, 1:-1], hp[1:, 1:-1], qyp[1:, 1:-1])
    return xp.maximum(xp.maximum(cx[:, :-1], cx[:, 1:]), xp.maximum(cy[:-1], cy[1:]))


def edge_nu(h, qx, qy, xp, pad=pad_walls):
    """ν of the x- and y-edges of the cells with one ghost ring (the XL/XR, YL/YR pairs). The
    sensors of the ring come from two ghost rows of the state (`pad`: walls, or a decomposed
    run's halos), so a halo row's sensor is its owner's; at walls the mirror state gives the
    mirrored cell's sensor exactly (negation is exact), as in the CUDA kernels."""
    hp, qxp, qyp, _ = pad(h, qx, qy, h, 2, xp)
    cx = compression(xp, hp[1:-1, :-1], qxp[1:-1, :-1], hp[1:-1, 1:], qxp[1:-1, 1:])
    cy = compression(xp, hp[:-1, 1:-1], qyp[:-1, 1:-1], hp[1:, 1:-1], qyp[1:, 1:-1])
    Sp = xp.maximum(xp.maximum(cx[:, :-1], cx[:, 1:]), xp.maximum(cy[:-1], cy[1:]))
    return shock_nu(xp, Sp[XL], Sp[XR]), shock_nu(xp, Sp[YL], Sp[YR])


def cfl_dt(h, qx, qy, g, dx, dy, cfl, xp, pad=pad_walls):
    """Δt = min_i 2δ|V_i| / Σ_j |E_ij| max_k |λ_ij,k| over the cell averages (one reduction;
    over this rank's cells when decomposed: the caller takes the minimum over the ranks)."""
    hp, qxp, qyp, _ = pad(h, qx, qy, h, 1, xp)
    sx = speed1(xp, hp[1:-1, :-1], qxp[1:-1, :-1], hp[1:-1, 1:], qxp[1:-1, 1:], g)
    sy = speed1(xp, hp[:-1, 1:-1], qyp[:-1, 1:-1], hp[1:, 1:-1], qyp[1:, 1:-1], g)
    return _dt_from_speeds(sx, sy, dx, dy, cfl, xp)


def _dt_from_speeds(sx, sy, dx, dy, cfl, xp):
    z = dy * (sx[:, :-1] + sx[:, 1:]) + dx * (sy[:-1] + sy[1:])
    dts = 2 * cfl * dx * dy / z  # NaN cells are left to the finiteness check (no All-NaN warning)
    return float(xp.where(xp.isnan(dts), xp.inf, dts).min())


def _combine(Dm, Dp, Em, Ep, dx, dy):
    """The cell rates from the x-edge (D) and y-edge (E) fluctuations: each cell takes D⁺ of its
    west/south edge and D⁻ of its east/north edge."""
    return tuple(-(Dp[k][:, :-1] + Dm[k][:, 1:]) / dx + -(Ep[k][:-1] + Em[k][1:]) / dy
                 for k in range(3))


XL, XR = (slice(1, -1), slice(None, -1)), (slice(1, -1), slice(1, None))
YL, YR = (slice(None, -1), slice(1, -1)), (slice(1, None), slice(1, -1))


def rate_order1(h, qx, qy, H, g, dx, dy, xp, fix=False, pad=pad_walls):
    """First-order semi-discrete rate L(W) of eq. (15), and the edge speeds (for Δt); `fix`:
    the shock cure; `pad` adds the ghost cells (walls; a decomposed run's halos:
    core/decomp.py)."""
    P = pad(h, qx, qy, H, 1, xp)
    nux, nuy = edge_nu(h, qx, qy, xp, pad) if fix else (None, None)
    Dm, Dp, sx = edge_fluxes([a[XL] for a in P], [a[XR] for a in P], X_EDGE, g, xp, nux)
    Em, Ep, sy = edge_fluxes([a[YL] for a in P], [a[YR] for a in P], Y_EDGE, g, xp, nuy)
    return _combine(Dm, Dp, Em, Ep, dx, dy), (sx, sy)


def cweno3(u, eps, xp):
    """CWENO3 coefficients (a0, ax, ay, axx, ayy, axy) of every cell of the padded array u except
    its outer ring; P(ξ, η) = a0 + ax ξ + ay η + axx (ξ² − 1/12) + ayy (η² − 1/12) + axy ξη."""
    c = u[1:-1, 1:-1]
    E, W, N, S = u[1:-1, 2:], u[1:-1, :-2], u[2:, 1:-1], u[:-2, 1:-1]
    cxy = 0.25 * ((u[2:, 2:] - u[:-2, 2:]) - (u[2:, :-2] - u[:-2, :-2]))
    dE, dW, dN, dS = E - c, c - W, N - c, c - S
    cx, cy = 0.5 * (dE + dW), 0.5 * (dN + dS)
    cxx, cyy = 0.5 * (dE - dW), 0.5 * (dN - dS)
    # the central polynomial P0 = (P_opt − Σ d_k P_k)/d0 has slopes cx, cy and curvatures 2c..
    is0 = cx * cx + cy * cy + (52.0 / 3.0) * (cxx * cxx + cyy * cyy) + (14.0 / 3.0) * cxy * cxy
    eE, eW, eN, eS = dE * dE, dW * dW, dN * dN, dS * dS
    a0 = D0 / (eps + is0) ** 2
    aNE, aNW = DK / (eps + eE + eN) ** 2, DK / (eps + eW + eN) ** 2
    aSE, aSW = DK / (eps + eE + eS) ** 2, DK / (eps + eW + eS) ** 2
    r = 1 / (a0 + aNE + aNW + aSE + aSW)
    w0 = a0 * r
    ax = w0 * cx + ((aNE + aSE) * dE + (aNW + aSW) * dW) * r
    ay = w0 * cy + ((aNE + aNW) * dN + (aSE + aSW) * dS) * r
    k = 2 * w0
    return c, ax, ay, k * cxx, k * cyy, k * cxy


def _edge_points(p, side):
    """Values of the polynomials p at the two Gauss points of the cell's edge `side`."""
    a0, ax, ay, axx, ayy, axy = p
    if side == "E":
        m, t = a0 + 0.5 * ax + axx / 6, ay + 0.5 * axy
    elif side == "W":
        m, t = a0 - 0.5 * ax + axx / 6, ay - 0.5 * axy
    elif side == "N":
        m, t = a0 + 0.5 * ay + ayy / 6, ax + 0.5 * axy
    else:
        m, t = a0 - 0.5 * ay + ayy / 6, ax - 0.5 * axy
    return m - GAUSS * t, m + GAUSS * t


def volume_term(pe, pqx, pqy, pH, g, dx, dy, xp):
    """¼ Σ over the 2 × 2 Gauss points of A1(P) ∂x P + A2(P) ∂y P (eq. (26)); P_h = P_η + P_H."""
    # mass: ∂x qx + ∂y qy integrates exactly to the mean slopes
    vh = pqx[1] / dx + pqy[2] / dy
    vx = vy = 0
    for sx in (-GAUSS, GAUSS):
        for sy in (-GAUSS, GAUSS):
            val = [p[0] + p[1] * sx + p[2] * sy + p[5] * (sx * sy) for p in (pe, pqx, pqy, pH)]
            ddx = [(p[1] + 2 * p[3] * sx + p[5] * sy) / dx for p in (pe, pqx, pqy, pH)]
            ddy = [(p[2] + 2 * p[4] * sy + p[5] * sx) / dy for p in (pe, pqx, pqy, pH)]
            h = val[0] + val[3]
            u, v = val[1] / h, val[2] / h
            hx, hy = ddx[0] + ddx[3], ddy[0] + ddy[3]
            gh = g * h
            vx = vx + (gh * ddx[0] - u * u * hx + 2 * u * ddx[1]
                       - u * v * hy + v * ddy[1] + u * ddy[2])
            vy = vy + (-u * v * hx + v * ddx[1] + u * ddx[2]
                       + gh * ddy[0] - v * v * hy + 2 * v * ddy[2])
    return vh, 0.25 * vx, 0.25 * vy


def rate_order3(h, qx, qy, H, g, dx, dy, xp, eps=None, fix=False, pad=pad_walls):
    """Third-order semi-discrete rate L(W) of eq. (26) (CWENO3, Gauss edges, volume term); eps:
    the CWENO3 ε (default min(dx, dy)², the model passes (min(dx, dy)/ℓ)²); `fix`: the shock
    cure; `pad` as in rate_order1 (two ghost rows)."""
    hp, qxp, qyp, Hp = pad(h, qx, qy, H, 2, xp)
    nus = edge_nu(h, qx, qy, xp, pad) if fix else (None, None)
    eps = min(dx, dy) ** 2 if eps is None else eps
    P = [cweno3(a, eps, xp) for a in (hp - Hp, qxp, qyp, Hp)]   # cells with one ghost ring

    def states(sel, side):
        """(h, qx, qy, H, η) at the two Gauss points of `side` of the cells `sel`."""
        e, qx_, qy_, H_ = (_edge_points([c[sel] for c in p], side) for p in P)
        return [(e[q] + H_[q], qx_[q], qy_[q], H_[q], e[q]) for q in (0, 1)]

    acc = []
    for lsel, rsel, ls, rs, normal, nu in ((XL, XR, "E", "W", X_EDGE, nus[0]),
                                           (YL, YR, "N", "S", Y_EDGE, nus[1])):
        Dm = Dp = None
        for L, R in zip(states(lsel, ls), states(rsel, rs)):
            m, p, _ = edge_fluxes(L, R, normal, g, xp, nu)
            Dm = m if Dm is None else tuple(a + b for a, b in zip(Dm, m))
            Dp = p if Dp is None else tuple(a + b for a, b in zip(Dp, p))
        acc.append((tuple(0.5 * a for a in Dm), tuple(0.5 * a for a in Dp)))
    (Dm, Dp), (Em, Ep) = acc
    rh, rqx, rqy = _combine(Dm, Dp, Em, Ep, dx, dy)
    own = (slice(1, -1), slice(1, -1))
    vh, vx, vy = volume_term(*[[c[own] for c in p] for p in P], g, dx, dy, xp)
    return rh - vh, rqx - vx, rqy - vy


SSP3 = ((0.0, 1.0), (0.75, 0.25), (1.0 / 3.0, 2.0 / 3.0))


def ssp_stage(a: float, b: float, u0, u, du):
    """One Shu–Osher stage a·u0 + b·(u + Δt L(u)) (a = 0 for the first stage), written
    u0 + b·((u + Δt L(u)) − u0) (a = 1 − b): a state that does not change stays bit for bit
    (in float32, ¾u + ¼u need not be u, and a lake at rest would drift by an ulp a step)."""
    return u + du if a == 0.0 else u0 + b * ((u + du) - u0)


class GridReference(SchemeBase):
    """The `xp` scheme on the grid: forward Euler (order 1, Δt from the edge speeds of the same
    pass) or SSP-RK3 (order 3). Rebinds the state's h, hu, hv; cfl is read at every step (live).
    On one strip of a decomposed grid (`sim.domain`, core/decomp.py) the ghost rows at the
    strip's inner edges are the neighbours' rows (exchanged at every pad: every stage) and Δt is
    the minimum over the ranks: the same numbers as on one process."""

    def __init__(self, sim):
        super().__init__(sim)
        self.g, self.order, self.xp = sim.params["g"], sim.params["order"], sim.xp
        self.dx, self.dy, self.eps = sim.dx, sim.dy, sim.weno_eps
        self.fix = bool(sim.params.get("shock_fix", False))
        self.domain = getattr(sim, "domain", WHOLE)
        self.pad = self.domain.padder(pad_walls)

    def step(self, t, dt_limit):
        s, xp, g, dx, dy = self.sim.state, self.xp, self.g, self.dx, self.dy
        cfl = self.sim.params["cfl"]
        u0, H = (s["h"], s["hu"], s["hv"]), s["H"]
        if self.order == 1:
            rates, (sx, sy) = rate_order1(*u0, H, g, dx, dy, xp, self.fix, self.pad)
            dt = self.domain.min(_dt_from_speeds(sx, sy, dx, dy, cfl, xp))
            dt = dt if dt_limit is None else min(dt, dt_limit)
            u = tuple(v + dt * r for v, r in zip(u0, rates))
        else:
            dt = self.domain.min(cfl_dt(*u0, g, dx, dy, cfl, xp, self.pad))
            dt = dt if dt_limit is None else min(dt, dt_limit)
            u = u0
            for a, b in SSP3:
                r = rate_order3(*u, H, g, dx, dy, xp, self.eps, self.fix, self.pad)
                u = tuple(ssp_stage(a, b, v0, v, dt * rv) for v0, v, rv in zip(u0, u, r))
        s["h"], s["hu"], s["hv"] = u
        return dt
