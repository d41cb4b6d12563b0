"""Fused CUDA kernels and the CuPy array path of the curvature flows against the NumPy float64
reference (SPEC §6): one right-hand-side evaluation on random smooth data, a fixed-step run, and
the device-decided adaptive run."""
import numpy as np
import pytest

import solvers

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


@pytest.mark.parametrize("scenario,boundary", SETUPS)
@pytest.mark.parametrize("model,dtype", CASES)
def test_fused_rhs_matches_float64_reference(model, dtype, scenario, boundary):
    import cupy as cp
    ref, gpu = pair(model, dtype, scenario, boundary)
    u = smooth_random(ref.state["phi"].shape, 7)
    if boundary == "neumann":
        from solvers.curvature.operators import neumann_fill
        neumann_fill(u)
    t = 0.0371
    f_ref = ref.rhs(t, u)
    f_gpu = gpu._fused.rhs(t, cp.asarray(u, dtype=dtype)).get()
    assert relerr(f_gpu, f_ref) < TOL[dtype] * (30 if model == "willmore" else 10)
    f_arr = gpu.rhs(t, cp.asarray(u, dtype=dtype)).get()  # the array path on the GPU
    assert relerr(f_arr, f_ref) < TOL[dtype] * (30 if model == "willmore" else 10)


@pytest.mark.parametrize("scenario,boundary", SETUPS[:2])
@pytest.mark.parametrize("model,dtype", CASES)
def test_fused_fixed_step_run_matches_reference(model, dtype, scenario, boundary):
    """A huge tolerance accepts every attempt; advancing to t_k = kδ clamps each step to δ, so
    both runs take the same fixed steps through the fused stage kernels."""
    ref, gpu = pair(model, dtype, scenario, boundary, tolerance=1e30, dt=1.0)
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
    assert gpu._fused.graph, gpu._fused.graph_error


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
