"""Validation tables of the structured shallow-water model (docs/VALIDATION.md), on the CPU:

    python -m benchmarks.shallow_water.validate_grid

well-balancing and mass over long runs, L1 errors and orders against the exact simple wave
(smooth) and the Stoker dam break (a strip of the grid), radial symmetry of the circular dam break.

Beyond the public API it imports the exact solutions (shallow_water.exact) its errors are measured against.
"""
from __future__ import annotations

import numpy as np

from pdestudio import solvers
from pdestudio.solvers.shallow_water.exact import cell_average, simple_wave, stoker


def make(**kw):
    return solvers.create("shallow-water", backend="numpy", **kw)


def strip(nx, order, h, q):
    sim = make(nx=nx, ny=2, order=order)
    ny = len(sim.mesh.y)
    h, q = h(sim), q(sim)
    for name, v in (("H", np.ones_like(h)), ("h", h), ("hu", q), ("hv", 0 * h)):
        sim.set_field(name, np.tile(v, (ny, 1)))
    return sim


def table(title, rows):
    print(f"\n{title}\n| nx | order 1: L1 | EOC | order 3: L1 | EOC |\n|---|---|---|---|---|")
    e = {o: np.array([r[o] for r in rows]) for o in (1, 3)}
    for k, r in enumerate(rows):
        eoc = {o: "" if k == 0 else f"{np.log2(e[o][k - 1] / e[o][k]):.2f}" for o in (1, 3)}
        print(f"| {r['nx']} | {r[1]:.3e} | {eoc[1]} | {r[3]:.3e} | {eoc[3]} |")


def main():
    print("| order | test | max abs(η − 1) | max abs(q) | relative mass change |\n|---|---|---|---|---|")
    for order in (1, 3):
        sim = make(scenario="lake-at-rest", nx=64, order=order)
        m0 = sim.fields()["h"].sum()
        sim.step(500)
        f = sim.fields()
        print(f"| {order} | lake at rest, 64², 500 steps (t = {sim.t:.2f}) | "
              f"{np.abs(f['eta'] - 1).max():.1e} | "
              f"{max(np.abs(f['hu']).max(), np.abs(f['hv']).max()):.1e} | "
              f"{(f['h'].sum() - m0) / m0:.1e} |")
        sim = make(nx=64, order=order)
        m0 = sim.fields()["h"].sum()
        sim.advance(1.0)
        print(f"| {order} | circular dam break, 64², t = 1 ({sim.steps} steps) | | | "
              f"{(sim.fields()['h'].sum() - m0) / m0:.1e} |")

    h0 = lambda x: 1.0 + 0.1 * np.exp(-((x + 2) / 0.5) ** 2)  # noqa: E731
    rows = []
    for nx in (100, 200, 400, 800):
        r = {"nx": nx}
        for order in (1, 3):
            sim = make(nx=nx, ny=2, order=order)
            init = cell_average(lambda s: simple_wave(s, 0.0, h0), sim.mesh.x, sim.dx)
            sim = strip(nx, order, lambda s: init[0], lambda s: init[1])
            sim.advance(0.3)
            exact = cell_average(lambda s: simple_wave(s, 0.3, h0), sim.mesh.x, sim.dx)[0]
            r[order] = np.abs(sim.fields()["h"][0] - exact).mean() * 10
        rows.append(r)
    table("Simple wave (smooth), t = 0.3, L1 error of h on [−5, 5]", rows)

    rows = []
    for nx in (100, 200, 400, 800):
        r = {"nx": nx}
        for order in (1, 3):
            sim = strip(nx, order, lambda s: np.where(s.mesh.x < 0, 2.0, 1.0),
                        lambda s: 0 * s.mesh.x)
            sim.advance(0.4)
            r[order] = np.abs(sim.fields()["h"][0] - stoker(sim.mesh.x, 0.4, 2.0, 1.0)).mean() * 10
        rows.append(r)
    table("Stoker dam break (h = 2 left, 1 right), t = 0.4, L1 error of h on [−5, 5]", rows)

    print("\n| order | nx | grid symmetry (max) | mean abs(η − η_axis(r)), r < 4 |\n|---|---|---|---|")
    for order in (1, 3):
        for nx in (40, 80, 160):
            sim = make(nx=nx, order=order)
            sim.advance(0.25)
            eta = sim.fields()["eta"]
            sym = max(np.abs(eta - o).max() for o in (eta.T, eta[::-1], eta[:, ::-1]))
            X, Y = np.meshgrid(sim.mesh.x, sim.mesh.y)
            r = np.hypot(X, Y)
            j = nx // 2
            axis = 0.5 * (eta[j - 1, j:] + eta[j, j:])
            inside = r < 4
            dev = np.abs(eta[inside] - np.interp(r[inside], np.hypot(sim.mesh.x[j:],
                                                                    sim.mesh.y[j]), axis))
            print(f"| {order} | {nx} | {sym:.1e} | {dev.mean():.4f} |")


if __name__ == "__main__":
    main()
