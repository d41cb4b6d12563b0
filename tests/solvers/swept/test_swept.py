"""The swept order of operations against the classic one, for heat-1d, ks-1d and euler-1d.

CPU: the NumPy emulation of the swept kernels (shared memory starting as NaN, only edges passed
between stages) equals the classic order bit for bit, for several block widths, a single block,
any number of steps and `advance`, with the clock of whole batches equal to step-by-step time.
Both Euler schemes (muscl-hllc, paper) with Dirichlet and periodic ends.
GPU: the graph and swept kernels agree with the float64 NumPy reference (classic: the generic
tests/solvers/test_fused_matches_reference.py), and swept agrees with classic to round-off.
"""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.core import clock
from pdestudio.solvers.swept import reference

MODELS = ["heat-1d", "ks-1d", "euler-1d"]
# (model, parameters): every scheme and boundary rule with its own tiers or kernels
CASES = [("heat-1d", {}), ("ks-1d", {"L": 16.0}),  # KS: nx ≥ L (the resolution guard)
         ("euler-1d", {"scheme": "muscl-hllc"}),
         ("euler-1d", {"scheme": "paper"}),
         ("euler-1d", {"scheme": "muscl-hllc", "boundary": "periodic"}),
         ("euler-1d", {"scheme": "paper", "boundary": "periodic"})]
IDS = ["-".join([m, *map(str, p.values())]) for m, p in CASES]


def random_state(sim, seed=3):
    """Random, non-trivial data that every model accepts (Euler: positive ρ and P)."""
    rng = np.random.default_rng(seed)
    n = len(sim.mesh.x)
    if sim.model == "euler-1d":
        g = sim.params["gamma"]
        rho, u, p = 0.5 + rng.random(n), 0.6 * rng.random(n) - 0.3, 0.5 + rng.random(n)
        sim.set_field("rho", rho)
        sim.set_field("E", p / (g - 1) + 0.5 * rho * u * u)
        sim.set_field("rhou", rho * u)
    else:
        sim.set_field(sim.settable_fields()[0], rng.standard_normal(n))


def pair(model, W, n, backend="numpy", **kw):
    a = solvers.create(model, backend=backend, method="classic", block=W, nx=n, **kw)
    b = solvers.create(model, backend=backend, method="swept", block=W, nx=n, **kw)
    for s in (a, b):
        random_state(s)
    return a, b


