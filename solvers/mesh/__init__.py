"""Geometry: structured grids here; triangle meshes, generators, meshio I/O, renumbering beside."""
from .structured import Grid1D, Grid2D

__all__ = ["Grid1D", "Grid2D"]
