"""Curvature flows of graphs (seed 000): mean-curvature and Willmore flow with adaptive
Runge–Kutta–Merson, array code (`operators.py`) and fused CUDA kernels (`curvature.cu`)."""
from . import model  # noqa: F401  (registers mean-curvature and willmore)
