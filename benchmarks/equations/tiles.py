"""Tile configurations of the GPU's tiled grid path for model files (docs/EQUATIONS.md, "GPU"):
steps/s of the Brusselator and the Gray–Scott file on grids and intervals, for each value of
PDESTUDIO_EQ_TILE ("0": one launch a step in CUDA graphs; "": what tile_plan picks;
"tile,halo[,threads]": that tiling). Each simulation is made after the variable is set (the plan
is chosen when the scheme is built). Reads `sim.scheme.tiles` (not public API) only to mark
which runs were tiled ("T") and which were not ("-").

    python -m benchmarks.equations.tiles                       # every case, the default configs
    python -m benchmarks.equations.tiles --configs "0;;32,8,512" --cases "bruss 512^2 f64"
"""
from __future__ import annotations

import argparse
import os

from pdestudio import solvers

from .bench import BRUSSELATOR, GRAY_SCOTT, steps_per_s

CONFIGS = ["0", "", "16,8,512", "16,4,512", "32,8,512", "32,8,1024"]


def cases():
    bruss, gs = solvers.define(BRUSSELATOR), solvers.define(GRAY_SCOTT)
    grid = {"kind": "rectangle", "boundary": "periodic", "dt": 0.5}
    return [
        ("bruss 256^2 f64", bruss, dict(nx=256, Lx=256.0, dtype="float64"), 8192),
        ("bruss 256^2 f32", bruss, dict(nx=256, Lx=256.0, dtype="float32"), 8192),
        ("bruss 256^2 rk4 f64", bruss, dict(nx=256, Lx=256.0, dtype="float64",
                                             integrator="rk4"), 4096),
        ("bruss 512^2 f64", bruss, dict(nx=512, Lx=512.0, dtype="float64"), 4096),
        ("bruss 512^2 f32", bruss, dict(nx=512, Lx=512.0, dtype="float32"), 4096),
        ("bruss 1024^2 f64", bruss, dict(nx=1024, Lx=1024.0, dtype="float64"), 1024),
        ("gs grid 2048^2 f32", gs, dict(grid, nx=2048, Lx=2048.0, dtype="float32"), 512),
        ("gs grid 2048^2 f64", gs, dict(grid, nx=2048, Lx=2048.0, dtype="float64"), 512),
        ("bruss 1D 2^16 f64", bruss, dict(kind="interval", nx=65536, L=65536.0,
                                          dtype="float64"), 8192),
        ("bruss 1D 2^18 f64", bruss, dict(kind="interval", nx=262144, L=262144.0,
                                          dtype="float64"), 4096),
    ]


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--configs", default=";".join(CONFIGS), help="';'-separated")
    ap.add_argument("--cases", default="", help="';'-separated names (default: all)")
    ap.add_argument("--backend", default="cupy")
    a = ap.parse_args(argv)
    only = set(a.cases.split(";")) - {""}
    out = []
    saved = os.environ.get("PDESTUDIO_EQ_TILE")
    try:
        for name, mid, kw, n in cases():
            if only and name not in only:
                continue
            cells = []
            for cfg in a.configs.split(";"):
                if cfg:
                    os.environ["PDESTUDIO_EQ_TILE"] = cfg
                else:
                    os.environ.pop("PDESTUDIO_EQ_TILE", None)
                sim = solvers.create(mid, backend=a.backend, **kw)
                tiled = getattr(getattr(sim, "scheme", None), "tiles", None) is not None
                rate = steps_per_s(sim, n)
                cells.append(f"[{cfg or 'default'}]{'T' if tiled else '-'} {rate:.4g}")
                out.append({"case": name, "config": cfg, "tiled": tiled, "steps_s": rate})
            print(name.ljust(22), " | ".join(cells), flush=True)
    finally:
        if saved is None:
            os.environ.pop("PDESTUDIO_EQ_TILE", None)
        else:
            os.environ["PDESTUDIO_EQ_TILE"] = saved
    return out


if __name__ == "__main__":
    main()
