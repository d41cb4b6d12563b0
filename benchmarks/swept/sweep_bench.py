"""Time per step of classic, classic + CUDA graphs and swept, like the paper's Figs. 7-9.

    python -m benchmarks.swept.sweep_bench [--out DIR] [--budget SECONDS] [--sizes 11 ... 20 22]
                                           [--euler-scheme paper|muscl-hllc]

For heat-1d, ks-1d and euler-1d in float64, for 2^11 … 2^22 points and block sizes 32 … 1024,
it runs each method through the public API (`sim.step(N)`, the finiteness checks of the base class
included) after a warm-up (compilation, graph capture), times N steps (50,000 where the budget
allows, fewer where a step is slow, always whole swept cycles and graph replays; wall time with
the device synchronised, benchmarks/timing.py's cpu_time) and keeps the best block size per
(model, size, method), as the paper does. Writes DIR/sweep.json (every
measurement), DIR/sweep.md (the tables) and DIR/sweep_speedup.png (time per step and speed-ups).
The whole run keeps within --budget seconds: each model gets a share and sizes it cannot reach are
reported as not measured.
"""
from __future__ import annotations

import argparse
import json
import math
import time
from functools import partial
from pathlib import Path

import numpy as np

from pdestudio import solvers

from ..timing import cpu_time

MODELS = ("heat-1d", "ks-1d", "euler-1d")
METHODS = ("classic", "classic-graph", "swept")
BLOCKS = (32, 64, 128, 256, 512, 1024)
SHARE = {"heat-1d": 0.3, "ks-1d": 0.3, "euler-1d": 0.4}
# Model parameters besides the size: Euler times the paper's scheme (the swept comparison of
# docs/MODELS.md [P3]) unless --euler-scheme names the default muscl-hllc.
PARAMS = {"euler-1d": {"scheme": "paper"}}
TARGET_STEPS = 53248  # ≈ the paper's 50,000, a multiple of every swept cycle and graph length
UNIT = 1024  # a multiple of every swept cycle (≤ 512 steps) and graph length (256)


def _steps(sim, k: int) -> None:
    """k steps through the public API, then wait for the device."""
    import cupy as cp
    sim.step(k)
    cp.cuda.get_current_stream().synchronize()


