"""The fused CUDA scheme of the curvature flows beyond the generic fused-equals-reference test
(docs/MODELS.md §6): its paths (persistent, graph, plain launches) continuing one run, every tile variant of
the persistent kernel and a grid of 3 blocks, forced rejections, the device-decided adaptive run
landing on its end time, and exact Neumann copies. Variants are built through the `sim.scheme`
hook: `sim.scheme = FusedRKM(sim, path=..., variant=..., blocks=...)`."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.curvature.fused import (BLOCKED, BLOCKED_FIRST, FALLBACK_VARIANT, TILES,
                                             FusedRKM)

pytestmark = pytest.mark.gpu

TOL = {"float32": 1e-5, "float64": 1e-12}
CASES = [("mean-curvature", "float32"), ("mean-curvature", "float64"), ("willmore", "float64")]
SETUPS = [("eoc-exact", "dirichlet"), ("sine-rings", "neumann"), ("sine-rings", "dirichlet"),
          ("eoc-exact", "neumann")]


def smooth_random(shape, seed):
    """A sum of random Fourier modes (amplitude ≈ 0.5, slopes of order 1)."""
    rng = np.random.default_rng(seed)
    ny, nx = shape
    y, x = np.meshgrid(np.linspace(0, 1, ny), np.linspace(0, 1, nx), indexing="ij")
    f = np.zeros(shape)
    for _ in range(6):
        kx, ky = rng.integers(1, 4, 2)
        f += rng.normal(0, 0.15) * np.cos(np.pi * kx * x + rng.uniform(0, 6)) \
            * np.cos(np.pi * ky * y + rng.uniform(0, 6))
    return f


def pair(model, dtype, scenario, boundary, **kw):
    p = dict(scenario=scenario, boundary=boundary, nx=70, ny=45, F=0.3, **kw)
    ref = solvers.create(model, backend="numpy", dtype="float64", **p)
    gpu = solvers.create(model, backend="cupy", dtype=dtype, kernel="fused", **p)
    return ref, gpu


def relerr(a, b):
    return float(np.abs(np.asarray(a, np.float64) - b).max() / np.abs(b).max())


@pytest.mark.parametrize("scenario,boundary", SETUPS[:2])
@pytest.mark.parametrize("model,dtype", CASES)
def test_paths_continue_one_fixed_step_run(model, dtype, scenario, boundary):
    """A huge tolerance accepts every attempt; advancing to t_k = kδ clamps each step to δ, so the
    runs take the same fixed steps: 8 on the persistent path, then (the scheme swapped) one on the
    graph path and one of plain stage-kernel launches, all along the NumPy float64 reference."""
    ref, gpu = pair(model, dtype, scenario, boundary, tolerance=1e30, dt=1.0)
    gpu.scheme = FusedRKM(gpu, path="persistent")
    assert gpu.scheme.path == "persistent", gpu.scheme.persist_error  # cooperative launches work
    u = smooth_random(ref.state["phi"].shape, 3) + ref.fields()["phi"]
    ref.set_field("phi", u)
    gpu.set_field("phi", u)
    u = ref.fields()["phi"]
    h = min(ref.h1, ref.h2)
    delta = 0.2 * 3.5 * (h * h / 8 if model == "mean-curvature" else h**4 / 64)
    for k in range(1, 9):
        ref.advance(k * delta)
        gpu.advance(k * delta)
    assert gpu.steps == ref.steps == 8 and gpu.t == ref.t
    a, b = gpu.fields()["phi"].astype(np.float64), ref.fields()["phi"]
    change = np.abs(b - u).max()
    rounding = 20 * 8 * np.finfo(dtype).eps * np.abs(u).max()
    assert change > 100 * rounding  # the run moves the state well beyond rounding
    assert np.abs(a - b).max() <= 30 * TOL[dtype] * change + rounding
    for k, path in ((9, "graph"), (10, "launches")):
        gpu.scheme = FusedRKM(gpu, path=path)
        ref.advance(k * delta)
        gpu.advance(k * delta)
        assert gpu.steps == ref.steps == k and gpu.t == ref.t, path
        assert (gpu.scheme.graph is False) == (path == "launches"), gpu.scheme.graph_error
        a, b = gpu.fields()["phi"].astype(np.float64), ref.fields()["phi"]
        assert np.abs(a - b).max() <= 30 * TOL[dtype] * change + rounding, path


@pytest.mark.parametrize("model,nx,t_end", [("mean-curvature", 64, 0.05),
                                            ("willmore", 32, 2e-3)])
def test_device_decided_adaptive_run_matches_reference(model, nx, t_end):
    """float64: the device accepts/rejects exactly like RungeKuttaMerson (same steps, same τ)."""
    kw = dict(scenario="eoc-exact", nx=nx, dt=1e-2, tolerance=1e-7)
    ref = solvers.create(model, backend="numpy", **kw)
    gpu = solvers.create(model, backend="cupy", kernel="fused", **kw)
    arr = solvers.create(model, backend="cupy", kernel="array", **kw)
    for s in (ref, gpu, arr):
        s.advance(t_end)
    assert gpu.t == ref.t == t_end
    assert gpu.steps == ref.steps == arr.steps
    # τ comes from an error estimate that cancels digits: equal to ~1e-9, not to round-off
    assert gpu.tau == pytest.approx(ref.tau, rel=1e-6)
    for s in (gpu, arr):
        assert relerr(s.fields()["phi"], ref.fields()["phi"]) < 1e-9


def test_fused_neumann_copies_and_step_counts():
    sim = solvers.create("willmore", backend="cupy", kernel="fused", nx=40)
    sim.step(37)
    assert sim.steps == 37
    phi = sim.fields()["phi"]
    np.testing.assert_array_equal(phi[0], phi[1])
    np.testing.assert_array_equal(phi[:, 0], phi[:, 1])
    np.testing.assert_array_equal(phi[-1], phi[-2])
    ref = solvers.create("willmore", backend="numpy", nx=40)
    ref.step(37)
    assert ref.t == pytest.approx(sim.t, rel=1e-9)
    assert relerr(phi, ref.fields()["phi"]) < 1e-11


@pytest.mark.parametrize("model,dtype", CASES)
@pytest.mark.parametrize("scenario,boundary", SETUPS[:2])
def test_persistent_kernel_matches_graph_path_and_reference(model, dtype, scenario, boundary):
    """The cooperative persistent kernel (every variant, and 3 blocks looping over all tiles)
    takes the same accepted/rejected steps as the graph path and the NumPy float64 reference; a
    large first τ forces rejections (the retried attempt reuses f(t, u))."""
    h = 8 / 70
    t_end = 30 * (0.1 * h * h if model == "mean-curvature" else 0.01 * h**4)
    kw = dict(scenario=scenario, boundary=boundary, nx=70, ny=45, F=0.3, tolerance=1e-6,
              dt=50 * t_end)
    ref = solvers.create(model, backend="numpy", **kw)
    u0 = smooth_random(ref.state["phi"].shape, 5) + ref.fields()["phi"]
    ref.set_field("phi", u0)
    ref.advance(t_end)
    assert ref.tau < kw["dt"]  # the controller had to shrink the first step

    def fused(**options):
        sim = solvers.create(model, backend="cupy", dtype=dtype, kernel="fused", **kw)
        sim.scheme = FusedRKM(sim, **options)
        sim.set_field("phi", u0)
        sim.advance(t_end)
        return sim

    runs = {}
    for variant in TILES[model == "willmore"]:
        for blocks in (None, 3):
            sim = runs[(variant, blocks)] = fused(path="persistent", variant=variant,
                                                  blocks=blocks)
            assert sim.scheme.path == "persistent", sim.scheme.persist_error
    graph = fused(path="graph")
    b = ref.fields()["phi"]
    for key, sim in runs.items():
        assert sim.t == graph.t == t_end, key
        if dtype == "float64":
            assert sim.steps == graph.steps == ref.steps, key
            assert sim.scheme.attempts == graph.scheme.attempts, key
            assert sim.tau == pytest.approx(ref.tau, rel=1e-6), key
        a = sim.fields()["phi"]
        assert relerr(a, b) < (1e-9 if dtype == "float64" else 1e-4), key
        assert relerr(a, graph.fields()["phi"]) < (1e-12 if dtype == "float64" else 1e-5), key
        if boundary == "neumann":
            np.testing.assert_array_equal(a[0], a[1])
            np.testing.assert_array_equal(a[:, -1], a[:, -2])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("scenario,boundary", SETUPS)
@pytest.mark.parametrize("nx,ny", [(70, 45), (9, 6)])
def test_blocked_kernel_is_the_five_barrier_kernel_bit_for_bit(dtype, scenario, boundary, nx, ny):
    """Mean curvature's one-barrier kernel (curvature_blocked.cu: each block computes its tile's
    five stages on a halo of five nodes in shared memory) takes the same attempts as the
    five-barrier kernel and gives the same bits: every BLOCKED variant, partial tiles at the far
    edges (70 × 45), a grid smaller than the halo (9 × 6, every position mirrored), and a large
    first τ that forces rejections (a retried attempt keeps f1 in shared memory)."""
    h = 8 / nx
    t_end = 30 * 0.1 * h * h
    kw = dict(scenario=scenario, boundary=boundary, nx=nx, ny=ny, F=0.3, tolerance=1e-6,
              dt=50 * t_end)
    u0 = None

    def run(variant):
        nonlocal u0
        sim = solvers.create("mean-curvature", backend="cupy", dtype=dtype, kernel="fused", **kw)
        sim.scheme = FusedRKM(sim, path="persistent", variant=variant)
        assert sim.scheme.path == "persistent" and sim.scheme.variant == variant, \
            sim.scheme.persist_error
        if u0 is None:
            u0 = smooth_random(sim.state["phi"].shape, 7) + sim.fields()["phi"].astype(np.float64)
        sim.set_field("phi", u0)
        sim.advance(t_end)
        return sim

    five = run(FALLBACK_VARIANT)
    assert five.rejected > 0  # the first τ was rejected: the retry path ran
    a = five.fields()["phi"]
    assert np.abs(a - u0).max() > 1e-3  # the run moved the state
    for variant in BLOCKED:
        sim = run(variant)
        assert (sim.t, sim.steps, sim.rejected, sim.scheme.attempts) == \
            (five.t, five.steps, five.rejected, five.scheme.attempts), variant
        assert sim.tau == five.tau, variant
        np.testing.assert_array_equal(sim.fields()["phi"], a, err_msg=variant)


def test_blocked_default_falls_back_where_its_tiles_do_not_fit():
    """One block a tile, all resident: a grid with more tiles than the device holds takes the
    five-barrier kernel by default, and asking for the one-barrier variant says why not."""
    sim = solvers.create("mean-curvature", backend="cupy", dtype="float32", kernel="fused",
                         nx=640, ny=640)
    sch = FusedRKM(sim, path="persistent")
    assert sch.path == "persistent" and sch.variant == FALLBACK_VARIANT, sch.persist_error
    sch = FusedRKM(sim, path="persistent", variant="b16")
    assert sch.path == "graph" and "do not fit" in sch.persist_error
    small = solvers.create("mean-curvature", backend="cupy", dtype="float32", kernel="fused",
                           nx=256)
    assert small.scheme.path == "persistent" and small.scheme.variant == BLOCKED_FIRST[0]
