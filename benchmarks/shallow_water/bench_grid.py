"""Benchmarks of the structured shallow-water model beyond what `pdestudio bench` gives: the
kernel ladder (NumPy, CuPy array code, fused one thread per cell + Δt pass, fused strip with the
Δt folded in), the paper's Tables 1–2 problem (circular dam break to t = 1), and the CPU/GPU L1
differences at t = 1 (docs/MODELS.md [P2] §6.2).

    python -m benchmarks.shallow_water.bench_grid [--out DIR] [--budget SECONDS] [--sweep]
                                                  [--no-ladder]

Full runs to t = 1 are timed for the fused paths; the other rungs time a few steps and scale by
the number of steps the fused run of the same size took (marked "extrapolated"). The kernel
variants and tuning knobs go through the `sim.scheme` hook (GridFused built with options).

Beyond the public API it imports GridFused with its variants and compile-time knobs (shallow_water.grid.fused), put on a simulation through `Simulation.scheme`.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from pdestudio import solvers
from pdestudio.solvers.shallow_water.grid.fused import GridFused

from ..timing import copy_bandwidth, cpu_time

MODEL = "shallow-water"


def _sync():
    import cupy as cp
    cp.cuda.get_current_stream().synchronize()


def make(backend, dtype, order, nx, kernel="fused"):
    variant = None
    if kernel == "cell":
        kernel, variant = "fused", "cell"
    sim = solvers.create(MODEL, backend=backend, dtype=dtype, order=order, nx=nx,
                         **({"kernel": kernel} if backend == "cupy" else {}))
    if variant:
        sim.scheme = GridFused(sim, variant=variant)
    return sim


def timed_once(fn, gpu=True):
    """Wall seconds of one call of fn, the GPU work included."""
    return cpu_time(lambda: (fn(), _sync() if gpu else None), repeat=1, warmup=0)


def warm(backend, dtype, order, kernel):
    """Compile the kernels (and fill CuPy's caches) outside the timed region."""
    make(backend, dtype, order, 64, kernel).step(3)


def full_run(dtype, order, nx, kernel):
    warm("cupy", dtype, order, kernel)
    sim = make("cupy", dtype, order, nx, kernel)
    _sync()
    return sim, timed_once(lambda: sim.advance(1.0))


def step_rate(backend, dtype, order, nx, kernel, steps):
    if backend == "cupy":
        warm(backend, dtype, order, kernel)
    sim = make(backend, dtype, order, nx, kernel)
    sim.step(1)
    if backend == "cupy":
        _sync()
    return sim, timed_once(lambda: sim.step(steps), gpu=backend == "cupy") / steps


def row(sim, seconds, steps, extrapolated, bw):
    cells, nbytes = sim.work()
    r = {"order": sim.params["order"], "dtype": sim.dtype, "kernel": _kernel_name(sim),
         "nx": sim.params["nx"], "steps": steps, "seconds": seconds,
         "extrapolated": extrapolated, "gcell_per_s": steps * cells / seconds / 1e9,
         "gb_per_s": steps * nbytes / seconds / 1e9}
    r["roofline"] = r["gb_per_s"] * 1e9 / bw if bw else None
    print(json.dumps(r), flush=True)
    return r


def _kernel_name(sim):
    if sim.backend == "numpy":
        return "numpy"
    if sim.kernel == "array":
        return "array"
    return {"strip": "fused-strip", "cell": "fused-cell"}.get(sim.scheme.variant, "fused")


def sweep_rate(dtype, order, nx, tuning, rows, steps, bw):
    """Time per step of the fused path with other compile-time knobs / rows per warp."""
    sim = make("cupy", dtype, order, nx)
    sim.scheme = GridFused(sim, tuning=tuning, rows=rows)
    sim.step(2)
    _sync()
    s = timed_once(lambda: sim.step(steps)) / steps
    cells, nbytes = sim.work()
    r = {"sweep": True, "order": order, "dtype": dtype, "nx": nx, "tuning": tuning or "default",
         "rows": sim.scheme.rows if order == 1 else None, "steps": steps,
         "us_per_step": s * 1e6, "gcell_per_s": cells / s / 1e9,
         "roofline": nbytes / s / bw if bw else None}
    print(json.dumps(r), flush=True)
    return r


def l1_differences(order, nx):
    """Σ_i |V_i| |h_cpu − h_gpu| at t = 1 (NumPy float64 vs the fused GPU path)."""
    ref = make("numpy", "float64", order, nx)
    ref.advance(1.0)
    out = {"order": order, "nx": nx, "cpu_steps": ref.steps}
    for dtype in ("float32", "float64"):
        gpu = make("cupy", dtype, order, nx)
        gpu.advance(1.0)
        d = np.abs(ref.fields()["h"] - gpu.fields()["h"]).sum() * ref.dx * ref.dy
        out[dtype] = float(d)
        out[f"{dtype}_steps"] = gpu.steps
    print(json.dumps(out), flush=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=".", help="folder for bench_grid.json")
    ap.add_argument("--budget", type=float, default=220.0, help="seconds; later items skipped")
    ap.add_argument("--sweep", action="store_true",
                    help="after the goal rows, time the fused kernels' tuning knobs")
    ap.add_argument("--no-ladder", action="store_true",
                    help="skip the extrapolated rungs (CuPy array, fused-cell, NumPy)")
    a = ap.parse_args(argv)
    t_start = time.perf_counter()
    bw = copy_bandwidth()
    import cupy as cp
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"]
    dev = dev.decode() if isinstance(dev, bytes) else str(dev)
    print(json.dumps({"device": dev, "copy_gb_per_s": bw / 1e9}), flush=True)
    rows, l1, skipped, sweep = [], [], [], []
    steps_to_t1 = {}

    def save():
        res = {"device": dev, "copy_gb_per_s": bw / 1e9, "rows": rows, "l1": l1, "sweep": sweep,
               "skipped": skipped, "seconds": time.perf_counter() - t_start}
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / "bench_grid.json").write_text(json.dumps(res, indent=1))

    def timed(label, fn):
        if time.perf_counter() - t_start > a.budget:
            skipped.append(label)
            return
        try:
            fn()
        except Exception as e:  # a failed rung must not hide the others
            print(f"# {label}: {type(e).__name__}: {e}", flush=True)
            skipped.append(f"{label} ({type(e).__name__})")
        save()

    def full(dtype, order, nx, kernel="fused"):
        sim, s = full_run(dtype, order, nx, kernel)
        steps_to_t1[(order, nx)] = sim.steps
        rows.append(row(sim, s, sim.steps, False, bw))

    def partial(backend, dtype, order, nx, kernel, steps):
        sim, per_step = step_rate(backend, dtype, order, nx, kernel, steps)
        n = steps_to_t1.get((order, nx))
        if n is None:
            return
        rows.append(row(sim, per_step * n, n, True, bw))

    # the goals first: Table 1 (first order) 2000² and 8192², Table 2 (third order) 1200²
    for nx in (2000, 8192, 1000, 4096):
        timed(f"o1 f32 {nx}", lambda nx=nx: full("float32", 1, nx))
    timed("o3 f32 1200", lambda: full("float32", 3, 1200))
    if a.sweep:
        knobs = [(1, n, t, r, k) for n, k in ((8192, 300), (2000, 1000))
                 for t, r in (({"SW_STRIP_MINB": 0}, None), (None, None),
                              ({"SW_STRIP_MINB": 6, "SW_STRIP_UNROLL": 2}, None),
                              ({"SW_STRIP_MINB": 0, "SW_STRIP_UNROLL": 2}, None),
                              (None, 64 if n == 8192 else 16))]
        knobs += [(3, 1200, t, None, 200) for t in (None, {"SW_STAGE_MINB": 3})]
        for order, nx, t, r, k in knobs:
            timed(f"sweep o{order} {nx} {t} {r}", lambda o=order, nx=nx, t=t, r=r, k=k:
                  sweep.append(sweep_rate("float32", o, nx, t, r, k, bw)))
    # CPU/GPU L1 differences at t = 1
    for order, nx in ((1, 100), (1, 200), (3, 100)):
        timed(f"l1 o{order} {nx}", lambda o=order, nx=nx: l1.append(l1_differences(o, nx)))
    for nx in (1000, 2000, 4096):
        timed(f"o1 f64 {nx}", lambda nx=nx: full("float64", 1, nx))
    for dtype, sizes in (("float32", (400, 800)), ("float64", (400, 800, 1200))):
        for nx in sizes:
            timed(f"o3 {dtype} {nx}", lambda d=dtype, nx=nx: full(d, 3, nx))
    timed("o1 f64 8192", lambda: full("float64", 1, 8192))
    # the ladder's lower rungs, extrapolated from a few steps
    for dtype in () if a.no_ladder else ("float32", "float64"):
        for nx in (1000, 2000, 4096, 8192):
            timed(f"o1 cell {dtype} {nx}", lambda d=dtype, nx=nx: partial("cupy", d, 1, nx,
                                                                          "cell", 20))
            if dtype == "float32" or nx < 8192:  # float64 array code at 8192² needs > 40 GB
                timed(f"o1 array {dtype} {nx}", lambda d=dtype, nx=nx: partial(
                    "cupy", d, 1, nx, "array", 3))
        timed(f"o3 array {dtype} 1200", lambda d=dtype: partial("cupy", d, 3, 1200, "array", 2))
    if not a.no_ladder:
        timed("o1 numpy 1000", lambda: partial("numpy", "float64", 1, 1000, "numpy", 2))
        timed("o1 numpy 2000", lambda: partial("numpy", "float64", 1, 2000, "numpy", 1))
        timed("o3 numpy 400", lambda: partial("numpy", "float64", 3, 400, "numpy", 1))
        timed("o3 numpy 1200", lambda: partial("numpy", "float64", 3, 1200, "numpy", 1))
    save()
    print("skipped:", skipped, flush=True)


if __name__ == "__main__":
    main()
