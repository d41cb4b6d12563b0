"""A lake at rest over a rough random bottom in float32 (issue 28, item 6): every scheme, both
geometries, how far the momentum drifts from zero.

    python -m benchmarks.shallow_water.lake_float32 [--until 100] [--backend numpy]

The bottom H is random in every cell, on a lattice of 2^-10 m (so that h = 1 + H is exact in
float32 and the float32 state is exactly a lake at rest: η = h − H = 1 in every cell, q = 0).
Prints max |q| (hu, hv) and max |η − 1| at t = 1, 10 and --until, per geometry/order/scheme/dtype.
"""
from __future__ import annotations

import argparse

import numpy as np

from pdestudio import solvers

CASES = ([("grid", {"order": 1, "nx": 32}), ("grid", {"order": 3, "nx": 32})]
         + [("triangles", {"scheme": s, "cells": 512}) for s in ("roe", "ir-roe", "pvm-ifcp")])


def rough_lake(geometry: str, dtype: str, backend: str = "numpy", seed: int = 1, **params):
    """The lake-at-rest scenario with its bottom replaced by random lattice values."""
    sim = solvers.create("shallow-water", scenario="lake-at-rest", geometry=geometry,
                         dtype=dtype, backend=backend, **params)
    n = np.asarray(sim.fields()["H"]).shape
    H = np.random.default_rng(seed).integers(-300, 700, size=n) / 1024.0
    sim.set_field("H", H)
    sim.set_field("h", 1.0 + H)
    return sim


def drift(sim) -> tuple[float, float]:
    """(max |q|, max |η − 1|) of the current state."""
    f = {k: np.asarray(v.get() if hasattr(v, "get") else v, dtype=np.float64)
         for k, v in sim.fields().items()}
    return (float(max(np.abs(f["hu"]).max(), np.abs(f["hv"]).max())),
            float(np.abs(f["eta"] - 1).max()))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--until", type=float, default=100.0)
    ap.add_argument("--backend", default="numpy")
    a = ap.parse_args(argv)
    times = sorted({t for t in (1.0, 10.0, a.until) if t <= a.until})
    print("| geometry | settings | dtype | " + " | ".join(f"max \\|q\\| t = {t:g}" for t in times)
          + f" | max \\|η − 1\\| t = {a.until:g} | steps |")
    print("|---|---|---|" + "---|" * (len(times) + 2))
    for geometry, params in CASES:
        for dtype in ("float32", "float64"):
            sim = rough_lake(geometry, dtype, a.backend, **params)
            row = []
            for t in times:
                sim.advance(t)
                row.append(drift(sim)[0])
            label = ", ".join(f"{k}={v}" for k, v in params.items())
            print(f"| {geometry} | {label} | {dtype} | " + " | ".join(f"{q:.1e}" for q in row)
                  + f" | {drift(sim)[1]:.1e} | {sim.steps} |")


if __name__ == "__main__":
    main()
