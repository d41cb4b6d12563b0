"""The geometry of a model file's run (docs/EQUATIONS.md) and its initial state.

Grids: "interval" (nx, L) and "rectangle" (nx, ny, Lx, Ly; ny empty: square cells; Lx empty: L; Ly
empty: Lx); coordinates from 0 to L, cell-centred (`grid = "cell"`, the default) or on vertices. Meshes:
"mesh" with `mesh = FILE` or `surface` = sphere (radius 1) | torus (radii 3 and 1) | tube (the
snake-like tube of surface_rd) | rectangle (32 × 16) of about `vertices` vertices. Coordinates x, y, z and r = √(x² + y²).
`noise` is uniform in [−1, 1], one draw per species from the run's seed.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ParameterError
from ..mesh import Grid1D, Grid2D, generators
from ..mesh.io import read_mesh


def grid_axis(n: int, L: float, vertex: bool, periodic: bool):
    """(coordinates, spacing) of one axis."""
    if vertex and not periodic:
        h = L / (n - 1)
        return np.arange(n) * h, h
    h = L / n
    return (np.arange(n) + (0.0 if vertex else 0.5)) * h, h


def build(model: str, p, periodic_axes) -> dict:
    """{"mesh": Grid1D | Grid2D | TriangleMesh, "coords": {x, y, z, r}, "spacing", "shape"}."""
    kind = p["kind"]
    vertex = p["grid"] == "vertex"
    if kind == "mesh":
        if p["mesh"]:
            mesh = read_mesh(p["mesh"])
        else:
            surf, n = p["surface"], p["vertices"]
            mesh = {"sphere": lambda: generators.sphere(n),
                    "torus": lambda: generators.torus(n),
                    "tube": lambda: generators.tube(n),
                    "rectangle": lambda: generators.rectangle(n)}[surf]()
        pts = np.asarray(mesh.points, dtype=np.float64)
        x, y = pts[:, 0].copy(), pts[:, 1].copy()
        z = pts[:, 2].copy() if pts.shape[1] > 2 else np.zeros_like(x)
        return {"mesh": mesh, "coords": {"x": x, "y": y, "z": z, "r": np.hypot(x, y)},
                "shape": (mesh.n_vertices,), "spacing": None}
    if p["mesh"]:
        raise ParameterError(f"{model}: parameter 'mesh' needs kind = 'mesh', not '{kind}'")
    nx = p["nx"]
    if kind == "interval":
        x, hx = grid_axis(nx, p["L"], vertex, periodic_axes[0])
        return {"mesh": Grid1D(x), "coords": {"x": x, "y": np.zeros_like(x),
                                              "z": np.zeros_like(x), "r": np.abs(x)},
                "shape": (nx,), "spacing": (hx,)}
    g = geometry_numbers(p)
    Lx, Ly, ny = g["Lx"], g["Ly"], int(g["ny"])
    if nx * ny > 2**28:
        raise ParameterError(f"{model}: nx·ny = {nx * ny} nodes; allowed: at most 2^28")
    x, hx = grid_axis(nx, Lx, vertex, periodic_axes[0])
    y, hy = grid_axis(ny, Ly, vertex, periodic_axes[1])
    X, Y = np.meshgrid(x, y)
    return {"mesh": Grid2D(x, y), "coords": {"x": X, "y": Y, "z": np.zeros_like(X),
                                             "r": np.hypot(X, Y)},
            "shape": (ny, nx), "spacing": (hx, hy)}


def geometry_numbers(p) -> dict:
    """L, Lx, Ly, nx, ny, vertices as the grid uses them (empty Lx: L, empty Ly: Lx, empty ny:
    square cells; an interval's ny is 1), for the initial conditions."""
    Lx = p["Lx"] if p["Lx"] is not None else p["L"]
    Ly = p["Ly"] if p["Ly"] is not None else Lx
    if p["kind"] == "interval":
        ny = 1
    else:
        ny = p["ny"] if p["ny"] is not None else max(2, round(p["nx"] * Ly / Lx))
    return {"L": float(p["L"]), "Lx": float(Lx), "Ly": float(Ly), "nx": float(p["nx"]),
            "ny": float(ny), "vertices": float(p["vertices"])}


def initial_state(definition, params: dict, coords: dict, shape, seed: int, evaluate,
                  geometry: dict | None = None) -> dict:
    """{species: float64 array} from the [initial] formulas; `geometry`: geometry_numbers."""
    rng = np.random.default_rng(seed)
    out = {}
    for s in definition.species:
        env = {**(geometry or {}), **coords, **params, "noise": rng.uniform(-1.0, 1.0, shape)}
        v = evaluate(definition.initial[s], env)
        a = np.broadcast_to(np.asarray(v, dtype=np.float64), shape).copy()
        if not np.isfinite(a).all():
            raise ParameterError(f"{definition.name}: the initial condition of {s} is not "
                                 "finite everywhere; allowed: finite values (check divisions, "
                                 "logarithms, square roots)")
        out[s] = a
    return out
