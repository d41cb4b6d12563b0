"""Ensembles of the surface reaction–diffusion models (issue 19): every member equals its solo
run bit for bit — on NumPy (members one after another through a template simulation), through
the batched clock with a NumPy stand-in for the batched kernel (the per-member landing rule and
divergence handling the GPU path uses), and on the device with the real batched kernels (`gpu`).
"""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.surface_rd.reference import chemotaxis_rhs, gray_scott_rhs

GS_MEMBERS = [{"F": 0.03, "seed": 1}, {"F": 0.045, "k": 0.062}, {"dt": 0.5},
              {"Du": 0.03, "spots": 5}]
CX_MEMBERS = [{"alpha": 14.0, "seed": 3}, {"D": 0.3}, {"s": 2.0, "perturbation": 0.05},
              {"alpha": 13.5, "r": 1.4}]


def host(a):
    return np.asarray(a.get() if hasattr(a, "get") else a)


def assert_members_equal_solo(ens, model, members, run, **common):
    every = ens.all_quantities()
    for i, m in enumerate(members):
        solo = solvers.create(model, **common, **m)
        run(solo)
        q = ens.quantities(i)  # without installing the member: the same numbers
        assert list(every[i].items()) == list(q.items())
        got = ens.member(i)
        assert got.t == solo.t and got.steps == solo.steps, (i, got.t, solo.t)
        for k in solo.state:
            assert np.array_equal(host(got.state[k]), host(solo.state[k])), (i, k)
        assert list(q.items()) == list(got.quantities().items()) == list(
            solo.quantities().items()), i


@pytest.mark.parametrize("model,members,extra", [
    ("gray-scott", GS_MEMBERS, {}),
    ("chemotaxis", CX_MEMBERS, {"scheme": "paper"}),
    ("chemotaxis", CX_MEMBERS, {}),  # positive
])
def test_numpy_ensemble_equals_solo_runs(model, members, extra):
    common = dict(backend="numpy", vertices=1500, **extra)
    ens = solvers.create_ensemble(model, members, **common)
    assert not ens.batched and ens.size == len(members)
    ens.advance(3.7)
    assert np.all(ens.t == 3.7)
    assert_members_equal_solo(ens, model, members, lambda s: s.advance(3.7), **common)


class NumpyBatch:
    """The batched kernel's contract on NumPy: row m takes one explicit Euler step of dts[m]
    with member m's parameters (dts[m] == 0: unchanged)."""

    def __init__(self, ens, rhs):
        from pdestudio.solvers.surface_rd.reference import ArrayOperators
        self.ens, self.rhs = ens, rhs
        self.ops = ArrayOperators(ens.sim.ops, np, ens.sim.real)
        self.launches = 0

    def launch(self, state, dts):
        a, b = self.ens.sim.species
        u, v = state[a], state[b]
        for m, d in enumerate(dts):
            if d != 0:
                du, dv = self.rhs(u[m], v[m], self.ops, self.ens.params[m], np)
                u[m], v[m] = u[m] + d * du, v[m] + d * dv
        self.launches += 1


@pytest.mark.parametrize("model,members,rhs,extra,t_end", [
    ("gray-scott", GS_MEMBERS, gray_scott_rhs, {}, 9.1),
    ("chemotaxis", CX_MEMBERS, chemotaxis_rhs, {"scheme": "paper"}, 0.37),
])
def test_batched_clock_lands_every_member_like_its_solo_run(model, members, rhs, extra, t_end):
    common = dict(backend="numpy", vertices=1500, **extra)
    ens = solvers.create_ensemble(model, members, **common)
    ens._batch = fake = NumpyBatch(ens, rhs)
    ens.step(5)
    ens.advance(t_end)
    assert np.all(ens.t == t_end) and len(set(ens.steps)) > 1  # members with their own δt
    assert not ens.diverged.any()
    assert fake.launches == ens.steps.max()  # one launch per step for all members
    assert_members_equal_solo(ens, model, members, lambda s: (s.step(5), s.advance(t_end)),
                              **common)


