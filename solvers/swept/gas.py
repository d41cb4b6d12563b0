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
    muscl-hllc   MUSCL on the primitive variables W = (ρ, u, P) with the monotonised-central (MC)
                 limiter of van Leer (1977), s = minmod(2a, ½(a + b), 2b) of the one-sided
                 differences a, b (second order where the solution is smooth and not at an
                 extremum, and the reconstructed ρ and P stay between the neighbours' values, so
                 positive); the HLLC flux (Toro, Spruce & Speares 1994; Toro §10.4) with Einfeldt's
                 wave-speed bounds S_L = min(u_L − c_L, ũ − c̃), S_R = max(u_R + c_R, ũ + c̃) at the
                 Roe average (exact on isolated contacts and shocks, positively conservative);
                 SSP-RK2 (Heun): Q¹ = Q − λΔF(Q), Q' = ½(Q + Q¹ − λΔF(Q¹)), TVD for a Courant
                 number ≤ ½, which the fixed step cfl Δx / (2 max(|u| + c)) keeps for cfl ≤ 1
                 while the waves stay below twice their initial speed (model.py's `dt`).
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


# ---- muscl-hllc: MC-limited primitive MUSCL, HLLC flux, SSP-RK2 --------------------------------
def primitive(q, gamma: float):
    """(ρ, u, P) of the conserved (ρ, ρu, E)."""
    return (q[0], q[1] / q[0], pressure(q, gamma))


def mc_slope(a, b, xp):
    """The MC-limited slope of the one-sided differences a (left) and b (right):
    sign(a) min(2|a|, 2|b|, ½|a + b|) where a b > 0, else 0."""
    m = xp.minimum(xp.minimum(2 * xp.abs(a), 2 * xp.abs(b)), 0.5 * xp.abs(a + b))
    return xp.where(a * b > 0, xp.where(a > 0, m, -m), 0 * a)


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


def muscl_flux(Wm, W0, Wp, Wpp, gamma: float, xp):
    """HLLC flux at the interface between cells 0 and p from the MC-limited reconstruction of the
    primitive states of cells m, 0, p, pp (i−1 … i+2)."""
    WL = tuple(w0 + 0.5 * mc_slope(w0 - wm, wp - w0, xp) for wm, w0, wp in zip(Wm, W0, Wp))
    WR = tuple(wp - 0.5 * mc_slope(wp - w0, wpp - wp, xp) for w0, wp, wpp in zip(W0, Wp, Wpp))
    return hllc(WL, WR, gamma, xp)


def muscl_tier(lam: float, gamma: float, xp):
    """SSP-RK2 as two tiers: par 1, Q¹ = Q − λΔF(Q); par 0, Q' = ½(Q_old + (Q¹ − λΔF(Q¹)))."""

    def tier(par, S, b):
        W = [primitive(q, gamma) for q in S]
        dF = muscl_flux(W[1], W[2], W[3], W[4], gamma, xp) \
            - muscl_flux(W[0], W[1], W[2], W[3], gamma, xp)
        if par:
            return S[2] - lam * dF
        return 0.5 * (b + (S[2] - lam * dF))
    return tier


TIERS = {"paper": euler_tier, "muscl-hllc": muscl_tier}
