"""Edge fluctuations of the one- and two-layer shallow-water systems on unstructured meshes, as
`xp` array code (the float64 reference, the CPU backend and the GPU `array` path). SPEC §3.1–3.3;
seeds 002 (Castro et al., eq. (2)–(3)) and 004 (de la Asunción et al., §2).

Every scheme is written in the edge-normal frame n = (nx, ny) (left → right cell), with
rotated momenta qn = q·n, qt = q·t, t = (−ny, nx). The path-conservative fluctuation of the edge,
with segment paths and h̄ = (h_L + h_R)/2, Roe velocities u = (√h_L u_L + √h_R u_R)/(√h_L + √h_R),
    Z = A ΔW − S ΔH:
        mass       Δqn_l
        normal     Δ(qn_l²/h_l) + g h̄_l (Δh_l + Δh_other·(1 or r) − ΔH)      (pressure, coupling
                                                                             −g h1∂h2, −r g h2∂h1,
                                                                             bottom g h ∂H)
        tangential Δ(qn_l qt_l / h_l)
is exactly A ΔW − S ΔH for the Roe matrix A (Roe property), and splits into the contributions
to the left and right cell:
    D⁻ = ½ (Z − Q V),   D⁺ = Z − D⁻,      W_i ← W_i − Δt/|V_i| Σ_edges |E| D^∓   (eq. (2))
    roe, ir-roe:  Q V = K sgn(Λ) K⁻¹ Z     (Roe: P⁻ = ½ K (I − sgn Λ) K⁻¹, with a Harten–Hyman
                                            entropy fix in transonic rarefactions)
    pvm-ifcp:     Q = α0 I + α1 A + α2 A², the parabola through (λ1, |λ1|), (λ4, |λ4|),
                  (χ, |χ|), χ = S_ext max(|λ2|, |λ3|), S_ext = sgn(λ1 + λ4) (1 if zero), acting on
                  V = ΔW − (ΔH in the lowest layer's h) (= A⁻¹ S ΔH at rest)
Both are well balanced: a lake at rest gives Z = 0 and V = 0 exactly. Mass rows of D⁻ + D⁺ are
Δqn, so each layer's mass is conserved (Σ |E| n = 0 around every cell).

One layer: eigenvalues un ∓ c, un (c² = g h̄), eigenvectors in closed form. `roe` uses them in the
Cartesian frame (the 3×3 closed form of seed 002), `ir-roe` in the normal frame: identical maths.
Two layers: the four eigenvalues of the normal-frame 4×4 Roe matrix are the roots of
    ((λ − u1)² − c1²)((λ − u2)² − c2²) = r c1² c2²   (c_l² = g h̄_l):
the outer two by Newton from the bounds max/min(u) ± (c1 + c2) (monotone convergence), the inner
two from the deflated quadratic; right eigenvectors (c1², λ c1², u1t c1², b, λ b, u2t b),
b = (λ − u1)² − c1², and left ones in closed form. `ir-roe` projects on them in the normal frame
(rotational invariance: a 4×4 problem plus two transported tangential fields); `roe` is the
classical scheme of seed 004: the 6×6 Cartesian eigenvector matrix K is inverted numerically per
edge (Gauss–Jordan, partial pivoting) and P⁻ = ½ K (I − sgn Λ) K⁻¹ applied to Z.
`pvm-ifcp` needs no eigenvectors: the external/internal speed approximations
u_m ± √(g(h̄1+h̄2)), u_w ± √((1−r) g h̄1 h̄2/(h̄1+h̄2)) of the Roe state.
Where the two-layer Roe matrix loses hyperbolicity (complex internal eigenvalues: strong shear,
Kelvin–Helmholtz; e.g. seed 004's test 2 just after t = 0.1), it has no eigenvector basis; the
Roe schemes then use the IFCP viscosity on that edge (as the GPU kernels do).
Wall edges (no right cell) use the mirror state (qn → −qn), so q·n = 0 there.
"""
from __future__ import annotations

import numpy as np

