"""Initial conditions of the one-layer shallow-water scenarios (SPEC §3.5), as functions of the
cell-centre coordinates, so that every geometry (grid, triangles) builds them the same way.

Each returns (eta, H): the free surface η = h − H and the depth H below the reference level
(positive downward, may be negative where the bottom rises above the reference level). The
momenta start at zero. The water depth is h = η + H and must stay positive (no dry cells).
"""
from __future__ import annotations

import numpy as np


def circular_dambreak(x, y):
    """SPEC §3.5 a (seed 002, §6.2): H = 1 − 0.4 exp(−x² − y²); η = 3 inside r < 0.6, 1 outside."""
    r2 = x * x + y * y
    H = 1.0 - 0.4 * np.exp(-r2)
    eta = np.where(r2 < 0.36, 3.0, 1.0)
    return eta, H


def lake_at_rest(x, y):
    """A lake at rest (η = 1, q = 0) over a bumpy bottom that rises above the reference level
    (H < 0) in the middle: the well-balanced scheme must keep it at rest to round-off."""
    H = (0.5 - 1.2 * np.exp(-(x * x + y * y) / 2.0) + 0.2 * np.sin(2.0 * x) * np.cos(3.0 * y)
         - 0.3 * np.exp(-((x - 2.5) ** 2 + 4.0 * (y + 1.5) ** 2)))
    eta = np.ones_like(H)
    return eta, H


def bump_dambreak(x, y):
    """SPEC §3.5 b (seed 002, Table 3): H = 4 − 1.5 exp(−x² − y²); h = 5 inside r < 1, 2.5
    outside (so η = h − H)."""
    r2 = x * x + y * y
    H = 4.0 - 1.5 * np.exp(-r2)
    h = np.where(r2 < 1.0, 5.0, 2.5)
    return h - H, H


INITIAL = {"circular-dambreak": circular_dambreak, "bump-dambreak": bump_dambreak,
           "lake-at-rest": lake_at_rest}
