"""The GPU paths beyond the generic GPU-equals-float64-reference test
(tests/solvers/test_fused_matches_reference.py): the fused scheme's batched run across a
landing, the array operators, a long pattern run against the CPU, and the positive scheme's
kernels (kernels/positive.cu) against the float64 reference, their conservation and positivity and
their device clock. The kernel-ladder rungs are tested with their benchmark
(tests/benchmarks/surface_rd/)."""
from pathlib import Path

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.surface_rd.reference import ArrayOperators

from ..stepwise import Stepwise

pytestmark = pytest.mark.gpu
SNAKE = Path(__file__).resolve().parents[3] / "resources" / "meshes" / "snake.ply"


@pytest.mark.parametrize("model, extra", [("chemotaxis", {}),
                                          ("chemotaxis", {"scheme": "paper"}),
                                          ("gray-scott", {}),  # the lattice kernel
                                          ("gray-scott", {"scenario": "tube"})])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fused_batched_run_lands_like_single_steps(model, extra, dtype):
    """The fused scheme's run (whole steps replayed as CUDA graphs, core's GraphCache; the
    positive scheme with core's DeviceClock; Gray–Scott on the rectangle all whole steps in one
    launch of the lattice kernel; then the shortened one that lands) gives the same steps, times
    and fields, bit for bit, as the same scheme stepped one step at a time, also across a live
    parameter change and a replaced field."""
    kw = dict(backend="cupy", dtype=dtype, kernel="fused", vertices=3000, **extra)
    batched, single = solvers.create(model, **kw), solvers.create(model, **kw)
    single.scheme = Stepwise(single.scheme)
    dt = single.dt
    live = {"chemotaxis": "alpha", "gray-scott": "F"}[model]
    for sim in (batched, single):
        sim.step(5)
        sim.advance(70.3 * dt)
        sim.advance(170.8 * dt)
        sim.step(333)
        sim.set_param(live, sim.params[live] * 1.01)
        sim.step(200)
        name = sim.settable_fields()[0]
        sim.set_field(name, sim.fields()[name] * 0.99)
        sim.advance(sim.t + 150.5 * dt)
    if getattr(batched.scheme, "lattice_why", "") is None:
        assert model == "gray-scott" and "scenario" not in extra  # the rectangle: a lattice
    else:
        assert batched.scheme._graphs.graphs, batched.scheme._graphs.failed
    assert (batched.t, batched.steps) == (single.t, single.steps)
    assert batched.steps >= 5 + 66 + 101 + 333 + 200 + 150
    for k, v in single.fields().items():
        np.testing.assert_array_equal(batched.fields()[k], v)


def test_array_operators_on_the_gpu_match_numpy():
    sim = solvers.create("chemotaxis", backend="cupy", kernel="array", vertices=3000)
    import cupy as cp
    f = np.random.default_rng(0).standard_normal(sim.imesh.n_vertices)
    a_np = ArrayOperators(sim.ops, np, np.float64)
    a_cp = ArrayOperators(sim.ops, cp, np.float64)
    np.testing.assert_allclose(cp.asnumpy(a_cp.vertex_gradient(cp.asarray(f))),
                               a_np.vertex_gradient(f), rtol=1e-12, atol=1e-12)


def test_pattern_forms_on_the_gpu_like_on_the_cpu():
    kw = dict(vertices=600, s=1 / 16, alpha=13.0)
    cpu = solvers.create("chemotaxis", backend="numpy", **kw)
    gpu = solvers.create("chemotaxis", backend="cupy", dtype="float64", **kw)
    for s in (cpu, gpu):
        s.advance(400.0)
    np.testing.assert_allclose(gpu.fields()["cells"], cpu.fields()["cells"], rtol=1e-9)


# ---- the positive scheme (scheme=positive, kernels/positive.cu) ------------------------------
def _rough(sim, seed, spread=1.0):
    """Densities about 1 with a fifth of them 0 (spread 1), chemoattractant in [0, 1]: steep
    gradients, so the positivity bound sets the first steps."""
    rng = np.random.default_rng(seed)
    nv = sim.mesh.n_vertices
    n = 1 + spread * rng.uniform(-1, 1, nv)
    n[rng.random(nv) < 0.2 * spread] = 0.0
    c = 0.5 + 0.5 * spread * rng.uniform(-1, 1, nv)
    return n, c


