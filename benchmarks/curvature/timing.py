"""GPU timings of the curvature flows beyond the generic harness (needs a CUDA device):

    python -m pdestudio.solvers.curvature.timing [--json out.json] [--budget 60]

1. the stage kernels and the single right-hand-side kernel against the device's copy bandwidth
   (compulsory traffic: each array the kernel needs read once, its output written once);
2. the cost of one RKM attempt (device-side acceptance): the persistent cooperative kernel at each
   tile height, 5 stage kernels replayed as a CUDA graph, and plain launches;
3. the time to T = 0.1 on `eoc-exact` (the paper's Tables 5–7) with steps and rejections.
"""
from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from pdestudio import solvers
from pdestudio.solvers.bench import copy_bandwidth

from . import fused as fz


def _events():
    import cupy as cp
    return cp.cuda.Event(), cp.cuda.Event()


def _arm(f, sim, target=1 << 30):
    """Arm the control block for an open-ended run (no end time)."""
    ctl = np.zeros(8)
    ctl[fz.C_T], ctl[fz.C_TAU], ctl[fz.C_TRY] = sim.t, f.tau, f.tau
    ctl[fz.C_EPS] = sim.params["tolerance"]
    cti = np.zeros(16, dtype=np.int32)
    cti[fz.I_ACTIVE], cti[fz.I_TARGET], cti[fz.I_CUR] = 1, target, f.cur
    f.ctl.set(ctl)
    f.cti.set(cti)
    import cupy as cp
    cp.cuda.runtime.deviceSynchronize()


