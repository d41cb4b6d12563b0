"""Closed forms: the decay of heat-1d's cosine mode (continuous and discrete), euler-1d's entropy
wave (cell averages of a density wave carried by uniform flow), and the exact
solution of the Riemann problem of the 1D Euler equations for an ideal gas (Toro, "Riemann Solvers
and Numerical Methods for Fluid Dynamics", ch. 4): the reference for Sod's tube."""
from __future__ import annotations

import math

import numpy as np


def heat_mode(x, t: float, L: float, alpha: float, mode: int):
    """The continuous solution from cos(kπx/L) on the insulated rod: exp(−α(kπ/L)² t) cos(kπx/L)."""
    return np.exp(-alpha * (mode * np.pi / L) ** 2 * t) * np.cos(mode * np.pi * np.asarray(x) / L)


def heat_mode_discrete(x, steps: int, fo: float, dx: float, L: float, mode: int):
    """The scheme's own solution from cos(kπx/L): the cosine mode is an exact eigenvector of the
    discrete operator and decays by 1 − 2 Fo (1 − cos(kπΔx/L)) per step."""
    lam = 1 - 2 * fo * (1 - np.cos(mode * np.pi * dx / L))
    return lam**steps * np.cos(mode * np.pi * np.asarray(x) / L)


def entropy_wave(x, dx: float, t: float, L: float, rho0: float, u: float, amplitude: float = 0.2):
    """Cell averages over [x − Δx/2, x + Δx/2] of ρ0 (1 + a sin(2π(x − u t)/L)): the density of
    euler-1d's entropy wave at time t (velocity and pressure stay uniform), periodic on [0, L)."""
    k = 2 * np.pi / L
    sinc = np.sin(k * dx / 2) / (k * dx / 2)
    return rho0 * (1 + amplitude * sinc * np.sin(k * (np.asarray(x) - u * t)))


def _f(p, rho, pk, ck, g):
    """Toro's f_K(p) and its derivative: the velocity jump across a shock or rarefaction."""
    if p > pk:
        A, B = 2 / ((g + 1) * rho), (g - 1) / (g + 1) * pk
        s = math.sqrt(A / (p + B))
        return (p - pk) * s, s * (1 - (p - pk) / (2 * (B + p)))
    e = (g - 1) / (2 * g)
    return 2 * ck / (g - 1) * ((p / pk) ** e - 1), (p / pk) ** (-(g + 1) / (2 * g)) / (rho * ck)


def star_state(left, right, gamma):
    """(p*, u*) between the two nonlinear waves, by Newton's method on f_L + f_R + Δu = 0."""
    (rl, ul, pl), (rr, ur, pr) = left, right
    cl, cr = math.sqrt(gamma * pl / rl), math.sqrt(gamma * pr / rr)
    p = max(1e-8, 0.5 * (pl + pr))
    for _ in range(100):
        fl, dl = _f(p, rl, pl, cl, gamma)
        fr, dr = _f(p, rr, pr, cr, gamma)
        dp = (fl + fr + ur - ul) / (dl + dr)
        p_new = max(1e-10, p - dp)
        if abs(p_new - p) < 1e-14 * (p_new + p):
            p = p_new
            break
        p = p_new
    fl, _ = _f(p, rl, pl, cl, gamma)
    fr, _ = _f(p, rr, pr, cr, gamma)
    return p, 0.5 * (ul + ur) + 0.5 * (fr - fl)


def riemann_exact(x, t: float, left, right, gamma: float = 1.4, x0: float = 0.5):
    """Density, velocity and pressure at points x and time t > 0 for the initial jump at x0 from
    left = (ρ, u, p) to right = (ρ, u, p)."""
    (rl, ul, pl), (rr, ur, pr) = left, right
    g = gamma
    ps, us = star_state(left, right, g)
    cl, cr = math.sqrt(g * pl / rl), math.sqrt(g * pr / rr)
    s = (np.asarray(x, dtype=float) - x0) / t
    rho, u, p = np.empty_like(s), np.empty_like(s), np.empty_like(s)
    gm = (g - 1) / (g + 1)
    for i, si in enumerate(s):
        if si <= us:  # left of the contact
            if ps > pl:  # left shock
                rs = rl * (ps / pl + gm) / (gm * ps / pl + 1)
                sh = ul - cl * math.sqrt((g + 1) / (2 * g) * ps / pl + (g - 1) / (2 * g))
                st = (rl, ul, pl) if si < sh else (rs, us, ps)
            else:  # left rarefaction
                rs = rl * (ps / pl) ** (1 / g)
                cs = cl * (ps / pl) ** ((g - 1) / (2 * g))
                if si < ul - cl:
                    st = (rl, ul, pl)
                elif si > us - cs:
                    st = (rs, us, ps)
                else:
                    c = 2 / (g + 1) * (cl + (g - 1) / 2 * (ul - si))
                    r = rl * (c / cl) ** (2 / (g - 1))
                    st = (r, si + c, pl * (c / cl) ** (2 * g / (g - 1)))
        else:  # right of the contact
            if ps > pr:  # right shock
                rs = rr * (ps / pr + gm) / (gm * ps / pr + 1)
                sh = ur + cr * math.sqrt((g + 1) / (2 * g) * ps / pr + (g - 1) / (2 * g))
                st = (rr, ur, pr) if si > sh else (rs, us, ps)
            else:  # right rarefaction
                rs = rr * (ps / pr) ** (1 / g)
                cs = cr * (ps / pr) ** ((g - 1) / (2 * g))
                if si > ur + cr:
                    st = (rr, ur, pr)
                elif si < us + cs:
                    st = (rs, us, ps)
                else:
                    c = 2 / (g + 1) * (cr - (g - 1) / 2 * (ur - si))
                    r = rr * (c / cr) ** (2 / (g - 1))
                    st = (r, si - c, pr * (c / cr) ** (2 * g / (g - 1)))
        rho[i], u[i], p[i] = st
    return rho, u, p
