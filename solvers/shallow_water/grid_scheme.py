"""One-layer shallow water on a structured grid, written once with `xp` (NumPy or CuPy): the float64
reference, the CPU backend and the GPU `array` path (seed 002 §4, §6; SPEC §3.1, §3.3).

Unknowns W = (h, qx, qy, H) per cell of a uniform grid (cell centres, x along the last axis).
The system W_t + A1(W) W_x + A2(W) W_y = 0 (seed 002 eq. (10)) with the bottom H as a fourth,
stationary unknown, discretised by the path-conservative Roe scheme in upwind form (eq. (15))

    W_i' = −1/|V_i| Σ_j |E_ij| A⁻_ij (W_j − W_i),

segment paths, and the closed-form eigenstructure of the one-layer Roe matrix (normal velocity ũ
and tangential velocity ṽ the √h-weighted Roe averages, c̄² = g (h_L + h_R)/2; eigenvalues ũ − c̄,
ũ, ũ + c̄). With α_k the wave strengths of ΔU and the bottom jump projected on the same
eigenvectors (s_{1,3} = ∓ c̄ ΔH / 2), the fluctuation sent to the left cell is

    D⁻ = Σ_k r_k (μ⁻_k α_k − χ_k s_k),        D⁺ = Σ_k r_k (μ⁺_k α_k − (1 − χ_k) s_k),

where μ^± are the eigenvalues split by the Harten–Hyman entropy fix (a transonic rarefaction,
λ_k(W_L) < 0 < λ_k(W_R), sends λ_L (λ_R − λ)/(λ_R − λ_L) to the left and the rest to the right)
and χ_k = [λ_k < 0] upwinds the bottom source. D⁻ + D⁺ = ΔF − g h̄ ΔH (the Roe property), and a
lake at rest (Δh = ΔH, q = 0) gives D^± = 0 exactly: the scheme is well-balanced.

Walls (q·n = 0): ghost cells are mirror images with the normal momentum reversed.

Time step (seed 002 §7.1, SPEC §3.3): Δt = min_i 2δ|V_i| / Σ_j |E_ij| max_k |λ_ij,k| from the
Roe eigenvalues of the cell averages at the cell's four edges, computed from the state that the
step advances ("same-step" form of seed 002; seed 004 lags it by one step).

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
smoothness indicators, ε = min(Δx, Δy)² (of the size of the indicators on smooth data, so
the weights stay near the linear ones there). It is conservative, third order on smooth data and
non-oscillatory at jumps (the central polynomial's weight collapses and the smoothest one-sided
slope is kept).
"""
from __future__ import annotations

import math

import numpy as np

GAUSS = 0.5 / math.sqrt(3.0)   # two-point Gauss abscissae ±1/(2√3) on [−½, ½]; GAUSS² = 1/12
D0, DK = 0.5, 0.125            # CWENO3 linear weights: central, each of the four corner stencils


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


def hh_split(lam, lam_l, lam_r, xp):
    """(μ⁻, μ⁺) of the eigenvalue λ with the Harten–Hyman entropy fix."""
    trans = (lam_l < 0) & (lam_r > 0)
    den = xp.where(trans, lam_r - lam_l, 1)
    m = xp.where(trans, lam_l * (lam_r - lam) / den, xp.minimum(lam, 0))
    return m, lam - m


def roe_speed(hL, qnL, hR, qnR, g, xp):
    """max_k |λ_k| = |ũ| + c̄ of the Roe matrix at an edge (normal momentum qn)."""
    sL, sR = xp.sqrt(hL), xp.sqrt(hR)
    u = (qnL / sL + qnR / sR) / (sL + sR)
    return xp.abs(u) + xp.sqrt(0.5 * g * (hL + hR))