SCHEMES = ("roe", "ir-roe", "pvm-ifcp")
NEWTON_IT = 16  # Newton iterations for the outer roots of the two-layer quartic
HYPERBOLIC_EPS = 1e-8  # (λ3 − λ2)² below this times (c1² + c2²): no eigenvector basis


def _sgn(xp, x):
    return xp.where(x < 0, -1.0, 1.0).astype(x.dtype)


def _theta(xp, lam, lam_l, lam_r):
    """Left fraction ½(1 − sgn_δ λ) of a wave, with Harten's smoothed sign
    sgn_δ(λ) = λ/|λ|_δ, |λ|_δ = (λ² + δ²)/(2δ) where |λ| < δ, and Harten–Hyman's
    δ = max(0, λ − λ_L, λ_R − λ) (nonzero, and > |λ|, only in a transonic rarefaction,
    λ_L < 0 < λ_R). Bounded in [0, 1] (unlike the split of the wave strength, which divides
    by λ)."""
    d = xp.maximum(xp.maximum(lam - lam_l, lam_r - lam), 0)
    smooth = xp.abs(lam) < d
    ds = xp.where(smooth, d, 1.0)
    s = xp.where(smooth, 2 * ds * lam / (lam * lam + ds * ds), _sgn(xp, lam))
    return 0.5 * (1 - s)


def _habs(xp, lam, lam_l, lam_r):
    """Harten's smoothed |λ|_δ with Harten–Hyman's δ (see _theta): |λ| outside transonic
    rarefactions; the PVM-IFCP parabola interpolates it at the external speeds."""
    d = xp.maximum(xp.maximum(lam - lam_l, lam_r - lam), 0)
    smooth = xp.abs(lam) < d
    ds = xp.where(smooth, d, 1.0)
    return xp.where(smooth, (lam * lam + ds * ds) / (2 * ds), xp.abs(lam))


def _rotate(qx, qy, nx, ny):
    return qx * nx + qy * ny, -qx * ny + qy * nx


def _unrotate(dn, dt, nx, ny):
    return dn * nx - dt * ny, dn * ny + dt * nx


def _roe_avg(xp, hL, hR, aL, aR):
    sL, sR = xp.sqrt(hL), xp.sqrt(hR)
    return (sL * aL / hL + sR * aR / hR) / (sL + sR)


def _parabola(xp, x1, x2, x3, f1, f2):
    """Coefficients (α0, α1, α2) of the parabola through (x1, f1), (x2, f2), (x3, |x3|)."""
    f3 = xp.abs(x3)
    d12 = (f2 - f1) / (x2 - x1)
    d13 = (f3 - f1) / (x3 - x1)
    a2 = (d13 - d12) / (x3 - x2)
    a1 = d12 - a2 * (x1 + x2)
    a0 = f1 - a1 * x1 - a2 * x1 * x1
    return a0, a1, a2


