"""Benchmarks of model files (docs/EQUATIONS.md; issue 26's goals), through the public API only:

  gs     Gray–Scott as a model file against the built-in fused `gray-scott` on the same surface
         ("rectangle" of --vertices vertices, 1M by default), and the model file alone on an
         nx² periodic grid (2048² by default): steps/s, float32 and float64
  bruss  the Brusselator on an n² periodic grid (256² by default): pdestudio's steps/s on the
         chosen backend and py-pde's (numba, explicit Euler, the same step) when it is installed
  imex   Schnakenberg (the gallery's model file on the "rectangle" surface) and the built-in
         chemotaxis on --imex-vertices vertices (200,000 by default) to --imex-t (200): the
         explicit run, the IMEX run at 20× its step (capped by the IMEX bound; --imex-factor
         and --imex-integrator take lists), and the relative L2 difference (mixed areas) of the
         IMEX run against an explicit run with half the step; with it how sensitive the
         pattern is (the explicit run against one from an initial state perturbed by 1e-10),
         the relative difference of the value distributions (area-weighted quantiles) and the
         local maxima (peaks: IMEX/explicit/half-step)

    python -m benchmarks.equations.bench --backend cupy              # the device rows
    python -m benchmarks.equations.bench --backend numpy --only bruss
    python -m benchmarks.equations.bench --quick                     # small sizes, seconds

Each row prints one line; wall times include the host synchronisation of the last step.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from pdestudio import solvers

MODELS = Path(__file__).resolve().parents[2] / "resources" / "models"
IMEX_INTEGRATORS = ("imex", "imex1", "imex3", "imex443")  # a model file's IMEX integrators

GRAY_SCOTT = {
    "model": {"name": "bench-gray-scott"},
    "equations": {"u": "Du*lap(u) - u*v^2 + F*(1 - u)", "v": "Dv*lap(v) + u*v^2 - (F + k)*v"},
    "parameters": {"Du": 0.02, "Dv": 0.01, "F": 0.037, "k": 0.06},
    "initial": {"u": "1 - 0.5*heaviside(2 - r)", "v": "0.25*heaviside(2 - r)"},
    "domain": {"kind": "mesh", "surface": "rectangle", "vertices": 20_000,
               "boundary": "natural"},
}
BRUSSELATOR = {
    "model": {"name": "bench-brusselator"},
    "equations": {"u": "Du*lap(u) + a - (b + 1)*u + u^2*v", "v": "Dv*lap(v) + b*u - u^2*v"},
    "parameters": {"a": 1.0, "b": 3.0, "Du": 1.0, "Dv": 8.0},
    "initial": {"u": "a + 0.01*noise", "v": "b/a"},
    "domain": {"kind": "rectangle", "nx": 256, "Lx": 256.0, "boundary": "periodic"},
}


def _sync(sim) -> None:
    sim.quantities()  # one device-to-host read: the queued steps are done


REPEAT = 3  # timed repeats; the best counts (shared machines are noisy)


def steps_per_s(sim, steps: int, warmup: int = 3) -> float:
    sim.step(warmup)
    _sync(sim)
    best = float("inf")
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        sim.step(steps)
        _sync(sim)
        best = min(best, time.perf_counter() - t0)
    return steps / best


def row(name: str, **values) -> dict:
    print(name.ljust(44) + "  ".join(f"{k}={_fmt(v)}" for k, v in values.items()), flush=True)
    return {"row": name, **values}


def _fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


# ---- (a) Gray–Scott: generated against hand-written -----------------------------------------
def gray_scott(backend, dtypes, vertices, nx, steps) -> list[dict]:
    out = []
    mid = solvers.define(GRAY_SCOTT)
    for dtype in dtypes:
        # the built-in's own step (half its stability bound on this mesh; a fixed 0.5 is above
        # the bound at 1M vertices), and the same step for the model file
        builtin = solvers.create("gray-scott", backend=backend, dtype=dtype, vertices=vertices)
        mine = solvers.create(mid, backend=backend, dtype=dtype, vertices=vertices,
                              dt=builtin.dt)
        a, b = steps_per_s(builtin, steps), steps_per_s(mine, steps)
        out.append(row(f"gs surface {vertices} {backend} {dtype}", builtin_steps_s=a,
                       file_steps_s=b, ratio=b / a, kernel=mine.kernel))
        grid = solvers.create(mid, backend=backend, dtype=dtype, kind="rectangle", nx=nx,
                              Lx=float(nx), boundary="periodic", dt=0.5)
        out.append(row(f"gs grid {nx}^2 {backend} {dtype}",
                       file_steps_s=steps_per_s(grid, steps), kernel=grid.kernel))
    return out


# ---- (b) the Brusselator against py-pde -------------------------------------------------------
def pypde_steps_per_s(n: int, dt: float, steps: int):
    """py-pde's steps/s of the same system (explicit Euler, fixed dt, numba), or None."""
    try:
        import pde
    except ImportError:
        return None
    grid = pde.CartesianGrid([[0, n], [0, n]], [n, n], periodic=True)
    rng = np.random.default_rng(0)
    u = pde.ScalarField(grid, 1.0 + 0.01 * rng.uniform(-1, 1, (n, n)))
    v = pde.ScalarField(grid, 3.0)
    eq = pde.PDE({"u": "Du*laplace(u) + a - (b + 1)*u + u**2*v",
                  "v": "Dv*laplace(v) + b*u - u**2*v"},
                 consts={"a": 1.0, "b": 3.0, "Du": 1.0, "Dv": 8.0})
    state = pde.FieldCollection([u, v])
    solver = pde.EulerSolver(eq, backend="numba", adaptive=False)
    stepper = solver.make_stepper(state, dt=dt)  # compiles the right-hand side with numba
    t = stepper(state, 0.0, 20.5 * dt)  # warm-up past the first calls' set-up
    best = float("inf")
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        t = stepper(state, t, t + steps * dt)
        best = min(best, time.perf_counter() - t0)
    return steps / best


