"""euler-1d's accuracy, both schemes: the rows of docs/VALIDATION.md's 1D section.

    python -m benchmarks.swept.validate [--max-nx 1024] [--backend numpy]

Prints three Markdown tables:
  1. the smooth entropy wave (scenario entropy-wave: ρ = 1 + 0.2 sin(2πx), u = P = 1, periodic,
     T = 1, one period; default cfl 0.4): L1 and L∞ errors of the cell averages of ρ against the
     exact cell averages, their EOCs, and the largest deviation of u and P from 1;
  2. Sod's tube at t = 0.2 against the exact Riemann solution (solvers/swept/exact.py): L1 of ρ,
     u and P (mean absolute error over the cells) and the EOC of ρ;
  3. robustness: Toro's 123 problem (t = 0.15) and LeBlanc's tube (t = 0.2, γ = 5/3) at several
     cfl: whether each scheme gets there, and its smallest ρ and P.

Beyond the public API it imports the exact solutions (swept.exact), the references its errors are measured against.
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

from pdestudio import solvers
from pdestudio.solvers.swept.exact import entropy_wave, riemann_exact

SCHEMES = ("muscl-hllc", "paper")
SOD = ((1.0, 0.0, 1.0), (0.125, 0.0, 0.1))
CASES = {
    "Toro 123 (t = 0.15)": (dict(rho_left=1.0, u_left=-2.0, p_left=0.4, rho_right=1.0,
                                 u_right=2.0, p_right=0.4), 0.15),
    "LeBlanc (t = 0.2)": (dict(rho_left=1.0, p_left=0.1 * 2 / 3, rho_right=1e-3,
                               p_right=1e-10 * 2 / 3, gamma=5 / 3), 0.2),
    "Sod (t = 0.2)": ({}, 0.2),
}


def eoc(e):
    return [""] + [f"{math.log2(a / b):.2f}" for a, b in zip(e[:-1], e[1:])]


def wave_table(sizes, backend):
    print("**Entropy wave** — ρ = 1 + 0.2 sin(2πx), u = P = 1 on [0, 1) periodic, T = 1 "
          "(one period), cfl 0.4; errors of the cell averages of ρ\n")
    print("| scheme | nx | L1(ρ) | EOC | L∞(ρ) | EOC | max \\|u − 1\\|, \\|P − 1\\| | steps |")
    print("|---|---|---|---|---|---|---|---|")
    for scheme in SCHEMES:
        rows = []
        for nx in sizes:
            sim = solvers.create("euler-1d", scenario="entropy-wave", backend=backend, nx=nx,
                                 scheme=scheme)
            sim.advance(1.0)
            f = {k: np.asarray(solvers_np(v)) for k, v in sim.fields().items()}
            ex = entropy_wave(sim.mesh.x, sim.dx, 1.0, 1.0, 1.0, 1.0)
            d = np.abs(f["rho"] - ex)
            dev = max(np.abs(f["u"] - 1).max(), np.abs(f["p"] - 1).max())
            rows.append((nx, d.mean(), d.max(), dev, sim.steps))
        e1, ei = eoc([r[1] for r in rows]), eoc([r[2] for r in rows])
        for (nx, l1, li, dev, steps), a, b in zip(rows, e1, ei):
            print(f"| {scheme} | {nx} | {l1:.3e} | {a} | {li:.3e} | {b} | {dev:.1e} | {steps} |")
    print()


def sod_table(sizes, backend):
    print("**Sod's tube** at t = 0.2 against the exact Riemann solution, cfl 0.4: L1 errors "
          "(mean over the cells)\n")
    print("| scheme | nx | L1(ρ) | EOC | L1(u) | L1(P) |")
    print("|---|---|---|---|---|---|")
    for scheme in SCHEMES:
        rows = []
        for nx in sizes:
            sim = solvers.create("euler-1d", backend=backend, nx=nx, scheme=scheme)
            sim.advance(0.2)
            f = {k: np.asarray(solvers_np(v)) for k, v in sim.fields().items()}
            ex = riemann_exact(sim.mesh.x, 0.2, *SOD)
            rows.append([nx] + [np.abs(f[k] - e).mean() for k, e in zip(("rho", "u", "p"), ex)])
        for r, a in zip(rows, eoc([r[1] for r in rows])):
            print(f"| {scheme} | {r[0]} | {r[1]:.3e} | {a} | {r[2]:.3e} | {r[3]:.3e} |")
    print()


def robustness_table(backend, nx=200):
    print(f"**Robustness** (nx = {nx}): reaches the end time? smallest ρ and P; else the time "
          "of the divergence\n")
    print("| problem | scheme | cfl 0.2 | cfl 0.4 | cfl 0.9 |")
    print("|---|---|---|---|---|")
    for name, (kw, t_end) in CASES.items():
        for scheme in SCHEMES:
            cells = []
            for cfl in (0.2, 0.4, 0.9):
                sim = solvers.create("euler-1d", backend=backend, nx=nx, scheme=scheme, cfl=cfl,
                                     **kw)
                try:
                    with np.errstate(all="ignore"):
                        sim.advance(t_end)
                    f = sim.fields()
                    cells.append(f"yes: ρ ≥ {float(f['rho'].min()):.2g}, "
                                 f"P ≥ {float(f['p'].min()):.2g}")
                except solvers.SimulationDiverged:
                    cells.append(f"diverges at t = {sim.t:.3g}")
            print(f"| {name} | {scheme} | " + " | ".join(cells) + " |")
    print()


def solvers_np(v):
    return v.get() if hasattr(v, "get") else v


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-nx", type=int, default=1024)
    ap.add_argument("--backend", default="numpy")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    wave_table([n for n in (32, 64, 128, 256, 512, 1024, 2048) if n <= a.max_nx], a.backend)
    sod_table([n for n in (100, 200, 400, 800, 1600) if n <= a.max_nx], a.backend)
    robustness_table(a.backend)
    print(f"({time.perf_counter() - t0:.0f} s, backend {a.backend})")


if __name__ == "__main__":
    main()
