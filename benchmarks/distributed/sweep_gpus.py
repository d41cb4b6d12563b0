"""A parameter sweep on one GPU against the same sweep on two GPUs of the same machine (issue 29,
item 5; docs/DISTRIBUTED.md, "Sweeps on several GPUs"): 64 gray-scott members (F × k, 8 × 8) of
20,000 vertices each, 200,000 steps, in the sweep's default real type (float64), run as batched
ensembles by the sweep's own code (app/sweep: the local cluster with one worker pinned to each
GPU, the ensembles cut into one task per GPU). Prints members/hour for each GPU count and the
ratio, and writes them as JSON:

    python -m benchmarks.distributed.sweep_gpus --out sweep_gpus.json            # 2-GPU machine
    python -m benchmarks.distributed.sweep_gpus --cpu --members 4 --vertices 200 --steps 2 \\
        --out cpu.json                                   # the code path on the CPU (a smoke run)

Each measurement starts the cluster, warms every worker up (CUDA context, kernels: one step of a
group of the sweep's task size on each worker), then times the sweep itself, --repeat times on
that cluster (the median counts): the tasks submitted until the last member's row is written
(thin outputs: rows only, unless --full-outputs). The cluster's start is reported apart
(start_s). A worker keeps the mesh set-up of its warm-up for the sweep's tasks
(solvers/surface_rd/meshes.py), as a long-lived cluster keeps it after its first task on that
mesh; --no-mesh-cache makes every task build its own (PDESTUDIO_MESH_CACHE=0 in the workers).
--cpu: NumPy members on workers that a stand-in GPU count pins as if there were GPUs
(CUDA_VISIBLE_DEVICES per worker): it checks the path, not the speed.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path


def make_spec(args, backend: str) -> dict:
    from pdestudio.app.sweep import spec as specs
    side = max(1, round(math.sqrt(args.members)))
    nf, nk = side, -(-args.members // side)
    fs = [round(0.026 + 0.024 * i / max(nf - 1, 1), 5) for i in range(nf)]
    ks = [round(0.055 + 0.010 * i / max(nk - 1, 1), 5) for i in range(nk)]
    return specs.make_spec("gray-scott", None, {"vertices": args.vertices},
                           [("F", fs), ("k", ks)], backend, args.dtype, None, args.steps)


def measure(spec: dict, gpus: int, work: Path, outputs, repeat: int = 1) -> dict:
    from distributed import wait

    from pdestudio.app.sweep import members as run
    from pdestudio.app.sweep import runner
    from pdestudio.app.sweep import spec as specs
    t0 = time.perf_counter()
    client, cluster, kind = runner.client_for(None, None, gpus)
    try:
        workers = runner.worker_addresses(client)  # (asked once, before the clock starts)
        todo = list(range(len(specs.members(spec))))
        tasks = run.groups(spec, todo, gpu=True, parts=gpus)
        # each worker warms up on a group of the sweep's task size, one step: whatever the
        # task's launches need (kernels, the plan's cluster size, CuPy's reductions) is
        # compiled and cached before the clock starts, whichever GPU count is measured first
        warm_spec = dict(spec, steps=1)
        warm = [client.submit(run.run_group, warm_spec, tasks[i % len(tasks)],
                              str(work / f"warm{gpus}-{i}"), (), workers=[w],
                              allow_other_workers=False, pure=False)
                for i, w in enumerate(workers)]
        wait(warm)
        for f in warm:
            f.result()  # a failed warm-up raises here
        start_s = time.perf_counter() - t0
        walls, inside = [], []
        for k in range(repeat):
            out = work / f"gpus{gpus}-{k}"
            out.mkdir(parents=True)
            specs.check_folder(out, spec)
            t1 = time.perf_counter()
            res = client.gather(runner.submit(client, spec, tasks, out, tuple(outputs),
                                              workers))
            walls.append(time.perf_counter() - t1)
            rows = [r for part in res for r in part]
            # the longest task's own time (its rows' wall_s: the group's set-up and steps)
            inside.append(max(part[0]["wall_s"] * len(part) for part in res if part))
    finally:
        client.close()
        cluster.close()
    wall = statistics.median(walls)
    return {"gpus": gpus, "cluster": kind, "workers": len(workers), "tasks": len(tasks),
            "task_sizes": [len(g) for g in tasks], "members": len(rows), "wall_s": wall,
            "walls_s": walls, "tasks_s": inside, "members_per_hour": 3600 * len(rows) / wall, "start_s": start_s,
            "gpus_used": sorted({r["gpu"] for r in rows}),
            "diverged": sum(bool(r["diverged"]) for r in rows),
            "steps": sorted({r["steps"] for r in rows})}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="JSON file written with the results")
    ap.add_argument("--members", type=int, default=64)
    ap.add_argument("--vertices", type=int, default=20000)
    ap.add_argument("--steps", type=int, default=200000, help="steps each member takes")
    ap.add_argument("--dtype", default="float64", choices=("float32", "float64"),
                    help="real type (default float64, as pdestudio sweep's)")
    ap.add_argument("--gpus", default="1,2", help="GPU counts to compare (first: the baseline)")
    ap.add_argument("--full-outputs", action="store_true",
                    help="members write their checkpoint and thumbnail too")
    ap.add_argument("--cpu", action="store_true",
                    help="NumPy members on workers pinned as if there were GPUs (smoke run)")
    ap.add_argument("--workdir", help="where the sweeps write (default: a temporary folder)")
    ap.add_argument("--repeat", type=int, default=5,
                    help="timed sweeps for each GPU count, on the same cluster (the median counts)")
    ap.add_argument("--no-mesh-cache", action="store_true",
                    help="every task builds its mesh set-up (none kept from the warm-up)")
    args = ap.parse_args(argv)
    if args.no_mesh_cache:
        os.environ["PDESTUDIO_MESH_CACHE"] = "0"  # inherited by the workers
    counts = [int(c) for c in args.gpus.split(",")]
    from pdestudio.app.sweep import runner
    if args.cpu:
        os.environ["PDESTUDIO_NO_GPU"] = "1"  # inherited by the workers: NumPy members
        runner.gpu_count = lambda: max(counts)
        backend = "auto"
    else:
        backend = "cupy"
        have = runner.gpu_count()
        if have < max(counts):
            print(f"sweep_gpus: this machine has {have} usable GPU(s); --gpus {args.gpus} "
                  "needs " + str(max(counts)) + " (or run with --cpu)", file=sys.stderr)
            return 2
    spec = make_spec(args, backend)
    outputs = ("checkpoint", "thumbnail") if args.full_outputs else ()
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        runs = []
        for g in counts:
            r = measure(spec, g, Path(tmp), outputs, max(1, args.repeat))
            runs.append(r)
            each = " (each: " + ", ".join(f"{w:.3f}" for w in r["walls_s"]) + " s)"
            print(f"{g} GPU{'s' if g > 1 else ''}: {r['members']} members in {r['wall_s']:.3f} s"
                  f"{each if len(r['walls_s']) > 1 else ''} "
                  f"({r['members_per_hour']:.0f} members/hour; {r['tasks']} tasks of "
                  f"{r['task_sizes']}, on GPUs {r['gpus_used']}; cluster {r['cluster']} started "
                  f"in {r['start_s']:.1f} s)", flush=True)
    base = runs[0]["members_per_hour"]
    for r in runs:
        r["ratio"] = r["members_per_hour"] / base
    print("ratio " + ", ".join(f"{r['gpus']} GPU(s): {r['ratio']:.2f}x" for r in runs))
    result = {"benchmark": "sweep_gpus", "model": "gray-scott", "members": args.members,
              "vertices": args.vertices, "steps": args.steps, "dtype": args.dtype,
              "backend": backend if not args.cpu else "numpy (cpu mode)",
              "outputs": list(outputs), "mesh_cache": not args.no_mesh_cache, "runs": runs}
    Path(args.out).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