def brusselator(backend, n, steps, peer=True, dtypes=("float64",)) -> list[dict]:
    """A row per path: the default (fused on the GPU; on the CPU the generated kernels
    compiled for it, where a compiler works) and kernel=array (the NumPy or CuPy array path),
    in float64 (py-pde's type) and any other `dtypes` (the fused path only)."""
    mid = solvers.define(BRUSSELATOR)
    sims = [solvers.create(mid, backend=backend, nx=n, Lx=float(n), kernel=k)
            for k in ("fused", "array")]
    sims += [solvers.create(mid, backend=backend, nx=n, Lx=float(n), dtype=d)
             for d in dtypes if d != "float64"]
    ours = [steps_per_s(sim, steps) for sim in sims]
    theirs = pypde_steps_per_s(n, sims[0].dt, steps) if peer else None
    out = []
    for sim, rate in zip(sims, ours):
        values = {"pdestudio_steps_s": rate, "dt": sim.dt, "kernel": sim.kernel,
                  "omp_threads": os.environ.get("OMP_NUM_THREADS", "all")}
        tiles = getattr(getattr(sim, "scheme", None), "tiles", None)
        if tiles is not None:  # the GPU's tiled path (several steps a launch)
            values["tiled"] = f"{tiles.tile}+{tiles.halo}x{tiles.steps}steps"
        if theirs is None:
            values["py_pde"] = "not installed" if peer else "skipped"
        else:
            values.update(py_pde_steps_s=theirs, ratio=rate / theirs)
        out.append(row(f"bruss {n}^2 {backend} {sim.kernel} {sim.dtype}", **values))
    return out


# ---- (c) IMEX against explicit ----------------------------------------------------------------
def _rel_l2(area, a, b) -> float:
    fa, fb = a.fields(), b.fields()
    return max(float(np.sqrt((area * (fa[k] - fb[k]) ** 2).sum() / (area * fb[k] ** 2).sum()))
               for k in fb if k in b.state)


SENSITIVITY = 1e-10  # relative perturbation of the initial state of the sensitivity run


def _perturb(sim, eps: float, seed: int = 1) -> None:
    """Every state field times (1 + eps·uniform(−1, 1))."""
    rng = np.random.default_rng(seed)
    for k in list(sim.state):
        v = sim.fields()[k]
        sim.set_field(k, v * (1 + eps * rng.uniform(-1, 1, v.shape)))


