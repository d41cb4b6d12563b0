"""Structured grids (docs/MODELS.md §0 "Geometry and field layout").

`x`, `y` are 1D coordinate arrays (nodes for node-based schemes, cell centres for finite volumes);
a 2D field has shape (len(y), len(x)), x along the last axis.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Grid1D:
    x: np.ndarray
    kind: str = "grid1d"

    @property
    def dx(self) -> float:
        return float(self.x[1] - self.x[0])

    @property
    def shape(self) -> tuple[int]:
        return (len(self.x),)


@dataclass(frozen=True)
class Grid2D:
    x: np.ndarray
    y: np.ndarray
    kind: str = "grid2d"

    @property
    def dx(self) -> float:
        return float(self.x[1] - self.x[0])

    @property
    def dy(self) -> float:
        return float(self.y[1] - self.y[0])

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.y), len(self.x))
