"""The edge fluxes of the one- and two-layer shallow-water systems, written once with `xp` (NumPy or
CuPy) and used by both geometries: the triangles (triangles/reference.py) and the structured grid
(grid/reference.py, whose x- and y-edges are the normals (1, 0) and (0, 1), given as ints). Their CUDA twins are
in kernels/riemann.cuh. docs/MODELS.md §3.1–3.3; [P2] (Castro et al., eq. (2)–(3)) and 004
(de la Asunción et al., §2). PyClaw's riemann package is the model: one signature for every flux,

    DL, DR, smax = flux(xp, WL, WR, HL, HR, nx, ny, wall, g, r)

WL, WR the conserved variables of the left and right cell in Cartesian components (one layer:
h, qx, qy; two layers: h1, q1x, q1y, h2, q2x, q2y), HL, HR the depth of the bottom below the
reference level, n = (nx, ny) the unit normal from left to right, `wall` a mask of the edges with no
right cell (None: none; there the mirror state qn → −qn is used, so q·n = 0), g gravity and r the
density ratio (two layers). DL = D⁻ goes to the left cell, DR = D⁺ to the right one (Cartesian, per
unit edge length); smax is the largest |λ| of the edge (for the CFL condition).

Every scheme works in the edge-normal frame, with rotated momenta qn = q·n, qt = q·t,
t = (−ny, nx). The path-conservative fluctuation of the edge, with segment paths and
h̄ = (h_L + h_R)/2, Roe velocities u = (√h_L u_L + √h_R u_R)/(√h_L + √h_R),
    Z = A ΔW − S ΔH:
        mass       Δqn_l
        normal     Δ(qn_l²/h_l) + g h̄_l (Δh_l + Δh_other·(1 or r) − ΔH)      (pressure, coupling
                                                                             −g h1∂h2, −r g h2∂h1,
                                                                             bottom g h ∂H)
        tangential Δ(qn_l qt_l / h_l)
is exactly A ΔW − S ΔH for the Roe matrix A (Roe property), and splits into the contributions
to the left and right cell:
    D⁻ = ½ (Z − Q V),   D⁺ = Z − D⁻,      W_i ← W_i − Δt/|V_i| Σ_edges |E| D^∓   (eq. (2))
    roe, ir-roe:  Q V = K sgn(Λ) K⁻¹ Z     (Roe: P⁻ = ½ K (I − sgn Λ) K⁻¹, with Harten's
                                            smoothed sign in transonic rarefactions, hh_fraction)
    pvm-ifcp:     Q = α0 I + α1 A + α2 A², the parabola through (λ1, |λ1|), (λ4, |λ4|),
                  (χ, |χ|), χ = S_ext max(|λ2|, |λ3|), S_ext = sgn(λ1 + λ4) (1 if zero), acting on
                  V = ΔW − (ΔH in the lowest layer's h) (= A⁻¹ S ΔH at rest)
Both are well balanced: a lake at rest gives Z = 0 and V = 0 exactly. Mass rows of D⁻ + D⁺ are
Δqn, so each layer's mass is conserved (Σ |E| n = 0 around every cell).

One layer: eigenvalues un ∓ c, un (c² = g h̄), eigenvectors in closed form. The Roe solver (roe1,
for both `roe` and `ir-roe`) is written in the normal frame on the wave strengths of ΔW with the
bottom jump as waves of its own and the Harten–Hyman split of the eigenvalues (hh_split);
PVM-IFCP (pvm_ifcp1) on Z as above.
Strong shocks (issue 28, one layer): the Roe and PVM-IFCP matrices give the shear wave
(λ = un, carrying Δqt) the viscosity |un| only, which vanishes on the edges along a shock front,
and a shock on a grid or a triangulated strip grows transverse stripes (the carbuncle, odd-even
decoupling). The cure is an H-correction of that wave switched on by a shock sensor (docs/MODELS.md
§3.3): each cell's sensor S_i = max over its edges of the compression
max(0, un_L − un_R) (un = q·n/h; walls with their mirror state), and an edge with the cells L, R
gives its shear wave the viscosity
    max(|un|, ν),   ν = min(c̄, max(S_L, S_R)/SHOCK_TAU),
c̄ = √(g h̄): Rusanov's (HLL's) shear dissipation where a cell beside the edge holds a compression
of more than SHOCK_TAU c̄, nothing where the flow has none. It adds ½ (ν − |un|)⁺ (Δqt − ut Δh)
to the tangential component of D⁺ and takes it from D⁻ (conservative), is zero on a lake at rest
(q = 0: S = 0 and Δqt − ut Δh = 0, in any precision) and leaves smax (≥ c̄ ≥ ν) alone.
The geometries compute S (grid/reference.py `cell_sensor`, triangles/reference.py), the
fluxes take ν = shock_nu(S_L, S_R) as `nu` (None: no correction).

Two layers: the four eigenvalues of the normal-frame 4×4 Roe matrix are the roots of
    ((λ − u1)² − c1²)((λ − u2)² − c2²) = r c1² c2²   (c_l² = g h̄_l):
the outer two by Newton from the bounds max/min(u) ± (c1 + c2) (monotone convergence), the inner
two from the deflated quadratic; right eigenvectors (c1², λ c1², u1t c1², b, λ b, u2t b),
b = (λ − u1)² − c1², and left ones in closed form. `ir-roe` projects on them in the normal frame
(rotational invariance: a 4×4 problem plus two transported tangential fields); `roe` is the
classical scheme of docs/MODELS.md [P4]: the 6×6 Cartesian eigenvector matrix K is inverted numerically per
edge (Gauss–Jordan, partial pivoting) and P⁻ = ½ K (I − sgn Λ) K⁻¹ applied to Z.
`pvm-ifcp` needs no eigenvectors: the external/internal speed approximations
u_m ± √(g(h̄1+h̄2)), u_w ± √((1−r) g h̄1 h̄2/(h̄1+h̄2)) of the Roe state.
Where the two-layer Roe matrix loses hyperbolicity (complex internal eigenvalues: strong shear,
Kelvin–Helmholtz; e.g. docs/MODELS.md [P4]'s test 2 just after t = 0.1), it has no eigenvector basis; the
Roe schemes then use the IFCP viscosity on that edge (as the GPU kernels do).
"""
from __future__ import annotations

