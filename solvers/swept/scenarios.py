"""Initial conditions of heat-1d, ks-1d and euler-1d (docs/MODELS.md [P3] Appendices B–D)."""
from __future__ import annotations

import numpy as np

from . import exact


def cosine_mode(x, L: float, mode: int, amplitude: float, mean: float):
    """heat-1d: mean + amplitude·cos(kπx/L), an eigenvector of the insulated rod's operator."""
    return mean + amplitude * np.cos(mode * np.pi * x / L)


def ks_initial(x, L: float, amplitude: float):
    """ks-1d: a·cos(2πx/L)(1 + sin(2πx/L)) (Kassam & Trefethen's cos(x/16)(1 + sin(x/16)))."""
    k = 2 * np.pi * x / L
    return amplitude * np.cos(k) * (1 + np.sin(k))


def conserved(rho, u, p, gamma):
    """euler-1d: (ρ, ρu, E) of a gas state given by density, velocity and pressure."""
    return np.array([rho, rho * u, p / (gamma - 1) + 0.5 * rho * u * u])


def shock_tube(x, x0: float, left, right):
    """euler-1d: the conserved state `left` left of the diaphragm at x0, `right` from it on."""
    return np.where(x[None, :] < x0, left[:, None], right[:, None])


def entropy_wave(x, dx: float, L: float, rho0: float, u: float, p: float, gamma: float):
    """euler-1d: the conserved cell averages of ρ = ρ0 (1 + 0.2 sin(2πx/L)), uniform u and P
    (linear in ρ, so the averages of ρu and E follow from that of ρ exactly)."""
    rho = exact.entropy_wave(x, dx, 0.0, L, rho0, u)
    return np.stack([rho, rho * u, p / (gamma - 1) + 0.5 * u * u * rho])
