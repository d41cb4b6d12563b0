"""Reaction–diffusion on triangulated surfaces (seed 001, SPEC §2): chemotaxis (Murray &
Myerscough) and Gray–Scott, on shared mesh operators, with an `xp` reference scheme
(reference.py) and a fused CUDA scheme (fused.py, kernels/)."""
from . import model  # noqa: F401  (registers chemotaxis and gray-scott)
