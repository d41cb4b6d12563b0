"""The lean (warp-per-column-strip, register sliding window) kernels of curvature.cu on several
launch grids: the lean grid (one warp per strip × segment, the production grid) and a grid of a
few blocks that loops over all work items, on sizes whose strips and segments end ragged — against
the NumPy float64 reference (rhs) and through fixed-step RKM runs of the graph path (stages). The
grid is an option of the fused scheme: `FusedRKM(sim, path="graph", grid=...)`."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.curvature.fused import FusedRKM, lean_grid
from pdestudio.solvers.curvature.reference import RKMReference, neumann_fill

from .test_gpu import CASES, SETUPS, TOL, relerr, smooth_random

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("shape", [(70, 45), (29, 97), (121, 64), (300, 290)])
@pytest.mark.parametrize("scenario,boundary", SETUPS)
@pytest.mark.parametrize("model,dtype", CASES)
def test_lean_rhs_on_any_grid_matches_reference(model, dtype, scenario, boundary, shape):
    import cupy as cp
    nx, ny = shape
    if dtype == "float32" and nx * ny > 20000:
        # float32 rounding of φ enters f amplified by 1/h² (~5600 here): beyond the 1e-5-relative
        # tolerance on smooth data whose f is O(1); the small shapes cover float32 (the H100 run
        # of 2026-11-22 measured float32 sine-rings/dirichlet at 300×290 above 1e-4)
        pytest.skip("float32 at 300×290 exceeds the float32 tolerance by rounding alone")
    p = dict(scenario=scenario, boundary=boundary, nx=nx, ny=ny, F=0.3)
    ref = solvers.create(model, backend="numpy", dtype="float64", **p)
    gpu = solvers.create(model, backend="cupy", dtype=dtype, kernel="fused", **p)
    u = smooth_random(ref.state["phi"].shape, 11)
    if boundary == "neumann":
        neumann_fill(u)
    t = 0.0213
    f_ref = ref.scheme.rhs(t, u)
    ud = cp.asarray(u, dtype=dtype)
    tol = TOL[dtype] * (30 if model == "willmore" else 10)
    for grid in (lean_grid(gpu.willmore, nx, ny), (3, 1)):
        out = cp.full_like(ud, cp.nan)
        FusedRKM(gpu, path="graph", grid=grid).rhs(t, ud, out)
        out = out.get()
        assert np.isfinite(out).all(), grid  # every node written exactly where it must be
        assert relerr(out, f_ref) < tol, grid
    f_arr = RKMReference(gpu).rhs(t, ud).get()  # the array path on the GPU
    assert relerr(f_arr, f_ref) < tol


@pytest.mark.parametrize("model,dtype", CASES)
@pytest.mark.parametrize("scenario,boundary", SETUPS[:3])
def test_lean_stage_kernels_fixed_steps_on_lean_grid(model, dtype, scenario, boundary):
    """Fixed steps (huge tolerance, end times kδ) of the graph path launched on the lean grid and
    on a 2-block grid agree with the NumPy float64 reference."""
    kw = dict(scenario=scenario, boundary=boundary, nx=61, ny=77, F=0.3, tolerance=1e30, dt=1.0)
    ref = solvers.create(model, backend="numpy", dtype="float64", **kw)
    u = smooth_random(ref.state["phi"].shape, 5) + ref.fields()["phi"]
    ref.set_field("phi", u)
    u = ref.fields()["phi"]
    h = min(ref.h1, ref.h2)
    delta = 0.2 * 3.5 * (h * h / 8 if model == "mean-curvature" else h**4 / 64)
    for k in range(1, 7):
        ref.advance(k * delta)
    b = ref.fields()["phi"]
    change = np.abs(b - u).max()
    rounding = 20 * 6 * np.finfo(dtype).eps * np.abs(u).max()
    assert change > 100 * rounding
    for which in ("lean", "small"):
        gpu = solvers.create(model, backend="cupy", dtype=dtype, kernel="fused", **kw)
        grid = lean_grid(gpu.willmore, 61, 77) if which == "lean" else (2, 1)
        gpu.scheme = FusedRKM(gpu, path="graph", grid=grid)
        gpu.set_field("phi", u)
        for k in range(1, 7):
            gpu.advance(k * delta)
        assert gpu.steps == ref.steps == 6 and gpu.t == ref.t
        a = gpu.fields()["phi"].astype(np.float64)
        assert np.abs(a - b).max() <= 30 * TOL[dtype] * change + rounding, which
