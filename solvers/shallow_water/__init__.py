"""Shallow water (seeds 002 and 004): the one-layer model on structured grids (grid_scheme.py,
grid_fused.py + grid_kernels.cu)."""
from . import model  # noqa: F401  (registers shallow-water)
from . import two_layer  # noqa: F401
