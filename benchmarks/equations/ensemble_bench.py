"""Ensembles of model files (docs/EQUATIONS.md, ensembles): member-steps per second of E
Gray–Scott-file members run one after another (E solo simulations, each stepping `--steps`
steps: what a sweep without ensembles does) against one ensemble (`solvers.create_ensemble`: on
CuPy one eq_stage_batch launch per stage for every member; on NumPy the members one after
another through one template), on a generated surface ("rectangle" of --vertices vertices) and
on an nx² periodic grid. The members differ in F, k and the spot's radius, so each has its own
dynamics; every member's step is its own stable step.

    python -m benchmarks.equations.ensemble_bench --json out.json             # the device rows
    python -m benchmarks.equations.ensemble_bench --backend numpy --quick     # seconds on a CPU

Bytes of a batched Euler step: each member's two species read and written once (4·E·n reals)
plus the geometry's tables read once; the roofline is that over the measured copy bandwidth
(CuPy only). Wall times include the host synchronisation of the last step.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from pdestudio import solvers

GRAY_SCOTT = {
    "model": {"name": "bench-ens-gray-scott"},
    "equations": {"u": "Du*lap(u) - u*v^2 + F*(1 - u)", "v": "Dv*lap(v) + u*v^2 - (F + k)*v"},
    "parameters": {"Du": 0.02, "Dv": 0.01, "F": 0.037, "k": 0.06, "R": 2.0},
    "initial": {"u": "1 - 0.5*heaviside(R - r)", "v": "0.25*heaviside(R - r)"},
}
SOLO = 8  # solo simulations timed (set-up of E of them is slow); the rate is scaled to E


def members_of(e: int) -> list[dict]:
    return [{"F": 0.03 + 0.02 * i / max(e - 1, 1), "k": 0.06 + 0.002 * (i % 4),
             "R": 1.5 + 0.5 * (i % 3)} for i in range(e)]


def _sync(backend: str) -> None:
    if backend == "cupy":
        from benchmarks.timing import synchronize
        synchronize()


def timed(fn, backend: str) -> float:
    _sync(backend)
    t0 = time.perf_counter()
    fn()
    _sync(backend)
    return time.perf_counter() - t0


def row(geometry: str, domain: dict, e: int, steps: int, backend: str, dtype: str,
        bw: float | None) -> dict:
    mid = solvers.define({**GRAY_SCOTT, "domain": domain})
    common = {"backend": backend, "dtype": dtype}
    members = members_of(e)
    solos = [solvers.create(mid, **common, **m) for m in members[:SOLO]]
    for s in solos:
        s.step(2)  # compile, warm up
    solo_s = timed(lambda: [s.step(steps) for s in solos], backend) * e / len(solos)
    ens = solvers.create_ensemble(mid, members, **common)
    ens.step(2)
    ens_s = timed(lambda: ens.step(steps), backend)
    assert not ens.diverged.any(), ens.reasons
    n = int(np.prod(ens.sim.shape))
    item = np.dtype(dtype).itemsize
    out = {"geometry": geometry, "nodes": n, "members": e, "backend": backend, "dtype": dtype,
           "steps": steps, "batched": bool(ens.batched),
           "solo_member_steps_per_s": e * steps / solo_s,
           "ensemble_member_steps_per_s": e * steps / ens_s, "ratio": solo_s / ens_s,
           "ensemble_us_per_step": 1e6 * ens_s / steps}
    if bw is not None and ens.batched:
        geo = sum(a.nbytes for a in ens._batch.geo if hasattr(a, "nbytes"))
        step_bytes = 4 * e * n * item + geo
        out.update(step_bytes=step_bytes, roofline_us=1e6 * step_bytes / bw,
                   fraction_of_roofline=step_bytes / bw / (ens_s / steps))
    return out


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="cupy", choices=("cupy", "numpy"))
    ap.add_argument("--members", default="64", help="comma-separated ensemble sizes")
    ap.add_argument("--vertices", type=int, default=20_000)
    ap.add_argument("--nx", type=int, default=128)
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--dtype", default="float64")
    ap.add_argument("--quick", action="store_true", help="small sizes (seconds on a CPU)")
    ap.add_argument("--json", help="write the rows to this path")
    a = ap.parse_args(argv)
    if a.quick:
        a.vertices, a.nx, a.steps, a.members = 400, 24, 20, "4"
    bw = None
    if a.backend == "cupy":
        from benchmarks.timing import copy_bandwidth
        bw = copy_bandwidth()
        print(f"copy bandwidth {bw / 1e9:.0f} GB/s (read + write)")
    geometries = {
        f"surface {a.vertices}": {"kind": "mesh", "surface": "rectangle",
                                  "vertices": a.vertices, "boundary": "natural"},
        f"grid {a.nx}²": {"kind": "rectangle", "nx": a.nx, "Lx": a.nx / 2.0,
                          "boundary": "periodic"},
    }
    print("| geometry | nodes | members | backend | dtype | solo member-steps/s | ensemble "
          "member-steps/s | ratio | batched | µs/step | of roofline |")
    print("|---|---:|---:|---|---|---:|---:|---:|---|---:|---:|")
    rows = []
    for name, domain in geometries.items():
        for e in (int(x) for x in a.members.split(",")):
            r = row(name, domain, e, a.steps, a.backend, a.dtype, bw)
            rows.append(r)
            roof = (f"{100 * r['fraction_of_roofline']:.0f} %" if "fraction_of_roofline" in r
                    else "–")
            print(f"| {name} | {r['nodes']} | {e} | {a.backend} | {a.dtype} | "
                  f"{r['solo_member_steps_per_s']:.4g} | {r['ensemble_member_steps_per_s']:.4g}"
                  f" | {r['ratio']:.2f}× | {'yes' if r['batched'] else 'no'} | "
                  f"{r['ensemble_us_per_step']:.1f} | {roof} |", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
    sys.exit(0)
