"""The design choices of integrator=imex, measured (docs/VALIDATION.md, curvature section):

    python -m benchmarks.curvature.imex_variants [--model willmore] [--nx 64]

Accepted steps and space-time errors (10 samples) on eoc-exact to T = 0.1 for the production
scheme (ARS(4,4,3), S = 1, filtered step-doubling estimate) and for one change at a time: the
stabilising constant S = 1.5, 2 (imex.STABILIZATION), the second-order ARS(2,2,2), and the
unfiltered estimate.

Beyond the public API it imports IMEX tableaus and the IMEX module (core.integrators, curvature.imex) to compare variants the model does not offer, and the exact error norms.
"""
from __future__ import annotations

import argparse

from pdestudio import solvers
from pdestudio.solvers.core.integrators import ARS222, IMEXRungeKutta
from pdestudio.solvers.curvature import imex
from pdestudio.solvers.curvature.exact import space_time_errors

VARIANTS = [("ARS(4,4,3), S = 1, filtered (production)", {}),
            ("S = 1.5", {"S": 1.5}), ("S = 2", {"S": 2.0}),
            ("ARS(2,2,2)", {"tableau": ARS222}), ("unfiltered estimate", {"filter": False})]


def run(model, nx, S=1.0, tableau=None, filter=True):
    saved = imex.STABILIZATION
    imex.STABILIZATION = S  # read by the scheme's constructor (FastSolver) and by g
    try:
        sim = solvers.create(model, backend="numpy", scenario="eoc-exact", nx=nx,
                             integrator="imex")
        if tableau is not None:
            c = sim.controller
            sim.controller = IMEXRungeKutta(tableau, c.tolerance, c.tau)
        if not filter:
            sim.scheme.smooth = None
        errors = space_time_errors(sim, 10)
    finally:
        imex.STABILIZATION = saved
    return sim.steps, errors


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="willmore", choices=["mean-curvature", "willmore"])
    ap.add_argument("--nx", type=int, default=64)
    a = ap.parse_args(argv)
    print(f"{a.model} eoc-exact {a.nx}², T = 0.1, NumPy float64")
    print("| variant | steps | L1 | L2 | L∞ |\n| --- | --- | --- | --- | --- |")
    for name, kw in VARIANTS:
        steps, e = run(a.model, a.nx, **kw)
        print(f"| {name} | {steps} | " + " | ".join(f"{x:.3e}" for x in e) + " |", flush=True)


if __name__ == "__main__":
    main()