def _quantiles(area, f, q: int = 1001) -> np.ndarray:
    """The area-weighted quantile function of f at q levels: the distribution of the values."""
    order = np.argsort(f)
    cw = np.cumsum(area[order])
    return np.interp(np.linspace(0, 1, q), cw / cw[-1], f[order])


def _dist_rel(area, a, b) -> float:
    """The relative L2 difference of a's and b's value distributions (_quantiles), the largest
    over the state's fields: where the runs sit in different places of a chaotic pattern, how
    far its statistics (the aggregates' heights, the plateaus' areas) differ."""
    fa, fb = a.fields(), b.fields()
    out = 0.0
    for k in b.state:
        qa, qb = _quantiles(area, fa[k]), _quantiles(area, fb[k])
        out = max(out, float(np.linalg.norm(qa - qb) / np.linalg.norm(qb)))
    return out


def _peaks(sim) -> int:
    """Local maxima above the mean of the first state field on the mesh graph (spots,
    aggregates)."""
    f = sim.fields()[next(iter(sim.state))]
    indptr, nbr = (np.asarray(a) for a in sim.mesh.vertex_vertex)
    rows = np.repeat(np.arange(len(f)), np.diff(indptr))
    top = np.full(len(f), -np.inf)
    np.maximum.at(top, rows, f[nbr])
    return int(((f > top) & (f > f.mean())).sum())


def _run(sim, t_end, what="") -> tuple[int, float]:
    t0 = time.perf_counter()
    sim.advance(t_end)
    _sync(sim)
    wall = time.perf_counter() - t0
    print(f"  ({what}: {sim.steps} steps in {wall:.3g} s)", file=sys.stderr, flush=True)
    return sim.steps, wall


def _imex_path(scheme) -> str:
    """How the IMEX run solved: the lattice step on the device, or why not; the built-in
    models' solver (cosine transforms on a lattice, else CG)."""
    if hasattr(scheme, "lattice_why"):
        return scheme.lattice_why or "lattice kernels"
    solver = getattr(scheme, "solver", None)
    return "lattice solve" if getattr(solver, "lattice", None) is not None else "cg"


WARM_STEPS = 64  # a CUDA graph's steps (the graphs themselves are captured in the timed run)


