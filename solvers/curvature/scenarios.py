"""The domains and initial conditions of the curvature flows (seed 000; SPEC §1.5).

    sine-rings   φ = sin(3π√(x² + y²)) on (−2, 2)² (the paper's Figures 1–2)
    eoc-exact    φ = ζ(0) on [−4, 4]², the exact solution of exact.py (Tables 2–4)
"""
from __future__ import annotations

import math

import numpy as np

from .exact import ExactSolution
from .reference import neumann_fill

DOMAINS = {"sine-rings": (-2.0, 2.0), "eoc-exact": (-4.0, 4.0)}


def nodes(scenario: str, n1: int, n2: int):
    """The node coordinates x (N1+1), y (N2+1) of the scenario's square and the spacings h1, h2."""
    a, b = DOMAINS[scenario]
    return np.linspace(a, b, n1 + 1), np.linspace(a, b, n2 + 1), (b - a) / n1, (b - a) / n2


def exact_solution(scenario: str, x, y, params, willmore: bool, xp, dtype):
    """The exact solution ζ with its forcing (eoc-exact), None for the other scenarios."""
    if scenario != "eoc-exact":
        return None
    return ExactSolution(x, y, params["zeta_r"], params["zeta_n"], params["zeta_sigma"],
                         willmore, xp, dtype)


def initial_phi(x, y, exact, neumann: bool, xp, dtype):
    """φ at t = 0: ζ(0) where there is an exact solution, else the sine rings; with Neumann
    boundaries the boundary nodes copy their inner neighbours."""
    if exact is not None:
        phi0 = exact.zeta(0.0)
    else:
        X, Y = np.meshgrid(x, y)
        phi0 = xp.asarray(np.sin(3 * math.pi * np.hypot(X, Y)), dtype=dtype)
    phi0 = xp.array(phi0, dtype=dtype)
    if neumann:
        neumann_fill(phi0)
    return phi0