# ---- one layer -----------------------------------------------------------------------------
def one_layer(xp, scheme, WL, WR, HL, HR, nx, ny, wall, g):
    """Contributions (DL, DR) (3-tuples, Cartesian, per unit edge length) and the largest wave
    speed |λ| of each edge. W = (h, qx, qy)."""
    hL, qxL, qyL = WL
    qnL, qtL = _rotate(qxL, qyL, nx, ny)
    if wall is None:
        hR, qxR, qyR = WR
        qnR, qtR = _rotate(qxR, qyR, nx, ny)
    else:
        hR = xp.where(wall, hL, WR[0])
        qnR, qtR = _rotate(WR[1], WR[2], nx, ny)
        qnR = xp.where(wall, -qnL, qnR)
        qtR = xp.where(wall, qtL, qtR)
        HR = xp.where(wall, HL, HR)
    hb = 0.5 * (hL + hR)
    un = _roe_avg(xp, hL, hR, qnL, qnR)
    ut = _roe_avg(xp, hL, hR, qtL, qtR)
    c = xp.sqrt(g * hb)
    dh, dH = hR - hL, HR - HL
    z0 = qnR - qnL
    z1 = qnR * qnR / hR - qnL * qnL / hL + g * hb * (dh - dH)
    z2 = qnR * qtR / hR - qnL * qtL / hL
    l1, l3 = un - c, un + c
    smax = xp.maximum(xp.abs(l1), xp.abs(l3))
    if scheme in ("roe", "ir-roe"):
        cL, cR = xp.sqrt(g * hL), xp.sqrt(g * hR)
        uL, uR = qnL / hL, qnR / hR
        t1 = _theta(xp, l1, uL - cL, uR - cR)
        t3 = _theta(xp, l3, uL + cL, uR + cR)
        t2 = 0.5 * (1 - _sgn(xp, un))
        if scheme == "ir-roe":  # normal frame: α = K⁻¹ Z, D⁻ = Σ θ_k α_k K_k
            a1 = ((un + c) * z0 - z1) / (2 * c)
            a3 = (z1 - (un - c) * z0) / (2 * c)
            a2 = z2 - ut * z0
            d0 = t1 * a1 + t3 * a3
            dn = t1 * a1 * l1 + t3 * a3 * l3
            dt = (t1 * a1 + t3 * a3) * ut + t2 * a2
            dx, dy = _unrotate(dn, dt, nx, ny)
        else:  # Cartesian closed form (seed 002): eigenvectors (1, u − c nx, v − c ny),
            # (0, −ny, nx), (1, u + c nx, v + c ny)
            u, v = _unrotate(un, ut, nx, ny)
            zx, zy = _unrotate(z1, z2, nx, ny)
            zn = zx * nx + zy * ny
            zt = -zx * ny + zy * nx
            a1 = ((un + c) * z0 - zn) / (2 * c)
            a3 = (zn - (un - c) * z0) / (2 * c)
            a2 = zt - ut * z0
            d0 = t1 * a1 + t3 * a3
            dx = t1 * a1 * (u - c * nx) + t3 * a3 * (u + c * nx) - t2 * a2 * ny
            dy = t1 * a1 * (v - c * ny) + t3 * a3 * (v + c * ny) + t2 * a2 * nx
    else:  # pvm-ifcp
        s_ext = xp.where(l1 + l3 < 0, -1.0, 1.0).astype(hb.dtype)
        chi = s_ext * xp.abs(un)
        cL, cR = xp.sqrt(g * hL), xp.sqrt(g * hR)
        uL, uR = qnL / hL, qnR / hR
        al0, al1, al2 = _parabola(xp, l1, l3, chi, _habs(xp, l1, uL - cL, uR - cR),
                                  _habs(xp, l3, uL + cL, uR + cR))
        v = (dh - dH, qnR - qnL, qtR - qtL)
        av = _a3(v, un, ut, c)
        aav = _a3(av, un, ut, c)
        q = [al0 * v[k] + al1 * av[k] + al2 * aav[k] for k in range(3)]
        d0 = 0.5 * (z0 - q[0])
        dn = 0.5 * (z1 - q[1])
        dt = 0.5 * (z2 - q[2])
        dx, dy = _unrotate(dn, dt, nx, ny)
    zx, zy = _unrotate(z1, z2, nx, ny)
    DL = (d0, dx, dy)
    DR = (z0 - d0, zx - dx, zy - dy)
    return DL, DR, smax


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