def measure(model: str, n: int, method: str, block: int, target_s: float):
    """Seconds per step of `model` with nx = n, or None where the configuration is refused."""
    import cupy as cp
    try:
        sim = solvers.create(model, backend="cupy", dtype="float64", nx=n, method=method,
                             block=block, **PARAMS.get(model, {}))
    except solvers.ParameterError as e:
        return None, str(e)
    # one warm-up call (compilation, graph capture, memory pools), then one timed call
    est = cpu_time(partial(_steps, sim, UNIT), repeat=1, warmup=1) / UNIT
    steps = int(min(TARGET_STEPS, max(UNIT, target_s / est)) // UNIT * UNIT)
    per_step = cpu_time(partial(_steps, sim, steps), repeat=1, warmup=0) / steps
    ok = all(np.isfinite(v).all() for v in sim.fields().values())
    del sim
    cp.get_default_memory_pool().free_all_blocks()
    return (per_step, steps, ok), ""


def run(out: Path, budget: float, sizes, models=MODELS, rows=None, notes=None, log=print):
    gpu_ok, device = solvers.gpu_status()
    if not gpu_ok:
        raise SystemExit(f"no GPU: {device}")
    rows, notes = list(rows or []), list(notes or [])
    t_start = time.perf_counter()
    for model in models:
        t_model = time.perf_counter()
        share = SHARE[model] / sum(SHARE[m] for m in models) * budget
        for n in sizes:
            spent = time.perf_counter() - t_model
            if spent > share:
                notes.append(f"{model}: sizes from 2^{int(math.log2(n))} not measured "
                             f"(its {share:.0f} s share of the budget was spent)")
                log("# " + notes[-1])
                break
            per_conf = min(0.05, (share - spent) / (len(METHODS) * len(BLOCKS) * 3))
            for method in METHODS:
                for block in BLOCKS:
                    if block > n:
                        continue
                    res, why = measure(model, n, method, block, per_conf)
                    if res is None:
                        log(f"# {model} n={n} {method} block={block}: refused: {why[:120]}")
                        continue
                    per_step, steps, ok = res
                    rows.append({"model": model, "n": n, "method": method, "block": block,
                                 "us_per_step": per_step * 1e6, "steps": steps, "finite": ok})
                    log(f"{model:9s} n=2^{int(math.log2(n)):<2d} {method:13s} block={block:<4d} "
                        f"{per_step * 1e6:9.3f} us/step ({steps} steps){'' if ok else ' NaN!'}")
            (out / "sweep.json").write_text(json.dumps(
                {"device": device, "date": time.strftime("%Y-%m-%d"), "rows": rows,
                 "notes": notes}, indent=1))
    log(f"# total {time.perf_counter() - t_start:.0f} s")
    best = best_rows(rows)
    (out / "sweep.md").write_text(tables(best, device, notes))
    try:
        plot(best, device, out / "sweep_speedup.png")
    except Exception as e:  # the tables and the JSON stand without the figure
        log(f"# plot failed: {type(e).__name__}: {e}")
    return rows, best


def best_rows(rows):
    """The best block size per (model, n, method)."""
    best = {}
    for r in rows:
        key = (r["model"], r["n"], r["method"])
        if r["finite"] and (key not in best or r["us_per_step"] < best[key]["us_per_step"]):
            best[key] = r
    return best


def tables(best, device, notes) -> str:
    lines = [f"device: {device}; float64; time per step in µs, best block size in brackets; "
             "speed-up = classic time / method time", ""]
    for model in MODELS:
        sizes = sorted({k[1] for k in best if k[0] == model})
        if not sizes:
            continue
        lines += [f"**{model}**", "",
                  "| points | classic | classic-graph | swept | swept × classic | "
                  "swept × graph | graph × classic |", "|---|---|---|---|---|---|---|"]
        for n in sizes:
            c, g, s = (best.get((model, n, m)) for m in METHODS)
            cell = lambda r: "-" if r is None else f"{r['us_per_step']:.3g} [{r['block']}]"  # noqa
            ratio = lambda a, b: "-" if a is None or b is None else \
                f"{a['us_per_step'] / b['us_per_step']:.2f}"  # noqa: E731
            lines.append(f"| 2^{int(math.log2(n))} | {cell(c)} | {cell(g)} | {cell(s)} | "
                         f"{ratio(c, s)} | {ratio(g, s)} | {ratio(c, g)} |")
        lines.append("")
    lines += [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


def plot(best, device, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(2, 3, figsize=(14, 7.5), sharex=True)
    style = {"classic": ("C0", "o"), "classic-graph": ("C1", "s"), "swept": ("C2", "^")}
    for j, model in enumerate(MODELS):
        sizes = sorted({k[1] for k in best if k[0] == model})
        for m in METHODS:
            pts = [(n, best[(model, n, m)]["us_per_step"]) for n in sizes if (model, n, m) in best]
            if pts:
                x, y = zip(*pts)
                ax[0, j].loglog(x, y, marker=style[m][1], color=style[m][0], label=m)
        for (a, b), lab, col in ((("classic", "swept"), "swept vs classic", "C2"),
                                 (("classic-graph", "swept"), "swept vs classic-graph", "C3"),
                                 (("classic", "classic-graph"), "classic-graph vs classic", "C1")):
            pts = [(n, best[(model, n, a)]["us_per_step"] / best[(model, n, b)]["us_per_step"])
                   for n in sizes if (model, n, a) in best and (model, n, b) in best]
            if pts:
                x, y = zip(*pts)
                ax[1, j].semilogx(x, y, marker="o", color=col, label=lab, base=2)
        ax[1, j].axhline(1, color="k", lw=0.8)
        ax[0, j].set_title(model)
        ax[1, j].set_xlabel("grid points")
        ax[0, j].grid(True, which="both", alpha=0.3)
        ax[1, j].grid(True, which="both", alpha=0.3)
        ax[1, j].set_yscale("log")
    ax[0, 0].set_ylabel("time per step [µs] (best block)")
    ax[1, 0].set_ylabel("speed-up")
    ax[0, 0].legend()
    ax[1, 0].legend()
    fig.suptitle(f"1D swept rule vs classic (float64, {device})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("."))
    ap.add_argument("--budget", type=float, default=200.0, help="seconds for the whole run")
    ap.add_argument("--sizes", type=int, nargs="+", default=list(range(11, 21)) + [22],
                    help="log2 of the grid sizes")
    ap.add_argument("--from-json", type=Path, default=None,
                    help="only redraw the tables and the plot from an earlier sweep.json")
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    ap.add_argument("--merge", type=Path, default=None,
                    help="an earlier sweep.json whose rows and notes this run extends")
    ap.add_argument("--euler-scheme", default="paper", choices=("paper", "muscl-hllc"),
                    help="euler-1d's scheme (paper: seed 003's, as the swept comparison)")
    a = ap.parse_args(argv)
    PARAMS["euler-1d"] = {"scheme": a.euler_scheme}
    a.out.mkdir(parents=True, exist_ok=True)
    if a.from_json:
        d = json.loads(a.from_json.read_text())
        best = best_rows(d["rows"])
        (a.out / "sweep.md").write_text(tables(best, d["device"], d["notes"]))
        plot(best, d["device"], a.out / "sweep_speedup.png")
        return
    rows = notes = None
    if a.merge:
        d = json.loads(a.merge.read_text())
        redo = lambda r: r["model"] in a.models and r["n"] in [2**k for k in a.sizes]  # noqa
        rows = [r for r in d["rows"] if not redo(r)]
        notes = [t for t in d["notes"] if not t.startswith(tuple(a.models))]
    run(a.out, a.budget, [2**k for k in a.sizes], a.models, rows, notes)


if __name__ == "__main__":
    main()
