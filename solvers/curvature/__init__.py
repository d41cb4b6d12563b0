"""Curvature flows of graphs (docs/MODELS.md [P0]): mean-curvature and Willmore flow with adaptive
Runge–Kutta–Merson, array code (`reference.py`) and fused CUDA kernels (`fused.py`, `kernels/`)."""
from . import model  # noqa: F401  (registers mean-curvature and willmore)