def two_layer(xp, scheme, WL, WR, HL, HR, nx, ny, wall, g, r):
    """Contributions (DL, DR) (6-tuples, Cartesian, per unit edge length) and the largest |λ|.
    W = (h1, q1x, q1y, h2, q2x, q2y)."""
    h1L, h2L = WL[0], WL[3]
    n1L, t1L = _rotate(WL[1], WL[2], nx, ny)
    n2L, t2L = _rotate(WL[4], WL[5], nx, ny)
    h1R, h2R = WR[0], WR[3]
    n1R, t1R = _rotate(WR[1], WR[2], nx, ny)
    n2R, t2R = _rotate(WR[4], WR[5], nx, ny)
    if wall is not None:
        h1R, h2R = xp.where(wall, h1L, h1R), xp.where(wall, h2L, h2R)
        n1R, n2R = xp.where(wall, -n1L, n1R), xp.where(wall, -n2L, n2R)
        t1R, t2R = xp.where(wall, t1L, t1R), xp.where(wall, t2L, t2R)
        HR = xp.where(wall, HL, HR)
    hb1, hb2 = 0.5 * (h1L + h1R), 0.5 * (h2L + h2R)
    u1 = _roe_avg(xp, h1L, h1R, n1L, n1R)
    v1 = _roe_avg(xp, h1L, h1R, t1L, t1R)
    u2 = _roe_avg(xp, h2L, h2R, n2L, n2R)
    v2 = _roe_avg(xp, h2L, h2R, t2L, t2R)
    c1s, c2s = g * hb1, g * hb2
    dh1, dh2, dH = h1R - h1L, h2R - h2L, HR - HL
    z = (n1R - n1L,
         n1R * n1R / h1R - n1L * n1L / h1L + c1s * (dh1 + dh2 - dH),
         n1R * t1R / h1R - n1L * t1L / h1L,
         n2R - n2L,
         n2R * n2R / h2R - n2L * n2L / h2L + c2s * (r * dh1 + dh2 - dH),
         n2R * t2R / h2R - n2L * t2L / h2L)

    sl = _approx_speeds(xp, h1L, h2L, n1L / h1L, n2L / h2L, g, r)
    sr = _approx_speeds(xp, h1R, h2R, n1R / h1R, n2R / h2R, g, r)

    def pvm():
        l1, l2, l3, l4 = _approx_speeds(xp, hb1, hb2, u1, u2, g, r)
        s_ext = xp.where(l1 + l4 < 0, -1.0, 1.0).astype(hb1.dtype)
        chi = s_ext * xp.maximum(xp.abs(l2), xp.abs(l3))
        al0, al1, al2 = _parabola(xp, l1, l4, chi, _habs(xp, l1, sl[0], sr[0]),
                                  _habs(xp, l4, sl[3], sr[3]))
        v = (dh1, z[0], t1R - t1L, dh2 - dH, z[3], t2R - t2L)
        av = _a6(v, u1, v1, c1s, u2, v2, c2s, r)
        aav = _a6(av, u1, v1, c1s, u2, v2, c2s, r)
        dm = [0.5 * (z[k] - (al0 * v[k] + al1 * av[k] + al2 * aav[k])) for k in range(6)]
        return dm, xp.maximum(xp.abs(l1), xp.abs(l4))

    if scheme == "pvm-ifcp":
        dm, smax = pvm()
    else:
        um = 0.5 * (u1 + u2)
        *m, disc2 = quartic_roots(xp, u1 - um, u2 - um, xp.sqrt(c1s), xp.sqrt(c2s), r)
        # complex (or nearly double) internal eigenvalues: no eigenvector basis; the edge
        # falls back to the IFCP viscosity, which needs none
        fallback = ~(disc2 > HYPERBOLIC_EPS * (c1s + c2s))
        lam = [mk + um for mk in m]
        smax = xp.maximum(xp.abs(lam[0]), xp.abs(lam[3]))
        # entropy fix with the approximate speeds of the left and right states (sl, sr)
        theta = [_theta(xp, lam[k], sl[k], sr[k]) for k in range(4)]
        th_t1 = 0.5 * (1 - _sgn(xp, u1))
        th_t2 = 0.5 * (1 - _sgn(xp, u2))
        # right eigenvectors of the quartic fields (normal frame, 6 comps) and left ones (4 comps)
        X, Lf = [], []
        for lk in lam:
            a = c1s
            b = (lk - u1) ** 2 - c1s
            X.append((a, lk * a, v1 * a, b, lk * b, v2 * b))
            Lf.append(((lk - 2 * u1) * r * c2s, r * c2s, (lk - 2 * u2) * b, b))
        if scheme == "ir-roe":
            dm = [0 * z[0] for _ in range(6)]
            with np.errstate(all="ignore"):
                for k in range(4):
                    x, l = X[k], Lf[k]
                    norm = l[0] * x[0] + l[1] * x[1] + l[2] * x[3] + l[3] * x[4]
                    alpha = (l[0] * z[0] + l[1] * z[1] + l[2] * z[3] + l[3] * z[4]) / norm
                    w = theta[k] * alpha
                    for i in range(6):
                        dm[i] = dm[i] + w * x[i]
            dm[2] = dm[2] + th_t1 * (z[2] - v1 * z[0])
            dm[5] = dm[5] + th_t2 * (z[5] - v2 * z[3])
            if bool(fallback.any()):
                dp, _ = pvm()
                dm = [xp.where(fallback, b, a) for a, b in zip(dm, dp)]
        else:
            DL, DR, smax = _classical_roe(xp, z, X, theta, th_t1, th_t2, nx, ny, smax, fallback)
            if bool(fallback.any()):
                dp, _ = pvm()
                DLp, DRp = _to_cartesian(xp, dp, z, nx, ny)
                DL = tuple(xp.where(fallback, b, a) for a, b in zip(DL, DLp))
                DR = tuple(xp.where(fallback, b, a) for a, b in zip(DR, DRp))
            return DL, DR, smax
    DL, DR = _to_cartesian(xp, dm, z, nx, ny)
    return DL, DR, smax


