"""Reaction–diffusion on triangulated surfaces (seed 001, SPEC §2): chemotaxis (Murray &
Myerscough) and Gray–Scott, on shared mesh operators, with array-code and fused CUDA paths."""
from . import chemotaxis  # noqa: F401  (registers chemotaxis)
from . import gray_scott  # noqa: F401  (registers gray-scott)
