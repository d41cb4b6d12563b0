"""The tiled path of model files on grids (codegen.py's eq_tile, fused.py's `tile_steps`:
several whole explicit steps per launch in a block's shared memory) built by g++ (cu_cpu.py) and
run on NumPy arrays: one launch of `plan.steps` steps gives what as many one-step launches give,
to round-off, on periodic, bounded (Neumann, Dirichlet, Robin), vertex and 1D grids, for every
explicit integrator, with tiles that do not divide the grid, and in any order of the blocks."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.equations.fused import FusedEquations, tile_plan

from .cu_cpu import GXX, CpuKernels, reverse, shuffled
from .test_cu_on_cpu import GRID_MODEL

pytestmark = pytest.mark.skipif(GXX is None, reason="g++ is not installed")

# test_cu_on_cpu's model (every operator the grids have) without its sin(t)·x term: the tiled
# path is for models that never read t
MODEL = {**GRID_MODEL, "model": {"name": "tiled"},
         "equations": {**GRID_MODEL["equations"],
                       "u": "Du*lap(u) - div(chi*u*grad(v)) + a - u + u^2*v + 0.01*x*y"}}
DOMAINS = {
    "periodic": {"kind": "rectangle", "nx": 45, "ny": 38, "Lx": 9.0, "Ly": 7.6,
                 "boundary": "periodic"},
    "cell-mixed": {"kind": "rectangle", "nx": 41, "ny": 35, "Lx": 8.2,
                   "boundary": "left=dirichlet: 1 + 0.1*y; right=neumann: 0.2; "
                               "bottom=robin: -0.5*v; top=neumann"},
    "vertex-mixed": {"kind": "rectangle", "nx": 40, "ny": 36, "Lx": 8.0, "grid": "vertex",
                     "boundary": "left=dirichlet: 1 + 0.02*y; right=neumann: 0.2; "
                                 "bottom=periodic; top=periodic"},
    "half-periodic": {"kind": "rectangle", "nx": 48, "ny": 33, "Lx": 9.6,
                      "boundary": "left=periodic; right=periodic; bottom=neumann; top=neumann"},
    "interval": {"kind": "interval", "nx": 700, "L": 70.0,
                 "boundary": "left=dirichlet: 2; right=neumann"},
}


def _sims(domain, integrator, order):
    src = {**MODEL, "domain": DOMAINS[domain]}
    if "robin" in src["domain"]["boundary"]:  # u's own Robin condition
        src["boundary"] = {"u": src["domain"]["boundary"].replace("-0.5*v", "-0.5*u")}
    mid = solvers.define(src)
    out = []
    for tiled in (False, True):
        sim = solvers.create(mid, backend="numpy", kernel="array", integrator=integrator,
                             dtype="float64")
        rng = np.random.default_rng(7)
        for s in sim.state:
            sim.set_field(s, sim.fields()[s] * (1 + 0.2 * rng.uniform(-1, 1,
                                                                      sim.field_shape(s))))
        sim.scheme = FusedEquations(sim, xp=np, kernels=CpuKernels(sim, order, tiled=tiled))
        out.append(sim)
    return out


def _rel(a, b):
    return max(float(np.abs(a.fields()[k] - b.fields()[k]).max()
                     / (np.abs(b.fields()[k]).max() + 1e-300)) for k in b.state)


@pytest.mark.parametrize("integrator", ["euler", "ssprk3", "rk4"])
@pytest.mark.parametrize("domain", list(DOMAINS))
def test_one_tiled_launch_equals_its_single_steps(domain, integrator, monkeypatch):
    if domain == "interval":  # a small tile, so the interval has several
        monkeypatch.setenv("PDESTUDIO_EQ_TILE", "100,8")
    else:
        monkeypatch.setenv("PDESTUDIO_EQ_TILE", "16,8")
    single, tiled = _sims(domain, integrator, reverse)
    plan = tiled.scheme.tiles
    assert plan is not None and plan.halo == plan.steps * plan.nstage <= 8
    assert plan.steps == {"euler": 8, "ssprk3": 2, "rk4": 2}[integrator]
    start = {k: v.copy() for k, v in tiled.fields().items()}
    for _ in range(3):
        tiled.scheme.tile_steps(tiled.dt)
    for _ in range(3 * plan.steps):
        single.scheme.step(0.0, None)
    moved = max(float(np.abs(single.fields()[k] - start[k]).max()) for k in single.state)
    assert moved > 1e-4  # the steps did something the comparison can see
    assert _rel(tiled, single) < 1e-13, _rel(tiled, single)
    assert single.notes() == []
    assert tiled.notes() and f"run {plan.steps} at a time" in tiled.notes()[0]


def test_block_order_does_not_matter(monkeypatch):
    monkeypatch.setenv("PDESTUDIO_EQ_TILE", "16,8")
    _, a = _sims("cell-mixed", "rk4", reverse)
    _, b = _sims("cell-mixed", "rk4", shuffled(2))
    for sim in (a, b):
        sim.scheme.tile_steps(sim.dt)
        sim.scheme.tile_steps(sim.dt)
    for k in a.state:
        assert np.array_equal(a.fields()[k], b.fields()[k]), k


def test_plan_refuses_what_the_tiles_cannot_do(monkeypatch):
    monkeypatch.delenv("PDESTUDIO_EQ_TILE", raising=False)
    mid = solvers.define({**MODEL, "domain": DOMAINS["periodic"]})
    assert tile_plan(solvers.create(mid, backend="numpy", nx=64, ny=64)) is not None
    # too small for a 16² tile and its halo of 8
    assert tile_plan(solvers.create(mid, backend="numpy", nx=20, ny=64)) is None
    # reads t
    timed = solvers.define({**MODEL, "model": {"name": "tiled-t"},
                            "equations": {**MODEL["equations"], "u": "lap(u) + sin(t)"},
                            "domain": DOMAINS["periodic"]})
    assert tile_plan(solvers.create(timed, backend="numpy", nx=64, ny=64)) is None
    # IMEX
    assert tile_plan(solvers.create(mid, backend="numpy", nx=64, ny=64,
                                    integrator="imex")) is None
    monkeypatch.setenv("PDESTUDIO_EQ_TILE", "0")
    assert tile_plan(solvers.create(mid, backend="numpy", nx=64, ny=64)) is None
