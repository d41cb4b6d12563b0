"""Shallow water (docs/MODELS.md [P2] and [P4]): one layer on a structured grid or on triangles
(`shallow-water`), two layers on triangles (`two-layer`). model.py holds the models; grid/ and
triangles/ the schemes of each geometry; riemann.py (and kernels/riemann.cuh) the edge fluxes
both geometries share."""
from . import model  # noqa: F401  (registers shallow-water and two-layer)
