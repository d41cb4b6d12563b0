"""Every GPU kernel (each rung of the ladder, the array path, Gray–Scott) against the NumPy
float64 reference on random, non-trivial data (SPEC §6): relative error < 1e-5 in float32 and
< 1e-12 in float64, over one step (the rate) and over a short fixed-step run."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.surface_rd.kernels import RUNGS, FusedStepper
from pdestudio.solvers.surface_rd.operators import ArrayOperators

pytestmark = pytest.mark.gpu
TOL = {"float32": 1e-5, "float64": 1e-12}


def _random_state(sim, seed=3, spread=1.0):
    """Random fields about (1, 1/2): spread 1 gives values in [0.3, 1.7] × [0.1, 0.9] (one step
    only: such rough data makes the chemotaxis term blow up within ~10 steps), smaller spreads
    are for multi-step runs."""
    rng = np.random.default_rng(seed)
    n = sim.mesh.n_vertices
    return 1 + 0.7 * spread * rng.uniform(-1, 1, n), 0.5 + 0.4 * spread * rng.uniform(-1, 1, n)


def _start(sim, dtype, **kw):
    u0, v0 = _random_state(sim, **kw)
    u0 = u0.astype(dtype).astype(np.float64)  # the same rounded start for both
    v0 = v0.astype(dtype).astype(np.float64)
    a, b = sim.species
    sim.set_field(a, u0)
    sim.set_field(b, v0)
    return u0, v0


def _reference(sim, u0, v0, steps):
    """float64 NumPy steps of the same model, mesh and δt (original numbering)."""
    ref = solvers.create(sim.model, backend="numpy", dtype="float64",
                         scenario=sim.scenario_name, **dict(sim.params))
    a, b = sim.species
    ref.set_field(a, u0)
    ref.set_field(b, v0)
    ref.dt = sim.dt
    ref.step(steps)
    return ref.fields()


def _rel(got, want):
    return np.linalg.norm(got - want) / np.linalg.norm(want)


@pytest.mark.parametrize("scenario", ["rectangle", "tube"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("rung", RUNGS + ("array",))
def test_chemotaxis_kernels_match_float64_reference(rung, dtype, scenario):
    kernel = "array" if rung == "array" else "fused"
    sim = solvers.create("chemotaxis", backend="cupy", dtype=dtype, kernel=kernel,
                         scenario=scenario, vertices=5000)
    if kernel == "fused":
        sim._fused = FusedStepper(sim, rung)
    u0, v0 = _start(sim, dtype)
    sim.step(1)
    ref = _reference(sim, u0, v0, 1)
    got = sim.fields()
    for k, start in (("cells", u0), ("chemo", v0)):  # the increments δt·rate
        assert _rel(got[k] - start, ref[k] - start) < TOL[dtype], (rung, k)
    u0, v0 = _start(sim, dtype, seed=4, spread=0.1)
    sim.step(20)
    ref = _reference(sim, u0, v0, 20)
    for k, f in sim.fields().items():
        assert _rel(f, ref[k]) < TOL[dtype], (rung, k)


def test_ring_rung_falls_back_to_face_slots_on_flipped_faces(tmp_path):
    from pdestudio.solvers.mesh import tube, write_mesh
    t = tube(2000)
    cells = t.cells.copy()
    cells[::7] = cells[::7][:, [0, 2, 1]]  # inconsistent orientation: no fan order
    from pdestudio.solvers.mesh import TriangleMesh
    write_mesh(tmp_path / "flipped.ply", TriangleMesh(t.points, cells))
    sim = solvers.create("chemotaxis", backend="cupy", dtype="float64", scenario="file",
                         mesh=str(tmp_path / "flipped.ply"))
    sim._fused = FusedStepper(sim, "ring")
    assert sim._fused.rung == "geom"
    u0, v0 = _start(sim, "float64", seed=4, spread=0.1)
    sim.step(10)
    ref = _reference(sim, u0, v0, 10)
    for k, f in sim.fields().items():
        assert _rel(f, ref[k]) < 1e-12, k


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kernel", ["fused", "array"])
def test_gray_scott_kernels_match_float64_reference(kernel, dtype):
    sim = solvers.create("gray-scott", backend="cupy", dtype=dtype, kernel=kernel,
                         scenario="tube", vertices=5000)
    u0, v0 = _start(sim, dtype, seed=5)
    sim.step(1)
    ref = _reference(sim, u0, v0, 1)
    got = sim.fields()
    for k, start in (("u", u0), ("v", v0)):
        assert _rel(got[k] - start, ref[k] - start) < TOL[dtype], k
    sim.step(29)
    ref = _reference(sim, u0, v0, 30)
    for k, f in sim.fields().items():
        assert _rel(f, ref[k]) < TOL[dtype], k


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