import math

import numpy as np

SCHEMES = ("roe", "ir-roe", "pvm-ifcp")
NEWTON_IT = 16  # Newton iterations for the outer roots of the two-layer quartic
HYPERBOLIC_EPS = 1e-8  # (λ3 − λ2)² below this times (c1² + c2²): no eigenvector basis
SHOCK_TAU = 0.05  # a compression of SHOCK_TAU c̄ gets the full (Rusanov) shear viscosity


# ---- shared pieces -------------------------------------------------------------------------
def sgn(xp, x):
    return xp.where(x < 0, -1.0, 1.0).astype(x.dtype)


def hh_split(xp, lam, lam_l, lam_r):
    """(μ⁻, μ⁺, e) of the eigenvalue λ with the Harten–Hyman entropy fix: a transonic rarefaction,
    λ_L < 0 < λ_R (λ_L, λ_R the eigenvalue at the left and right state), sends
    λ_L (λ_R − λ)/(λ_R − λ_L) to the left and the rest to the right; otherwise μ⁻ = min(λ, 0).
    e = μ⁻ − min(λ, 0) is the fix's correction: exactly 0 outside transonic rarefactions."""
    trans = (lam_l < 0) & (lam_r > 0)
    den = xp.where(trans, lam_r - lam_l, 1)
    base = xp.minimum(lam, 0)
    e = xp.where(trans, lam_l * (lam_r - lam) / den - base, 0 * lam)
    m = base + e
    return m, lam - m, e


def hh_fraction(xp, lam, lam_l, lam_r):
    """The two-layer Roe schemes' left fraction ½(1 − sgn_δ λ) of a wave of the fluctuation Z, with
    Harten's smoothed sign sgn_δ(λ) = λ/|λ|_δ, |λ|_δ = (λ² + δ²)/(2δ) where |λ| < δ, and
    Harten–Hyman's δ = max(0, λ − λ_L, λ_R − λ) (nonzero, and > |λ|, only in a transonic
    rarefaction). Bounded in [0, 1]."""
    d = xp.maximum(xp.maximum(lam - lam_l, lam_r - lam), 0)
    smooth = xp.abs(lam) < d
    ds = xp.where(smooth, d, 1.0)
    s = xp.where(smooth, 2 * ds * lam / (lam * lam + ds * ds), sgn(xp, lam))
    return 0.5 * (1 - s)