def imex(backend, vertices, t_end, factor=20.0, which="schnakenberg,chemotaxis",
         integrator="imex") -> list[dict]:
    """The IMEX rows: `factor` and the model file's `integrator` may be comma-separated lists
    (every pair is run against the same explicit and half-step runs)."""
    out = []
    factors = [float(f) for f in str(factor).split(",")]
    integrators = str(integrator).split(",")
    schnak = solvers.define(MODELS / "schnakenberg.toml")
    # the gallery's Schnakenberg has wavelength ≈ 15 on its 100 × 100 grid; on the 32 × 16 mesh
    # rectangle its diffusivities scaled by 1/40 give the same pattern √40 times smaller
    # (wavelength ≈ 2.4: about 13 × 7 spots), resolved by 200,000 vertices (h ≈ 0.05)
    cases = (("schnakenberg", schnak, {"kind": "mesh", "surface": "rectangle",
                                       "vertices": vertices, "boundary": "natural",
                                       "Du": 0.025, "Dv": 1.0}),
             ("chemotaxis", "chemotaxis", {"vertices": vertices}))
    for name, model, kw in cases:
        if name not in which.split(","):
            continue
        explicit = solvers.create(model, backend=backend, **kw)
        half = solvers.create(model, backend=backend, dt=explicit.dt / 2, **kw)
        probe = solvers.create(model, backend=backend, integrator="imex",
                               dt=explicit.dt, **kw)
        warm = solvers.create(model, backend=backend, **kw)
        warm.advance(min(t_end, 2 * WARM_STEPS * warm.dt))  # the explicit kernels compiled
        _sync(warm)
        n_exp, w_exp = _run(explicit, t_end, f"{name} explicit dt={explicit.dt:.3g}")
        _run(half, t_end, f"{name} explicit dt/2")
        # the sensitivity run: the explicit run from its initial state perturbed by 1e-10 (far
        # apart at t_end where the pattern is chaotic: then no run can be within 1 % of another)
        touched = solvers.create(model, backend=backend, **kw)
        _perturb(touched, SENSITIVITY)
        _run(touched, t_end, f"{name} explicit, perturbed by {SENSITIVITY:g}")
        area = np.asarray(explicit.mesh.mixed_areas)
        for integ in (integrators if name == "schnakenberg" else ["imex"]):
            for f in factors:
                dt = min(f * explicit.dt, 0.999 * probe.dt_max)
                implicit = solvers.create(model, backend=backend, integrator=integ, dt=dt, **kw)
                warm = solvers.create(model, backend=backend, integrator=integ, dt=dt, **kw)
                # kernels compiled, FFT plans made before the timed run
                warm.advance(min(t_end, 2 * WARM_STEPS * warm.dt))
                _sync(warm)
                n_imx, w_imx = _run(implicit, t_end, f"{name} {integ} dt={dt:.3g}")
                out.append(row(f"{integ} {name} {vertices} {backend} t={t_end:g}",
                               factor=dt / explicit.dt, explicit_steps=n_exp,
                               imex_steps=n_imx, step_ratio=n_exp / n_imx, explicit_s=w_exp,
                               imex_s=w_imx, wall_ratio=w_exp / w_imx,
                               imex_path=_imex_path(implicit.scheme),
                               rel_l2_vs_half_step=_rel_l2(area, implicit, half),
                               explicit_rel_l2_vs_half_step=_rel_l2(area, explicit, half),
                               explicit_rel_l2_vs_perturbed=_rel_l2(area, touched, explicit),
                               dist_vs_half_step=_dist_rel(area, implicit, half),
                               explicit_dist_vs_half_step=_dist_rel(area, explicit, half),
                               peaks=f"{_peaks(implicit)}/{_peaks(explicit)}/{_peaks(half)}"))
    return out


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--only", choices=("gs", "bruss", "imex"), action="append")
    ap.add_argument("--quick", action="store_true", help="small sizes (seconds on a CPU)")
    ap.add_argument("--vertices", type=int, default=1_000_000)
    ap.add_argument("--nx", type=int, default=2048)
    ap.add_argument("--bruss-n", type=int, default=256)
    ap.add_argument("--imex-vertices", type=int, default=200_000)
    ap.add_argument("--imex-t", type=float, default=200.0)
    ap.add_argument("--imex-factor", default="20",
                    help="the IMEX step over the explicit one (the goal: at least 20); "
                    "comma-separated for several runs against the same explicit ones")
    ap.add_argument("--imex-cases", default="schnakenberg,chemotaxis")
    ap.add_argument("--imex-integrator", default="imex3",
                    help=f"of the model file, comma-separated: {', '.join(IMEX_INTEGRATORS)} "
                    "(the built-in chemotaxis has its own imex)")
    ap.add_argument("--steps", type=int, default=200,
                    help="per timed run (on the GPU take thousands: CUDA graphs of 64 steps)")
    ap.add_argument("--bruss-dtypes", default="float64",
                    help="comma-separated; float64 always (py-pde's type)")
    ap.add_argument("--no-py-pde", action="store_true", help="skip the py-pde row's peer")
    a = ap.parse_args(argv)
    for integ in a.imex_integrator.split(","):
        if integ not in IMEX_INTEGRATORS:
            ap.error(f"--imex-integrator: unknown {integ!r} ({', '.join(IMEX_INTEGRATORS)})")
    try:
        [float(f) for f in a.imex_factor.split(",")]
    except ValueError:
        ap.error(f"--imex-factor: not numbers: {a.imex_factor!r}")
    if a.quick:
        a.vertices, a.nx, a.bruss_n, a.imex_vertices, a.imex_t, a.steps = (
            1500, 48, 32, 800, 4.0, 20)
    only = set(a.only or ("gs", "bruss", "imex"))
    out = []
    if "gs" in only:
        out += gray_scott(a.backend, ("float32", "float64"), a.vertices, a.nx, a.steps)
    if "bruss" in only:
        out += brusselator(a.backend, a.bruss_n, a.steps, peer=not a.no_py_pde,
                           dtypes=tuple(a.bruss_dtypes.split(",")))
    if "imex" in only:
        out += imex(a.backend, a.imex_vertices, a.imex_t, a.imex_factor, a.imex_cases,
                    a.imex_integrator)
    return out


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
