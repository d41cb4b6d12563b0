"""Rows per warp and register cap of the order-1 strip kernel (grid/kernels/grid.cu `sw_strip1`):
steps/s of each combination the window's way (`benchmarks.app.solver_rates.rate`, batched), float32
(or `--dtype float64`), the dam break with the carbuncle cure (the defaults).

    python -m benchmarks.shallow_water.strip_rows --sizes 512,1024 --rows 6,8,12,rule --caps 6,7,8

`rule` is the production choice (grid/fused.py `strip_rows` under 2^22 cells); each row prints
the rows, the registers, the blocks and the waves of resident blocks they make.

Beyond the public API it imports GridFused (its `tuning` and `rows` knobs, put on a simulation
through `Simulation.scheme`) and core's `resident_blocks`.
"""
from __future__ import annotations

import argparse
import json
import statistics

from pdestudio import solvers
from pdestudio.solvers.core.backend import resident_blocks
from pdestudio.solvers.shallow_water.grid.fused import GridFused

from ..app.solver_rates import rate


def measure(nx: int, rows: int | None, cap: int, seconds: float, dtype: str = "float32") -> dict:
    sim = solvers.create("shallow-water", backend="cupy", dtype=dtype, nx=nx)
    sim.scheme = GridFused(sim, tuning={"SW_STRIP_MINB": cap}, rows=rows)
    k = sim.scheme.k["sw_strip1"]
    blocks = sim.scheme.strip_grid[0] * sim.scheme.strip_grid[1]
    resident = resident_blocks(k, 128)
    rate(sim, min(0.3, seconds))
    rates = [rate(sim, seconds) for _ in range(3)]
    return {"nx": nx, "dtype": dtype, "cap": cap, "rows": sim.scheme.rows, "rule": rows is None,
            "registers": k.num_regs, "blocks": blocks, "waves": round(blocks / resident, 2),
            "steps_per_s": round(statistics.median(rates)), "windows": [round(r) for r in rates]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="512,1024", help="grid sides, comma-separated")
    ap.add_argument("--rows", default="8,rule", help="rows per warp, or 'rule'")
    ap.add_argument("--caps", default="6",
                    help="SW_STRIP_MINB values (blocks a SM; float32 only, float64 has none)")
    ap.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    ap.add_argument("--seconds", type=float, default=0.6, help="one timed window")
    ap.add_argument("--rounds", type=int, default=1, help="the whole list this many times")
    args = ap.parse_args(argv)
    for _ in range(args.rounds):
        for nx in (int(s) for s in args.sizes.split(",")):
            for cap in (int(c) for c in args.caps.split(",")):
                for r in args.rows.split(","):
                    print(json.dumps(measure(nx, None if r == "rule" else int(r), cap,
                                             args.seconds, args.dtype)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