def hh_abs(xp, lam, lam_l, lam_r):
    """Harten's smoothed |λ|_δ with Harten–Hyman's δ (see hh_fraction): |λ| outside transonic
    rarefactions; the PVM-IFCP parabola interpolates it at the external speeds."""
    d = xp.maximum(xp.maximum(lam - lam_l, lam_r - lam), 0)
    smooth = xp.abs(lam) < d
    ds = xp.where(smooth, d, 1.0)
    return xp.where(smooth, (lam * lam + ds * ds) / (2 * ds), xp.abs(lam))


def rotate(qx, qy, nx, ny):
    """(q·n, q·t), t = (−ny, nx). An axis normal given as Python ints (a grid edge: (1, 0) or
    (0, 1)) picks the components, which is what multiplying by 1 and 0 gives."""
    if type(nx) is int:
        return (qx, qy) if nx else (qy, -qx)
    return qx * nx + qy * ny, -qx * ny + qy * nx


def unrotate(dn, dt, nx, ny):
    """Cartesian components of dn n + dt t (the inverse of rotate)."""
    if type(nx) is int:
        return (dn, dt) if nx else (-dt, dn)
    return dn * nx - dt * ny, dn * ny + dt * nx


def roe_average(xp, hL, hR, aL, aR):
    """The Roe (√h-weighted) average of the velocities aL/hL and aR/hR."""
    sL, sR = xp.sqrt(hL), xp.sqrt(hR)
    return (sL * aL / hL + sR * aR / hR) / (sL + sR)


def parabola(xp, x1, x2, x3, f1, f2):
    """Coefficients (α0, α1, α2) of the parabola through (x1, f1), (x2, f2), (x3, |x3|)."""
    f3 = xp.abs(x3)
    d12 = (f2 - f1) / (x2 - x1)
    d13 = (f3 - f1) / (x3 - x1)
    a2 = (d13 - d12) / (x3 - x2)
    a1 = d12 - a2 * (x1 + x2)
    a0 = f1 - a1 * x1 - a2 * x1 * x1
    return a0, a1, a2


# ---- one layer -----------------------------------------------------------------------------
def _normal_states(xp, WL, WR, HL, HR, nx, ny, wall):
    """(hL, qnL, qtL, HL, hR, qnR, qtR, HR) in the edge-normal frame; the mirror state at walls."""
    hL, qxL, qyL = WL
    qnL, qtL = rotate(qxL, qyL, nx, ny)
    if wall is None:
        hR, qxR, qyR = WR
        qnR, qtR = rotate(qxR, qyR, nx, ny)
    else:
        hR = xp.where(wall, hL, WR[0])
        qnR, qtR = rotate(WR[1], WR[2], nx, ny)
        qnR = xp.where(wall, -qnL, qnR)
        qtR = xp.where(wall, qtL, qtR)
        HR = xp.where(wall, HL, HR)
    return hL, qnL, qtL, HL, hR, qnR, qtR, HR


