"""Steps of the adaptive integrators to the end time in float64 and float32 on `eoc-exact` with
its default tolerance 1e-7 (issue 28: below what a float32 error estimate resolves):

    python -m benchmarks.curvature.float32_steps [--budget 40]

Each run stops after `budget` seconds if it has not arrived (then t shows how far it came).
"""
from __future__ import annotations

import argparse
import time

from pdestudio import solvers

RUNS = (("mean-curvature", 64, "imex", 0.1), ("mean-curvature", 256, "imex", 0.1),
        ("mean-curvature", 64, "rkm", 0.1), ("mean-curvature", 256, "rkm", 0.1),
        ("willmore", 32, "imex", 0.01), ("willmore", 32, "rkm", 0.01))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=float, default=40.0)
    a = ap.parse_args()
    print("| model | size | integrator | dtype | steps | t | s | max error | tolerance used |")
    print("|---|---|---|---|---|---|---|---|---|")
    for model, nx, integrator, t_end in RUNS:
        for dtype in ("float64", "float32"):
            sim = solvers.create(model, backend="numpy", dtype=dtype, scenario="eoc-exact",
                                 nx=nx, integrator=integrator)
            t0 = time.perf_counter()
            while sim.t < t_end and time.perf_counter() - t0 < a.budget:
                sim.advance(t_end, max_steps=5)
            print(f"| {model} | {nx}² | {integrator} | {dtype} | {sim.steps} | {sim.t:.4g} | "
                  f"{time.perf_counter() - t0:.1f} | {sim.quantities()['error']:.3g} | "
                  f"{sim.controller.tolerance:.3g} |", flush=True)


if __name__ == "__main__":
    main()