def kernel_rates(model, nx, dtype, bw, repeats=50, scenario="eoc-exact", defines=(),
                 stages=(1, 2, 3, 4), node_grid=True):
    """Times, GB/s and fraction of the copy bandwidth of the stage kernels 1–4 and of the single
    rhs kernel, launched on the lean grid (one warp per strip of CW = 30 (mean curvature) / 28
    (Willmore) columns and a segment of L rows, L = lean_rows of curvature.cu: grid
    (ceil(N1/CW), ceil(segments/8)) of (32, 8)); the rhs kernel also on fused.py's
    one-thread-per-node grid (the same kernel: surplus warps exit). `defines`: extra -D options
    (register/occupancy and prefetch variants of curvature.cu), compiled separately.

    Compulsory traffic: stage s reads u and the k's it combines and writes k_s (2, 3, 4, 4
    arrays); the rhs kernel reads u and writes f (2). Willmore on `eoc-exact` also reads 7 of the
    exact-forcing coefficient fields at every interior node: `*_roof_all` counts them too. Willmore
    float64: `fp64_frac` = the rate of FP64 instructions (WM_FP64_PER_NODE, counted in the PTX of
    the kernel's loop: the w and flux part, forcing excluded) against 64 per clock per SM."""
    import cupy as cp
    sim = solvers.create(model, backend="cupy", dtype=dtype, kernel="fused", scenario=scenario,
                         nx=nx)
    f = sim._fused
    n = sim.state["phi"].size
    size = np.dtype(dtype).itemsize
    cw = 28 if sim.willmore else 30
    strips = -(-f.n1 // cw)
    rows = 32  # lean_rows of curvature.cu
    while rows > 4 and strips * ((f.n2 + rows) // rows) < 8192:
        rows //= 2
    grid = (strips, -(-((f.n2 + rows) // rows) // fz.BY))
    kset, stage = f.k, f.stage
    if defines:
        from ..core.backend import load_kernels
        kset = load_kernels(fz.CU_FILE, dtype, ["mc_stage", "wm_stage", "mc_rhs", "wm_rhs"],
                            options=("-I" + str(fz.CU_FILE.parent), *defines))
        stage = kset["wm_stage" if sim.willmore else "mc_stage"]
    block = (fz.BX, fz.BY)
    extra = 7 if (sim.willmore and sim.exact is not None) else 0
    out = {"model": model, "nx": nx, "dtype": dtype, "scenario": scenario, "grid": list(grid),
           "rows": rows, "defines": " ".join(defines)}
    stage_arrays = {1: 2, 2: 3, 3: 4, 4: 4}
    _arm(f, sim)
    a, b = _events()

    def timed(kern, g, args):
        kern(g, block, args)
        a.record()
        for _ in range(repeats):
            kern(g, block, args)
        b.record()
        b.synchronize()
        return cp.cuda.get_elapsed_time(a, b) / 1e3 / repeats

    for s, arrays in stage_arrays.items():
        if s not in stages:
            continue
        args = (np.int32(s), f.u[0], f.u[1], *f.ks, f.tx, f.ty, f.coef, f.ctl, f.cti, f.err, f.count,
                *f.scalars)
        sec = timed(stage, grid, args)
        out[f"stage{s}_us"] = sec * 1e6
        out[f"stage{s}_roof"] = arrays * n * size / sec / bw
        if extra:
            out[f"stage{s}_roof_all"] = (arrays + extra) * n * size / sec / bw
    u = f.u[0]
    fo = cp.empty_like(u)
    kern = kset["wm_rhs" if sim.willmore else "mc_rhs"]
    args = (u, fo, f.tx, f.ty, f.coef, np.float64(0.01), *f.scalars)
    sec = timed(kern, grid, args)
    out["rhs_us"] = sec * 1e6
    out["rhs_gbps"] = 2 * n * size / sec / 1e9
    out["rhs_roof"] = 2 * n * size / sec / bw
    if extra:
        out["rhs_roof_all"] = (2 + extra) * n * size / sec / bw
    if node_grid:
        out["rhs_node_grid_us"] = timed(kern, f.grid, args) * 1e6  # fused.py's grid today
    if sim.willmore and dtype == "float64":
        props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        peak = 64 * props["multiProcessorCount"] * props["clockRate"] * 1e3  # FP64 inst/s
        out["fp64_frac"] = WM_FP64_PER_NODE * n / sec / peak
    return out


WM_FP64_PER_NODE = 110  # FP64 add/mul/fma/rsqrt of wm_rhs's loop per node (PTX count, no forcing)


def attempt_cost(model, nx, dtype, graphs=20):
    """µs per RKM attempt (device-side acceptance in all): the persistent cooperative kernel at
    each tile height, a CUDA graph of stage kernels, and plain stage-kernel launches."""
    import cupy as cp
    res = {"model": model, "nx": nx, "dtype": dtype}
    attempts_wanted = graphs * fz.GRAPH_ATTEMPTS
    for mode in ("persistent", "graph", "launches"):
        sim = solvers.create(model, backend="cupy", dtype=dtype, kernel="fused",
                             scenario="eoc-exact", nx=nx)
        f = sim._fused
        res["default_path"] = f.path
        if mode == "persistent":
            if not f._setup_persistent():
                res["persistent_error"] = f.persist_error
                continue
            f.path = "persistent"
            res["persistent_default"] = f.persist[1]
        else:
            f.path = "graph"
        sim.step(2)  # compile, capture
        if mode == "launches":
            f.graph = False
        if mode == "persistent":
            for ty in fz.PERSIST_VARIANTS[sim.willmore]:
                f._setup_persistent(ty)
                _arm(f, sim, target=64)
                f._launch_persistent()  # warm
                _arm(f, sim, target=attempts_wanted)
                t0 = time.perf_counter()
                cti = f._launch_persistent()
                sec = time.perf_counter() - t0
                attempts = int(cti[fz.I_ATTEMPTS])
                res[f"persistent_ty{ty}_us_per_attempt"] = sec / max(1, attempts) * 1e6
                res[f"persistent_ty{ty}_blocks"] = f.persist[2]
                res[f"persistent_ty{ty}_rejected"] = int(cti[fz.I_REJ])
            continue
        _arm(f, sim)
        f._launch_batch(1)
        f.stream.synchronize()
        _arm(f, sim)
        t0 = time.perf_counter()
        f._launch_batch(graphs)
        cti = f.cti.get(stream=f.stream)
        sec = time.perf_counter() - t0
        attempts = int(cti[fz.I_ATTEMPTS])
        res[f"{mode}_us_per_attempt"] = sec / max(1, attempts) * 1e6
        res[f"{mode}_attempts"] = attempts
        res["graph_error"] = f.graph_error
        cp.cuda.runtime.deviceSynchronize()
    return res


def time_to_t(model, nx, dtype, budget, t_end=0.1, kernel="fused", path=None):
    """Seconds to reach t_end on eoc-exact (extrapolated past `budget`), steps, rejections.
    `path`: persistent | graph (the fused path's way of running attempts; default: its own)."""
    old = os.environ.get("PDESTUDIO_CURVATURE_PATH")
    if path:
        os.environ["PDESTUDIO_CURVATURE_PATH"] = path
    try:
        sim = solvers.create(model, backend="cupy", dtype=dtype, kernel=kernel,
                             scenario="eoc-exact", nx=nx)
        warm = solvers.create(model, backend="cupy", dtype=dtype, kernel=kernel,
                              scenario="eoc-exact", nx=nx)
    finally:
        if old is None:
            os.environ.pop("PDESTUDIO_CURVATURE_PATH", None)
        else:
            os.environ["PDESTUDIO_CURVATURE_PATH"] = old
    warm.step(3)
    sim._be.synchronize()
    t0 = time.perf_counter()
    chunk = 64
    while sim.t < t_end and time.perf_counter() - t0 < budget:
        sim.advance(t_end, max_steps=chunk)
        chunk = min(chunk * 2, 1 << 16)
    sim._be.synchronize()
    sec = time.perf_counter() - t0
    done = sim.t >= t_end
    err = float(np.abs(sim.fields()["phi"] - sim.exact_phi()).max())
    f = sim._fused
    return {"model": model, "nx": nx, "dtype": dtype, "kernel": kernel,
            "path": f.path if f is not None else None,
            "tile": f.persist[1:] if f is not None and f.path == "persistent" else None,
            "t": sim.t, "steps": sim.steps, "seconds": sec,
            "time_to_t_end": sec if done else sec * t_end / sim.t, "extrapolated": not done,
            "us_per_step": sec / max(1, sim.steps) * 1e6, "max_error_at_t": err}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=None)
    ap.add_argument("--budget", type=float, default=60.0, help="seconds per time-to-T run")
    ap.add_argument("--parts", default="kernels,attempts,t_end")
    ap.add_argument("--paths", default="persistent,graph",
                    help="fused paths timed to T (t_end part): persistent, graph")
    ap.add_argument("--only", default="",
                    help="comma list of model:N:dtype cases to keep (e.g. willmore:256:float64)")
    a = ap.parse_args(argv)
    parts = a.parts.split(",")
    only = set(filter(None, a.only.split(",")))

    def keep(cases):
        return [c for c in cases if not only or ":".join(map(str, c)) in only]
    ok, name = solvers.gpu_status()
    if not ok:
        raise SystemExit(f"no GPU: {name}")
    bw = copy_bandwidth()
    report = {"device": name, "copy_gbps": bw / 1e9, "kernels": [], "attempts": [], "t_end": []}
    print(f"# {name}; copy bandwidth {bw / 1e9:.0f} GB/s", flush=True)

    def dump():
        if a.json:
            with open(a.json, "w") as fh:
                json.dump(report, fh, indent=1)

    if "kernels" in parts:
        for model, nx, dtype, *sc in keep([("mean-curvature", 1024, "float32"),
                                 ("mean-curvature", 4096, "float32"),
                                 ("mean-curvature", 4096, "float64"),
                                 ("willmore", 256, "float64"), ("willmore", 2048, "float64"),
                                 ("willmore", 2048, "float64", "sine-rings"),
                                 ("mean-curvature", 4096, "float32", "sine-rings")]):
            r = kernel_rates(model, nx, dtype, bw, **({"scenario": sc[0]} if sc else {}))
            report["kernels"].append(r)
            print("kernel", json.dumps({k: (round(v, 3) if isinstance(v, float) else v)
                                        for k, v in r.items()}), flush=True)
            dump()
    if "variants" in parts:  # occupancy / prefetch variants of the lean kernels
        for model, nx, dtype, defs in keep([
                ("mean-curvature", 4096, "float32", ()),
                ("mean-curvature", 4096, "float32", ("-DLEAN_MC_MINB_F=1",)),
                ("mean-curvature", 4096, "float32", ("-DLEAN_MC_MINB_F=4",)),
                ("mean-curvature", 4096, "float32", ("-DLEAN_MC_MINB_F=4", "-DLEAN_PD3=1")),
                ("mean-curvature", 4096, "float64", ()),
                ("mean-curvature", 4096, "float64", ("-DLEAN_MC_MINB_D=1",)),
                ("mean-curvature", 4096, "float64", ("-DLEAN_MC_MINB_D=3",)),
                ("mean-curvature", 4096, "float64", ("-DLEAN_MC_MINB_D=3", "-DLEAN_PD3=1")),
                ("willmore", 2048, "float64", ()),
                ("willmore", 2048, "float64", ("-DLEAN_WM_MINB=1",)),
                ("willmore", 2048, "float64", ("-DLEAN_PD3=1",))]):
            r = kernel_rates(model, nx, dtype, bw, defines=defs, node_grid=False)
            report["kernels"].append(r)
            print("variant", json.dumps({k: (round(v, 3) if isinstance(v, float) else v)
                                         for k, v in r.items()}), flush=True)
            dump()
    if "attempts" in parts:
        for model, nx, dtype in keep([("mean-curvature", 256, "float64"),
                                      ("mean-curvature", 512, "float32"),
                                      ("mean-curvature", 1024, "float32"),
                                      ("willmore", 128, "float64"), ("willmore", 256, "float64"),
                                      ("willmore", 512, "float64")]):
            r = attempt_cost(model, nx, dtype)
            report["attempts"].append(r)
            print("attempt", json.dumps(r), flush=True)
            dump()
    if "t_end" in parts:
        for model, nx, dtype in keep([("mean-curvature", 256, "float32"),
                                 ("mean-curvature", 512, "float32"),
                                 ("mean-curvature", 1024, "float32"),
                                 ("mean-curvature", 1024, "float64"), ("willmore", 128, "float64"),
                                 ("willmore", 256, "float64")]):
            for path in a.paths.split(","):
                r = time_to_t(model, nx, dtype, a.budget, path=path)
                report["t_end"].append(r)
                print("t_end", json.dumps(r), flush=True)
                dump()


if __name__ == "__main__":
    main()
