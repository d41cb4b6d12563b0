"""One-dimensional explicit PDEs of seed 003 (Magee & Niemeyer): heat, with classic GPU kernels;
Kuramoto–Sivashinsky, Euler and the swept decomposition build on the same layout."""
from . import heat  # noqa: F401  (registers heat-1d)