def roe1(xp, WL, WR, HL, HR, nx, ny, wall, g, r=0.0, deta=None, nu=None):
    """The path-conservative Roe solver (docs/MODELS.md [P2] §4) in the edge-normal frame: segment paths and
    the closed-form eigenstructure of the one-layer Roe matrix (normal velocity ũ and tangential
    velocity ṽ the √h-weighted Roe averages, c̄² = g (h_L + h_R)/2; eigenvalues ũ − c̄, ũ, ũ + c̄).
    With α_k the wave strengths of ΔU and the bottom jump projected on the same eigenvectors
    (s_{1,3} = ∓ c̄ ΔH / 2), the fluctuation sent to the left cell is

        D⁻ = Σ_k r_k (μ⁻_k α_k − χ_k s_k),        D⁺ = Σ_k r_k (μ⁺_k α_k − (1 − χ_k) s_k),

    μ^± the eigenvalues split by the Harten–Hyman entropy fix (hh_split) and χ_k = [λ_k < 0]
    upwinding the bottom source. D⁻ + D⁺ = ΔF − g h̄ ΔH (the Roe property). Well-balanced exactly,
    also in float32 (issue 28): with β_k the strengths of (Δη, Δqn), Δη = Δh − ΔH, and
    e_k = μ⁻_k − min(λ_k, 0) the entropy fix's correction, the bottom's terms cancel in closed form,
        μ⁻_1 α_1 − χ_1 s_1 = μ⁻_1 β_1 + (χ_1 ũ² + e_1 (ũ + c̄)) ΔH/(2c̄)   (λ1 λ3 = ũ² − c̄²),
    and likewise for the other three, which is how they are computed: a lake at rest (Δη = 0, q = 0,
    so ũ = 0 and e = 0) gives D^± = 0 exactly in any precision, wherever PVM-IFCP's Δη is 0 too.
    smax = |ũ| + c̄. The schemes `roe` and `ir-roe` of one layer are both this solver. `deta`: Δη
    where the caller has it exactly (the grid's third order reconstructs η, and h = η + H rounds).
    `nu`: the shock sensor's shear viscosity ν (module docstring; None: none), μ^∓_2 = ½(ũ ∓
    max(|ũ|, min(ν, c̄)))."""
    hL, qnL, qtL, HL, hR, qnR, qtR, HR = _normal_states(xp, WL, WR, HL, HR, nx, ny, wall)
    sL, sR = xp.sqrt(hL), xp.sqrt(hR)
    rg = math.sqrt(g)
    uL, uR = qnL / hL, qnR / hR
    w = 1 / (sL + sR)
    u = (qnL / sL + qnR / sR) * w
    v = (qtL / sL + qtR / sR) * w
    c = xp.sqrt(0.5 * g * (hL + hR))
    dh, dqn, dqt, dH = hR - hL, qnR - qnL, qtR - qtL, HR - HL
    deta = dh - dH if deta is None else deta
    inv2c = 0.5 / c
    l1, l3 = u - c, u + c
    b1 = ((u + c) * deta - dqn) * inv2c   # strengths of (Δη, Δqn): a_1,3 less the bottom's part
    b3 = (dqn - (u - c) * deta) * inv2c
    a2 = dqt - v * dh
    cL, cR = rg * sL, rg * sR
    m1, p1, e1 = hh_split(xp, l1, uL - cL, uR - cR)
    m3, p3, e3 = hh_split(xp, l3, uL + cL, uR + cR)
    chi1 = (l1 < 0).astype(hL.dtype)
    chi3 = (l3 < 0).astype(hL.dtype)
    u2, k = u * u, dH * inv2c
    w1m = m1 * b1 + (chi1 * u2 + e1 * (u + c)) * k
    w3m = m3 * b3 - (chi3 * u2 + e3 * (u - c)) * k
    w1p = p1 * b1 + ((1 - chi1) * u2 - e1 * (u + c)) * k
    w3p = p3 * b3 - ((1 - chi3) * u2 - e3 * (u - c)) * k
    m2, p2 = xp.minimum(u, 0), xp.maximum(u, 0)
    if nu is not None:
        d = shear_extra(xp, nu, c, u)
        m2, p2 = m2 - d, p2 + d
    Dm = (w1m + w3m, *unrotate(w1m * l1 + w3m * l3, (w1m + w3m) * v + m2 * a2, nx, ny))
    Dp = (w1p + w3p, *unrotate(w1p * l1 + w3p * l3, (w1p + w3p) * v + p2 * a2, nx, ny))
    return Dm, Dp, xp.abs(u) + c


def shear_extra(xp, nu, c, un):
    """½ (min(ν, c̄) − |un|)⁺: the shear wave's extra viscosity (halved) of the shock cure."""
    return 0.5 * xp.maximum(xp.minimum(nu, c) - xp.abs(un), 0)


def compression(xp, hL, qnL, hR, qnR):
    """max(0, un_L − un_R) at edges (normal momenta qn): > 0 where the flow converges."""
    return xp.maximum(qnL / hL - qnR / hR, 0)


