"""Reaction–diffusion on triangulated surfaces ([P1], docs/MODELS.md §2): chemotaxis (Murray &
Myerscough) and Gray–Scott, on shared mesh operators, with an `xp` reference scheme
(reference.py) and a fused CUDA scheme (fused.py, kernels/)."""
from . import model  # noqa: F401  (registers chemotaxis and gray-scott)
