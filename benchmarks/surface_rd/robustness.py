"""Chemotaxis on users' meshes (issue 16): runs `chemotaxis` from the seeded perturbed uniform
state to t = 200 on the sample snake, generated rectangles and tubes of several sizes and meshes
nobody tuned for (a jittered torus, a random Delaunay patch on a curved sheet, an icosphere), with
the positive scheme and, for contrast, the paper's, and writes a Markdown table: vertices, edges of
negative cotangent weight, minimum n over every step, final time (or the divergence time), steps,
steps the positivity bound shortened, wall time. NumPy float64 on the CPU.

    python -m benchmarks.surface_rd.robustness                  # every mesh, both schemes
    python -m benchmarks.surface_rd.robustness --meshes snake torus --schemes positive
    python -m benchmarks.surface_rd.robustness --rough     # conservation and positivity table

The meshes (MESHES: name -> builder) are also what tests/solvers/surface_rd/test_positive.py runs.

Beyond the public API it imports mesh generators and readers (solvers.mesh) to build hostile meshes, and the positive scheme's edge operators (surface_rd.reference) to check its rates on them.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from pdestudio import solvers
from pdestudio.solvers import SimulationDiverged
from pdestudio.solvers.mesh import TriangleMesh, icosphere, read_mesh, rectangle, tube, write_mesh
from pdestudio.solvers.surface_rd.reference import EdgeOperators, positive_rates

ROOT = Path(__file__).resolve().parents[2]
SNAKE = ROOT / "resources" / "meshes" / "snake.ply"


def jittered_torus(nu: int = 66, nv: int = 22, R: float = 9.0, r: float = 3.0,
                   jitter: float = 0.3, seed: int = 7) -> TriangleMesh:
    """A closed torus from an nu × nv parameter grid, every vertex moved by up to `jitter` grid
    cells in both parameters, each quad cut along a random diagonal."""
    rng = np.random.default_rng(seed)
    u = (np.arange(nu)[:, None] + jitter * rng.uniform(-1, 1, (nu, nv))) * 2 * np.pi / nu
    v = (np.arange(nv)[None, :] + jitter * rng.uniform(-1, 1, (nu, nv))) * 2 * np.pi / nv
    pts = np.stack([(R + r * np.cos(v)) * np.cos(u), (R + r * np.cos(v)) * np.sin(u),
                    r * np.sin(v)], axis=-1).reshape(-1, 3)
    i, j = np.meshgrid(np.arange(nu), np.arange(nv), indexing="ij")
    a, b = i * nv + j, ((i + 1) % nu) * nv + j
    c, d = ((i + 1) % nu) * nv + (j + 1) % nv, i * nv + (j + 1) % nv
    flip = rng.random((nu, nv)) < 0.5
    t1 = np.where(flip[..., None], np.stack([a, b, d], -1), np.stack([a, b, c], -1))
    t2 = np.where(flip[..., None], np.stack([b, c, d], -1), np.stack([a, c, d], -1))
    return TriangleMesh(pts, np.concatenate([t1.reshape(-1, 3), t2.reshape(-1, 3)]))


def delaunay_patch(n: int = 2500, width: float = 36.0, height: float = 24.0,
                   seed: int = 11) -> TriangleMesh:
    """A mesher's kind of mesh: random points on a rectangle kept at least 0.6 mean spacings
    apart (dart throwing) plus evenly spaced points on its edges, Delaunay-triangulated and
    lifted onto the curved sheet z = 2 sin(x/5) cos(y/4): an open, irregular surface mesh."""
    from scipy.spatial import Delaunay
    rng = np.random.default_rng(seed)
    h = np.sqrt(width * height / n)
    rmin = 0.6 * h
    bx = np.linspace(0, width, int(width / h) + 1)
    by = np.linspace(0, height, int(height / h) + 1)[1:-1]
    pts = [*np.column_stack([bx, 0 * bx]), *np.column_stack([bx, 0 * bx + height]),
           *np.column_stack([0 * by, by]), *np.column_stack([0 * by + width, by])]
    cell = {}
    for p in pts:
        cell.setdefault((int(p[0] // rmin), int(p[1] // rmin)), []).append(p)
    for p in rng.uniform(0, 1, (8 * n, 2)) * [width, height]:
        if len(pts) >= n:
            break
        cx, cy = int(p[0] // rmin), int(p[1] // rmin)
        near = (q for dx in (-1, 0, 1) for dy in (-1, 0, 1)
                for q in cell.get((cx + dx, cy + dy), ()))
        if all((p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 >= rmin ** 2 for q in near):
            pts.append(p)
            cell.setdefault((cx, cy), []).append(p)
    xy = np.array(pts)
    z = 2 * np.sin(xy[:, 0] / 5) * np.cos(xy[:, 1] / 4)
    return TriangleMesh(np.column_stack([xy, z]), Delaunay(xy).simplices)


def sphere(level: int = 4, radius: float = 10.0) -> TriangleMesh:
    m = icosphere(level)
    return TriangleMesh(radius * m.points, m.cells)


MESHES = {
    "snake": lambda: str(SNAKE),
    "rectangle-1k": lambda: rectangle(1024),
    "rectangle-5k": lambda: rectangle(5000),
    "rectangle-20k": lambda: rectangle(20000),
    "tube-2k": lambda: tube(2000),
    "tube-10k": lambda: tube(10000),
    "torus": jittered_torus,
    "delaunay": delaunay_patch,
    "icosphere": sphere,
}


# Rough data on small meshes: one evaluation of the positive scheme's rates
ROUGH_MESHES = {
    "icosphere r = 5 (closed)": lambda: TriangleMesh(5 * icosphere(3).points, icosphere(3).cells),
    "jittered torus (closed)": lambda: jittered_torus(30, 12),
    "tube (open)": lambda: tube(1500),
    "snake.ply (open)": lambda: read_mesh(SNAKE),
}
PARAMS = dict(D=0.25, alpha=13.0, s=1.0, r=1.522, N=1.0)  # the model's defaults


def rough(n_v: int, seed: int = 0):
    """Densities in [0, 2] with a fifth of them exactly 0, chemoattractant in [0, 1]: steep
    gradients everywhere, so the positivity bound is what limits the step."""
    rng = np.random.default_rng(seed)
    n = rng.uniform(0, 2, n_v)
    n[rng.random(n_v) < 0.2] = 0.0
    return n, rng.uniform(0, 1, n_v)


def rough_row(name: str, mesh: TriangleMesh) -> str:
    """|Σ A (∂n/∂t − logistic)| / Σ A |…| (seed 0) and min n after one step of f/max λ
    (seed 1) for f = 1, 0.9, 1.5, 2."""
    eo, p = EdgeOperators(mesh, np, np.float64), PARAMS
    n, c = rough(mesh.n_vertices)
    dn, _, _ = positive_rates(n, c, eo, p, np)
    tr = mesh.mixed_areas * (dn - p["s"] * p["r"] * n * (p["N"] - n))
    n, c = rough(mesh.n_vertices, seed=1)
    dn, _, lam = positive_rates(n, c, eo, p, np)
    mins = [(n + f / lam.max() * dn).min() for f in (1.0, 0.9, 1.5, 2.0)]
    return (f"| {name} | {mesh.n_vertices} | {int((mesh.cotangent_weights < 0).sum())} | "
            f"{abs(tr.sum()) / abs(tr).sum():.2g} | " + " | ".join(f"{m:.2g}" for m in mins)
            + " |")


class Watch:
    """Wraps a scheme: records min n after every step, when n first went negative, and how often
    the positivity bound made the step shorter than the model's δt (the base class then steps it
    one step at a time)."""

    def __init__(self, scheme, sim):
        self.inner, self.sim = scheme, sim
        self.min_n = float(sim.state["cells"].min())
        self.first_negative = None
        self.shortened = 0

    def step(self, t, dt_limit):
        dt = self.inner.step(t, dt_limit)
        low = float(self.sim.state["cells"].min())
        if low < 0 and self.first_negative is None:
            self.first_negative = t + dt
        if np.isfinite(low):
            self.min_n = min(self.min_n, low)
        if dt < self.sim.dt * (1 - 1e-12) and (dt_limit is None or dt < dt_limit):
            self.shortened += 1
        return dt

    def invalidate(self):
        self.inner.invalidate()


def create(name: str, tmp: Path, **params):
    """A chemotaxis simulation on mesh `name` (generated meshes go through a PLY file, as a
    user's would)."""
    m = MESHES[name]()
    if isinstance(m, TriangleMesh):
        path = tmp / f"{name}.ply"
        if not path.exists():
            write_mesh(path, m)
        m = str(path)
    return solvers.create("chemotaxis", backend="numpy", scenario="file", mesh=m, **params)


def run(name: str, scheme: str, tmp: Path, t_end: float = 200.0) -> dict:
    sim = create(name, tmp, scheme=scheme)
    watch = Watch(sim.scheme, sim)
    sim.scheme = watch
    t0 = time.perf_counter()
    diverged = False
    try:
        with np.errstate(all="ignore"):  # the paper's scheme overflows on its way to diverging
            sim.advance(t_end)
    except SimulationDiverged:
        diverged = True
    wall = time.perf_counter() - t0
    n = sim.fields()["cells"]
    mesh = sim.mesh
    return {"mesh": name, "scheme": scheme, "vertices": mesh.n_vertices,
            "closed": mesh.is_closed, "negative": int((mesh.cotangent_weights < 0).sum()),
            "min_n": watch.min_n, "negative_t": watch.first_negative, "t": sim.t,
            "diverged": diverged, "steps": sim.steps,
            "shortened": watch.shortened, "var": float(n.var()), "max_n": float(n.max()),
            "wall": wall}


def table(rows: list[dict]) -> str:
    out = ["| mesh | vertices | closed | w < 0 edges | scheme | min n over the run (first n < 0) "
           "| final t | steps (shortened) | var n, max n at the end | wall s |",
           "|---|---:|---|---:|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        t = f"{r['t']:.1f} (diverged)" if r["diverged"] else f"{r['t']:.0f}"
        low = f"{r['min_n']:.3g}" if r["negative_t"] is None else \
            f"< 0 from t = {r['negative_t']:.1f}"
        end = "–" if r["diverged"] else f"{r['var']:.3g}, {r['max_n']:.3g}"
        out.append(f"| {r['mesh']} | {r['vertices']} | {'yes' if r['closed'] else 'no'} | "
                   f"{r['negative']} | {r['scheme']} | {low} | {t} | "
                   f"{r['steps']} ({r['shortened']}) | {end} | {r['wall']:.1f} |")
    return "\n".join(out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--meshes", nargs="*", default=list(MESHES), choices=list(MESHES))
    ap.add_argument("--schemes", nargs="*", default=["positive", "paper"],
                    choices=["positive", "paper"])
    ap.add_argument("--t-end", type=float, default=200.0)
    ap.add_argument("--rough", action="store_true", help="only the table of conservation and "
                    "positivity on rough data (ROUGH_MESHES)")
    a = ap.parse_args(argv)
    if a.rough:
        print("| mesh | vertices | w < 0 edges | \\|Σ A (∂n/∂t − logistic)\\| / Σ A \\|…\\| | "
              "min n⁺ at δt = 1/max λ | 0.9/max λ | 1.5/max λ | 2/max λ |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for name, make in ROUGH_MESHES.items():
            print(rough_row(name, make()))
        return
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for name in a.meshes:
            for scheme in a.schemes:
                rows.append(run(name, scheme, Path(d), a.t_end))
                print(table(rows[-1:]).splitlines()[-1], flush=True)
    print()
    print(table(rows))


if __name__ == "__main__":
    main()