def shock_nu(xp, SL, SR):
    """ν = max(S_L, S_R)/SHOCK_TAU of an edge from its cells' sensors (capped at c̄ by the
    fluxes)."""
    return xp.maximum(SL, SR) * (1 / SHOCK_TAU)


def speed1(xp, hL, qnL, hR, qnR, g):
    """max_k |λ_k| = |ũ| + c̄ of the one-layer Roe matrix at edges (normal momentum qn), for a CFL
    Δt without the fluxes."""
    sL, sR = xp.sqrt(hL), xp.sqrt(hR)
    u = (qnL / sL + qnR / sR) / (sL + sR)
    return xp.abs(u) + xp.sqrt(0.5 * g * (hL + hR))


def pvm_ifcp1(xp, WL, WR, HL, HR, nx, ny, wall, g, r=0.0, nu=None):
    """PVM-IFCP: the parabola through the external speeds and χ = S_ext |un|, on the fluctuation
    Z = AΔW − SΔH and V = ΔW − (ΔH in h). `nu`: as roe1 (Q's shear eigenvalue is |un|)."""
    hL, qnL, qtL, HL, hR, qnR, qtR, HR = _normal_states(xp, WL, WR, HL, HR, nx, ny, wall)
    hb = 0.5 * (hL + hR)
    un = roe_average(xp, hL, hR, qnL, qnR)
    ut = roe_average(xp, hL, hR, qtL, qtR)
    c = xp.sqrt(g * hb)
    dh, dH = hR - hL, HR - HL
    z0 = qnR - qnL
    z1 = qnR * qnR / hR - qnL * qnL / hL + g * hb * (dh - dH)
    z2 = qnR * qtR / hR - qnL * qtL / hL
    l1, l3 = un - c, un + c
    smax = xp.maximum(xp.abs(l1), xp.abs(l3))
    cL, cR = xp.sqrt(g * hL), xp.sqrt(g * hR)
    uL, uR = qnL / hL, qnR / hR
    s_ext = xp.where(l1 + l3 < 0, -1.0, 1.0).astype(hb.dtype)
    chi = s_ext * xp.abs(un)
    al0, al1, al2 = parabola(xp, l1, l3, chi, hh_abs(xp, l1, uL - cL, uR - cR),
                             hh_abs(xp, l3, uL + cL, uR + cR))
    v = (dh - dH, qnR - qnL, qtR - qtL)
    av = _a3(v, un, ut, c)
    aav = _a3(av, un, ut, c)
    q = [al0 * v[k] + al1 * av[k] + al2 * aav[k] for k in range(3)]
    d0 = 0.5 * (z0 - q[0])
    dt = 0.5 * (z2 - q[2])
    if nu is not None:
        dt = dt - shear_extra(xp, nu, c, un) * (v[2] - ut * dh)
    dx, dy = unrotate(0.5 * (z1 - q[1]), dt, nx, ny)
    zx, zy = unrotate(z1, z2, nx, ny)
    return (d0, dx, dy), (z0 - d0, zx - dx, zy - dy), smax


def _a3(v, un, ut, c):
    """The normal-frame one-layer Roe matrix times v."""
    return (v[1], (c * c - un * un) * v[0] + 2 * un * v[1], -un * ut * v[0] + ut * v[1] + un * v[2])


# ---- two layers ----------------------------------------------------------------------------
def quartic_roots(xp, d1, d2, c1, c2, r):
    """The four real roots μ1 ≤ μ2 ≤ μ3 ≤ μ4 of ((μ − d1)² − c1²)((μ − d2)² − c2²) = r c1² c2²
    and the discriminant (μ3 − μ2)² of the deflated quadratic (inner pair); a negative one
    (complex internal eigenvalues: a loss of hyperbolicity) is clipped to a double root."""
    b1, e1 = -2 * d1, d1 * d1 - c1 * c1
    b2, e2 = -2 * d2, d2 * d2 - c2 * c2
    a3 = b1 + b2
    a2 = e1 + e2 + b1 * b2
    a1 = b1 * e2 + b2 * e1
    a0 = e1 * e2 - r * c1 * c1 * c2 * c2

    def newton(x):
        for _ in range(NEWTON_IT):
            p = (((x + a3) * x + a2) * x + a1) * x + a0
            dp = ((4 * x + 3 * a3) * x + 2 * a2) * x + a1
            x = x - p / dp
        return x

    m4 = newton(xp.maximum(d1, d2) + c1 + c2)
    m1 = newton(xp.minimum(d1, d2) - c1 - c2)
    s, m = m1 + m4, m1 * m4
    P = a3 + s
    Q = a2 + s * P - m
    disc2 = P * P - 4 * Q
    disc = xp.sqrt(xp.maximum(disc2, 0))
    return m1, 0.5 * (-P - disc), 0.5 * (-P + disc), m4, disc2


