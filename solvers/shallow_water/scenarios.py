"""Initial conditions and bathymetries of the shallow-water scenarios (docs/MODELS.md §3.5), as functions of
the cell-centre coordinates, so that every geometry (grid, triangles) builds them the same way.

One layer (`INITIAL`): each returns (eta, H), the free surface η = h − H and the depth H below the
reference level (positive downward, may be negative where the bottom rises above the reference
level). The water depth is h = η + H and must stay positive (no dry cells).
Two layers (`TWO_LAYER`, triangles): each returns (h1, h2, H), the thicknesses of the upper and the
lower layer and H. The discharges start at zero in every scenario.
"""
from __future__ import annotations

import numpy as np


def circular_dambreak(x, y):
    """docs/MODELS.md §3.5 a ([P2], §6.2): H = 1 − 0.4 exp(−x² − y²); η = 3 inside r < 0.6, 1 outside."""
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
    """docs/MODELS.md §3.5 b ([P2], Table 3): H = 4 − 1.5 exp(−x² − y²); h = 5 inside r < 1, 2.5
    outside (so η = h − H)."""
    r2 = x * x + y * y
    H = 4.0 - 1.5 * np.exp(-r2)
    h = np.where(r2 < 1.0, 5.0, 2.5)
    return h - H, H


INITIAL = {"circular-dambreak": circular_dambreak, "bump-dambreak": bump_dambreak,
           "lake-at-rest": lake_at_rest}


def _disc(x, y, radius, inside, outside):
    return np.where(np.hypot(x, y) < radius, inside, outside).astype(np.float64)


def internal_dambreak(x, y):
    """docs/MODELS.md §3.5 c ([P2]): H = 5; h1 = 0.5 inside r < 1.5, 4 outside; h2 = 5 − h1."""
    H = np.full_like(x, 5.0)
    h1 = _disc(x, y, 1.5, 0.5, 4.0)
    return h1, H - h1, H


def renumbering_test_1(x, y):
    """Seed 004's test 1: H = 6; h1 = 0.5 inside r < 1.5, 4 outside; h2 = H − h1."""
    H = np.full_like(x, 6.0)
    h1 = _disc(x, y, 1.5, 0.5, 4.0)
    return h1, H - h1, H


def renumbering_test_2(x, y):
    """Seed 004's test 2: H = 1 − 1.5 exp(−x² − y²) (negative near the origin); h1 = 4 for x ≥ 0
    else 0.5, h2 = 0.5 for x ≥ 0 else 4."""
    H = 1.0 - 1.5 * np.exp(-x * x - y * y)
    return np.where(x >= 0, 4.0, 0.5), np.where(x >= 0, 0.5, 4.0), H


TWO_LAYER = {"internal-dambreak": internal_dambreak, "renumbering-test-1": renumbering_test_1,
             "renumbering-test-2": renumbering_test_2}
