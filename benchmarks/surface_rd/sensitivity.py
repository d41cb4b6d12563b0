"""How far apart chemotaxis runs drift (docs/BENCHMARKS.md, "Chemotaxis IMEX fused on lattice
meshes"): the explicit run, the same run from an initial state perturbed by --eps (relative,
1e-10 by default), and the IMEX run at --factor times the explicit step (capped by the IMEX
bound), compared at several times (area-weighted relative L2, the largest over the fields), with
the IMEX run's cost per step after them.

    python -m benchmarks.surface_rd.sensitivity --backend cupy --vertices 200000
    python -m benchmarks.surface_rd.sensitivity --backend numpy --vertices 2000 --times 5,10
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from pdestudio import solvers


def _sync(sim) -> None:
    float(sim.xp.asarray(sim.state["cells"]).sum())


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--vertices", type=int, default=200_000)
    ap.add_argument("--factor", type=float, default=200.0)
    ap.add_argument("--eps", type=float, default=1e-10)
    ap.add_argument("--times", default="10,20,30,50,75,100,150,200")
    ap.add_argument("--cost-steps", type=int, default=6400,
                    help="IMEX steps timed after the comparisons (0: none)")
    a = ap.parse_args(argv)
    kw = dict(vertices=a.vertices, backend=a.backend)
    ref = solvers.create("chemotaxis", **kw)
    touched = solvers.create("chemotaxis", **kw)
    probe = solvers.create("chemotaxis", integrator="imex", **kw)
    imex = solvers.create("chemotaxis", integrator="imex",
                          dt=min(a.factor * ref.dt, 0.999 * probe.dt_max), **kw)
    rng = np.random.default_rng(1)
    for k in list(touched.state):
        v = touched.fields()[k]
        touched.set_field(k, v * (1 + a.eps * rng.uniform(-1, 1, v.shape)))
    area = np.asarray(ref.mesh.mixed_areas)

    def rel(x, y):
        fx, fy = x.fields(), y.fields()
        return max(float(np.sqrt((area * (fx[k] - fy[k]) ** 2).sum() / (area * fy[k] ** 2).sum()))
                   for k in fy)

    from benchmarks.equations.bench import _imex_path
    print(f"chemotaxis {a.vertices} vertices {ref.backend}: imex path {_imex_path(imex.scheme)}",
          flush=True)
    rows = []
    for t in (float(x) for x in a.times.split(",")):
        for sim in (ref, touched, imex):
            sim.advance(t)
        cells = ref.fields()["cells"]
        row = {"t": t, "explicit_steps": ref.steps, "imex_steps": imex.steps,
               "explicit_vs_perturbed": rel(touched, ref), "imex_vs_explicit": rel(imex, ref),
               "cells_min": float(cells.min()), "cells_max": float(cells.max())}
        rows.append(row)
        print("  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                        for k, v in row.items()), flush=True)
    if a.cost_steps:
        _sync(imex)
        t0 = time.perf_counter()
        imex.step(a.cost_steps)
        _sync(imex)
        us = (time.perf_counter() - t0) / a.cost_steps * 1e6
        print(f"imex: {us:.1f} us a step ({a.cost_steps} steps)")
    return rows


if __name__ == "__main__":
    main()
