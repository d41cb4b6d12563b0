"""One-dimensional explicit PDEs of docs/MODELS.md [P3] (Magee & Niemeyer): heat, Kuramoto–Sivashinsky and
Euler (Sod), each with classic, classic-graph and swept GPU kernels (`method`)."""
from . import model  # noqa: F401  (registers heat-1d, ks-1d, euler-1d)
