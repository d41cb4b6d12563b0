"""Benchmarks of the shallow-water models on triangles, reproducing docs/MODELS.md [P4]'s Tables 1–3 and
docs/MODELS.md [P2]'s Tables 3–4 on our GPU:

    python -m benchmarks.shallow_water.tri_bench [--out DIR] [--budget SECONDS] [--quick]

Sections in the order they run (each run skipped, and said so, once the time budget is spent):
  B  bump dam break, 1,001,898 triangles, t ∈ [0, 1] (docs/MODELS.md [P2] Table 3), float32 and float64
  B1 the same per assembly (edge slots / atomics / cell-fused), one layer
  G  two-layer internal dam break, 1,001,898 triangles, t ∈ [0, 1] (docs/MODELS.md [P2] Table 4)
  C  renumbering test 1 at 1,024,000 cells: scheme × ordering, float32 (the issue's goals)
  F  docs/MODELS.md [P4] Tables 1–2: tests 1 and 2, t ∈ [0, 0.1], sizes 4,000 … 2,080,560, scheme × ordering
  A  adjacency bandwidth per ordering (docs/MODELS.md [P4] Table 3) of the meshes F used
  D  assembly ladder at 1,024,000 (test 1, rcm): edge slots / atomics / cell-fused / array code
  E  float64 test 1 at 1,024,000 (rcm)
Times are wall seconds of `sim.advance(t_end)` (set-up and kernel compilation excluded; the
one-scalar Δt read-back each step and the base class's finiteness checks included).
Results go to stdout as Markdown rows and to DIR/tri_bench.jsonl.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from pdestudio import solvers

from ..timing import cpu_time

SCHEMES = ("roe", "ir-roe", "pvm-ifcp")
ORDERINGS = ("none", "rcm", "gps")
PAPER_T1 = {  # docs/MODELS.md [P4] Table 1 (GTX 580, s): size -> scheme -> (MATLAB, RCM, GPS)
    4000: {"roe": (0.069, 0.072, 0.071), "ir-roe": (0.020, 0.022, 0.021),
           "pvm-ifcp": (0.0048, 0.0050, 0.0050)},
    16000: {"roe": (0.44, 0.38, 0.43), "ir-roe": (0.092, 0.081, 0.084),
            "pvm-ifcp": (0.020, 0.024, 0.023)},
    64000: {"roe": (3.13, 2.36, 2.71), "ir-roe": (0.65, 0.51, 0.57),
            "pvm-ifcp": (0.14, 0.15, 0.15)},
    256000: {"roe": (22.91, 15.12, 17.04), "ir-roe": (4.68, 3.26, 3.70),
             "pvm-ifcp": (1.01, 1.00, 1.04)},
    1024000: {"roe": (167.2, 99.98, 108.9), "ir-roe": (33.97, 21.34, 23.70),
              "pvm-ifcp": (7.81, 7.47, 7.69)},
    2080560: {"roe": (625.6, 384.6, 480.0), "ir-roe": (127.1, 78.58, 94.61),
              "pvm-ifcp": (29.37, 27.98, 28.74)},
}
PAPER_T2 = {
    4000: {"roe": (0.059, 0.061, 0.061), "ir-roe": (0.022, 0.021, 0.021),
           "pvm-ifcp": (0.0042, 0.0045, 0.0044)},
    16000: {"roe": (0.37, 0.34, 0.37), "ir-roe": (0.11, 0.089, 0.098),
            "pvm-ifcp": (0.017, 0.020, 0.020)},
    64000: {"roe": (2.71, 2.19, 2.44), "ir-roe": (0.79, 0.53, 0.59),
            "pvm-ifcp": (0.11, 0.12, 0.12)},
    256000: {"roe": (20.97, 14.80, 16.46), "ir-roe": (6.06, 3.31, 3.82),
             "pvm-ifcp": (0.85, 0.86, 0.88)},
    1024000: {"roe": (166.9, 103.5, 113.4), "ir-roe": (46.07, 21.35, 24.48),
              "pvm-ifcp": (6.73, 6.37, 6.56)},
    2080560: {"roe": (623.8, 395.7, 502.2), "ir-roe": (169.2, 75.40, 100.3),
              "pvm-ifcp": (25.15, 23.40, 24.93)},
}
PAPER_BW = {4000: (3786, 73, 62), 16000: (12000, 147, 126), 64000: (48000, 294, 249),
            256000: (192000, 598, 500), 1024000: (768000, 1206, 1004),
            2080560: (1996159, 1728, 1378)}


class Bench:
    def __init__(self, out: Path | None, budget: float, backend: str):
        self.out = out
        self.t0 = time.perf_counter()
        self.budget = budget
        self.backend = backend
        self.gpu = solvers.create("two-layer", backend=backend, cells=256).backend != "numpy"
        self.rows = []
        self.skipped = []
        self.done = {}  # (scenario, cells, scheme, dtype, ordering) -> wall seconds
        self.bandwidth = {}  # (cells, ordering) -> adjacency bandwidth

    def left(self) -> float:
        return self.budget - (time.perf_counter() - self.t0)

    def record(self, **row):
        self.rows.append(row)
        if self.out:
            with open(self.out / "tri_bench.jsonl", "a") as f:
                f.write(json.dumps(row) + "\n")

    def sim(self, layers, **kw):
        if layers == 1:
            kw.setdefault("scenario", "bump-dambreak")
            return solvers.create("shallow-water", geometry="triangles", backend=self.backend,
                                  **kw)
        return solvers.create("two-layer", backend=self.backend, **kw)

    def synchronize(self):
        if self.gpu:
            import cupy as cp
            cp.cuda.get_current_stream().synchronize()

    def time_run(self, layers, t_end=None, steps=None, **kw):
        """(wall seconds, steps, the simulation) of one run from a fresh state; wall is None
        (and the failure printed) if the run diverged."""
        s = self.sim(layers, **kw)
        self.synchronize()

        def run():
            s.step(steps) if steps is not None else s.advance(t_end)
            self.synchronize()
        try:
            wall = cpu_time(run, repeat=1, warmup=0)
        except solvers.SimulationDiverged as e:
            print(f"<!-- {kw}: {e} -->", flush=True)
            self.record(diverged=str(e), **{k: v for k, v in kw.items()})
            return None, s.steps, s
        return wall, s.steps, s


def warm_up(b: Bench):
    """Compile every kernel file once per dtype (kept out of the timings)."""
    for layers in (1, 2):
        for dtype in ("float32", "float64"):
            for kernel in ("fused", "array"):
                b.sim(layers, cells=1000, dtype=dtype, kernel=kernel).step(2)


def section_bandwidth(b: Bench, sizes):
    """Printed last, from the tables the runs built (building them is most of the set-up)."""
    print("\n## A. Adjacency bandwidth of the cell graph (seed 004 Table 3)\n")
    print("| cells | none (ours) | rcm | gps | paper MATLAB | paper RCM | paper GPS |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n in sizes:
        bw = [b.bandwidth.get((n, how)) for how in ORDERINGS]
        if None in bw:
            b.skipped.append(f"A bandwidth at {n}")
            bw = [("—" if v is None else v) for v in bw]
        p = PAPER_BW.get(n, ("", "", ""))
        print(f"| {n:,} | " + " | ".join(f"{v:,}" if isinstance(v, int) else v for v in bw)
              + f" | {p[0]} | {p[1]} | {p[2]} |", flush=True)
        b.record(section="A", cells=n, bandwidth=dict(zip(ORDERINGS, bw)))


def section_bump(b: Bench, cells):
    print(f"\n## B. Bump dam break, {cells:,} triangles, t = 1 (seed 002 Table 3: 9.23 s "
          "float32, 34.06 s float64 on a GTX 480)\n")
    print("| scheme | dtype | ordering | steps | wall s | Mcell/s |")
    print("|---|---|---|---:|---:|---:|")
    for scheme, dtype in (("roe", "float32"), ("ir-roe", "float32"), ("roe", "float64"),
                          ("pvm-ifcp", "float32")):
        if b.left() < 20:
            b.skipped.append(f"B {scheme} {dtype}")
            continue
        wall, steps, _ = b.time_run(1, 1.0, cells=cells, scheme=scheme, dtype=dtype,
                                    renumber="rcm")
        if wall is None:
            print(f"| {scheme} | {dtype} | rcm | diverged at step {steps} | — | — |", flush=True)
            continue
        print(f"| {scheme} | {dtype} | rcm | {steps} | {wall:.3f} | "
              f"{steps * cells / wall / 1e6:,.0f} |", flush=True)
        b.record(section="B", cells=cells, scheme=scheme, dtype=dtype, renumber="rcm",
                 steps=steps, wall_s=wall)


def section_bump_ladder(b: Bench, cells):
    print(f"\n## B1. Bump dam break, {cells:,} triangles, t = 1, float32, rcm: wall s per "
          "assembly (one layer)\n")
    print("| scheme | steps | edge slots | edge atomics | cell-fused |")
    print("|---|---:|---:|---:|---:|")
    for scheme in SCHEMES:
        cols, steps = [], 0
        for assembly in ("edge", "atomic", "cell"):
            if b.left() < 15:
                b.skipped.append(f"B1 {scheme} {assembly}")
                cols.append("—")
                continue
            wall, steps, _ = b.time_run(1, 1.0, cells=cells, scheme=scheme, dtype="float32",
                                        renumber="rcm", assembly=assembly)
            cols.append(_fmt(wall))
            b.record(section="B1", cells=cells, scheme=scheme, assembly=assembly, steps=steps,
                     wall_s=wall)
        print(f"| {scheme} | {steps} | " + " | ".join(cols) + " |", flush=True)


def _test_row(b, section, scenario, n, scheme, dtype="float32", orderings=ORDERINGS, **kw):
    times = []
    for how in orderings:
        key = (scenario, n, scheme, dtype, how)
        if key in b.done:
            times.append(b.done[key])
            continue
        if b.left() < 10:
            b.skipped.append(f"{section} {scenario} {n} {scheme} {how}")
            times.append(None)
            continue
        wall, steps, s = b.time_run(2, 0.1, cells=n, scheme=scheme, dtype=dtype, renumber=how,
                                    scenario=scenario, **kw)
        b.bandwidth[(n, how)] = s.tables.bandwidth
        b.done[key] = wall
        times.append(wall)
        b.record(section=section, scenario=scenario, cells=n, scheme=scheme, dtype=dtype,
                 renumber=how, steps=steps, wall_s=wall, **kw)
    return times


def _fmt(x):
    return "—" if x is None else (f"{x:.4f}" if x < 1 else f"{x:.3f}")


def section_tests(b: Bench, sizes, scenarios, section, dtype="float32", title="",
                  orderings=ORDERINGS):
    print(f"\n## {section}. {title}\n")
    print("| test | cells | scheme | none s | rcm s | gps s | rcm gain | paper none / rcm / gps "
          "(GTX 580) |")
    print("|---|---:|---|---:|---:|---:|---:|---|")
    for n in sizes:
        for scenario in scenarios:
            for scheme in SCHEMES:
                t = _test_row(b, section, scenario, n, scheme, dtype, orderings)
                t = [t[orderings.index(o)] if o in orderings else None for o in ORDERINGS]
                paper = (PAPER_T1 if scenario.endswith("1") else PAPER_T2).get(n, {}).get(scheme)
                gain = (f"{100 * (1 - t[1] / t[0]):.0f}%" if None not in t[:2] else "—")
                ps = " / ".join(str(v) for v in paper) if paper else "—"
                print(f"| {scenario[-1]} | {n:,} | {scheme} | {_fmt(t[0])} | {_fmt(t[1])} | "
                      f"{_fmt(t[2])} | {gain} | {ps} |", flush=True)


def section_assembly(b: Bench, n):
    print(f"\n## D. Assembly ladder, test 1, {n:,} cells, rcm, float32: ms per step\n")
    print("| scheme | array (CuPy) | edge slots | edge atomics | cell-fused |")
    print("|---|---:|---:|---:|---:|")
    for scheme in SCHEMES:
        cols = []
        for kernel, assembly in (("array", "auto"), ("fused", "edge"), ("fused", "atomic"),
                                 ("fused", "cell")):
            if b.left() < 10:
                b.skipped.append(f"D {scheme} {kernel} {assembly}")
                cols.append("—")
                continue
            steps = 10 if kernel == "array" else 100
            wall, k, _ = b.time_run(2, steps=steps, cells=n, scheme=scheme, renumber="rcm",
                                    scenario="renumbering-test-1", kernel=kernel,
                                    assembly=assembly, dtype="float32")
            cols.append("diverged" if wall is None else f"{1e3 * wall / k:.3f}")
            b.record(section="D", cells=n, scheme=scheme, kernel=kernel, assembly=assembly,
                     steps=k, wall_s=wall)
        print(f"| {scheme} | " + " | ".join(cols) + " |", flush=True)


def section_internal(b: Bench, cells):
    print(f"\n## G. Two-layer internal dam break, {cells:,} triangles, t = 1 (seed 002 Table 4: "
          "5,613.9 s mixed precision on a GTX 260)\n")
    print("| scheme | precision | steps | wall s |")
    print("|---|---|---:|---:|")
    for scheme, dtype, eig in (("ir-roe", "float32", "float64"), ("pvm-ifcp", "float32", "working"),
                               ("roe", "float32", "float64")):
        if b.left() < 40:
            b.skipped.append(f"G {scheme} {dtype}")
            continue
        wall, steps, _ = b.time_run(2, 1.0, cells=cells, scheme=scheme, dtype=dtype,
                                    eigen_precision=eig, scenario="internal-dambreak",
                                    renumber="rcm")
        prec = "mixed" if (dtype == "float32" and eig == "float64") else dtype
        print(f"| {scheme} | {prec} | {steps} | {_fmt(wall)} |", flush=True)
        b.record(section="G", cells=cells, scheme=scheme, dtype=dtype, eigen_precision=eig,
                 steps=steps, wall_s=wall)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--budget", type=float, default=250.0, help="seconds for all sections")
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    a = ap.parse_args(argv)
    if a.out:
        a.out.mkdir(parents=True, exist_ok=True)
    b = Bench(a.out, a.budget, a.backend)
    print(f"# tri_bench on {'cupy' if b.gpu else 'numpy'} ({solvers.gpu_status()[1]}), "
          f"budget {a.budget:.0f} s")
    if a.quick:
        big, bump, sizes = 16000, 16000, (4000, 16000)
    else:
        big, bump, sizes = 1024000, 1001898, (4000, 16000, 64000, 256000, 1024000, 2080560)
    if b.gpu:
        t = time.perf_counter()
        warm_up(b)
        print(f"(kernel compilation and warm-up: {time.perf_counter() - t:.1f} s)")
    section_bump(b, bump)
    section_bump_ladder(b, bump)
    section_internal(b, bump)
    section_tests(b, (big,), ("renumbering-test-1",), "C",
                  title=f"Renumbering test 1 at {big:,} cells, float32 (goals: PVM-IFCP ≤ 0.2 s, "
                  "IR-Roe ≤ 0.5 s, Roe ≤ 2 s)")
    order = (big,) + tuple(n for n in sizes if n != big)
    section_tests(b, order, ("renumbering-test-1", "renumbering-test-2"), "F",
                  title="Seed 004 Tables 1–2 (t ∈ [0, 0.1], float32)")
    section_bandwidth(b, sizes)
    section_assembly(b, big)
    section_tests(b, (big,), ("renumbering-test-1",), "E", dtype="float64",
                  title=f"Test 1 at {big:,} cells in float64", orderings=("rcm",))
    print(f"\ntotal {time.perf_counter() - b.t0:.1f} s; skipped (budget): "
          + (", ".join(b.skipped) if b.skipped else "nothing"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