class NumpyGraphBatch(NumpyBatch):
    """The stand-in with the graph path's entry point: `count` steps of the same step sizes
    (the ensemble then walks its clocks for a whole block at once, after queuing the work)."""

    def __init__(self, ens, rhs):
        super().__init__(ens, rhs)
        self.blocks = []

    def launch_many(self, state, row, count):
        self.blocks.append(count)
        for _ in range(count):
            self.launch(state, row)


def test_whole_blocks_walk_the_clocks_like_single_steps():
    """A batch that replays graphs (launch_many) takes blocks of whole steps of CHECK_GRAPHS
    and walks each member's clock for the block at once: the times, step counts and states are
    those of the solo runs, bit for bit, and the landing on t_end is still per member."""
    from pdestudio.solvers.surface_rd.ensemble import CHECK_GRAPHS
    common = dict(backend="numpy", vertices=1500)
    ens = solvers.create_ensemble("gray-scott", GS_MEMBERS, **common)
    ens._batch = fake = NumpyGraphBatch(ens, gray_scott_rhs)
    ens.step(CHECK_GRAPHS + 37)
    assert fake.blocks[:2] == [CHECK_GRAPHS, 37]
    ens.advance(700.0)
    assert np.all(ens.t == 700.0) and len(set(ens.steps)) > 1
    assert max(fake.blocks) == CHECK_GRAPHS
    assert_members_equal_solo(ens, "gray-scott", GS_MEMBERS,
                              lambda s: (s.step(CHECK_GRAPHS + 37), s.advance(700.0)), **common)


def test_a_diverging_member_is_flagged_and_the_others_go_on():
    members = [{"F": 0.03}, {"F": 0.04}, {"F": 0.05}]
    common = dict(backend="numpy", vertices=1500)
    ens = solvers.create_ensemble("gray-scott", members, **common)
    fake = NumpyBatch(ens, gray_scott_rhs)

    def poisoned(state, dts):  # member 1 blows up at its 70th step
        fake.launch(state, dts)
        if fake.launches == 70:
            state["v"][1, 7] = np.nan
    ens._batch = type("P", (), {"launch": staticmethod(poisoned)})()
    ens.advance(40.0)
    assert list(ens.diverged) == [False, True, False]
    assert "member 1 diverged: non-finite values in" in ens.reasons[1]
    assert ens.steps[1] == 64 and np.isfinite(host(ens.state["v"][1])).all()  # last checked state
    assert ens.t[0] == ens.t[2] == 40.0
    assert_members_equal_solo(ens, "gray-scott", [members[0]], lambda s: s.advance(40.0),
                              **common)


class Reads(dict):
    """A parameter dict that notes the names read from it."""

    def __init__(self, *a):
        super().__init__(*a)
        self.read = set()

    def __getitem__(self, k):
        self.read.add(k)
        return super().__getitem__(k)

    def get(self, k, default=None):
        self.read.add(k)
        return super().get(k, default)


@pytest.mark.parametrize("model", ["gray-scott", "chemotaxis"])
def test_the_initial_condition_reads_only_its_declared_parameters(model):
    """What lets ensemble members share one initial state: `initial_params` (with the seed of
    the generator) is all that initial_condition reads of the parameters."""
    sim = solvers.create(model, backend="numpy", vertices=500)
    p = Reads(sim.params)
    sim.initial_condition(sim.mesh, p, np.random.default_rng(p["seed"]))
    assert p.read - {"seed"} <= set(type(sim).initial_params)


def test_members_that_agree_on_the_initial_parameters_share_one_initial_state(monkeypatch):
    """Members differing only in F, k, Du, dt share one initial state (one call of
    initial_condition: the template simulation's, member 0's), members with another seed or
    spots count get theirs; every row is bit
    for bit the state a solo run starts from, in the real type of the ensemble."""
    from pdestudio.solvers.surface_rd.model import GrayScott
    calls = []
    real = GrayScott.initial_condition
    monkeypatch.setattr(GrayScott, "initial_condition",
                        staticmethod(lambda mesh, p, rng: calls.append(1) or real(mesh, p, rng)))
    members = [{"F": 0.03}, {"F": 0.045, "k": 0.062}, {"seed": 2}, {"spots": 5, "dt": 0.5},
               {"Du": 0.03, "spots": 5}, {"seed": 2, "F": 0.05}]
    common = dict(backend="numpy", dtype="float32", vertices=1500)
    ens = solvers.create_ensemble("gray-scott", members, **common)
    # the template's (member 0's too), then one per other distinct (seed, spots)
    assert len(calls) == 1 + 2
    for k, v in ens.state.items():
        assert v.dtype == np.float32 and v.flags.c_contiguous
        for i, m in enumerate(members):
            solo = solvers.create("gray-scott", **common, **m)
            assert np.array_equal(v[i], solo.state[k]), (k, i)
    assert np.array_equal(ens.state["v"][0], ens.state["v"][1])
    assert not np.array_equal(ens.state["v"][0], ens.state["v"][2])
    ens.state["v"][1, 0] = 7.0  # rows are not views of one another
    assert ens.state["v"][0, 0] != 7.0


