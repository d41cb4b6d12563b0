"""GPU kernels of the triangle finite volumes against the NumPy float64 reference (docs/MODELS.md §6), what
the generic fused-equals-reference test does not reach: every (layers, scheme, assembly) in
float32 and float64, mixed precision, on random, discontinuous data (transonic edges included);
lake at rest and mass on the device; batches with the device clock equal single steps."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.shallow_water.riemann import SCHEMES

from ...stepwise import Stepwise

pytestmark = pytest.mark.gpu
ASSEMBLIES = ("edge", "atomic", "cell")


def make(layers, backend, dtype="float64", r=0.9, **kw):
    if layers == 1:
        kw.setdefault("scenario", "bump-dambreak")
        return solvers.create("shallow-water", geometry="triangles", backend=backend,
                              dtype=dtype, cells=1500, **kw)
    return solvers.create("two-layer", backend=backend, dtype=dtype, cells=1500, r=r, **kw)


def randomise(sim, seed=0):
    rng = np.random.default_rng(seed)
    m = len(sim.mesh.cells)
    u = lambda a, b: rng.uniform(a, b, m)  # noqa: E731
    if "h" in sim.state:
        vals = {"H": u(-0.5, 0.5), "h": u(1.5, 2.5), "hu": u(-5, 5), "hv": u(-5, 5)}
    else:
        vals = {"H": u(3, 6), "h1": u(1, 2), "h2": u(1, 3), "q1x": u(-0.5, 0.5),
                "q1y": u(-0.5, 0.5), "q2x": u(-0.5, 0.5), "q2y": u(-0.5, 0.5)}
    for k, v in vals.items():
        sim.set_field(k, v)


def mass(s):
    f, area = s.fields(), np.asarray(s.mesh.cell_areas)
    return np.array([np.dot(area, f[k].astype(np.float64)) for k in ("h1", "h2")])


def compare(layers, scheme, kernel, dtype, assembly="auto", mixed=False, steps=3):
    extra = {"eigen_precision": "float64"} if mixed else {}
    ref = make(layers, "numpy", scheme=scheme, **extra)
    gpu = make(layers, "cupy", dtype, scheme=scheme, kernel=kernel, assembly=assembly, **extra)
    randomise(ref)
    randomise(gpu)
    ref.step(steps)
    gpu.step(steps)
    tol = 1e-12 if dtype == "float64" else 2e-5  # r = 0.9 (see test_float32_roe_needs_mixed)
    assert abs(gpu.t - ref.t) <= tol * ref.t
    fr, fg = ref.fields(), gpu.fields()
    for k in gpu.state:
        scale = np.abs(fr[k]).max()
        err = np.abs(fg[k].astype(np.float64) - fr[k]).max() / scale
        assert err < tol, (k, err)
    # the step changed the state well beyond the tolerance (a real test of the increments)
    ref0 = make(layers, "numpy", scheme=scheme, **extra)
    randomise(ref0)
    moved = max(np.abs(fr[k] - ref0.fields()[k]).max() / np.abs(fr[k]).max() for k in gpu.state)
    assert moved > 100 * tol


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("assembly", ASSEMBLIES)
@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("layers", [1, 2])
def test_fused_kernels_match_float64_reference(layers, scheme, assembly, dtype):
    compare(layers, scheme, "fused", dtype, assembly)


@pytest.mark.parametrize("assembly", ASSEMBLIES)
@pytest.mark.parametrize("scheme", ["roe", "ir-roe"])
def test_mixed_precision_two_layer_roe(scheme, assembly):
    compare(2, scheme, "fused", "float32", assembly, mixed=True)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("scheme", SCHEMES)
def test_fused_lake_at_rest_and_mass(scheme, dtype):
    s = make(1, "cupy", dtype, scheme=scheme, scenario="lake-at-rest")
    f0 = s.fields()
    s.step(50)
    f = s.fields()
    tol = 1e-13 if dtype == "float64" else 2e-6
    assert np.abs(f["eta"] - f0["eta"]).max() < tol * 10
    t = make(2, "cupy", dtype, scheme=scheme, scenario="renumbering-test-1")
    m0 = mass(t)
    t.step(30)
    np.testing.assert_allclose(mass(t), m0, rtol=1e-13 if dtype == "float64" else 1e-6)


@pytest.mark.gpu
@pytest.mark.parametrize("model,kw", [
    ("shallow-water", {"scenario": "bump-dambreak", "cells": 4000}),
    ("two-layer", {"cells": 4000, "scheme": "ir-roe"}),
])  # not assembly=atomic: atomic float sums are not bit-reproducible from run to run anyway
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batched_steps_equal_single_steps_bit_for_bit(model, kw, dtype):
    """Batches run with the clock on the device (core's DeviceClock, kernels/clock_slot.cu,
    replayed as CUDA graphs of GRAPH_STEPS steps) give exactly the per-step run: same t, same step
    count, same fields, also when landing on an end time mid-batch, after a live cfl change (a
    graph with the old cfl must not replay) and after a field was replaced."""
    a = solvers.create(model, backend="cupy", dtype=dtype, **kw)
    b = solvers.create(model, backend="cupy", dtype=dtype, **kw)
    b.scheme = Stepwise(b.scheme)  # no `run`: the base class steps it one step at a time
    for sim in (a, b):
        sim.step(70)
        sim.advance(sim.t + 37.3 * 1e-3)
        sim.step(5)
        sim.set_param("cfl", 0.45)
        sim.step(130)
        name = next(iter(sim.settable_fields()))
        sim.set_field(name, sim.fields()[name] * 1.01)
        sim.step(67)
        for _ in range(2):  # (an odd run: the next starts on the other Δt slot)
            sim.step(1)
            sim.step(64)
    assert a.scheme._graphs.graphs, a.scheme._graphs.failed
    assert {k[3] for k in a.scheme._graphs.graphs} == {0, 1}  # graphs from either Δt slot
    assert (a.t, a.steps) == (b.t, b.steps)
    for name, v in a.fields().items():
        np.testing.assert_array_equal(v, b.fields()[name], err_msg=name)
