"""Geometry: structured grids; triangle meshes (topology, geometry, GPU tables), generators,
meshio I/O with validation, and vertex/cell renumbering for locality."""
from .generators import disc, icosphere, rectangle, sphere, torus, tube
from .io import read_mesh, validate, write_mesh
from .renumber import inverse, morton_vertices, rcm_cells, rcm_vertices, shuffled
from .structured import Grid1D, Grid2D
from .triangles import TriangleMesh, padded

__all__ = ["Grid1D", "Grid2D", "TriangleMesh", "padded", "rectangle", "tube", "sphere",
           "icosphere", "torus", "disc", "read_mesh", "validate", "write_mesh", "rcm_vertices",
           "rcm_cells", "morton_vertices", "shuffled", "inverse"]