def test_member_quantities_leave_an_installed_member_alone():
    ens = solvers.create_ensemble("gray-scott", [{"F": 0.03}, {"F": 0.05}], backend="numpy",
                                  vertices=500)
    ens.step(20)
    sim = ens.member(0)
    before = {k: v.copy() for k, v in sim.state.items()}
    assert ens.quantities(1) != ens.quantities(0)
    assert all(np.array_equal(sim.state[k], before[k]) for k in before)
    assert sim.params["F"] == 0.03 and ens.quantities(0) == sim.quantities()
    with pytest.raises(solvers.ParameterError, match="allowed: 0..1"):
        ens.quantities(2)


def test_ensemble_errors_name_the_parameter():
    with pytest.raises(solvers.ParameterError, match="'vertices' cannot differ"):
        solvers.create_ensemble("gray-scott", [{"vertices": 500}], backend="numpy")
    with pytest.raises(solvers.ParameterError, match="'F'"):
        solvers.create_ensemble("gray-scott", [{"F": 7.0}], backend="numpy", vertices=500)
    with pytest.raises(solvers.ParameterError, match="no ensembles"):
        solvers.create_ensemble("heat-1d", [{}], backend="numpy")
    with pytest.raises(solvers.ParameterError, match="at least one member"):
        solvers.create_ensemble("gray-scott", [], backend="numpy")
    ens = solvers.create_ensemble("gray-scott", [{}], backend="numpy", vertices=500)
    with pytest.raises(solvers.ParameterError, match="allowed: 0..0"):
        ens.member(3)
    assert solvers.describe("gray-scott")["ensemble"] and not solvers.describe("heat-1d")["ensemble"]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("model,members,extra", [
    ("gray-scott", GS_MEMBERS * 2, {}),
    ("chemotaxis", CX_MEMBERS * 2, {"scheme": "paper"}),
    ("chemotaxis", CX_MEMBERS * 2, {}),  # positive: per-member device clocks
])
def test_gpu_ensemble_members_are_bit_identical_to_solo(model, members, extra, dtype,
                                                        gpu_backend):
    members = [dict(m, seed=i) for i, m in enumerate(members)]  # 8 different perturbations
    common = dict(backend=gpu_backend, dtype=dtype, vertices=3000, kernel="fused", **extra)
    ens = solvers.create_ensemble(model, members, **common)
    assert ens.batched
    ens.step(150)
    ens.advance(ens.t.max() + 3.3)
    assert_members_equal_solo(ens, model, members,
                              lambda s: (s.step(150), s.advance(float(ens.t[0]))), **common)


@pytest.mark.gpu
def test_gpu_a_diverging_member_does_not_disturb_the_others(gpu_backend):
    members = [{"F": 0.03}, {"dt": 1.0}, {"F": 0.05}]  # member 1: a step far above the bound
    common = dict(backend=gpu_backend, dtype="float32", vertices=3000, kernel="fused")
    with pytest.raises(solvers.ParameterError, match="stability bound"):
        solvers.create_ensemble("gray-scott", members, **common)
    members[1] = {"F": 0.04}
    ens = solvers.create_ensemble("gray-scott", members, **common)
    ens.state["v"][1, 11] = float("inf")
    ens.advance(20.0)
    assert list(ens.diverged) == [False, True, False] and ens.t[1] == 0.0
    assert_members_equal_solo(ens, "gray-scott", [members[0], members[2]][:1],
                              lambda s: s.advance(20.0), **common)
