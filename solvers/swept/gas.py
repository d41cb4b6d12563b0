"""The finite volumes of euler-1d as xp code: the two schemes' tiers (`scheme`), the time step.

Both are two tiers per step on cells i−2 … i+2 (stencil radius R = 2: the flux at i+½ reads cells
i−1 … i+2), so both fit the swept machinery unchanged. Arrays have the components first, (3, …),
Q = (ρ, ρu, E), and the code is written operation for operation as kernels/euler.cu (paper) and
kernels/muscl.cu (muscl-hllc) write it, so that a g++ build of the kernels equals it bit for bit.

    paper        [P3] eqs. (13)–(21), docs/MODELS.md §4: the conserved variables reconstructed with the
                 pressure-ratio limiter min(P_r, 1) (switched off where P_r ∉ (0, ∞), which on a
                 uniform pressure means everywhere: first order on a density wave), the Rusanov
                 flux ½(F(Q_R) + F(Q_L) + r_sp(Q_L − Q_R)) with r_sp at the Roe average, midpoint
                 RK2 (Q* = Q − λ/2 ΔF(Q), Q' = Q − λ ΔF(Q*)).
    muscl-hllc   MUSCL on the primitive variables W = (ρ, u, P) with face values from the four
                 cells i−1 … i+2 (`face_value`; issue 28): the unlimited third-order (κ = 1/3)
                 value where the data are smooth (neighbouring second differences of one sign
                 and comparable size, no jump above 3 % of the variable's scale), so that smooth
                 extrema are not clipped; Roe's superbee at jumps (sharp contacts and shocks);
                 Čada & Torrilhon's LimO3 elsewhere. The reconstructed ρ and P stay positive
                 (the unlimited value only where it is above half the neighbours' least). The
                 HLLC flux (Toro, Spruce & Speares 1994; Toro §10.4) with Einfeldt's wave-speed
                 bounds S_L = min(u_L − c_L, ũ − c̃), S_R = max(u_R + c_R, ũ + c̃) at the Roe
                 average (exact on isolated contacts and shocks, positively conservative);
                 SSP-RK2 (Heun): Q¹ = Q − λΔF(Q), Q' = ½(Q + Q¹ − λΔF(Q¹)), TVD for a Courant
                 number ≤ ½, which the fixed step cfl Δx / (2 max(|u| + c)) keeps for cfl ≤ 1
                 while the waves stay below twice their initial speed (model.py's `dt`).
                 Measured (benchmarks/swept/euler_sharp.py, docs/VALIDATION.md): a Gaussian
                 entropy wave converges at L1 EOC ≈ 3 from 400 cells; Sod's L1(ρ) at 400 cells
                 8.6e-4 (PyClaw's MC-limited Roe 9.3e-4).
"""
from __future__ import annotations

import numpy as np

SCHEMES = ("muscl-hllc", "paper")


def pressure(q, gamma: float):
    return (gamma - 1) * (q[2] - 0.5 * q[1] * q[1] / q[0])


def euler_dt(Q, gamma: float, cfl: float, dx: float) -> float:
    """The fixed step of a run from the state Q (3, n): cfl Δx / (2 max(|u| + c)), in float64."""
    Q = np.asarray(Q, dtype=np.float64)
    u = Q[1] / Q[0]
    c = np.sqrt(gamma * pressure(Q, gamma) / Q[0])
    return float(cfl * dx / (2 * np.max(np.abs(u) + c)))


