"""GPU timings of the curvature flows beyond the generic harness (needs a CUDA device):

    python -m benchmarks.curvature.timing [--json out.json] [--budget 60] [--parts ...]

1. `kernels`: the stage kernels and the single right-hand-side kernel against the device's copy
   bandwidth (compulsory traffic: each array the kernel needs read once, its output written once);
   `variants`: the same for compile-time variants of curvature.cu (-D options);
2. `attempts`: the cost of one RKM attempt (device-side acceptance): the persistent cooperative
   kernel at each tile, 5 stage kernels replayed as a CUDA graph, and plain launches;
3. `t_end`: the time to T = 0.1 on `eoc-exact` (the paper's Tables 5–7) with steps and rejections.

The fused scheme with the options measured is set through the `sim.scheme` hook
(`FusedRKM(sim, path=..., variant=..., options=...)`); times come from benchmarks/timing.py.

Beyond the public API it imports FusedRKM's variants and tile constants (curvature.fused) for its kernel sweeps.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from pdestudio import solvers
from pdestudio.solvers.curvature.fused import BLOCK, BX, BY, FusedRKM, lean_rows, variants

from ..timing import copy_bandwidth, cpu_time, gpu_time

WM_FP64_PER_NODE = 110  # FP64 add/mul/fma/rsqrt of wm_rhs's loop per node (PTX count, no forcing)


def _fused(model, nx, dtype, scenario="eoc-exact", **options):
    """A fused simulation whose scheme is FusedRKM(sim, **options)."""
    sim = solvers.create(model, backend="cupy", dtype=dtype, kernel="fused", scenario=scenario,
                         nx=nx)
    if options:
        sim.scheme = FusedRKM(sim, **options)
    return sim


def kernel_rates(model, nx, dtype, bw, repeats=50, scenario="eoc-exact", defines=(),
                 stages=(1, 2, 3, 4), node_grid=True):
    """Times, GB/s and fraction of the copy bandwidth of the stage kernels 1–4 and of the single
    rhs kernel, launched on the lean grid (one warp per strip of CW = 30 (mean curvature) / 28
    (Willmore) columns and a segment of L rows, fused.lean_grid); the rhs kernel also on a
    one-thread-per-node grid (the same kernel: surplus warps exit). `defines`: extra -D options
    (register/occupancy and prefetch variants of curvature.cu), compiled separately. Each time is
    the median over calls of `repeats` back-to-back launches, divided by `repeats`.

    Compulsory traffic: stage s reads u and the k's it combines and writes k_s (2, 3, 4, 4
    arrays); the rhs kernel reads u and writes f (2). Willmore on `eoc-exact` also reads 7 of the
    exact-forcing coefficient fields at every interior node: `*_roof_all` counts them too. Willmore
    float64: `fp64_frac` = the rate of FP64 instructions (WM_FP64_PER_NODE, counted in the PTX of
    the kernel's loop: the w and flux part, forcing excluded) against 64 per clock per SM."""
    import cupy as cp
    sim = _fused(model, nx, dtype, scenario, path="graph", options=tuple(defines))
    sch = sim.scheme
    n = sim.state["phi"].size
    size = np.dtype(dtype).itemsize
    grid = sch.grid
    extra = 7 if (sim.willmore and sim.exact is not None) else 0
    out = {"model": model, "nx": nx, "dtype": dtype, "scenario": scenario, "grid": list(grid),
           "rows": lean_rows(sim.willmore, sch.n1, sch.n2), "defines": " ".join(defines)}
    sch.arm(1 << 30, sim.t, None)  # an open-ended run: the stage kernels do their work
    sch.stream.synchronize()

    def timed(kern, g, args):
        return gpu_time(lambda: [kern(g, BLOCK, args) for _ in range(repeats)]) / repeats

    for s, arrays in {1: 2, 2: 3, 3: 4, 4: 4}.items():
        if s not in stages:
            continue
        sec = timed(sch.stage, grid, sch.stage_args[s - 1])
        out[f"stage{s}_us"] = sec * 1e6
        out[f"stage{s}_roof"] = arrays * n * size / sec / bw
        if extra:
            out[f"stage{s}_roof_all"] = (arrays + extra) * n * size / sec / bw
    u = sim.state["phi"]
    args = sch.rhs_args(0.01, u, cp.empty_like(u))
    sec = timed(sch.rhs_kernel, grid, args)
    out["rhs_us"] = sec * 1e6
    out["rhs_gbps"] = 2 * n * size / sec / 1e9
    out["rhs_roof"] = 2 * n * size / sec / bw
    if extra:
        out["rhs_roof_all"] = (2 + extra) * n * size / sec / bw
    if node_grid:
        per_node = (-(-(sch.n1 + 1) // BX), -(-(sch.n2 + 1) // BY))
        out["rhs_node_grid_us"] = timed(sch.rhs_kernel, per_node, args) * 1e6
    if sim.willmore and dtype == "float64":
        props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        peak = 64 * props["multiProcessorCount"] * props["clockRate"] * 1e3  # FP64 inst/s
        out["fp64_frac"] = WM_FP64_PER_NODE * n / sec / peak
    return out


def attempt_cost(model, nx, dtype, steps=640):
    """µs per RKM attempt (device-side acceptance in all) over runs of `steps` accepted steps:
    the persistent cooperative kernel at each tile, the stage kernels replayed as CUDA graphs, and
    plain stage-kernel launches."""
    res = {"model": model, "nx": nx, "dtype": dtype}
    default = _fused(model, nx, dtype).scheme
    res["default_path"] = default.path
    if default.path == "persistent":
        res["persistent_default"] = default.variant
    modes = [("persistent", v) for v in variants(model == "willmore")] + [("graph", None),
                                                                        ("launches", None)]
    for path, variant in modes:
        sim = _fused(model, nx, dtype, path=path, variant=variant)
        sch = sim.scheme
        if path == "persistent" and sch.path != "persistent":
            res["persistent_error"] = sch.persist_error
            continue
        sim.step(2)  # compile, capture
        clock = [sim.t]

        def batch():
            clock[0] = sch.run(steps, clock[0], None)[1]  # ends with the control block's read-back

        sec = cpu_time(batch)
        key = f"persistent_ty{variant}" if path == "persistent" else path
        res[f"{key}_us_per_attempt"] = sec / max(1, sch.attempts) * 1e6
        res[f"{key}_attempts"] = sch.attempts
        res[f"{key}_rejected"] = sim.rejected
        if path == "persistent":
            res[f"{key}_blocks"] = sch.persist[2]
        elif path == "graph":
            res["graph_error"] = sch.graph_error
    return res


def time_to_t(model, nx, dtype, budget, t_end=0.1, kernel="fused", path=None):
    """Seconds to reach t_end on eoc-exact (extrapolated past `budget`), steps, rejections.
    `path`: persistent | graph (the fused path's way of running attempts; default: by size)."""
    import cupy as cp

    def make():
        if kernel == "fused":
            return _fused(model, nx, dtype, **({"path": path} if path else {}))
        return solvers.create(model, backend="cupy", dtype=dtype, kernel=kernel,
                              scenario="eoc-exact", nx=nx)

    sim, warm = make(), make()
    warm.step(3)
    cp.cuda.Device().synchronize()

    def run():
        t0, chunk = time.perf_counter(), 64
        while sim.t < t_end and time.perf_counter() - t0 < budget:
            sim.advance(t_end, max_steps=chunk)
            chunk = min(chunk * 2, 1 << 16)
        cp.cuda.Device().synchronize()

    sec = cpu_time(run, repeat=1, warmup=0)
    done = sim.t >= t_end
    err = float(np.abs(sim.fields()["phi"] - sim.exact_phi()).max())
    sch = sim.scheme if isinstance(sim.scheme, FusedRKM) else None
    return {"model": model, "nx": nx, "dtype": dtype, "kernel": kernel,
            "path": sch.path if sch is not None else None,
            "tile": [sch.variant, sch.persist[2]] if sch is not None and sch.path == "persistent"
            else None,
            "t": sim.t, "steps": sim.steps, "rejected_last_run": sim.rejected, "seconds": sec,
            "time_to_t_end": sec if done else sec * t_end / sim.t, "extrapolated": not done,
            "us_per_step": sec / max(1, sim.steps) * 1e6, "max_error_at_t": err}


KERNEL_CASES = [("mean-curvature", 1024, "float32"), ("mean-curvature", 4096, "float32"),
                ("mean-curvature", 4096, "float64"), ("willmore", 256, "float64"),
                ("willmore", 2048, "float64"), ("willmore", 2048, "float64", "sine-rings"),
                ("mean-curvature", 4096, "float32", "sine-rings")]
VARIANT_CASES = [("mean-curvature", 4096, "float32", ()),
                 ("mean-curvature", 4096, "float32", ("-DLEAN_MC_MINB_F=1",)),
                 ("mean-curvature", 4096, "float32", ("-DLEAN_MC_MINB_F=4",)),
                 ("mean-curvature", 4096, "float32", ("-DLEAN_MC_MINB_F=4", "-DLEAN_PD3=1")),
                 ("mean-curvature", 4096, "float64", ()),
                 ("mean-curvature", 4096, "float64", ("-DLEAN_MC_MINB_D=1",)),
                 ("mean-curvature", 4096, "float64", ("-DLEAN_MC_MINB_D=3",)),
                 ("mean-curvature", 4096, "float64", ("-DLEAN_MC_MINB_D=3", "-DLEAN_PD3=1")),
                 ("willmore", 2048, "float64", ()),
                 ("willmore", 2048, "float64", ("-DLEAN_WM_MINB=1",)),
                 ("willmore", 2048, "float64", ("-DLEAN_PD3=1",))]
ATTEMPT_CASES = [("mean-curvature", 256, "float32"), ("mean-curvature", 256, "float64"),
                 ("mean-curvature", 512, "float32"),
                 ("mean-curvature", 1024, "float32"), ("willmore", 128, "float64"),
                 ("willmore", 256, "float64"), ("willmore", 512, "float64")]
T_END_CASES = [("mean-curvature", 256, "float32"), ("mean-curvature", 512, "float32"),
               ("mean-curvature", 1024, "float32"), ("mean-curvature", 1024, "float64"),
               ("willmore", 128, "float64"), ("willmore", 256, "float64")]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=None)
    ap.add_argument("--budget", type=float, default=60.0, help="seconds per time-to-T run")
    ap.add_argument("--parts", default="kernels,attempts,t_end",
                    help="comma list of kernels, variants, attempts, t_end")
    ap.add_argument("--paths", default="persistent,graph",
                    help="fused paths timed to T (t_end part): persistent, graph")
    ap.add_argument("--only", default="",
                    help="comma list of model:N:dtype cases to keep (e.g. willmore:256:float64)")
    a = ap.parse_args(argv)
    parts = a.parts.split(",")
    only = set(filter(None, a.only.split(",")))

    def keep(cases):
        return [c for c in cases if not only or ":".join(map(str, c[:3])) in only]

    ok, name = solvers.gpu_status()
    if not ok:
        raise SystemExit(f"no GPU: {name}")
    bw = copy_bandwidth()
    report = {"device": name, "copy_gbps": bw / 1e9, "kernels": [], "attempts": [], "t_end": []}
    print(f"# {name}; copy bandwidth {bw / 1e9:.0f} GB/s", flush=True)

    def record(part, label, r):
        report[part].append(r)
        print(label, json.dumps({k: (round(v, 3) if isinstance(v, float) else v)
                                 for k, v in r.items()}), flush=True)
        if a.json:
            with open(a.json, "w") as fh:
                json.dump(report, fh, indent=1)

    if "kernels" in parts:
        for model, nx, dtype, *sc in keep(KERNEL_CASES):
            record("kernels", "kernel", kernel_rates(model, nx, dtype, bw,
                                                     **({"scenario": sc[0]} if sc else {})))
    if "variants" in parts:  # occupancy / prefetch variants of the lean kernels
        for model, nx, dtype, defs in keep(VARIANT_CASES):
            record("kernels", "variant", kernel_rates(model, nx, dtype, bw, defines=defs,
                                                      node_grid=False))
    if "attempts" in parts:
        for model, nx, dtype in keep(ATTEMPT_CASES):
            record("attempts", "attempt", attempt_cost(model, nx, dtype))
    if "t_end" in parts:
        for model, nx, dtype in keep(T_END_CASES):
            for path in a.paths.split(","):
                record("t_end", "t_end", time_to_t(model, nx, dtype, a.budget, path=path))


if __name__ == "__main__":
    main()
