"""Validation of the domain sizes and the divergence guards of the shallow-water models (issue 16,
items 4 and 5; docs/VALIDATION.md), on the CPU:

    python -m benchmarks.shallow_water.validate_domain

1. A dam break on a domain scaled by λ (Lx = Ly = 10 λ) against the default one: the solution of
   the shallow-water equations with lengths × λ and the same depths is the default one at t/λ.
2. A 2000 m × 1000 m basin: mass and a lake at rest over long runs.
3. What stops a run that forms a dry core, by scheme and cfl (the measurement behind the advice of
   solvers/shallow_water/guards.py).

Beyond the public API it imports the dry-cell and hyperbolicity guards (shallow_water.guards) whose thresholds it validates.
"""
from __future__ import annotations

import time
import warnings

import numpy as np

from pdestudio import solvers
from pdestudio.solvers import SimulationDiverged
from pdestudio.solvers.shallow_water.guards import DryCell

NAMES = ("h", "hu", "hv", "h1", "q1x", "q1y", "h2", "q2x", "q2y")
BASIN = {"Lx": 2000.0, "Ly": 1000.0}


def create(model, **kw):
    return solvers.create(model, backend="numpy", **kw)


def areas(sim):
    if sim.params.get("geometry") == "grid":
        return np.full(sim.field_shape("h"), sim.dx * sim.dy)
    return np.asarray(sim.mesh.cell_areas)


def scaled_images():
    print("\n| model | case | t (default) | λ | steps default / scaled | max rel. difference |\n"
          "|---|---|---|---|---|---|")
    cases = [("shallow-water", "grid, order 1, 100², circular-dambreak", 1.0,
              {"nx": 100, "order": 1}),
             ("shallow-water", "grid, order 3, 100², circular-dambreak", 1.0,
              {"nx": 100, "order": 3}),
             ("shallow-water", "triangles 4,000, bump-dambreak, roe", 0.5,
              {"scenario": "bump-dambreak", "cells": 4000}),
             ("two-layer", "4,000 triangles, internal-dambreak, ir-roe", 0.5,
              {"cells": 4000, "scheme": "ir-roe"})]
    for model, label, t, kw in cases:
        ref = create(model, **kw)
        ref.advance(t)
        fr = ref.fields()
        for lam in (256.0, 200.0, 0.37):
            sim = create(model, Lx=10 * lam, Ly=10 * lam, **kw)
            sim.advance(lam * t)
            f = sim.fields()
            err = max(np.abs(fr[n] - f[n]).max() / np.abs(fr[n]).max() for n in NAMES if n in f)
            print(f"| {model} | {label} | {t:g} | {lam:g} | {ref.steps} / {sim.steps} | "
                  f"{err:.1e} |")


def basin():
    print("\n| model | case (2000 m × 1000 m) | run | steps | relative mass change | "
          "max abs(η − 1) | max abs(q) |\n|---|---|---|---|---|---|---|")
    cases = [("shallow-water", "grid 200 × 100, order 1", {"nx": 200, "order": 1}),
             ("shallow-water", "grid 200 × 100, order 3", {"nx": 200, "order": 3}),
             ("shallow-water", "16,000 triangles, roe", {"geometry": "triangles"})]
    for model, label, kw in cases:
        sim = create(model, **BASIN, **kw)
        a = areas(sim)
        m0 = np.sum(a * sim.fields()["h"])
        sim.advance(200.0)
        dm = np.sum(a * sim.fields()["h"]) / m0 - 1
        print(f"| {model} | {label} | circular dam break to t = 200 s | {sim.steps} | "
              f"{dm:.1e} | | |")
        lake = create(model, scenario="lake-at-rest", **BASIN, **kw)
        m0 = np.sum(a * lake.fields()["h"])
        lake.step(500)
        f = lake.fields()
        q = max(np.abs(f["hu"]).max(), np.abs(f["hv"]).max())
        print(f"| {model} | {label} | lake at rest, 500 steps (t = {lake.t:.0f} s) | 500 | "
              f"{np.sum(a * f['h']) / m0 - 1:.1e} | {np.abs(f['eta'] - 1).max():.1e} | "
              f"{q:.1e} |")
    sim = create("two-layer", cells=16000, **BASIN)
    a = areas(sim)
    m0 = [np.sum(a * sim.fields()[k]) for k in ("h1", "h2")]
    sim.advance(50.0)
    dm = max(abs(np.sum(a * sim.fields()[k]) / m - 1) for k, m in zip(("h1", "h2"), m0))
    print(f"| two-layer | 16,000 triangles, ir-roe | internal dam break to t = 50 s | "
          f"{sim.steps} | {dm:.1e} (each layer) | | |")


