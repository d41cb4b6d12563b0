"""integrator=imex on the GPU (issue 16): the cuFFT transforms against scipy, and the IMEX scheme
on both GPU paths (FusedIMEX: the fused right-hand-side kernels; IMEXReference on CuPy arrays)
against the NumPy float64 reference, with fixed and with adaptive steps."""
import numpy as np
import pytest
from scipy import fft

from pdestudio import solvers
from pdestudio.solvers.curvature import spectral
from pdestudio.solvers.curvature.imex import IMEXReference
from pdestudio.solvers.curvature.imex_fused import FusedIMEX

pytestmark = pytest.mark.gpu

TOL = {"float32": 1e-5, "float64": 1e-12}
CASES = [("mean-curvature", "float32"), ("mean-curvature", "float64"), ("willmore", "float64")]
SETUPS = [("eoc-exact", "dirichlet"), ("sine-rings", "neumann")]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(44, 69), (255, 255)])
def test_cufft_transforms_equal_scipy(shape, dtype):
    import cupy as cp
    a = np.random.default_rng(1).normal(size=shape)
    g = cp.asarray(a, dtype=dtype)
    for mine, ref in ((spectral.dst1_2d, fft.dstn(a, type=1, norm="ortho")),
                      (spectral.dct2_2d, fft.dctn(a, type=2, norm="ortho")),
                      (spectral.idct2_2d, fft.idctn(a, type=2, norm="ortho"))):
        out = mine(g, cp)
        assert out.dtype == np.dtype(dtype)
        err = float(np.abs(cp.asnumpy(out) - ref).max() / np.abs(ref).max())
        assert err < 50 * TOL[dtype], (mine.__name__, err)


def smooth_random(shape, seed):
    rng = np.random.default_rng(seed)
    ny, nx = shape
    y, x = np.meshgrid(np.linspace(0, 1, ny), np.linspace(0, 1, nx), indexing="ij")
    f = np.zeros(shape)
    for _ in range(6):
        kx, ky = rng.integers(1, 4, 2)
        f += rng.normal(0, 0.15) * np.cos(np.pi * kx * x + rng.uniform(0, 6)) \
            * np.cos(np.pi * ky * y + rng.uniform(0, 6))
    return f


@pytest.mark.parametrize("kernel", ["fused", "array"])
@pytest.mark.parametrize("scenario,boundary", SETUPS)
@pytest.mark.parametrize("model,dtype", CASES)
def test_fixed_imex_steps_match_the_float64_reference(model, dtype, scenario, boundary, kernel):
    """A huge tolerance accepts every attempt; advancing to t_k = kδ clamps each step to δ
    (beyond the explicit stability limit: 20 h²/8 for mean curvature, 3 h⁴/64 for Willmore, whose
    steep sine rings amplify round-off ~1e6-fold at 20 h⁴/64, where the tolerance would never
    accept such steps), so GPU and NumPy take the same 6 steps."""
    p = dict(scenario=scenario, boundary=boundary, nx=70, ny=45, F=0.3, tolerance=1e30, dt=1.0,
             integrator="imex")
    ref = solvers.create(model, backend="numpy", dtype="float64", **p)
    gpu = solvers.create(model, backend="cupy", dtype=dtype, kernel=kernel, **p)
    assert type(gpu.scheme) is (FusedIMEX if kernel == "fused" else IMEXReference)
    u = smooth_random(ref.state["phi"].shape, 3) + ref.fields()["phi"]
    ref.set_field("phi", u)
    gpu.set_field("phi", u)
    u = ref.fields()["phi"]
    h = min(ref.h1, ref.h2)
    delta = 20 * h * h / 8 if model == "mean-curvature" else 3 * h**4 / 64
    for k in range(1, 7):
        ref.advance(k * delta)
        gpu.advance(k * delta)
    assert gpu.steps == ref.steps == 6 and gpu.t == ref.t
    a, b = gpu.fields()["phi"].astype(np.float64), ref.fields()["phi"]
    change = np.abs(b - u).max()
    rounding = 50 * np.finfo(dtype).eps * np.abs(u).max()
    assert change > 100 * rounding
    assert np.abs(a - b).max() <= 30 * TOL[dtype] * change + rounding
    if boundary == "neumann":
        np.testing.assert_array_equal(a[0], a[1])
        np.testing.assert_array_equal(a[:, -1], a[:, -2])


@pytest.mark.parametrize("model,nx,t_end", [("mean-curvature", 64, 0.05), ("willmore", 64, 0.02)])
def test_adaptive_imex_run_matches_reference(model, nx, t_end):
    """float64 eoc-exact: the GPU paths accept and reject like the NumPy reference (same steps)
    and land on the same state."""
    kw = dict(scenario="eoc-exact", nx=nx, integrator="imex")
    ref = solvers.create(model, backend="numpy", **kw)
    runs = [solvers.create(model, backend="cupy", kernel=k, **kw) for k in ("fused", "array")]
    for s in [ref, *runs]:
        s.advance(t_end)
    b = ref.fields()["phi"]
    for s in runs:
        assert s.t == ref.t == t_end and s.steps == ref.steps
        assert s.tau == pytest.approx(ref.tau, rel=1e-6)
        assert float(np.abs(s.fields()["phi"] - b).max() / np.abs(b).max()) < 1e-9
