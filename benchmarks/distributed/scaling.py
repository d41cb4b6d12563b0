"""Strong and weak scaling of shallow water on grids decomposed over MPI ranks (docs/DISTRIBUTED.md).

Run once per rank count under the same launcher; every run appends one JSON line per measurement
to --out (rank 0 writes), and --table prints speed-ups and efficiencies against the 1-rank lines
of the same file:

    # on a 2-GPU machine (one GPU per rank, halos through NCCL; order 1 runs the fused strip
    # kernels, --kernel array the CuPy array code)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
    for n in 1 2; do mpirun --oversubscribe -n $n python -m benchmarks.distributed.scaling \
        --backend cupy --dtype float32 --strong 8192 --weak 4096 --out scaling.jsonl; done
    python -m benchmarks.distributed.scaling --table scaling.jsonl

    # on the CPU (NumPy, halos through MPI): the numbers of docs/DISTRIBUTED.md
    for n in 1 2; do mpirun --oversubscribe -n $n python -m benchmarks.distributed.scaling \
        --backend numpy --strong 1024 --steps 20 --out cpu.jsonl; done

strong N: an N × N grid split over the ranks; weak n: n × n cells per rank (the grid n wide and
ranks·n tall). Each measurement: a warm-up of --warmup steps, then --steps steps timed between two
barriers (the GPU synchronised before the second), best of --repeat. Gcell/s counts the whole grid.
With one rank the plain (undecomposed) simulation is measured too ("plain"), with the same kernel
choice, so the layer's own cost on one rank shows; speed-ups and efficiencies are against the
plain run where there is one (one GPU of the same machine), else against one rank.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from pdestudio import solvers


def sync(sim) -> None:
    if sim.backend == "cupy":
        import cupy
        cupy.cuda.get_current_stream().synchronize()


def measure(comm, args, nx, ny, plain=False) -> dict:
    kw = dict(backend=args.backend, dtype=args.dtype, order=args.order, nx=nx, ny=ny)
    if args.backend == "cupy":
        kw["kernel"] = args.kernel
    if plain:
        sim = solvers.create("shallow-water", **kw)
    else:
        sim = solvers.create("shallow-water", comm=comm, **kw)
    sim.step(args.warmup)
    best = float("inf")
    halo0 = sim.domain.comm.halo_s if not plain else 0.0
    for _ in range(args.repeat):
        if not plain:
            comm.Barrier()
        sync(sim)
        t0 = time.perf_counter()
        sim.step(args.steps)
        sync(sim)
        if not plain:
            comm.Barrier()
        best = min(best, time.perf_counter() - t0)
    halo = (sim.domain.comm.halo_s - halo0) / args.repeat if not plain else 0.0
    halo = comm.allreduce(halo, op=__import__("mpi4py").MPI.MAX) if not plain else 0.0
    return {"ranks": 1 if plain else comm.Get_size(), "plain": plain, "nx": nx, "ny": ny,
            "backend": sim.backend, "kernel": sim.kernel, "dtype": args.dtype,
            "order": args.order, "steps": args.steps, "seconds": best,
            "gcell_s": nx * ny * args.steps / best / 1e9, "halo_s_per_step": halo / args.steps,
            "halos": getattr(getattr(sim, "domain", None), "comm", None).name if not plain
            else "-", "device": solvers.gpu_status()[1] if sim.backend == "cupy" else "cpu"}


def run(args) -> None:
    comm = solvers.mpi_world()
    size, rank = comm.Get_size(), comm.Get_rank()
    cases = [("strong", n, n) for n in args.strong] + [("weak", n, n * size) for n in args.weak]
    for mode, nx, ny in cases:
        rows = [measure(comm, args, nx, ny)]
        if size == 1 and args.plain:
            rows.append(measure(comm, args, nx, ny, plain=True))
        if rank == 0:
            with open(args.out, "a") as f:
                for r in rows:
                    r["mode"] = mode
                    f.write(json.dumps(r) + "\n")
                    print(json.dumps(r), flush=True)


def table(path) -> None:
    rows = [json.loads(line) for line in open(path) if line.strip()]
    key = lambda r: (r["mode"], r["backend"], r["dtype"], r["order"])  # noqa: E731
    base = {}  # one GPU or process: the plain (undecomposed) run where measured, else 1 rank
    for r in sorted(rows, key=lambda r: r["plain"]):
        if r["ranks"] == 1:
            base[key(r) + (r["nx"],)] = r  # strong: N; weak: n per rank
    print("| mode | backend | dtype | order | ranks | grid | Gcell/s | speed-up | efficiency "
          "| halo ms/step |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        b = base.get(key(r) + (r["nx"],))
        if b is None:
            sp = eff = "-"
        elif r["mode"] == "strong":
            s = b["seconds"] / r["seconds"]
            sp, eff = f"{s:.2f}×", f"{100 * s / r['ranks']:.0f} %"
        else:  # weak: the same time per step is 100 %
            s = r["gcell_s"] / b["gcell_s"]
            sp, eff = f"{s:.2f}×", f"{100 * b['seconds'] / r['seconds']:.0f} %"
        name = f"{r['ranks']}{' (plain)' if r['plain'] else ''}"
        print(f"| {r['mode']} | {r['backend']} | {r['dtype']} | {r['order']} | {name} | "
              f"{r['nx']}×{r['ny']} | {r['gcell_s']:.4g} | {sp} | {eff} | "
              f"{1e3 * r['halo_s_per_step']:.3g} |")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--backend", default="cupy", choices=("cupy", "numpy"))
    p.add_argument("--dtype", default="float32", choices=solvers.DTYPES)
    p.add_argument("--order", type=int, default=1, choices=(1, 3))
    p.add_argument("--kernel", default="fused", choices=("fused", "array"),
                   help="on the GPU: the fused strip kernels (order 1) or the array path")
    p.add_argument("--strong", type=int, nargs="*", default=[], metavar="N")
    p.add_argument("--weak", type=int, nargs="*", default=[], metavar="n")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--no-plain", dest="plain", action="store_false",
                   help="with one rank, skip the undecomposed simulation")
    p.add_argument("--out", default="scaling.jsonl")
    p.add_argument("--table", metavar="FILE.jsonl", help="print the table of FILE and exit")
    args = p.parse_args(argv)
    if args.table:
        table(args.table)
        return 0
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
