"""The brush's geodesic distances (core/paint.py) against exact polyhedral geodesics (MMP,
pygeodesic: `pip install pygeodesic`) where the Gaussian curvature is negative (issue 28):

    python -m benchmarks.core.geodesic_brush

Jittered tori (R = 2, r = 0.7; lattice parameters moved by up to `jitter` of a spacing; brush of
radius 2.8 at the inner equator) and saddles z = x² − y² on [−2, 2]² (radius 1.5 at the origin;
`aniso` = more columns than rows). Per case: vertices within the radius exactly, painted, and the
band the painted set lies in: the largest exact distance painted and the smallest one left out,
as fractions of the radius.

Beyond the public API it imports the brush's geodesic distances (core.paint) and mesh builders (solvers.mesh), which it compares with exact geodesics.
"""
from __future__ import annotations

import time

import numpy as np

from pdestudio.solvers.core.paint import geodesic
from pdestudio.solvers.mesh.generators import grid_triangles
from pdestudio.solvers.mesh.triangles import TriangleMesh


def torus(nu, nv, jitter, seed=0, R=2.0, r=0.7):
    rng = np.random.default_rng(seed)
    u, v = np.meshgrid(np.arange(nu) * 2 * np.pi / nu, np.arange(nv) * 2 * np.pi / nv,
                       indexing="ij")
    u = u + jitter * 2 * np.pi / nu * rng.uniform(-1, 1, u.shape)
    v = v + jitter * 2 * np.pi / nv * rng.uniform(-1, 1, v.shape)
    pts = np.column_stack([((R + r * np.cos(v)) * np.cos(u)).ravel(),
                           ((R + r * np.cos(v)) * np.sin(u)).ravel(), (r * np.sin(v)).ravel()])
    i, j = np.meshgrid(np.arange(nu), np.arange(nv), indexing="ij")
    a, b = (i * nv + j).ravel(), (((i + 1) % nu) * nv + j).ravel()
    c, d = (i * nv + (j + 1) % nv).ravel(), (((i + 1) % nu) * nv + (j + 1) % nv).ravel()
    return TriangleMesh(pts, np.concatenate([np.column_stack([a, b, d]),
                                             np.column_stack([a, d, c])])), [-(R - r), 0, 0]


def saddle(n, aniso=1, jitter=0.3, seed=0, L=2.0):
    rng = np.random.default_rng(seed)
    x, y = np.meshgrid(np.linspace(-L, L, n * aniso), np.linspace(-L, L, n))
    hx, hy = 2 * L / (n * aniso - 1), 2 * L / (n - 1)
    inner = (np.abs(x) < L) & (np.abs(y) < L)
    x = x + inner * jitter * hx * rng.uniform(-1, 1, x.shape)
    y = y + inner * jitter * hy * rng.uniform(-1, 1, y.shape)
    pts = np.column_stack([x.ravel(), y.ravel(), (x**2 - y**2).ravel()])
    return TriangleMesh(pts, grid_triangles(n * aniso, n)), [0, 0, 0]


def main() -> None:
    import pygeodesic.geodesic as pg
    cases = [(f"torus 96x48 jitter {j}", torus(96, 48, j), 2.8) for j in (0.3, 0.49)]
    cases += [("torus 24x96 jitter 0.3 (aspect ~7)", torus(24, 96, 0.3), 2.8)]
    cases += [(f"saddle {n}x{n * a} jitter 0.3", saddle(n, a), 1.5) for n, a in
              ((41, 1), (81, 1), (41, 4))]
    print("| mesh | exact | painted | max exact painted / r | min exact left out / r | s |")
    print("|---|---|---|---|---|---|")
    for name, (m, centre), rad in cases:
        P, F = np.asarray(m.points), np.asarray(m.cells)
        src = int(np.argmin(np.linalg.norm(P - centre, axis=1)))
        ex, _ = pg.PyGeodesicAlgorithmExact(P, F.astype(np.int32)).geodesicDistances(
            np.array([src]), None)
        t = time.perf_counter()
        d = geodesic(P, F, np.asarray(m.edges), src, rad)
        t = time.perf_counter() - t
        print(f"| {name} | {(ex <= rad).sum()} | {(d <= rad).sum()} | "
              f"{ex[d <= rad].max() / rad:.4f} | {ex[d > rad].min() / rad:.4f} | {t:.2f} |")


if __name__ == "__main__":
    main()
