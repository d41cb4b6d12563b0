"""The batched ensemble of model files (solvers/equations/ensemble.py: one eq_stage_batch launch
per stage for every member) on the CPU: the generated kernels built by g++ (cu_cpu.py), the
threads of every launch shuffled over (node, member), against each member's solo fused run (the
solo kernels on the same harness, threads in index order), bit for bit: state, clock and step
count, with members that differ in parameters, seed and step size (so they land on an end time
after different numbers of steps), on grids with time-dependent boundary values and pins and on
meshes. A member that diverges stops with its solo run's reason and kept state; the others go
on. The `gpu` test of test_gpu.py runs the same driver on the device."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.equations.fused import FusedEquations
from pdestudio.solvers.equations.reference import TABLEAUS

from .cu_cpu import GXX, CpuKernels, shuffled
from .test_cu_on_cpu import GRID_MODEL

pytestmark = pytest.mark.skipif(GXX is None, reason="g++ is not installed")

DOMAINS = {
    "periodic": {"kind": "rectangle", "nx": 12, "ny": 10, "Lx": 6.0, "Ly": 5.0,
                 "boundary": "periodic"},
    "mixed": {"kind": "rectangle", "nx": 10, "ny": 8, "Lx": 5.0,
              "boundary": "left=dirichlet: 1 + y*t; right=neumann: 0.2; top=neumann"},
    "vertex": {"kind": "rectangle", "nx": 10, "ny": 8, "Lx": 5.0, "grid": "vertex",
               "boundary": "left=dirichlet: 1 + 0.02*y*t; right=neumann: 0.2"},
    "interval": {"kind": "interval", "nx": 30, "L": 6.0, "boundary": "left=dirichlet: 2"},
    "mesh-dirichlet": {"kind": "mesh", "surface": "rectangle", "vertices": 150,
                       "boundary": "dirichlet: 1 + z + 0.1*t"},
    "torus": {"kind": "mesh", "surface": "torus", "vertices": 200, "boundary": "natural"},
}
# meshes: the cross-diffusion with a K free of u (central; -div(chi*u*grad(v)) would be the
# positive flux, whose adaptive step goes one member after another)
MESH_MODEL = {**GRID_MODEL, "equations": {
    **GRID_MODEL["equations"],
    "u": "Du*lap(u) - div(chi*(1 + 0.5*v)*grad(v)) + a - u + u^2*v + 0.1*sin(t)*x"}}
MEMBERS = [{"a": 0.1}, {"a": 0.25, "chi": 0.2, "seed": 3, "cfl": 0.3},
           {"b": 1.1, "Du": 0.7, "seed": 5, "cfl": 0.45}]


def _solo_scheme(sim):
    return FusedEquations(sim, xp=np, kernels=CpuKernels(sim))


def _ensemble(mid, members, order=shuffled(7), **common):
    ens = solvers.create_ensemble(mid, members, backend="numpy", **common)
    assert not ens.batched  # NumPy: one after another unless the harness is put in
    ens._start_batched(np, CpuKernels(ens.sim, order, batched=True), _solo_scheme)
    assert ens.batched
    launches = []
    kern = ens._batch.k["eq_stage_batch"]
    ens._batch.k["eq_stage_batch"] = lambda *a: (launches.append(a[0]), kern(*a))
    return ens, launches


def _solo(mid, member, **common):
    sim = solvers.create(mid, backend="numpy", **{**common, **member})
    sim.scheme = _solo_scheme(sim)
    return sim


def _same(ens, m, solo):
    got = ens.member(m)
    assert (got.t, got.steps) == (solo.t, solo.steps)
    for k, v in solo.fields().items():
        assert np.array_equal(got.fields()[k], v), (m, k)


@pytest.mark.parametrize("domain, integrator, dtype", [
    ("periodic", "rk4", "float64"), ("mixed", "ssprk3", "float64"),
    ("vertex", "euler", "float64"), ("interval", "rk4", "float32"),
    ("mesh-dirichlet", "rk4", "float64"), ("torus", "euler", "float32")])
def test_batched_members_equal_their_solo_fused_runs(domain, integrator, dtype):
    model = MESH_MODEL if DOMAINS[domain]["kind"] == "mesh" else GRID_MODEL
    mid = solvers.define({**model, "domain": DOMAINS[domain]})
    common = {"integrator": integrator, "dtype": dtype}
    ens, launches = _ensemble(mid, MEMBERS, **common)
    assert len(set(ens.dt)) == len(MEMBERS)  # three step sizes: three clocks
    t_end = 7.5 * max(ens.dt)
    ens.advance(t_end)
    ens.step(4)
    steps = ens.steps.copy()
    # one launch per stage advances every member: as many launches as the slowest needs
    assert len(launches) == len(TABLEAUS[integrator]) * steps.max()
    assert all(g[1] == len(MEMBERS) for g in launches)
    assert len(set(steps)) > 1  # different step counts to the same end time
    np.testing.assert_allclose(ens.t[~ens.diverged], (t_end + 4 * ens.dt)[~ens.diverged],
                               rtol=1e-14)
    assert not ens.diverged.all()
    for m, member in enumerate(MEMBERS):
        solo = _solo(mid, member, **common)
        try:  # on the coarse Dirichlet mesh members 0 and 2 blow up: they stop as solo runs do
            solo.advance(t_end)
            solo.step(4)
            reason = ""
        except solvers.SimulationDiverged as e:
            reason = str(e)
        assert ens.reasons[m] == reason and ens.diverged[m] == bool(reason)
        _same(ens, m, solo)
    # the members differ (their parameters and seeds reached the kernel)
    u = [ens.member(m).fields()["u"] for m in range(len(MEMBERS))]
    assert not np.array_equal(u[0], u[1]) and not np.array_equal(u[1], u[2])


def test_batched_clocks_land_on_the_end_time_after_different_step_counts():
    mid = solvers.define({**GRID_MODEL, "domain": DOMAINS["periodic"]})
    ens, _ = _ensemble(mid, [{"dt": 0.01}, {"dt": 0.003}, {"dt": 0.0071}])
    ens.advance(0.1)
    assert list(ens.t) == [0.1, 0.1, 0.1]
    assert list(ens.steps) == [10, 34, 15]  # 0.1/0.003 = 33.3: a shortened last step
    ens.advance(0.25)
    for m, dt in enumerate([0.01, 0.003, 0.0071]):
        solo = _solo(mid, {"dt": dt})
        solo.advance(0.1)
        solo.advance(0.25)
        _same(ens, m, solo)


def test_two_thread_orders_give_the_same_bits():
    mid = solvers.define({**GRID_MODEL, "domain": DOMAINS["mixed"]})
    runs = []
    for order in (shuffled(1), shuffled(2)):
        ens, _ = _ensemble(mid, MEMBERS, order=order, integrator="rk4")
        ens.step(12)
        runs.append([ens.member(m).fields()["v"] for m in range(len(MEMBERS))])
    for a, b in zip(*runs):
        assert np.array_equal(a, b)


def test_a_diverging_member_stops_with_its_solo_reason_the_others_go_on():
    src = {**GRID_MODEL, "domain": DOMAINS["periodic"],
           "parameters": {**GRID_MODEL["parameters"], "b": {"value": 0.9, "min": -1e9}}}
    mid = solvers.define(src)
    members = [{"b": 0.9}, {"b": -3e4, "seed": 2}, {"a": 0.3}]
    ens, _ = _ensemble(mid, members)
    ens.step(100)
    assert list(ens.diverged) == [False, True, False]
    assert ens.reasons[0] == ens.reasons[2] == ""
    assert list(ens.steps[[0, 2]]) == [100, 100] and 0 < ens.steps[1] < 100
    solo = _solo(mid, members[1])
    with pytest.raises(solvers.SimulationDiverged) as e:
        solo.step(100)
    assert ens.reasons[1] == str(e.value)
    _same(ens, 1, solo)  # the state before the failing step, its time and step count
    ens.step(10)  # the stopped member stays where it is
    assert ens.steps[1] == solo.steps and list(ens.steps[[0, 2]]) == [110, 110]
    for m in (0, 2):
        ok = _solo(mid, members[m])
        ok.step(110)
        _same(ens, m, ok)


def test_which_schemes_batch(monkeypatch):
    """The fused explicit schemes batch; the positive flux's adaptive step and IMEX go one
    member after another (as does NumPy: kernel 'numpy')."""
    from .conftest import CHEMOTAXIS
    from pdestudio.solvers.equations.ensemble import batchable
    grid = solvers.create(solvers.define({**GRID_MODEL, "domain": DOMAINS["periodic"]}),
                          backend="numpy")
    cx = solvers.create(solvers.define(CHEMOTAXIS), backend="numpy", vertices=200, dt=0.01)
    imex = solvers.create(grid.model, backend="numpy", integrator="imex")
    assert not batchable(grid)
    for sim in (grid, cx):
        monkeypatch.setattr(type(sim), "kernel", property(lambda s: "fused"))
    assert batchable(grid) and not batchable(cx) and not batchable(imex)
