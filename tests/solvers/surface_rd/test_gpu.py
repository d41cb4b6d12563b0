"""The GPU paths beyond the generic GPU-equals-float64-reference test
(tests/solvers/test_fused_matches_reference.py): the fused scheme's batched run across a
landing, the array operators, and a long pattern run against the CPU. The kernel-ladder rungs
are tested with their benchmark (tests/benchmarks/surface_rd/)."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.surface_rd.reference import ArrayOperators

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("model", ["chemotaxis", "gray-scott"])
def test_fused_batched_run_lands_like_single_steps(model):
    """The fused scheme's run (whole steps, then the shortened one that lands) gives the same
    steps, times and fields, bit for bit, as the same scheme stepped one step at a time."""
    class OneAtATime:  # no `run`: the base class steps it one step at a time
        def __init__(self, scheme):
            self.inner = scheme

        def step(self, t, dt_limit):
            return self.inner.step(t, dt_limit)

        def invalidate(self):
            self.inner.invalidate()

    kw = dict(backend="cupy", dtype="float64", kernel="fused", vertices=3000)
    batched, single = solvers.create(model, **kw), solvers.create(model, **kw)
    single.scheme = OneAtATime(single.scheme)
    dt = single.dt
    for sim in (batched, single):
        sim.step(5)
        sim.advance(70.3 * dt)
        sim.advance(170.8 * dt)
    assert (batched.t, batched.steps) == (single.t, single.steps) == (170.8 * dt, 5 + 66 + 101)
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