def roe_fluctuations(hL, qnL, qtL, HL, hR, qnR, qtR, HR, g, xp):
    """Path-conservative Roe fluctuations at edges with unit normal n from L to R.

    qn, qt are the normal and tangential momenta. Returns (D⁻, D⁺, speed): D⁻ = A⁻ΔW goes to the
    left cell, D⁺ = A⁺ΔW to the right one, each a tuple (h, qn, qt) of arrays; speed = |ũ| + c̄."""
    sL, sR = xp.sqrt(hL), xp.sqrt(hR)
    rg = math.sqrt(g)
    uL, uR = qnL / hL, qnR / hR
    w = 1 / (sL + sR)
    u = (qnL / sL + qnR / sR) * w
    v = (qtL / sL + qtR / sR) * w
    c = xp.sqrt(0.5 * g * (hL + hR))
    dh, dqn, dqt, dH = hR - hL, qnR - qnL, qtR - qtL, HR - HL
    inv2c = 0.5 / c
    l1, l3 = u - c, u + c
    a1 = ((u + c) * dh - dqn) * inv2c
    a3 = (dqn - (u - c) * dh) * inv2c
    a2 = dqt - v * dh
    s3 = 0.5 * c * dH                      # bottom jump on wave 3; on wave 1 it is −s3
    cL, cR = rg * sL, rg * sR
    m1, p1 = hh_split(l1, uL - cL, uR - cR, xp)
    m3, p3 = hh_split(l3, uL + cL, uR + cR, xp)
    chi1 = (l1 < 0).astype(hL.dtype)
    chi3 = (l3 < 0).astype(hL.dtype)
    w1m = m1 * a1 + chi1 * s3
    w3m = m3 * a3 - chi3 * s3
    w1p = p1 * a1 + (1 - chi1) * s3
    w3p = p3 * a3 - (1 - chi3) * s3
    m2, p2 = xp.minimum(u, 0), xp.maximum(u, 0)
    Dm = (w1m + w3m, w1m * l1 + w3m * l3, (w1m + w3m) * v + m2 * a2)
    Dp = (w1p + w3p, w1p * l1 + w3p * l3, (w1p + w3p) * v + p2 * a2)
    return Dm, Dp, xp.abs(u) + c


def cfl_dt(h, qx, qy, g, dx, dy, cfl, xp):
    """Δt = min_i 2δ|V_i| / Σ_j |E_ij| max_k |λ_ij,k| over the cell averages (one reduction)."""
    hp, qxp, qyp, _ = pad_walls(h, qx, qy, h, 1, xp)
    sx = roe_speed(hp[1:-1, :-1], qxp[1:-1, :-1], hp[1:-1, 1:], qxp[1:-1, 1:], g, xp)
    sy = roe_speed(hp[:-1, 1:-1], qyp[:-1, 1:-1], hp[1:, 1:-1], qyp[1:, 1:-1], g, xp)
    return _dt_from_speeds(sx, sy, dx, dy, cfl, xp)


def _dt_from_speeds(sx, sy, dx, dy, cfl, xp):
    z = dy * (sx[:, :-1] + sx[:, 1:]) + dx * (sy[:-1] + sy[1:])
    return float(xp.nanmin(2 * cfl * dx * dy / z))  # NaN cells are left to the finiteness check


def _combine(Dm, Dp, Em, Ep, dx, dy):
    """The cell rates from the x-edge (D) and y-edge (E) fluctuations: each cell takes D⁺ of its
    west/south edge and D⁻ of its east/north edge. In E the normal momentum is qy."""
    rx = [-(Dp[k][:, :-1] + Dm[k][:, 1:]) / dx for k in range(3)]
    ry = [-(Ep[k][:-1] + Em[k][1:]) / dy for k in range(3)]
    return rx[0] + ry[0], rx[1] + ry[2], rx[2] + ry[1]


def rate_order1(h, qx, qy, H, g, dx, dy, xp):
    """First-order semi-discrete rate L(W) of eq. (15), and the edge speeds (for Δt)."""
    hp, qxp, qyp, Hp = pad_walls(h, qx, qy, H, 1, xp)
    xl, xr = (slice(1, -1), slice(None, -1)), (slice(1, -1), slice(1, None))
    yl, yr = (slice(None, -1), slice(1, -1)), (slice(1, None), slice(1, -1))
    Dm, Dp, sx = roe_fluctuations(hp[xl], qxp[xl], qyp[xl], Hp[xl],
                                  hp[xr], qxp[xr], qyp[xr], Hp[xr], g, xp)
    Em, Ep, sy = roe_fluctuations(hp[yl], qyp[yl], qxp[yl], Hp[yl],
                                  hp[yr], qyp[yr], qxp[yr], Hp[yr], g, xp)
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