def _to_cartesian(xp, dm, z, nx, ny):
    """(DL, DR) in Cartesian components from the normal-frame D⁻ and fluctuation Z."""
    d1x, d1y = _unrotate(dm[1], dm[2], nx, ny)
    d2x, d2y = _unrotate(dm[4], dm[5], nx, ny)
    z1x, z1y = _unrotate(z[1], z[2], nx, ny)
    z2x, z2y = _unrotate(z[4], z[5], nx, ny)
    DL = (dm[0], d1x, d1y, dm[3], d2x, d2y)
    ZC = (z[0], z1x, z1y, z[3], z2x, z2y)
    DR = tuple(zc - dl for zc, dl in zip(ZC, DL))
    return DL, DR


def _classical_roe(xp, z, X, theta, th_t1, th_t2, nx, ny, smax, fallback):
    """Seed 004's classical Roe: P⁻ = ½ K (I − sgn Λ) K⁻¹ with the 6×6 Cartesian eigenvector
    matrix K inverted numerically per edge, applied to the Cartesian fluctuation."""
    E = z[0].shape[0]
    dt = z[0].dtype
    K = xp.zeros((E, 6, 6), dtype=dt)
    cols = list(X) + [(0, 0, 1, 0, 0, 0), (0, 0, 0, 0, 0, 1)]
    for j, x in enumerate(cols):
        x = [xi * xp.ones(E, dtype=dt) for xi in x]
        cx1, cy1 = _unrotate(x[1], x[2], nx, ny)
        cx2, cy2 = _unrotate(x[4], x[5], nx, ny)
        for i, val in enumerate((x[0], cx1, cy1, x[3], cx2, cy2)):
            K[:, i, j] = val
    # fallback edges (singular K) get the identity here; their result is replaced
    K[fallback] = xp.eye(6, dtype=dt)
    Kinv = gauss_jordan_inverse(xp, K)
    th = xp.stack(list(theta) + [th_t1, th_t2], axis=1)  # (E, 6)
    z1x, z1y = _unrotate(z[1], z[2], nx, ny)
    z2x, z2y = _unrotate(z[4], z[5], nx, ny)
    ZC = xp.stack([z[0], z1x, z1y, z[3], z2x, z2y], axis=1)  # (E, 6)
    alpha = xp.einsum("eij,ej->ei", Kinv, ZC)
    DLm = xp.einsum("eij,ej->ei", K, th * alpha)
    DL = tuple(DLm[:, i] for i in range(6))
    DR = tuple(ZC[:, i] - DL[i] for i in range(6))
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
