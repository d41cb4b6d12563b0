"""The long fuzz run: python -m tests.fuzz [--cases N] [--seed S] [--workers W] [--json out.json]

Generates N cases (mesh files 40 %, checkpoints 30 %, initial conditions 30 %), runs them in
capped child processes (tests/fuzz/runner.py) and prints the table of outcomes per surface and
every failure."""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import checkpoints, inits, meshes, runner


def generate(total: int, seed: int, folder: Path) -> list[dict]:
    rng = np.random.default_rng(seed)
    n_mesh, n_ckpt = int(0.4 * total), int(0.3 * total)
    return (meshes.cases(rng, folder / "meshes", n_mesh)
            + checkpoints.cases(rng, folder / "checkpoints", n_ckpt)
            + inits.cases(rng, folder / "inits", total - n_mesh - n_ckpt))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz")
    ap.add_argument("--cases", type=int, default=12000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fuzz-cases-") as d:
        cases = generate(a.cases, a.seed, Path(d))
        gen = time.perf_counter() - t0
        results = runner.run(cases, workers=a.workers,
                             log=lambda m: print(m, file=sys.stderr, flush=True))
    print(runner.table(results))
    print(f"\n{len(results)} cases, seed {a.seed}, {a.workers} workers: generated in {gen:.0f} s, "
          f"run in {time.perf_counter() - t0 - gen:.0f} s")
    bad = runner.failures(results)
    for r in bad:
        print(f"FAIL {r['id']} {r['kind']} [{r['outcome']}] {r['detail']}")
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1, default=str))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
