"""Strong shocks and the carbuncle (issue 28, item 5): the hl/hr = 20 dam break (h = 10 | 0.5,
q = 0, flat bottom, walls) with the shock cure (`shock_fix`, riemann.py) off and on.

    python -m benchmarks.shallow_water.carbuncle [--quick] [--backend numpy]

Grid: a 10 × 1 strip, the dam at x = −4, a transverse perturbation hv = 1e-6 × N(0, 1) in every
cell; max |hv| at t = 0.1 … 0.5 (growth over the perturbation) and the spread of hu across the
strip, orders 1 (400 × 40) and 3 (200 × 20).
Triangles: the generated mesh scaled to a 10 × 1 strip (its triangles stretched 10:1, as a user
gets with Lx = 10, Ly = 1), the dam at x = 0, t = 0.4 (shock at x = 4.19, exact q = 27.2 behind
it, 29.3 at most in the rarefaction); per scheme and size: max |hv| within 0.5 of the exact shock,
∫|hv| dA, max hu, the L1 error ∫|h − h_exact| dA against the exact solution (exact.stoker) and its
EOC (cells × 4: the mesh size halves).

Beyond the public API it imports the exact dam-break solution (shallow_water.exact) its
errors are measured against.
"""
from __future__ import annotations

import argparse

import numpy as np

from pdestudio import solvers
from pdestudio.solvers.shallow_water.exact import stoker

HL, HR = 10.0, 0.5


def _fix(fix):
    """The shock_fix argument (None: the default, so that the tests run on older code too)."""
    return {} if fix is None else {"shock_fix": fix}


def grid_growth(order: int, fix, nx: int, ny: int, times, backend="numpy", pert=1e-6, seed=1):
    """[(t, max |hv|, max over x of the spread of hu across the strip)] of the grid strip."""
    sim = solvers.create("shallow-water", backend=backend, nx=nx, ny=ny, Lx=10.0,
                         Ly=10.0 * ny / nx, order=order, **_fix(fix))
    x = sim.mesh.x
    h = np.tile(np.where(x < -4.0, HL, HR), (ny, 1))
    for k, v in (("H", 0 * h), ("h", h), ("hu", 0 * h),
                 ("hv", pert * np.random.default_rng(seed).standard_normal(h.shape))):
        sim.set_field(k, v)
    out = []
    for t in times:
        sim.advance(t)
        f = {k: np.asarray(v.get() if hasattr(v, "get") else v) for k, v in sim.fields().items()}
        out.append((t, float(np.abs(f["hv"]).max()), float(np.ptp(f["hu"], axis=0).max())))
    return out


def tri_strip(scheme: str, cells: int, fix, t=0.4, backend="numpy"):
    """(max |hv| at the shock, ∫|hv| dA, max hu, L1 error of h) of the triangulated strip."""
    sim = solvers.create("shallow-water", backend=backend, geometry="triangles", cells=cells,
                         Lx=10.0, Ly=1.0, scheme=scheme, **_fix(fix))
    x = np.asarray(sim.mesh.points)[np.asarray(sim.mesh.cells)].mean(axis=1)[:, 0]
    h = np.where(x < 0, HL, HR)
    for k, v in (("H", 0 * h), ("h", h), ("hu", 0 * h), ("hv", 0 * h)):
        sim.set_field(k, v)
    sim.advance(t)
    f = {k: np.asarray(v.get() if hasattr(v, "get") else v) for k, v in sim.fields().items()}
    area = np.asarray(sim.mesh.cell_areas)
    shock = np.abs(x - 10.4659 * t) < 0.5
    return (float(np.abs(f["hv"][shock]).max()), float((area * np.abs(f["hv"])).sum()),
            float(f["hu"].max()), float((area * np.abs(f["h"] - stoker(x, t, HL, HR))).sum()))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes")
    ap.add_argument("--backend", default="numpy")
    a = ap.parse_args(argv)
    times = (0.1, 0.2, 0.3, 0.4, 0.5)
    print("Grid, hv = 1e-6 N(0, 1): max |hv| (max spread of hu across the strip)\n")
    print("| order | size | shock_fix | " + " | ".join(f"t = {t:g}" for t in times) + " |")
    print("|---|---|---|" + "---|" * len(times))
    for order, (nx, ny) in ((1, (400, 40)), (3, (200, 20))):
        if a.quick:
            nx, ny = nx // 2, ny // 2
        for fix in (False, True):
            r = grid_growth(order, fix, nx, ny, times, a.backend)
            print(f"| {order} | {nx} × {ny} | {'on' if fix else 'off'} | "
                  + " | ".join(f"{hv:.2e} ({du:.1e})" for _, hv, du in r) + " |")
    sizes = (1000, 4000) if a.quick else (1000, 4000, 16000)
    print("\nTriangles, 10 × 1 strip, t = 0.4: max |hv| at the shock / ∫|hv| / max hu / "
          "L1(h) (EOC)\n")
    print("| scheme | shock_fix | " + " | ".join(f"{c} cells" for c in sizes) + " |")
    print("|---|---|" + "---|" * len(sizes))
    for scheme in ("roe", "ir-roe", "pvm-ifcp"):
        for fix in (False, True):
            r = [tri_strip(scheme, c, fix, backend=a.backend) for c in sizes]
            cells = []
            for k, (hv, ihv, hu, l1) in enumerate(r):
                eoc = "" if k == 0 else f" ({np.log2(r[k - 1][3] / l1):.2f})"
                cells.append(f"{hv:.2f} / {ihv:.3f} / {hu:.1f} / {l1:.3f}{eoc}")
            print(f"| {scheme} | {'on' if fix else 'off'} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
