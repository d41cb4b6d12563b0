"""Ensembles on one GPU (issue 19): member-steps per second of E members run one after another
(E fused solo simulations, each stepping `--steps` steps) vs one batched ensemble
(`solvers.create_ensemble`, one launch per step for all members), and the batched step against
the memory roofline (the bytes a step must move / the measured copy bandwidth).

    python -m benchmarks.surface_rd.ensemble_bench --vertices 20000 --members 1,8,64,256 --steps 500

Bytes of a batched step: every member's two species read and written once (4·E·n reals) plus
the mesh tables read once (degree, neighbour table and coefficients of the padded one ring).
Members differ in F and k (gray-scott) or α and D (chemotaxis, scheme=paper) and in their seed.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from pdestudio import solvers

from ..timing import copy_bandwidth, synchronize

SOLO = 8


def members_of(model: str, e: int) -> list[dict]:
    if model == "gray-scott":
        return [{"F": 0.03 + 0.02 * i / max(e - 1, 1), "k": 0.06 + 0.003 * (i % 3), "seed": i}
                for i in range(e)]
    return [{"alpha": 12.5 + 2.0 * i / max(e - 1, 1), "D": 0.25 + 0.01 * (i % 4), "seed": i}
            for i in range(e)]


def timed(fn) -> float:
    synchronize()
    t0 = time.perf_counter()
    fn()
    synchronize()
    return time.perf_counter() - t0


def row(model: str, vertices: int, e: int, steps: int, dtype: str, bw: float) -> dict:
    model, _, scheme = model.partition(":")  # chemotaxis:positive
    extra = {"scheme": scheme or "paper"} if model == "chemotaxis" else {}
    common = dict(backend="cupy", dtype=dtype, vertices=vertices, kernel="fused", **extra)
    members = members_of(model, e)
    # one after another: each member is a solo simulation of the same size, so the rate per
    # member does not depend on E; up to SOLO of them are timed (set-up of 256 meshes would
    # take minutes) and the rate scaled to E members
    solos = [solvers.create(model, **common, **m) for m in members[:SOLO]]
    for s in solos:
        s.step(2)  # compile, warm up
    solo_s = timed(lambda: [s.step(steps) for s in solos]) * e / len(solos)
    ens = solvers.create_ensemble(model, members, **common)
    ens.step(2)
    batch_s = timed(lambda: ens.step(steps))
    sim = ens.sim
    n, item = sim.imesh.n_vertices, np.dtype(dtype).itemsize
    sch = ens._batch.s
    if extra.get("scheme") == "positive":  # rates written and read back: 8 reals a vertex
        tables = sch.deg.nbytes + sch.nbr.nbytes + sch.hw.nbytes + sch.area.nbytes
        step_bytes = 8 * e * n * item + tables
    elif getattr(sch, "lattice_why", "") is None:  # lattice_gs: the node table, read twice
        tables = 2 * sch.lattice["node"].nbytes  # a launch (the state stays in the SMs)
        step_bytes = 4 * e * n * item + tables
    else:
        tables = sch.deg.nbytes + sch.nbr.nbytes + sch.coef.nbytes
        step_bytes = 4 * e * n * item + tables
    per_step = batch_s / steps
    plan = getattr(sch, "lattice", {}).get("plans", {}).get(e)
    kernel = f"lattice, clusters of {plan[0]}" if plan else "one ring"
    return {"model": model + (f" ({extra['scheme']})" if extra else ""), "kernel": kernel,
            "vertices": n, "members": e, "dtype": dtype, "steps": steps,
            "solo_member_steps_per_s": e * steps / solo_s,
            "batched_member_steps_per_s": e * steps / batch_s,
            "ratio": solo_s / batch_s, "batched_us_per_step": 1e6 * per_step,
            "step_bytes": step_bytes, "roofline_us": 1e6 * step_bytes / bw,
            "fraction_of_roofline": step_bytes / bw / per_step}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="gray-scott,chemotaxis,chemotaxis:positive")
    ap.add_argument("--vertices", type=int, default=20_000)
    ap.add_argument("--members", default="1,8,64,256")
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    bw = copy_bandwidth()
    print(f"copy bandwidth {bw / 1e9:.0f} GB/s (read + write)")
    print("| model | kernel | vertices | members | solo member-steps/s | batched member-steps/s | "
          "ratio | batched µs/step | roofline µs | of roofline |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    for model in a.models.split(","):
        for e in (int(x) for x in a.members.split(",")):
            r = row(model, a.vertices, e, a.steps, a.dtype, bw)
            rows.append(r)
            print(f"| {model} | {r['kernel']} | {r['vertices']} | {e} | {r['solo_member_steps_per_s']:.4g} | "
                  f"{r['batched_member_steps_per_s']:.4g} | {r['ratio']:.1f}× | "
                  f"{r['batched_us_per_step']:.2f} | {r['roofline_us']:.2f} | "
                  f"{100 * r['fraction_of_roofline']:.0f} % |", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
