"""shallow-water on a structured grid ([P2]; docs/MODELS.md §3.3, §3.5 a, §6): well-balancing, mass
conservation with walls, radial symmetry, the Stoker dam break and the orders of convergence, bad
input; on the GPU, what the generic fused-equals-reference test does not reach: the per-cell
kernel variant, the Δt folded into the strip pass across a replaced state, the tuning knobs."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers import ParameterError

from pdestudio.solvers.shallow_water.exact import cell_average, simple_wave, stoker

from ...stepwise import Stepwise


def make(**kw):
    return solvers.create("shallow-water", **{"backend": "numpy", **kw})


def set_strip(sim, h, q):
    """A 1D state (functions of x only) on a strip of the 2D grid, over a flat bottom."""
    ny = len(sim.mesh.y)
    sim.set_field("H", np.ones((ny, len(h))))
    sim.set_field("h", np.tile(h, (ny, 1)))
    sim.set_field("hu", np.tile(q, (ny, 1)))
    sim.set_field("hv", np.zeros((ny, len(h))))


def random_state(sim, seed=5):
    """A smooth but non-trivial state with flow through every wall cell and a bumpy bottom."""
    rng = np.random.default_rng(seed)
    X, Y = np.meshgrid(sim.mesh.x, sim.mesh.y)
    k = rng.uniform(0.3, 1.0, 6)
    H = 0.6 + 0.3 * np.sin(k[0] * X) * np.cos(k[1] * Y) + 0.02 * rng.standard_normal(X.shape)
    h = 1.5 + 0.4 * np.cos(k[2] * X + k[3] * Y) + 0.05 * rng.standard_normal(X.shape)
    hu = 0.8 * np.sin(k[4] * Y + 1) + 0.2 * rng.standard_normal(X.shape)
    hv = 0.8 * np.cos(k[5] * X) + 0.2 * rng.standard_normal(X.shape)
    for name, v in (("H", H), ("h", h), ("hu", hu), ("hv", hv)):
        sim.set_field(name, v)
    return {"H": H, "h": h, "hu": hu, "hv": hv}


@pytest.mark.parametrize("order", [1, 3])
def test_lake_at_rest_stays_at_rest_to_round_off(order):
    sim = make(scenario="lake-at-rest", nx=32, ny=28, order=order)
    H = sim.fields()["H"]
    assert H.std() > 0.2 and H.min() < 0, "the bottom is bumpy and rises above the reference"
    sim.step(40)
    f = sim.fields()
    assert np.abs(f["eta"] - 1).max() < 1e-13
    assert max(np.abs(f["hu"]).max(), np.abs(f["hv"]).max()) < 1e-13


@pytest.mark.parametrize("order", [1, 3])
def test_mass_is_conserved_to_round_off_with_walls(order):
    sim = make(nx=24, ny=20, order=order)
    s0 = random_state(sim)
    m0 = s0["h"].sum()
    sim.step(60)
    f = sim.fields()
    assert abs(f["h"].sum() - m0) < 1e-13 * m0
    # the walls did act: momentum is not conserved and the wall cells changed
    assert abs(f["hu"].sum() - s0["hu"].sum()) > 1e-3 * np.abs(s0["hu"]).sum()


@pytest.mark.parametrize("order", [1, 3])
def test_circular_dambreak_stays_radially_symmetric(order):
    devs = []
    for nx in (40, 80):
        sim = make(nx=nx, order=order)
        sim.advance(0.25)
        eta = sim.fields()["eta"]
        # the grid's own symmetries (x ↔ −x, y ↔ −y, x ↔ y) hold to round-off
        for other in (eta.T, eta[::-1], eta[:, ::-1]):
            assert np.abs(eta - other).max() < 1e-13
        # radial symmetry: η at every cell against the profile along the x axis at its radius
        X, Y = np.meshgrid(sim.mesh.x, sim.mesh.y)
        r = np.hypot(X, Y)
        j = nx // 2
        axis = 0.5 * (eta[j - 1, j:] + eta[j, j:])
        inside = r < 4
        devs.append(np.abs(eta[inside] - np.interp(r[inside], np.hypot(sim.mesh.x[j:],
                                                                          sim.mesh.y[j]), axis)))
        assert eta.max() - eta.min() > 0.5, "the dam has broken into waves"
    assert devs[1].mean() < 0.01 * 2, "mean deviation under 1% of the dam's height"
    # and falls on refinement (order 1: 0.0058 → 0.0027, order 3: 0.0072 → 0.0051 with the
    # shock cure, which lowers the coarse grid's deviation most: 0.0125 and 0.0094 without)
    assert devs[1].mean() < 0.75 * devs[0].mean(), "and falls on refinement"


@pytest.mark.parametrize("order", [1, 3])
def test_dam_break_strip_matches_stoker_with_error_falling(order):
    errs = []
    for nx in (100, 200, 400):
        sim = make(nx=nx, ny=2, order=order)
        x = sim.mesh.x
        set_strip(sim, np.where(x < 0, 2.0, 1.0), 0 * x)
        sim.advance(0.4)
        f = sim.fields()
        assert np.abs(f["hv"]).max() == 0 and np.abs(f["h"] - f["h"][0]).max() == 0, "stays 1D"
        errs.append(np.abs(f["h"][0] - stoker(x, 0.4, 2.0, 1.0)).mean() * 10)  # L1 on [−5, 5]
    assert errs[-1] < 0.04
    rates = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert np.all(rates > 0.6), rates  # first order at best across the shock


def test_order_3_converges_faster_on_smooth_data():
    """A right-going simple wave before it breaks: L1 EOC ≈ 1 for order 1, ≈ 3 for order 3."""
    h0 = lambda x: 1.0 + 0.1 * np.exp(-((x + 2) / 0.5) ** 2)  # noqa: E731
    eoc = {}
    for order in (1, 3):
        errs = []
        for nx in (100, 200, 400):
            sim = make(nx=nx, ny=2, order=order)
            x, dx = sim.mesh.x, sim.dx
            set_strip(sim, *cell_average(lambda s: simple_wave(s, 0.0, h0), x, dx))
            sim.advance(0.3)
            exact, _ = cell_average(lambda s: simple_wave(s, 0.3, h0), x, dx)
            errs.append(np.abs(sim.fields()["h"][0] - exact).mean() * 10)
        eoc[order] = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
        if order == 3:
            assert errs[-1] < 1e-4
    assert np.all(np.abs(eoc[1] - 1) < 0.15), eoc
    assert np.all(eoc[3] > 2.6), eoc


def test_bad_input_is_refused_and_state_kept():
    for bad in (0, -0.1, 1.5):
        with pytest.raises(ParameterError, match=r"'cfl'.*\(0, 1\]"):
            make(nx=8, cfl=bad)
    with pytest.raises(ParameterError, match="'order'.*one of 1, 3"):
        make(nx=8, order=2)
    with pytest.raises(ParameterError, match="'geometry'.*'grid'"):
        make(nx=8, geometry="hexagons")
    with pytest.raises(ParameterError, match="'ny'"):
        make(nx=8, ny=1)
    sim = make(nx=12, ny=10)
    sim.step(2)
    before = {k: v.copy() for k, v in sim.fields().items()}
    h = before["h"].copy()
    for low in (0.0, -1.0):
        h[3, 4] = low
        with pytest.raises(ParameterError, match=r"'h'.*h > 0.*dry cells are out of scope"):
            sim.set_field("h", h)
    with pytest.raises(ParameterError, match="'H'.*shape"):
        sim.set_field("H", np.ones((12, 10)))  # a bathymetry of the wrong (transposed) shape
    Hbad = before["H"].copy()
    Hbad[0, 0] = np.inf
    with pytest.raises(ParameterError, match="'H'.*non-finite"):
        sim.set_field("H", Hbad)
    with pytest.raises(ParameterError, match="'eta'.*derived"):
        sim.set_field("eta", before["eta"])
    for k, v in sim.fields().items():
        np.testing.assert_array_equal(v, before[k], err_msg=k)
    sim.set_field("H", -before["H"])  # a negative bathymetry is allowed: H is not a depth of water
    np.testing.assert_array_equal(sim.fields()["h"], before["h"])


def test_negative_initial_depth_is_refused_at_set_up(monkeypatch):
    from pdestudio.solvers.shallow_water import scenarios
    monkeypatch.setitem(scenarios.INITIAL, "lake-at-rest",
                        lambda x, y: (np.full(np.broadcast(x, y).shape, -2.0),
                                      scenarios.lake_at_rest(x, y)[1]))
    with pytest.raises(ParameterError, match="h = η \\+ H.*dry cells are out of scope"):
        make(nx=8, scenario="lake-at-rest")


# ---- GPU: kernel variants and the folded Δt against the NumPy float64 reference -------------
def _pair(order, dtype, variant=None, **knobs):
    """The NumPy float64 reference and a fused GPU twin on the same random state; `variant`,
    `tuning`, `rows`: a GridFused scheme built with the benchmarks' options (the public
    `sim.scheme` hook)."""
    from pdestudio.solvers.shallow_water.grid.fused import GridFused
    ref = make(nx=37, ny=29, order=order)
    gpu = solvers.create("shallow-water", backend="cupy", dtype=dtype, kernel="fused", nx=37,
                         ny=29, order=order)
    if variant or knobs:
        gpu.scheme = GridFused(gpu, variant=variant or "strip", **knobs)
    s = random_state(ref, seed=11)
    for k, v in s.items():
        gpu.set_field(k, v)
    return ref, gpu


def _rel_err(ref, gpu):
    a, b = ref.fields(), gpu.fields()
    return max(np.abs(a[k] - b[k]).max() / np.abs(a[k]).max() for k in ("h", "hu", "hv"))


TOL = {"float64": 1e-12, "float32": 1e-5}


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gpu_cell_variant_matches_float64_reference(dtype):
    """The per-cell kernel (sw_cfl + sw_step1, the benchmarks' rung below the strip kernel): ten
    steps of a fixed size (below the CFL bound) so both runs take the same steps."""
    ref, gpu = _pair(1, dtype, "cell")
    probe = make(nx=37, ny=29)
    random_state(probe, seed=11)
    probe.step(1)
    dt = 0.7 * probe.t
    for n in range(1, 11):
        ref.advance(n * dt)
        gpu.advance(n * dt)
    assert ref.steps == gpu.steps == 10
    assert _rel_err(ref, gpu) < TOL[dtype]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("order", [1, 3])
def test_gpu_free_run_follows_the_same_cfl_steps(order, dtype):
    """Unconstrained steps: the fused Δt (for order 1 folded into the previous step's pass) is
    the same-step CFL Δt of the reference, also after a field is replaced mid-run."""
    ref, gpu = _pair(order, dtype)
    for sim in (ref, gpu):
        sim.step(8)
    assert abs(gpu.t / ref.t - 1) < 10 * TOL[dtype]
    hu = ref.fields()["hu"] * 0.5
    for sim in (ref, gpu):
        sim.set_field("hu", hu)
        sim.step(8)
    assert abs(gpu.t / ref.t - 1) < 10 * TOL[dtype]
    assert _rel_err(ref, gpu) < 10 * TOL[dtype]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("order, tuning, rows", [
    (1, {"SW_STRIP_MINB": 0, "SW_STRIP_UNROLL": 2}, 3),  # unrolled rows, bands of 3 rows
    (3, {"SW_STAGE_MINB": 3}, None)])
def test_gpu_tuning_knobs_keep_the_results(order, tuning, rows, dtype):
    """The fused kernels compiled with the benchmark sweep's other knobs (and the strip kernel
    with other band heights) still follow the float64 reference, free-running (CFL steps)."""
    ref, gpu = _pair(order, dtype, tuning=tuning, rows=rows)
    for sim in (ref, gpu):
        sim.step(12)
    assert abs(gpu.t / ref.t - 1) < 10 * TOL[dtype]
    assert _rel_err(ref, gpu) < 10 * TOL[dtype]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("order, variant", [(1, "strip"), (1, "cell"), (3, None)])
def test_gpu_batched_runs_equal_single_steps_bit_for_bit(order, variant, dtype):
    """`GridFused.run` queues whole batches with the clock on the device (kernels/grid.cu
    step_size, core's DeviceClock and clock.cuh): the same t, step count and fields, bit for bit, as the host
    stepping one step at a time, also landing on an end time mid-batch, after a field was
    replaced, a snapshot taken and the live cfl changed, and across batches (`batch` steps at most;
    the strip variant as CUDA graphs of GRAPH_STEPS steps and single launches). The steps a batch queues after landing
    leave the state as it is (an SSP-RK3 stage with Δt = 0 would round it)."""
    from pdestudio.solvers.shallow_water.grid.fused import GridFused
    sims = []
    for stepwise in (False, True):
        ref, gpu = _pair(order, dtype, variant)
        if variant is None:
            gpu.scheme = GridFused(gpu)
        if stepwise:
            gpu.scheme = Stepwise(gpu.scheme)
        sims.append(gpu)
    a, b = sims
    assert hasattr(a.scheme, "run") and not hasattr(b.scheme, "run")
    BATCH = a.scheme.batch
    for sim in (a, b):
        sim.advance(3.1e-3)  # a fresh scheme queues a whole batch: ~BATCH steps after landing
        sim.step(BATCH + 13)
        if sim is a:  # every variant replays CUDA graphs of steps
            assert a.scheme._graphs.graphs, getattr(a.scheme, "graph_error", "no graph")
        sim.advance(sim.t + 7.31e-3)
        sim.set_field("hu", sim.fields()["hu"] * 0.5)
        sim.step(5)
        sim.advance(sim.t + 2.5e-4)
        sim.snapshot()  # (the window's timeline: invalidates, the graphs stay)
        sim.step(BATCH)
        sim.set_param("cfl", 0.6)  # a live parameter: graphs with the old Δt factor must go
        sim.step(BATCH)
    assert (a.t, a.steps) == (b.t, b.steps)
    for name, v in a.fields().items():
        np.testing.assert_array_equal(v, b.fields()[name], err_msg=name)
