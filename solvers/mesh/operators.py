"""Discrete operators of a triangle mesh shared by the families on surfaces (surface_rd and
equations): the cotangent Laplace–Beltrami operator with Meyer's mixed areas (docs/MODELS.md,
chemotaxis)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .triangles import TriangleMesh


def cotan_laplacian(mesh: TriangleMesh) -> sp.csr_matrix:
    """L with (L f)_i = 1/(2 A_i) Σ_j w_ij (f_j − f_i), w = cot α + cot β, A = mixed area."""
    e = mesh.edges
    w = mesh.cotangent_weights
    n = mesh.n_vertices
    rows = np.concatenate([e[:, 0], e[:, 1]])
    cols = np.concatenate([e[:, 1], e[:, 0]])
    vals = np.concatenate([w, w]) / (2.0 * mesh.mixed_areas[rows])
    diag = -np.bincount(rows, weights=vals, minlength=n)
    a = sp.csr_matrix((np.concatenate([vals, diag]),
                       (np.concatenate([rows, np.arange(n)]), np.concatenate([cols, np.arange(n)]))),
                      shape=(n, n))
    a.sum_duplicates()
    return a
