"""Explicit RKM against the linearly implicit IMEX integrator on `eoc-exact` (issue 16):

    python -m benchmarks.curvature.imex [--model willmore] [--sizes 64] [--backend numpy]
                                        [--kernel fused|array] [--dtype float64]
                                        [--integrators rkm imex] [--budget 600] [--json out.json]

For each size and integrator: accepted steps and wall seconds of one
`advance(0.1)` from t = 0 (T of the paper's tables; one warm-up simulation first compiles the
kernels and plans the FFTs), the max error |φ − ζ| at T, and the space-time errors (31)–(33)
of a second, sampled run (exact.space_time_errors, 10 samples; not timed). A run longer than
`--budget` seconds stops there and its time to T is extrapolated (marked). Markdown rows go to
stdout (the rows of docs/VALIDATION.md), JSON to --json.

    CPU rows:  python -m benchmarks.curvature.imex --sizes 64
    H100 row:  python -m benchmarks.curvature.imex --backend cupy --sizes 256 --budget 120
    steep:     python -m benchmarks.curvature.imex --scenario sine-rings --t-end 0.01 --sizes 64

Beyond the public API it imports the exact solution's error norms (curvature.exact).
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from pdestudio import solvers
from pdestudio.solvers.curvature.exact import T_END, space_time_errors

from ..timing import synchronize


def make(model, nx, integrator, backend="numpy", kernel=None, dtype="float64",
         scenario="eoc-exact"):
    kw = {"kernel": kernel} if kernel else {}
    return solvers.create(model, backend=backend, dtype=dtype, scenario=scenario, nx=nx,
                          integrator=integrator, **kw)


def to_t_end(model, nx, integrator, budget, t_end=T_END, **kw):
    """Steps, rejections, wall seconds (extrapolated past `budget`) and max error at t_end."""
    warm = make(model, nx, integrator, **kw)
    warm.step(3)
    synchronize()
    sim = make(model, nx, integrator, **kw)
    t0 = time.perf_counter()
    while sim.t < t_end and time.perf_counter() - t0 < budget:
        sim.advance(t_end, max_steps=64)
    synchronize()
    sec = time.perf_counter() - t0
    done = sim.t >= t_end
    if sim.exact is None:  # sine-rings: the energy the flow decreases instead of an error
        err = sim.willmore_energy() if sim.willmore else sim.surface_area()
    else:
        err = float(np.abs(sim.fields()["phi"] - sim.exact_phi()).max())
    return {"model": model, "scenario": sim.scenario_name, "nx": nx, "integrator": integrator,
            "backend": sim.backend,
            "kernel": sim.kernel, "dtype": sim.dtype, "t": sim.t, "steps": sim.steps,
            "seconds": sec, "time_to_t_end": sec if done else sec * t_end / sim.t,
            "extrapolated": not done, "max_error_at_t": err if done else None}


HEADER = ["| N | integrator | backend | steps to T | wall s to T | max err at T | L1 | L2 | L∞ |",
          "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]


def row(r):
    wall = f"{r['time_to_t_end']:.3g}" + (" (extrap.)" if r["extrapolated"] else "")
    err = "" if r["max_error_at_t"] is None else f"{r['max_error_at_t']:.6g}"
    st = r.get("space_time")
    cells = [f"{e:.3e}" for e in st] if st else ["", "", ""]
    return (f"| {r['nx']}² | {r['integrator']} | {r['backend']}/{r['kernel']} | {r['steps']}"
            f"{'' if not r['extrapolated'] else ' (to t = %.3g)' % r['t']} | {wall} | {err} | "
            + " | ".join(cells) + " |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="willmore", choices=["mean-curvature", "willmore"])
    ap.add_argument("--sizes", type=int, nargs="+", default=[64])
    ap.add_argument("--backend", default="numpy")
    ap.add_argument("--kernel", default=None, choices=[None, "fused", "array"])
    ap.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    ap.add_argument("--integrators", nargs="+", default=["rkm", "imex"])
    ap.add_argument("--scenario", default="eoc-exact", choices=["eoc-exact", "sine-rings"],
                    help="sine-rings: no exact solution; the 'err' column is then ∫H²dS "
                         "(Willmore) or ∫Q (mean curvature) at T")
    ap.add_argument("--t-end", type=float, default=T_END)
    ap.add_argument("--budget", type=float, default=600.0, help="seconds per run to T")
    ap.add_argument("--no-space-time", action="store_true",
                    help="skip the sampled space-time errors (a second full run)")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    kw = dict(backend=a.backend, kernel=a.kernel, dtype=a.dtype, scenario=a.scenario)
    print(f"{a.model} {a.scenario} to T = {a.t_end}, {a.dtype}, backend {a.backend}"
          + (f" ({solvers.gpu_status()[1]})" if a.backend != "numpy" else ""), flush=True)
    for line in HEADER:
        if a.scenario != "eoc-exact":
            line = line.replace("max err at T", "∫H²dS at T" if a.model == "willmore"
                                else "∫Q at T")
        print(line, flush=True)
    out = []
    for n in a.sizes:
        for integ in a.integrators:
            r = to_t_end(a.model, n, integ, a.budget, t_end=a.t_end, **kw)
            if a.scenario == "eoc-exact" and not a.no_space_time and not r["extrapolated"]:
                r["space_time"] = list(space_time_errors(make(a.model, n, integ, **kw), 10))
            out.append(r)
            print(row(r), flush=True)
            if a.json:
                with open(a.json, "w") as fh:
                    json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
