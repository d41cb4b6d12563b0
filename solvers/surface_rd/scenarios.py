"""The scenarios' meshes (a generated rectangle or tube, or a mesh file) and the initial
conditions with their seeded perturbations, in the mesh's own numbering."""
from __future__ import annotations

import numpy as np

from ..core.errors import ParameterError
from ..mesh import generators
from ..mesh.io import read_mesh


def build_mesh(model: str, scenario: str, p):
    """The mesh of `scenario` ('rectangle', 'tube' or 'file') with parameters `p`."""
    if scenario == "file":
        if not p["mesh"]:
            raise ParameterError(f"{model}: scenario 'file' needs parameter 'mesh' (a mesh file "
                                 "path, --mesh FILE); allowed: a path to a surface mesh meshio "
                                 "reads")
        return read_mesh(p["mesh"])
    if p["mesh"]:
        raise ParameterError(f"{model}: parameter 'mesh' is used only by scenario 'file', not "
                             f"'{scenario}'; allowed: scenario 'file' with a mesh")
    if scenario == "tube":
        return generators.tube(p["vertices"])
    return generators.rectangle(p["vertices"])


def chemotaxis_initial(mesh, p, rng) -> tuple[np.ndarray, np.ndarray]:
    """The uniform state (N, N/(1+N)) with a seeded relative perturbation of `perturbation`."""
    n_v = mesh.n_vertices
    eps = p["perturbation"]
    n0 = p["N"] * (1 + eps * rng.uniform(-1, 1, n_v))
    c0 = p["N"] / (1 + p["N"]) * (1 + eps * rng.uniform(-1, 1, n_v))
    return n0, c0


def gray_scott_initial(mesh, p, rng) -> tuple[np.ndarray, np.ndarray]:
    """u = 1, v = 0 with `spots` seeded spots (u = 1/2, v = 1/4) of radius 1, plus 1% noise."""
    n_v = mesh.n_vertices
    u = np.ones(n_v)
    v = np.zeros(n_v)
    pts = mesh.points
    centres = pts[rng.choice(n_v, size=min(p["spots"], n_v), replace=False)]
    # the vertices within distance 1 of each centre: the k-d tree's candidates (a ball a little
    # larger), then the exact test |x - c| < 1 on them alone (the set the test on every vertex
    # gives, at a fraction of its cost: an ensemble makes one initial state per member)
    for c, cand in zip(centres, mesh.kdtree.query_ball_point(centres, 1.0 + 1e-9)):
        cand = np.asarray(cand, dtype=np.int64)
        near = cand[np.linalg.norm(pts[cand] - c, axis=1) < 1.0]
        u[near], v[near] = 0.5, 0.25
    u *= 1 + 0.01 * rng.uniform(-1, 1, n_v)
    v *= 1 + 0.01 * rng.uniform(-1, 1, n_v)
    return u, v