@pytest.mark.parametrize("model,kw", CASES, ids=IDS)
@pytest.mark.parametrize("W,nb,cycles", [(32, 4, 1), (32, 3, 4), (64, 1, 3), (128, 2, 2)])
def test_swept_emulation_equals_classic_bit_for_bit(model, kw, W, nb, cycles):
    a, b = pair(model, W, W * nb, **kw)
    P = b.cycle_steps
    assert P == (W // 2 if model == "heat-1d" else W // 8)
    k = cycles * P + 3  # whole cycles, then classic steps for the remainder
    a.step(k)
    b.step(k)
    assert (a.t, a.steps) == (b.t, b.steps)
    fa, fb = a.fields(), b.fields()
    for name in fa:
        np.testing.assert_array_equal(fa[name], fb[name], err_msg=name)


def test_emulation_uses_no_value_before_it_is_computed():
    """A NaN planted in the initial state spreads in the swept order exactly as far as the
    domain of dependence allows (2 nodes per tier each way), as in the classic order."""
    rng = np.random.default_rng(0)
    U = rng.standard_normal((1, 256))
    tier = reference.ks_tier(1e-3, 0.4)
    good = reference.swept_emulate(tier, U, 3, 64, 2, 2, "periodic", None, np)
    ref = reference.classic_steps(tier, 2, U, 2, "periodic", None, np, steps=3 * 8)
    np.testing.assert_array_equal(good, ref)
    bad = U.copy()
    bad[0, 100] = np.nan
    out = reference.swept_emulate(tier, bad, 3, 64, 2, 2, "periodic", None, np)
    reach = np.abs(np.arange(256) - 100) <= 2 * 2 * 3 * 8  # 48 tiers of radius 2
    np.testing.assert_array_equal(np.isnan(out[0]), reach)


@pytest.mark.parametrize("model,kw", CASES, ids=IDS)
def test_swept_advance_lands_exactly_and_matches_classic(model, kw):
    a, b = pair(model, 32, 96, **kw)
    t_end = 37.5 * a.dt  # 37 full steps and a shortened one
    a.advance(t_end)
    b.advance(t_end)
    assert a.t == b.t == t_end and a.steps == b.steps == 38
    for name, v in a.fields().items():
        np.testing.assert_array_equal(v, b.fields()[name], err_msg=name)


def test_clock_of_whole_batches_equals_step_by_step():
    """run() adds the steps of whole swept cycles or graph replays with one cumsum: the same
    floats as core.clock.after_step one step at a time, also where t_end is near."""
    rng = np.random.default_rng(2)
    for t0, dt in [(0.0, 0.1), (0.3, 1 / 3), *zip(rng.random(20), rng.random(20) * 1e-3)]:
        for t_end in (None, t0 + 777.5 * dt):
            m = clock.full_steps(t0, dt, 1000, t_end)
            assert m == (1000 if t_end is None else 777)
            t = t0
            for _ in range(m):
                t = clock.after_step(t, dt, t_end)
            assert reference.sum_in_order(t0, dt, m) == t


@pytest.mark.parametrize("model", MODELS)
def test_grid_that_swept_cannot_tile_is_refused(model):
    kw = {"L": 50.0} if model == "ks-1d" else {}
    with pytest.raises(solvers.ParameterError, match=r"'nx' = 100 .*multiple of block"):
        solvers.create(model, backend="numpy", method="swept", block=64, nx=100, **kw)
    solvers.create(model, backend="numpy", method="classic", block=64, nx=100, **kw)  # any nx


# ---- GPU --------------------------------------------------------------------------------------
def numpy_run(model, sim0_fields, k, **kw):
    ref = solvers.create(model, backend="numpy", **kw)
    for name in ref.settable_fields():
        ref.set_field(name, sim0_fields[name])
    ref.step(k)
    return ref.fields()


GPU_CASES = [pytest.param(m, kw, dt, tol, id=f"{i}-{dt}") for (m, kw), i in zip(CASES, IDS)
             for dt, tol in (("float64", 1e-12), ("float32", 1e-5))]


@pytest.mark.gpu
@pytest.mark.parametrize("model,kw,dtype,tol", GPU_CASES)
@pytest.mark.parametrize("method", ["classic-graph", "swept"])
def test_gpu_methods_match_float64_reference(model, kw, method, dtype, tol):
    """Graph replays and swept cycles (plus classic steps for the rest) against NumPy; the graph
    on a grid that is not a multiple of the block (a partial last block)."""
    n, W = (4096 if method == "swept" else 4099), 128
    k = 600 if model == "heat-1d" else 300  # graph replays / swept cycles plus a remainder
    paper = model == "euler-1d" and (kw["scheme"] == "paper" or dtype == "float32")
    if paper:
        # The pressure-ratio limiter amplifies round-off (a flip of min(P_r, 1) near pressure
        # extrema), and so do muscl-hllc's switches between its face values in float32 (NumPy
        # float32 against float64 on this random state: 5e-7 after 20 steps, 1e-4 after 300):
        # compare a short run, still with 5 swept cycles and 5 graph replays.
        W, k = 32, 20
    sim = solvers.create(model, backend="cupy", dtype=dtype, method=method, block=W, nx=n, **kw)
    if paper:  # graphs of 4 steps: 5 replays in 20 steps
        sim.scheme = type(sim.scheme)(sim, graph_steps=4)
    random_state(sim)
    f0 = {k: v.astype(np.float64) for k, v in sim.fields().items()}
    sim.step(k)
    ref = numpy_run(model, f0, k, nx=n, **kw)
    for name, v in sim.fields().items():
        err = np.linalg.norm(v - ref[name]) / np.linalg.norm(ref[name])
        worst = int(np.abs(v - ref[name]).argmax())
        assert err < tol, (name, err, f"largest at node {worst} of {n}")


@pytest.mark.gpu
@pytest.mark.parametrize("W", [32, 256, 1024])
@pytest.mark.parametrize("model,kw", CASES, ids=IDS)
def test_gpu_swept_equals_classic_to_round_off(model, kw, W):
    if model == "euler-1d" and W == 1024:  # both schemes' kernels need > 64 registers
        with pytest.raises(solvers.ParameterError, match="'block' = 1024"):
            solvers.create(model, backend="cupy", method="swept", block=W, nx=4 * W, **kw)
        W = 512
    a, b = pair(model, W, 4 * W, backend="cupy", **kw)
    k = 5 * b.cycle_steps + 7
    a.step(k)
    b.step(k)
    assert (a.t, a.steps) == (b.t, b.steps)
    for name, v in a.fields().items():
        w = b.fields()[name]
        assert np.abs(v - w).max() <= 1e-13 * np.abs(v).max(), name


@pytest.mark.gpu
@pytest.mark.parametrize("model,kw", CASES, ids=IDS)
def test_gpu_array_path_runs_the_swept_emulation(model, kw):
    a, b = pair(model, 64, 256, backend="cupy", kernel="array", **kw)
    a.step(3 * b.cycle_steps)
    b.step(3 * b.cycle_steps)
    for name, v in a.fields().items():
        np.testing.assert_allclose(b.fields()[name], v, rtol=1e-13, atol=1e-13, err_msg=name)


@pytest.mark.gpu
@pytest.mark.parametrize("model,kw", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gpu_classic_batches_equal_single_steps_bit_for_bit(model, kw, dtype):
    """method=classic takes its whole steps in one tight loop of launches (SweptFused.
    _classic_run): the same launches as stepping one step at a time, so the same t, step count
    and fields bit for bit, odd and even batches, landing on an end time mid-batch."""
    from ..stepwise import Stepwise
    sims = [solvers.create(model, backend="cupy", dtype=dtype, method="classic", nx=1000, **kw)
            for _ in range(2)]
    sims[1].scheme = Stepwise(sims[1].scheme)
    for sim in sims:
        random_state(sim)
        sim.step(77)
        sim.advance(sim.t + 40.5 * sim.dt)
        sim.step(64)
        sim.step(3)
    a, b = sims
    assert (a.t, a.steps) == (b.t, b.steps)
    for name, v in a.fields().items():
        np.testing.assert_array_equal(v, b.fields()[name], err_msg=name)
