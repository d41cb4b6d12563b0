"""Experimental orders of convergence on `eoc-exact` ([P0], Tables 2–4; docs/MODELS.md §1.5).

    python -m benchmarks.curvature.eoc [--model mean-curvature|willmore] [--sizes 16 32 ...]
                                      [--dtype float64] [--backend numpy|cupy] [--samples 10]
                                      [--integrator rkm|imex]

prints the errors in the discrete space-time norms (31)–(33), sampled at t = kθ, θ = T/M, and
EOC = log(Err_h1/Err_h2)/log(h1/h2) (34) (exact.space_time_errors, exact.eoc), as a Markdown
table (the rows of docs/VALIDATION.md) with the run's steps and the seconds spent advancing (the
error sampling excluded).

Beyond the public API it imports the exact solution's error norms and EOC (curvature.exact).
"""
from __future__ import annotations

import argparse

from pdestudio import solvers
from pdestudio.solvers.curvature.exact import T_END, eoc, space_time_errors

from ..timing import cpu_time


def timed_errors(model: str, nx: int, *, dtype="float64", backend="numpy", samples=10,
                 **params):
    """(L1, L2, L∞) errors of a run on eoc-exact to T, the seconds spent advancing, the steps."""
    sim = solvers.create(model, backend=backend, dtype=dtype, scenario="eoc-exact", nx=nx,
                         **params)
    wall = 0.0

    def advance(t):
        nonlocal wall
        wall += cpu_time(lambda: sim.advance(t), repeat=1, warmup=0)

    errors = space_time_errors(sim, samples, T_END, advance=advance)
    return errors, wall, sim.steps


HEADER = ["| N | L1 error | EOC | L2 error | EOC | L∞ error | EOC | steps | wall s |",
          "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]


def table(model, sizes, log=None, **kw):
    """The Markdown table of errors and EOCs; each row goes to `log` as soon as it is known."""
    lines = list(HEADER)
    for line in lines:
        log and log(line)
    errs = []
    for n in sizes:
        e, wall, steps = timed_errors(model, n, **kw)
        errs.append(e)
        o = eoc(errs, sizes[:len(errs)])[-1] or (None, None, None)
        cells = []
        for ek, ok in zip(e, o):
            cells += [f"{ek:.2e}", "" if ok is None else f"{ok:.2f}"]
        lines.append(f"| {n}² | " + " | ".join(cells) + f" | {steps} | {wall:.2f} |")
        log and log(lines[-1])
    return "\n".join(lines), errs, eoc(errs, sizes)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="mean-curvature", choices=["mean-curvature", "willmore"])
    ap.add_argument("--sizes", type=int, nargs="+", default=[16, 32, 64, 128])
    ap.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    ap.add_argument("--backend", default="numpy")
    ap.add_argument("--kernel", default=None, choices=[None, "fused", "array"])
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--tolerance", type=float, default=None)
    ap.add_argument("--integrator", default="rkm", choices=["rkm", "imex"])
    a = ap.parse_args(argv)
    kw = {"integrator": a.integrator}
    if a.tolerance is not None:
        kw["tolerance"] = a.tolerance
    if a.kernel is not None:
        kw["kernel"] = a.kernel
    print(f"{a.model} eoc-exact, {a.integrator}, {a.dtype}, backend {a.backend}, T = {T_END}, "
          f"M = {a.samples} samples", flush=True)
    table(a.model, a.sizes, log=lambda s: print(s, flush=True), dtype=a.dtype,
          backend=a.backend, samples=a.samples, **kw)


if __name__ == "__main__":
    main()