# ---- paper: pressure-ratio limiter, Rusanov flux at the Roe average (eqs. (15)–(21)) -----------
def _limited(pnum, pden, xp):
    """min(r, 1) for r = pnum/pden when 0 < r < ∞, else 0 (eqs. (16)–(17))."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = pnum / pden
    return xp.where(xp.isfinite(r) & (r > 0), xp.minimum(r, 1), 0)


def interface_flux(Qm, Q0, Qp, Qpp, gamma: float, xp):
    """Flux at the interface between Q0 and Qp (eqs. (15)–(20)), from cells i−1 … i+2."""
    Pm, P0, Pp, Ppp = (pressure(q, gamma) for q in (Qm, Q0, Qp, Qpp))
    phl = _limited(Pp - P0, P0 - Pm, xp)     # P_r,i
    phr = _limited(Pp - P0, Ppp - Pp, xp)    # 1 / P_r,i+1
    QL = Q0 + 0.5 * phl * (Qp - Q0)
    QR = Qp + 0.5 * phr * (Q0 - Qp)
    return rusanov_roe(QL, QR, gamma, xp)


def rusanov_roe(QL, QR, gamma: float, xp):
    """½ (F(Q_R) + F(Q_L) + r_sp (Q_L − Q_R)) with r_sp at the Roe average (eqs. (18)–(20))."""
    rL, rR = QL[0], QR[0]
    uL, uR = QL[1] / rL, QR[1] / rR
    PL, PR = pressure(QL, gamma), pressure(QR, gamma)
    sL, sR = xp.sqrt(rL), xp.sqrt(rR)
    w = 1 / (sL + sR)
    rho_sp = sL * sR
    u_sp = (sL * uL + sR * uR) * w
    e_sp = (sL * (QL[2] / rL) + sR * (QR[2] / rR)) * w
    P_sp = (gamma - 1) * (rho_sp * e_sp - 0.5 * rho_sp * u_sp * u_sp)
    r_sp = xp.sqrt(gamma * P_sp / rho_sp) + xp.abs(u_sp)
    FL = (QL[1], QL[1] * uL + PL, uL * (QL[2] + PL))
    FR = (QR[1], QR[1] * uR + PR, uR * (QR[2] + PR))
    return xp.stack([0.5 * (FR[c] + FL[c] + r_sp * (QL[c] - QR[c])) for c in range(3)])


def euler_tier(lam: float, gamma: float, xp):
    """Predictor tier (par 1): Q − λ/2 ΔF(Q); final tier (par 0): Q_old − λ ΔF(Q*), λ = Δt/Δx."""
    half = lam / 2

    def tier(par, S, b):
        dF = (interface_flux(S[1], S[2], S[3], S[4], gamma, xp)
              - interface_flux(S[0], S[1], S[2], S[3], gamma, xp))
        if par:
            return S[2] - half * dF
        return b - lam * dF
    return tier


# ---- muscl-hllc: third-order limited MUSCL on (ρ, u, P), HLLC flux, SSP-RK2 -----------------------
JUMP = 0.03      # a face difference above this fraction of the variable's scale is a jump
CONSISTENT = 4.0  # neighbouring second differences within this factor: smooth


def primitive(q, gamma: float):
    """(ρ, u, P) of the conserved (ρ, ρu, E)."""
    return (q[0], q[1] / q[0], pressure(q, gamma))


def face_value(wm, w0, wp, wpp, scale, positive: bool, xp):
    """The value at the face between cells 0 and p reconstructed in cell 0 from the cells
    m, 0, p, pp (for the other side of the face call it with the cells mirrored).

    a = w0 − wm, b = wp − w0, θ = a/b; second differences d0 = b − a (cell 0), d1 at cell p.
      smooth (d0 d1 > 0, |d0| and |d1| within a factor CONSISTENT of each other, no face
      difference above JUMP·scale, and for ρ and P the value above half the neighbours' least):
          w0 + (a + 2b)/6, the unlimited third-order (κ = 1/3) value, also at smooth extrema;
      at a jump (|a| or |b| > JUMP·scale): w0 + ½ φ_SB(θ) b, Roe's superbee
          φ_SB = max(0, min(2θ, 1), min(θ, 2)), which keeps contacts and shocks sharp;
      otherwise: w0 + ½ φ_O3(θ) b, Čada & Torrilhon's LimO3,
          φ_O3 = max(0, min((2 + θ)/3, max(−θ/2, min(2θ, (2 + θ)/3, 1.6)))).
    (b = 0 gives w0.) The written order of operations is muscl.cu's (bit for bit on the CPU)."""
    a, b = w0 - wm, wp - w0
    d0, d1 = b - a, (wpp - wp) - b
    th = a / xp.where(b == 0, 1, b)
    phi3 = (2 + th) / 3
    lo3 = xp.maximum(0, xp.minimum(phi3, xp.maximum(-0.5 * th,
                                                    xp.minimum(xp.minimum(2 * th, phi3), 1.6))))
    sb = xp.maximum(0, xp.maximum(xp.minimum(2 * th, 1), xp.minimum(th, 2)))
    jump = xp.maximum(xp.abs(a), xp.abs(b)) > JUMP * scale
    smooth = ((d0 * d1 > 0) & (xp.abs(d1) <= CONSISTENT * xp.abs(d0))
              & (xp.abs(d0) <= CONSISTENT * xp.abs(d1)) & ~jump)
    v = w0 + (a + 2 * b) / 6
    if positive:
        smooth = smooth & (v > 0.5 * xp.minimum(xp.minimum(wm, w0), wp))
    return xp.where(smooth, v, w0 + 0.5 * xp.where(jump, sb, lo3) * b)


def reconstruct(Wm, W0, Wp, Wpp, c0, gamma: float, xp):
    """(ρ, u, P) at the face between cells 0 and p on cell 0's side (face_value per variable;
    the scales: the least ρ and P of cells m, 0, p, and cell 0's sound speed c0 for u)."""
    rs = xp.minimum(xp.minimum(Wm[0], W0[0]), Wp[0])
    ps = xp.minimum(xp.minimum(Wm[2], W0[2]), Wp[2])
    return (face_value(Wm[0], W0[0], Wp[0], Wpp[0], rs, True, xp),
            face_value(Wm[1], W0[1], Wp[1], Wpp[1], c0, False, xp),
            face_value(Wm[2], W0[2], Wp[2], Wpp[2], ps, True, xp))


def sound_speed(W, gamma: float, xp):
    return xp.sqrt(gamma * W[2] / W[0])


def hllc(WL, WR, gamma: float, xp):
    """HLLC flux (Toro §10.4.2, the star states of eq. (10.39)) between the primitive states
    WL, WR = (ρ, u, P), with Einfeldt's wave speeds at the Roe average."""
    rL, uL, pL = WL
    rR, uR, pR = WR
    gm = gamma - 1
    EL = pL / gm + 0.5 * rL * uL * uL
    ER = pR / gm + 0.5 * rR * uR * uR
    cL = xp.sqrt(gamma * pL / rL)
    cR = xp.sqrt(gamma * pR / rR)
    sL, sR = xp.sqrt(rL), xp.sqrt(rR)
    w = 1 / (sL + sR)
    ut = (sL * uL + sR * uR) * w
    Ht = (sL * ((EL + pL) / rL) + sR * ((ER + pR) / rR)) * w
    ct = xp.sqrt(gm * (Ht - 0.5 * ut * ut))
    SL = xp.minimum(uL - cL, ut - ct)
    SR = xp.maximum(uR + cR, ut + ct)
    mL = rL * (SL - uL)        # mass flux relative to the left wave
    mR = rR * (SR - uR)
    Sm = (pR - pL + mL * uL - mR * uR) / (mL - mR)
    FL = (rL * uL, rL * uL * uL + pL, uL * (EL + pL))
    FR = (rR * uR, rR * uR * uR + pR, uR * (ER + pR))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = []
        for c, (fl, fr) in enumerate(zip(FL, FR)):
            out.append(xp.where(SL >= 0, fl, xp.where(
                SR <= 0, fr, xp.where(Sm >= 0, _star_flux(c, fl, SL, Sm, mL, rL, uL, pL, EL),
                                      _star_flux(c, fr, SR, Sm, mR, rR, uR, pR, ER)))))
    return xp.stack(out)


def _star_flux(c, f, S, Sm, m, r, u, p, E):
    """Component c of F_K + S_K (U*_K − U_K) on the side K with wave speed S = S_K,
    m = ρ_K (S_K − u_K)."""
    d = m / (S - Sm)           # ρ*_K
    if c == 0:
        return f + S * (d - r)
    if c == 1:
        return f + S * (d * Sm - r * u)
    return f + S * (d * (E / r + (Sm - u) * (Sm + p / m)) - E)


def muscl_flux(Wm, W0, Wp, Wpp, c0, cp, gamma: float, xp):
    """HLLC flux at the interface between cells 0 and p from the reconstruction (`reconstruct`)
    of the primitive states of cells m, 0, p, pp (i−1 … i+2) on both sides; c0, cp the sound
    speeds of cells 0 and p."""
    WL = reconstruct(Wm, W0, Wp, Wpp, c0, gamma, xp)
    WR = reconstruct(Wpp, Wp, W0, Wm, cp, gamma, xp)
    return hllc(WL, WR, gamma, xp)


def muscl_tier(lam: float, gamma: float, xp):
    """SSP-RK2 as two tiers: par 1, Q¹ = Q − λΔF(Q); par 0, Q' = ½(Q_old + (Q¹ − λΔF(Q¹)))."""

    def tier(par, S, b):
        W = [primitive(q, gamma) for q in S]
        c = [sound_speed(w, gamma, xp) for w in W[1:4]]
        dF = muscl_flux(W[1], W[2], W[3], W[4], c[1], c[2], gamma, xp) \
            - muscl_flux(W[0], W[1], W[2], W[3], c[0], c[1], gamma, xp)
        if par:
            return S[2] - lam * dF
        return 0.5 * (b + (S[2] - lam * dF))
    return tier


TIERS = {"paper": euler_tier, "muscl-hllc": muscl_tier}
