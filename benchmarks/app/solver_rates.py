"""Steps per second of each model alone (no screen), the way the window's solver thread calls the
library (`sim.step(n)` with n doubling up to 4096 per call), on the public API (but see below).

    python -m benchmarks.app.solver_rates                       # launch-bound and 1024²/1M cases
    python -m benchmarks.app.solver_rates --cases launch --seconds 3 --json rates.json

Case groups: `launch` (sizes where the host's launches, not the GPU, set the pace: mean-curvature
256², shallow-water 256² order 3, gray-scott 20k vertices, heat-1d 2^12 classic) and `large`
(1024² / 1M: mean-curvature, shallow-water, gray-scott, two-layer, heat-1d 2^20). Each row is
the median of three timed windows after a warm-up.

Beyond the public API it imports `pdestudio.solvers.core.checks` for `--checks-after` alone:
the switch that puts a chunk's checks back after its wait, to measure what queueing them
ahead changes.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from pdestudio import solvers

CASES = {
    "launch": [("mean-curvature", {"nx": 256}), ("shallow-water", {"nx": 256, "order": 3}),
               ("gray-scott", {"vertices": 20_000}), ("heat-1d", {"nx": 2**12,
                                                                  "method": "classic"})],
    "large": [("mean-curvature", {"nx": 1024}), ("shallow-water", {"nx": 1024}),
              ("gray-scott", {"vertices": 1_000_000}), ("two-layer", {"cells": 1_024_000}),
              ("heat-1d", {"nx": 2**20})],
}


def synchronize() -> None:
    try:
        import cupy as cp
        cp.cuda.get_current_stream().synchronize()
    except Exception:  # noqa: BLE001  (no GPU: nothing to wait for)
        pass


def rate(sim, seconds: float) -> float:
    """Steps per second of `sim.step(n)` calls, n doubling up to 4096 (the solver thread's loop)."""
    n, steps, t0 = 1, 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        sim.step(n)
        steps += n
        n = min(2 * n, 4096)
    synchronize()
    return steps / (time.perf_counter() - t0)


def measure(model: str, params: dict, backend: str, dtype: str, seconds: float) -> dict:
    sim = solvers.create(model, backend=backend, dtype=dtype, **params)
    rate(sim, min(1.0, seconds))  # compile, capture graphs, warm the caches
    rates = [rate(sim, seconds) for _ in range(3)]
    return {"model": model, "params": params, "backend": sim.backend, "dtype": sim.dtype,
            "kernel": sim.kernel, "steps_per_s": statistics.median(rates),
            "windows": rates}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--label", default="", help="a tag printed with each row (e.g. a commit)")
    ap.add_argument("--checks-after", action="store_true",
                    help="the stepping's checks after each chunk's wait, as before 2026-11-27 "
                         "(solvers/core/checks.py AHEAD = False)")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    if a.checks_after:
        from pdestudio.solvers.core import checks
        checks.AHEAD = False
    rows = []
    for group in a.cases:
        for model, params in CASES[group]:
            r = measure(model, params, a.backend, a.dtype, a.seconds)
            r["group"], r["label"] = group, a.label
            rows.append(r)
            print(f"{a.label:>8} {group:>6} {model:>15} {json.dumps(params):>40} {r['backend']} "
                  f"{r['dtype']}: {r['steps_per_s']:10.1f} steps/s "
                  f"(windows {', '.join(f'{x:.0f}' for x in r['windows'])})", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
