"""The domains and initial conditions of the curvature flows ([P0]; docs/MODELS.md §1.5).

The domain is [−Lx/2, Lx/2] × [−Ly/2, Ly/2] (parameters Lx, Ly; Ly empty = Lx), centred at 0:

    sine-rings   φ = sin(3π√(x² + y²)) (the paper's Figures 1–2: Lx = 4, (−2, 2)²); the formula
                 keeps its x, y on any domain (rings of wavelength 2/3 around the centre)
    eoc-exact    φ = ζ(0), the exact solution of exact.py (Tables 2–4: Lx = 8, [−4, 4]²)

eoc-exact on another domain: ζ keeps its own r, n, σ (zeta_r, zeta_n, zeta_sigma) and is not
rescaled with Lx, Ly. Its Dirichlet data are g = ζ on the boundary and w = w(ζ) (exact for any
boundary), so the solution of the discrete problem still converges to ζ on any rectangle; only on
the default square [−r, r]² (even n) is g = 0 there. Scaling r with the domain would change the
solution a run measures whenever the domain changes, and a non-square domain has no single r.
"""
from __future__ import annotations

import math

import numpy as np

from .exact import ExactSolution
from .reference import neumann_fill

DOMAINS = {"sine-rings": 4.0, "eoc-exact": 8.0}  # the default side Lx (= Ly) per scenario


def nodes(n1: int, n2: int, lx: float, ly: float):
    """The node coordinates x (N1+1), y (N2+1) of [−Lx/2, Lx/2] × [−Ly/2, Ly/2] and the spacings
    h1, h2."""
    ax, ay = 0.5 * lx, 0.5 * ly
    return (np.linspace(-ax, ax, n1 + 1), np.linspace(-ay, ay, n2 + 1), (ax - -ax) / n1,
            (ay - -ay) / n2)


def exact_solution(scenario: str, x, y, params, willmore: bool, xp, dtype, rows=slice(None)):
    """The exact solution ζ with its forcing (eoc-exact) on the node rows `rows` (default all),
    None for the other scenarios."""
    if scenario != "eoc-exact":
        return None
    return ExactSolution(x, y, params["zeta_r"], params["zeta_n"], params["zeta_sigma"],
                         willmore, xp, dtype, rows)


def initial_phi(x, y, exact, neumann: bool, xp, dtype, rows=None):
    """φ at t = 0: ζ(0) where there is an exact solution (on the rows it holds), else the sine
    rings; with Neumann boundaries the boundary nodes copy their inner neighbours. `rows`
    (strips.NodeRows, decomposed runs): φ on its extended rows, then cut to the owned ones."""
    if exact is not None:
        phi0 = exact.zeta(0.0)
    else:
        X, Y = np.meshgrid(x, y if rows is None else y[rows.ext])
        phi0 = xp.asarray(np.sin(3 * math.pi * np.hypot(X, Y)), dtype=dtype)
    phi0 = xp.array(phi0, dtype=dtype)
    if neumann:
        # (a strip's inner edges: the halo rows this overwrites are cut off below)
        neumann_fill(phi0)
    return phi0 if rows is None else rows.cut(phi0).copy()