def _approx_speeds(xp, h1, h2, u1, u2, g, r):
    """External and internal wave-speed approximations (λ1, λ2, λ3, λ4) of a two-layer state."""
    hs = h1 + h2
    um = (h1 * u1 + h2 * u2) / hs
    uw = (h1 * u2 + h2 * u1) / hs
    ce = xp.sqrt(g * hs)
    ci = xp.sqrt((1 - r) * g * h1 * h2 / hs)
    return um - ce, uw - ci, uw + ci, um + ce


def _a6(v, u1, t1, c1s, u2, t2, c2s, r):
    """The normal-frame two-layer Roe matrix A (6×6, with the coupling terms) times v."""
    return (v[1],
            (c1s - u1 * u1) * v[0] + 2 * u1 * v[1] + c1s * v[3],
            -u1 * t1 * v[0] + t1 * v[1] + u1 * v[2],
            v[4],
            r * c2s * v[0] + (c2s - u2 * u2) * v[3] + 2 * u2 * v[4],
            -u2 * t2 * v[3] + t2 * v[4] + u2 * v[5])


class _Edge2:
    """What every two-layer flux computes first: normal-frame states (mirror state at walls),
    the Roe state, the fluctuation Z and the speed approximations of both sides."""

    def __init__(self, xp, WL, WR, HL, HR, nx, ny, wall, g, r):
        h1L, h2L = WL[0], WL[3]
        n1L, t1L = rotate(WL[1], WL[2], nx, ny)
        n2L, t2L = rotate(WL[4], WL[5], nx, ny)
        h1R, h2R = WR[0], WR[3]
        n1R, t1R = rotate(WR[1], WR[2], nx, ny)
        n2R, t2R = rotate(WR[4], WR[5], nx, ny)
        if wall is not None:
            h1R, h2R = xp.where(wall, h1L, h1R), xp.where(wall, h2L, h2R)
            n1R, n2R = xp.where(wall, -n1L, n1R), xp.where(wall, -n2L, n2R)
            t1R, t2R = xp.where(wall, t1L, t1R), xp.where(wall, t2L, t2R)
            HR = xp.where(wall, HL, HR)
        self.hb1, self.hb2 = 0.5 * (h1L + h1R), 0.5 * (h2L + h2R)
        self.u1 = roe_average(xp, h1L, h1R, n1L, n1R)
        self.v1 = roe_average(xp, h1L, h1R, t1L, t1R)
        self.u2 = roe_average(xp, h2L, h2R, n2L, n2R)
        self.v2 = roe_average(xp, h2L, h2R, t2L, t2R)
        self.c1s, self.c2s = c1s, c2s = g * self.hb1, g * self.hb2
        dh1, dh2, dH = h1R - h1L, h2R - h2L, HR - HL
        self.z = z = (n1R - n1L,
                      n1R * n1R / h1R - n1L * n1L / h1L + c1s * (dh1 + dh2 - dH),
                      n1R * t1R / h1R - n1L * t1L / h1L,
                      n2R - n2L,
                      n2R * n2R / h2R - n2L * n2L / h2L + c2s * (r * dh1 + dh2 - dH),
                      n2R * t2R / h2R - n2L * t2L / h2L)
        self.sl = _approx_speeds(xp, h1L, h2L, n1L / h1L, n2L / h2L, g, r)
        self.sr = _approx_speeds(xp, h1R, h2R, n1R / h1R, n2R / h2R, g, r)
        self.v = (dh1, z[0], t1R - t1L, dh2 - dH, z[3], t2R - t2L)  # V of PVM-IFCP
        self.xp, self.g, self.r, self.nx, self.ny = xp, g, r, nx, ny

    def pvm(self):
        """D⁻ (normal frame) of PVM-IFCP and its largest |λ|."""
        xp, z, v = self.xp, self.z, self.v
        l1, l2, l3, l4 = _approx_speeds(xp, self.hb1, self.hb2, self.u1, self.u2, self.g, self.r)
        s_ext = xp.where(l1 + l4 < 0, -1.0, 1.0).astype(self.hb1.dtype)
        chi = s_ext * xp.maximum(xp.abs(l2), xp.abs(l3))
        al0, al1, al2 = parabola(xp, l1, l4, chi, hh_abs(xp, l1, self.sl[0], self.sr[0]),
                                 hh_abs(xp, l4, self.sl[3], self.sr[3]))
        a = (self.u1, self.v1, self.c1s, self.u2, self.v2, self.c2s, self.r)
        av = _a6(v, *a)
        aav = _a6(av, *a)
        dm = [0.5 * (z[k] - (al0 * v[k] + al1 * av[k] + al2 * aav[k])) for k in range(6)]
        return dm, xp.maximum(xp.abs(l1), xp.abs(l4))

    def eigen(self):
        """The Roe eigenvalues, the edges without an eigenvector basis (they fall back to the
        IFCP viscosity), the left fractions of the six waves and the right/left eigenvectors of
        the quartic fields (normal frame, 6 and 4 components)."""
        xp, r, u1, u2, c1s, c2s = self.xp, self.r, self.u1, self.u2, self.c1s, self.c2s
        um = 0.5 * (u1 + u2)
        *m, disc2 = quartic_roots(xp, u1 - um, u2 - um, xp.sqrt(c1s), xp.sqrt(c2s), r)
        # complex (or nearly double) internal eigenvalues: no eigenvector basis
        fallback = ~(disc2 > HYPERBOLIC_EPS * (c1s + c2s))
        lam = [mk + um for mk in m]
        smax = xp.maximum(xp.abs(lam[0]), xp.abs(lam[3]))
        # entropy fix with the approximate speeds of the left and right states (sl, sr)
        theta = [hh_fraction(xp, lam[k], self.sl[k], self.sr[k]) for k in range(4)]
        theta += [0.5 * (1 - sgn(xp, u1)), 0.5 * (1 - sgn(xp, u2))]
        X, Lf = [], []
        for lk in lam:
            a = c1s
            b = (lk - u1) ** 2 - c1s
            X.append((a, lk * a, self.v1 * a, b, lk * b, self.v2 * b))
            Lf.append(((lk - 2 * u1) * r * c2s, r * c2s, (lk - 2 * u2) * b, b))
        return smax, fallback, theta, X, Lf

    def cartesian(self, dm):
        """(DL, DR) in Cartesian components from the normal-frame D⁻."""
        nx, ny = self.nx, self.ny
        d1x, d1y = unrotate(dm[1], dm[2], nx, ny)
        d2x, d2y = unrotate(dm[4], dm[5], nx, ny)
        DL = (dm[0], d1x, d1y, dm[3], d2x, d2y)
        DR = tuple(zc - dl for zc, dl in zip(self.cartesian_z(), DL))
        return DL, DR

    def cartesian_z(self):
        z, nx, ny = self.z, self.nx, self.ny
        z1x, z1y = unrotate(z[1], z[2], nx, ny)
        z2x, z2y = unrotate(z[4], z[5], nx, ny)
        return (z[0], z1x, z1y, z[3], z2x, z2y)