def rarefaction(cfl, **kw):
    """1 m of still water over a flat bottom, ±10 m/s apart at x = 0 (a dry core forms)."""
    sim = create("shallow-water", scenario="lake-at-rest", cfl=cfl, **kw)
    n = sim.field_shape("h")
    x = (np.broadcast_to(sim.mesh.x[None, :], n) if sim.params["geometry"] == "grid"
         else sim.mesh.cell_centroids[:, 0])
    for name, v in (("H", 1.0), ("h", 1.0), ("hv", 0.0)):
        sim.set_field(name, np.full(n, v))
    sim.set_field("hu", np.where(x < 0, -10.0, 10.0))
    return sim


def outcome(sim, t_end):
    try:
        sim.advance(t_end)
        return f"runs to t = {t_end:g} (min h {sim.fields()['h'].min():.2g} at the end)"
    except DryCell as e:
        return f"DryCell at t = {e.t:.3g}, step {e.step + 1} (h → {e.low:.1e})"
    except SimulationDiverged as e:
        return (f"non-finite at t = {e.t:.3g}, step {e.step + 1} (kept min h "
                f"{sim.fields()['h'].min():.1e})")


def guards():
    print("\n| case (dry core: 1 m deep, ±10 m/s apart; t ≤ 2) | cfl 0.9 | 0.5 | 0.2 | 0.05 |\n"
          "|---|---|---|---|---|")
    cases = [("grid 40 × 4, order 1", {"nx": 40, "ny": 4, "order": 1}),
             ("grid 200 × 4, order 1", {"nx": 200, "ny": 4, "order": 1}),
             ("grid 40 × 40, order 1", {"nx": 40, "order": 1}),
             ("grid 40 × 4, order 3", {"nx": 40, "ny": 4, "order": 3}),
             ("600 triangles, roe", {"geometry": "triangles", "cells": 600, "scheme": "roe"}),
             ("4,000 triangles, ir-roe", {"geometry": "triangles", "cells": 4000,
                                          "scheme": "ir-roe"}),
             ("600 triangles, pvm-ifcp", {"geometry": "triangles", "cells": 600,
                                          "scheme": "pvm-ifcp"})]
    for label, kw in cases:
        cells = [outcome(rarefaction(cfl, **kw), 2.0) for cfl in (0.9, 0.5, 0.2, 0.05)]
        print(f"| {label} | " + " | ".join(cells) + " |")
    print("\n| known near-dry run | outcome |\n|---|---|")
    for scheme in ("roe", "pvm-ifcp"):
        sim = create("shallow-water", scenario="bump-dambreak", scheme=scheme)
        print(f"| bump dam break, 16,000 triangles, {scheme}, to t = 1 | {outcome(sim, 1.0)} |")


def shear():
    from pdestudio.solvers.shallow_water.guards import nonhyperbolic_edges
    print("\n| two counter-rotating layers (2 m over 4 m, r = 0.98, 1,000 triangles) | max shear "
          "abs(u1 − u2) | edges with complex internal eigenvalues |\n|---|---|---|")
    for U in (0.5, 1.0, 3.0):
        sim = create("two-layer", cells=1000, r=0.98, scenario="renumbering-test-1")
        x, y = sim.mesh.cell_centroids[:, 0], sim.mesh.cell_centroids[:, 1]
        h1 = np.full(len(x), 2.0)
        w = U * np.exp(-(x * x + y * y) / 4)
        for name, v in (("h1", h1), ("h2", 6 - h1), ("q1x", -h1 * y * w), ("q1y", h1 * x * w),
                        ("q2x", (6 - h1) * y * w), ("q2y", -(6 - h1) * x * w)):
            sim.set_field(name, v)
        n, m = nonhyperbolic_edges(sim)
        print(f"| U = {U:g} | {(2 * np.hypot(x, y) * w).max():.2f} m/s "
              f"| {n} of {m} |")
    print(f"(the approximate bound sqrt((1 − r) g (h1 + h2)) = {np.sqrt(0.02 * 9.81 * 6):.2f} m/s)")


def main():
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # √h of a negative h inside a chunk
        scaled_images()
        basin()
        guards()
        shear()
    print(f"\n({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