def _positive_pair(dtype, scenario, **kw):
    mesh = {"mesh": str(SNAKE)} if scenario == "file" else {"vertices": 1500}
    gpu = solvers.create("chemotaxis", backend="cupy", dtype=dtype, kernel="fused",
                         scenario=scenario, **mesh, **kw)
    ref = solvers.create("chemotaxis", backend="numpy", dtype="float64", scenario=scenario,
                         **mesh, **kw)
    assert type(gpu.scheme).__name__ == "FusedPositiveChemotaxis"
    return gpu, ref


def _set(sims, n, c):
    for s in sims:
        s.set_field("cells", n.astype(s.dtype).astype(np.float64))
        s.set_field("chemo", c.astype(s.dtype).astype(np.float64))


@pytest.mark.parametrize("scenario", ["tube", "file"])
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-12), ("float32", 1e-5)])
def test_positive_fused_matches_float64_reference(dtype, tol, scenario):
    """Tube and snake (edges of negative weight): one step from rough data (the increments, the
    step set by the positivity bound) and 30 steps from smoother data, with the same adaptive
    δt's; n ≥ 0."""
    gpu, ref = _positive_pair(dtype, scenario)
    n, c = _rough(ref, 7)
    _set((gpu, ref), n, c)
    gpu.step(1)
    ref.step(1)
    assert gpu.t == pytest.approx(ref.t, rel=tol) and ref.t < 0.5 * ref.dt
    for k, f0 in (("cells", n), ("chemo", c)):
        d_gpu, d_ref = gpu.fields()[k] - f0, ref.fields()[k] - f0
        assert np.abs(d_gpu - d_ref).max() < tol * np.abs(d_ref).max(), k
    assert gpu.fields()["cells"].min() >= 0
    n, c = _rough(ref, 8, spread=0.3)
    _set((gpu, ref), n, c)
    t0g, t0r = gpu.t, ref.t
    gpu.step(30)
    ref.step(30)
    assert gpu.t - t0g == pytest.approx(ref.t - t0r, rel=tol)
    for k, v in ref.fields().items():
        assert np.abs(gpu.fields()[k] - v).max() < tol * np.abs(v).max(), k
    assert gpu.fields()["cells"].min() >= 0


def test_positive_fused_conserves_cells_and_stays_positive():
    """float64 on the device, α = 40 from rough data on the tube: each step changes Σ A n by
    δt Σ A s r n (N − n) to round-off and keeps n ≥ 0; the bound shortens steps."""
    sim = solvers.create("chemotaxis", backend="cupy", dtype="float64", kernel="fused",
                         scenario="tube", vertices=1500, alpha=40.0)
    n, c = _rough(sim, 9)
    _set((sim,), n, c)
    a, p = sim.mesh.mixed_areas, sim.params
    short = 0
    for _ in range(40):
        n = sim.fields()["cells"]
        t0 = sim.t
        sim.step(1)
        dt = sim.t - t0
        short += dt < 0.999 * sim.dt
        new = sim.fields()["cells"]
        logistic = dt * (a * p["s"] * p["r"] * n * (p["N"] - n)).sum()
        assert abs((a * new).sum() - (a * n).sum() - logistic) < 1e-13 * (a * n).sum()
        assert new.min() >= 0
    assert short > 0


def test_positive_batched_run_equals_single_steps_with_adaptive_steps():
    """The device clock (`run`: batches of adaptive steps, landing on t_end) gives the steps,
    times and fields of the same scheme stepped one step at a time, bit for bit."""
    kw = dict(backend="cupy", dtype="float64", kernel="fused", scenario="tube", vertices=1500,
              alpha=40.0)
    batched, single = solvers.create("chemotaxis", **kw), solvers.create("chemotaxis", **kw)
    n, c = _rough(single, 10)
    _set((batched, single), n, c)
    single.scheme = Stepwise(single.scheme)
    for sim in (batched, single):
        sim.advance(0.37)
        sim.step(7)
        sim.advance(sim.t + 1.3)
        for _ in range(2):  # (an odd run: the next starts on the other λ slot)
            sim.step(1)
            sim.step(64)
    # graphs replayed from both λ slots (an odd run before a batch no longer stops them)
    assert {k[-2] for k in batched.scheme._graphs.graphs} == {0, 1}, batched.scheme._graphs.failed
    assert (batched.t, batched.steps) == (single.t, single.steps)
    for k, v in single.fields().items():
        np.testing.assert_array_equal(batched.fields()[k], v)
