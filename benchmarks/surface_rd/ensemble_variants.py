"""Kernels tried for the batched Gray–Scott step of an ensemble (issue 29: 64 members of 20k
vertices on two GPUs against one), kernels/ensemble_variants.cu: µs a step for E members, each
variant's result checked bit for bit against the production kernel's (solvers/surface_rd/kernels/chemotaxis.cu
gs_step_batch) after 64 steps.

    python -m benchmarks.surface_rd.ensemble_variants --members 1,16,32,64,128

Per-step kernels are replayed as a CUDA graph of 64 launches; the persistent ones (p8, d8_512)
take 64 steps in one launch. Not on the public API only: the kernels read the fused scheme's
device tables (the padded one ring of `sim.scheme`), which the library does not expose.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

from pdestudio import solvers

CU = Path(__file__).resolve().parent / "kernels" / "ensemble_variants.cu"
RD_KERNELS = Path(solvers.__file__).resolve().parent / "surface_rd" / "kernels"  # chemotaxis.cu
STEPS = 64
# name, threads a block, members a thread (per-step kernels) or blocks a cluster (persistent)
PER_STEP = [("gs_step_batch", 256, 1), ("v1n", 256, 1), ("v5_4", 128, 4), ("v5_8", 128, 8)]
PERSISTENT = [("p8", 256, 8), ("d8_512", 512, 8)]


def measure(dtype: str, members: list[int], vertices: int) -> list[dict]:
    import cupy as cp
    # the one-ring tables these kernels read: the rectangle would take the lattice kernel
    # (surface_rd/lattice_gs.py), which has none
    os.environ["PDESTUDIO_GS_LATTICE"] = "0"
    sim = solvers.create("gray-scott", backend="cupy", dtype=dtype, vertices=vertices)
    s, real = sim.scheme, sim.scheme.real
    n, P = s.n, s.P
    cname = "float" if dtype == "float32" else "double"
    names = [k for k, _, _ in PER_STEP + PERSISTENT]
    mod = cp.RawModule(code=CU.read_text(), options=("-std=c++17", f"-I{RD_KERNELS}"),
                       name_expressions=[f"{k}<{cname}>" for k in names])
    kern = {k: mod.get_function(f"{k}<{cname}>") for k in names}
    rows = []
    for E in members:
        rng = np.random.default_rng(1)
        u0 = cp.asarray(rng.uniform(0.3, 1.0, (E, n)).astype(real))
        v0 = cp.asarray(rng.uniform(0.0, 0.4, (E, n)).astype(real))
        base = np.array([float(a) for a in s.args_of(sim.params, real)])
        par = cp.asarray((np.tile(base, (E, 1)) * np.linspace(0.9, 1.1, E)[:, None]).astype(real))
        dts = cp.asarray(np.full(E, sim.dt, real))
        tables = (s.deg, s.nbr, s.coef, np.int32(n), np.int32(P))
        reps = max(3, 2000 // (E + 10))
        ref, row = None, {"dtype": dtype, "members": E, "vertices": n}
        for name, block, g in PER_STEP:
            ua, va, ub, vb = u0.copy(), v0.copy(), cp.empty_like(u0), cp.empty_like(v0)
            extra = (np.int32(E),) if g > 1 else ()
            grid = ((n + block - 1) // block, -(-E // g))
            st = cp.cuda.Stream(non_blocking=True)
            with st:
                st.begin_capture()
                for q in range(STEPS):
                    a = (ua, va, ub, vb) if q % 2 == 0 else (ub, vb, ua, va)
                    kern[name](grid, (block,), (*a, *tables, *extra, par, dts))
                graph = st.end_capture()
                graph.launch(st)
                st.synchronize()
                out = (ua.get(), va.get())  # STEPS (even) steps from u0, v0
                us = _timed(cp, st, lambda: graph.launch(st), reps)
            ref = out if ref is None else ref
            row[name] = {"us_per_step": us, "same_bits": _same(out, ref)}
        for name, block, cl in PERSISTENT:
            chunk = -(-n // cl)
            smem = 4 * chunk * np.dtype(real).itemsize if name.startswith("d") else 0
            if smem > 227 * 1024:
                row[name] = {"us_per_step": None, "same_bits": None}
                continue
            k = kern[name]
            if smem:
                k.max_dynamic_shared_size_bytes = smem
            extra = (np.int32(STEPS), np.int32(chunk)) if smem else (np.int32(STEPS),)
            ua, va, ub, vb = u0.copy(), v0.copy(), cp.empty_like(u0), cp.empty_like(v0)

            def launch(a, k=k, extra=extra, smem=smem, cl=cl, block=block):
                k((cl * E,), (block,), (*a, *tables, par, dts, *extra), shared_mem=smem)
            launch((ua, va, ub, vb))
            cp.cuda.Device().synchronize()
            # p8 steps in place between its two pairs (ends in ua after an even count); d8
            # reads the first pair and writes the result into the second
            out = (ub.get(), vb.get()) if smem else (ua.get(), va.get())
            st = cp.cuda.get_current_stream()
            us = _timed(cp, st, lambda: launch((ua, va, ub, vb)), reps)
            row[name] = {"us_per_step": us, "same_bits": _same(out, ref)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def _same(a, b) -> bool:
    return bool(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
                and np.isfinite(a[0]).all())


def _timed(cp, stream, launch, reps: int) -> float:
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()
    e0.record(stream)
    for _ in range(reps):
        launch()
    e1.record(stream)
    e1.synchronize()
    return cp.cuda.get_elapsed_time(e0, e1) * 1e3 / (reps * STEPS)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--members", default="1,16,32,64,128")
    ap.add_argument("--vertices", type=int, default=20000)
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    rows = []
    for dtype in a.dtypes.split(","):
        rows += measure(dtype, [int(m) for m in a.members.split(",")], a.vertices)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