def pvm_ifcp2(xp, WL, WR, HL, HR, nx, ny, wall, g, r):
    e = _Edge2(xp, WL, WR, HL, HR, nx, ny, wall, g, r)
    dm, smax = e.pvm()
    return (*e.cartesian(dm), smax)


def ir_roe2(xp, WL, WR, HL, HR, nx, ny, wall, g, r):
    """Projection on the eigenvectors in the normal frame (a 4×4 problem plus two transported
    tangential fields)."""
    e = _Edge2(xp, WL, WR, HL, HR, nx, ny, wall, g, r)
    smax, fallback, theta, X, Lf = e.eigen()
    z = e.z
    dm = [0 * z[0] for _ in range(6)]
    with np.errstate(all="ignore"):
        for k in range(4):
            x, l = X[k], Lf[k]
            norm = l[0] * x[0] + l[1] * x[1] + l[2] * x[3] + l[3] * x[4]
            alpha = (l[0] * z[0] + l[1] * z[1] + l[2] * z[3] + l[3] * z[4]) / norm
            w = theta[k] * alpha
            for i in range(6):
                dm[i] = dm[i] + w * x[i]
    dm[2] = dm[2] + theta[4] * (z[2] - e.v1 * z[0])
    dm[5] = dm[5] + theta[5] * (z[5] - e.v2 * z[3])
    if bool(fallback.any()):
        dp, _ = e.pvm()
        dm = [xp.where(fallback, b, a) for a, b in zip(dm, dp)]
    return (*e.cartesian(dm), smax)