def rate_order3(h, qx, qy, H, g, dx, dy, xp):
    """Third-order semi-discrete rate L(W) of eq. (26) (CWENO3, Gauss edges, volume term)."""
    hp, qxp, qyp, Hp = pad_walls(h, qx, qy, H, 2, xp)
    eps = min(dx, dy) ** 2
    P = [cweno3(a, eps, xp) for a in (hp - Hp, qxp, qyp, Hp)]   # cells with one ghost ring

    def states(sel, side):
        """(h, qx, qy, H) at the two Gauss points of `side` of the cells `sel`."""
        vals = [_edge_points([c[sel] for c in p], side) for p in P]
        return [tuple(v[q] for v in vals) for q in (0, 1)]

    xl, xr = (slice(1, -1), slice(None, -1)), (slice(1, -1), slice(1, None))
    yl, yr = (slice(None, -1), slice(1, -1)), (slice(1, None), slice(1, -1))
    acc = []
    for lsel, rsel, ls, rs, normal in ((xl, xr, "E", "W", 1), (yl, yr, "N", "S", 2)):
        Dm = Dp = None
        for (eL, qxL, qyL, HL), (eR, qxR, qyR, HR) in zip(states(lsel, ls), states(rsel, rs)):
            nL, tL, nR, tR = (qxL, qyL, qxR, qyR) if normal == 1 else (qyL, qxL, qyR, qxR)
            m, p, _ = roe_fluctuations(eL + HL, nL, tL, HL, eR + HR, nR, tR, HR, g, xp)
            Dm = m if Dm is None else tuple(a + b for a, b in zip(Dm, m))
            Dp = p if Dp is None else tuple(a + b for a, b in zip(Dp, p))
        acc.append((tuple(0.5 * a for a in Dm), tuple(0.5 * a for a in Dp)))
    (Dm, Dp), (Em, Ep) = acc
    rh, rqx, rqy = _combine(Dm, Dp, Em, Ep, dx, dy)
    own = (slice(1, -1), slice(1, -1))
    vh, vx, vy = volume_term(*[[c[own] for c in p] for p in P], g, dx, dy, xp)
    return rh - vh, rqx - vx, rqy - vy


class GridArraySolver:
    """Advances (h, qx, qy) on the grid with array code; `step` returns the new arrays and Δt."""

    def __init__(self, *, g: float, dx: float, dy: float, cfl: float, order: int, xp):
        self.g, self.dx, self.dy, self.cfl, self.order, self.xp = g, dx, dy, cfl, order, xp

    def invalidate(self) -> None:
        """Nothing is cached between steps here."""

    def rate(self, h, qx, qy, H):
        f = rate_order1 if self.order == 1 else rate_order3
        r = f(h, qx, qy, H, self.g, self.dx, self.dy, self.xp)
        return r[0] if self.order == 1 else r

    def dt(self, h, qx, qy, dt_limit):
        dt = cfl_dt(h, qx, qy, self.g, self.dx, self.dy, self.cfl, self.xp)
        return dt if dt_limit is None else min(dt, dt_limit)

    def step(self, h, qx, qy, H, dt_limit):
        xp, g, dx, dy = self.xp, self.g, self.dx, self.dy
        if self.order == 1:
            rates, (sx, sy) = rate_order1(h, qx, qy, H, g, dx, dy, xp)
            dt = _dt_from_speeds(sx, sy, dx, dy, self.cfl, xp)
            dt = dt if dt_limit is None else min(dt, dt_limit)
            return tuple(u + dt * r for u, r in zip((h, qx, qy), rates)), dt
        dt = self.dt(h, qx, qy, dt_limit)
        u0 = (h, qx, qy)
        u = u0
        for a, b in ((0.0, 1.0), (0.75, 0.25), (1.0 / 3.0, 2.0 / 3.0)):
            r = self.rate(*u, H)
            u = tuple(ssp_stage(a, b, v0, v, dt * rv) for v0, v, rv in zip(u0, u, r))
        return u, dt


def ssp_stage(a: float, b: float, u0, u, du):
    """One Shu–Osher stage a·u0 + b·(u + Δt L(u)) (a = 0 for the first stage)."""
    return u + du if a == 0.0 else a * u0 + b * (u + du)