def roe2(xp, WL, WR, HL, HR, nx, ny, wall, g, r):
    """Seed 004's classical Roe: P⁻ = ½ K (I − sgn Λ) K⁻¹ with the 6×6 Cartesian eigenvector
    matrix K inverted numerically per edge, applied to the Cartesian fluctuation."""
    e = _Edge2(xp, WL, WR, HL, HR, nx, ny, wall, g, r)
    smax, fallback, theta, X, _ = e.eigen()
    E = e.z[0].shape[0]
    dt = e.z[0].dtype
    K = xp.zeros((E, 6, 6), dtype=dt)
    cols = list(X) + [(0, 0, 1, 0, 0, 0), (0, 0, 0, 0, 0, 1)]
    for j, x in enumerate(cols):
        x = [xi * xp.ones(E, dtype=dt) for xi in x]
        cx1, cy1 = unrotate(x[1], x[2], nx, ny)
        cx2, cy2 = unrotate(x[4], x[5], nx, ny)
        for i, val in enumerate((x[0], cx1, cy1, x[3], cx2, cy2)):
            K[:, i, j] = val
    # fallback edges (singular K) get the identity here; their result is replaced
    K[fallback] = xp.eye(6, dtype=dt)
    Kinv = gauss_jordan_inverse(xp, K)
    th = xp.stack(theta, axis=1)  # (E, 6)
    ZC = xp.stack(e.cartesian_z(), axis=1)  # (E, 6)
    alpha = xp.einsum("eij,ej->ei", Kinv, ZC)
    DLm = xp.einsum("eij,ej->ei", K, th * alpha)
    DL = tuple(DLm[:, i] for i in range(6))
    DR = tuple(ZC[:, i] - DL[i] for i in range(6))
    if bool(fallback.any()):
        dp, _ = e.pvm()
        DLp, DRp = e.cartesian(dp)
        DL = tuple(xp.where(fallback, b, a) for a, b in zip(DL, DLp))
        DR = tuple(xp.where(fallback, b, a) for a, b in zip(DR, DRp))
    return DL, DR, smax


def gauss_jordan_inverse(xp, K):
    """Inverse of each 6×6 matrix of the batch K (E, n, n) by Gauss–Jordan elimination with
    partial pivoting (the same algorithm as the per-thread GPU solver)."""
    E, n, _ = K.shape
    A = xp.concatenate([K, xp.broadcast_to(xp.eye(n, dtype=K.dtype), K.shape)], axis=2).copy()
    rows = xp.arange(E)
    for col in range(n):
        piv = col + xp.argmax(xp.abs(A[:, col:, col]), axis=1)
        a_col, a_piv = A[rows, col].copy(), A[rows, piv].copy()
        A[rows, col], A[rows, piv] = a_piv, a_col
        A[:, col] = A[:, col] / A[:, col, col][:, None]
        f = A[:, :, col].copy()
        f[:, col] = 0
        A -= f[:, :, None] * A[:, col][:, None, :]
    return A[:, :, n:]


# every flux by (layers, scheme)
FLUXES = {(1, "roe"): roe1, (1, "ir-roe"): roe1, (1, "pvm-ifcp"): pvm_ifcp1,
          (2, "roe"): roe2, (2, "ir-roe"): ir_roe2, (2, "pvm-ifcp"): pvm_ifcp2}
