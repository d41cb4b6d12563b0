"""The chemotaxis kernel ladder (benchmarks/surface_rd): every rung, put on a simulation as its
scheme, agrees with the NumPy float64 reference on random, non-trivial data (< 1e-5 relative in
float32, < 1e-12 in float64); the ring rung falls back to face slots where the mesh has no
consistent fans; the block size changes nothing."""
import numpy as np
import pytest

from benchmarks.surface_rd import ladder
from benchmarks.surface_rd.rungs import RUNGS, Geom, rung_name, rung_scheme, traffic
from pdestudio import solvers
from pdestudio.solvers.mesh import TriangleMesh, tube, write_mesh

TOL = {"float32": 1e-5, "float64": 1e-12}


def random_state(sim, seed=3, spread=1.0):
    """Random fields about (1, 1/2): spread 1 gives values in [0.3, 1.7] × [0.1, 0.9] (one step
    only: such rough data makes the chemotaxis term blow up within ~10 steps), smaller spreads
    are for multi-step runs."""
    rng = np.random.default_rng(seed)
    n = sim.mesh.n_vertices
    return 1 + 0.7 * spread * rng.uniform(-1, 1, n), 0.5 + 0.4 * spread * rng.uniform(-1, 1, n)


def start(sim, dtype, **kw):
    """Put the same random state, rounded to `dtype`, on `sim`; returns it (float64)."""
    sim.check_bounds = False  # random data: the paper's scheme may undershoot its bound
    u0, v0 = random_state(sim, **kw)
    u0 = u0.astype(dtype).astype(np.float64)
    v0 = v0.astype(dtype).astype(np.float64)
    a, b = sim.species
    sim.set_field(a, u0)
    sim.set_field(b, v0)
    return u0, v0


def reference(sim, u0, v0, steps):
    """float64 NumPy steps of the same model, mesh and δt (original numbering)."""
    ref = solvers.create(sim.model, backend="numpy", dtype="float64",
                         scenario=sim.scenario_name, **dict(sim.params))
    a, b = sim.species
    ref.set_field(a, u0)
    ref.set_field(b, v0)
    ref.dt = sim.dt
    ref.check_bounds = sim.check_bounds = False  # random data: the paper's scheme may undershoot
    ref.step(steps)
    return ref.fields()


def rel(got, want):
    return np.linalg.norm(got - want) / np.linalg.norm(want)


def check_against_reference(sim, dtype, steps=20):
    """One step (the increments δt·rate) from rough data, then `steps` from smoother data."""
    u0, v0 = start(sim, dtype)
    sim.step(1)
    ref = reference(sim, u0, v0, 1)
    got = sim.fields()
    for k, s0 in zip(sim.species, (u0, v0)):
        assert rel(got[k] - s0, ref[k] - s0) < TOL[dtype], k
    u0, v0 = start(sim, dtype, seed=4, spread=0.1)
    sim.step(steps)
    ref = reference(sim, u0, v0, steps)
    for k, f in sim.fields().items():
        assert rel(f, ref[k]) < TOL[dtype], k


@pytest.fixture
def flipped_mesh(tmp_path):
    """A tube with every 7th face turned over: no consistent fan order at many vertices."""
    t = tube(2000)
    cells = t.cells.copy()
    cells[::7] = cells[::7][:, [0, 2, 1]]
    path = tmp_path / "flipped.ply"
    write_mesh(path, TriangleMesh(t.points, cells))
    return str(path)


def test_ring_needs_fans_and_traffic_orders_the_rungs(flipped_mesh):
    sim = solvers.create("chemotaxis", backend="numpy", scenario="file", mesh=flipped_mesh)
    assert rung_name(sim, "ring") == "geom" and rung_name(sim, "vec") == "vec"
    assert traffic(sim, "ring") == traffic(sim, "geom")
    sim = solvers.create("chemotaxis", backend="numpy", vertices=2000)
    assert rung_name(sim, "ring") == "ring"
    b = {r: traffic(sim, r) for r in RUNGS}
    assert b["naive"] > b["fusion1"] > b["csr"] == b["padded"] == b["vec"] > b["geom"]


def test_ladder_without_a_gpu_says_so(tmp_path):
    if solvers.gpu_status()[0]:
        pytest.skip("a GPU is available")
    assert ladder.main(["--out", str(tmp_path)]) == 2


@pytest.mark.gpu
@pytest.mark.parametrize("scenario", ["rectangle", "tube"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("rung", list(RUNGS))
def test_every_rung_matches_float64_reference(rung, dtype, scenario):
    sim = solvers.create("chemotaxis", backend="cupy", dtype=dtype, kernel="fused",
                         scenario=scenario, vertices=5000, scheme="paper")
    sim.scheme = rung_scheme(sim, rung)
    check_against_reference(sim, dtype)


@pytest.mark.gpu
def test_ring_rung_falls_back_to_face_slots_on_flipped_faces(flipped_mesh):
    sim = solvers.create("chemotaxis", backend="cupy", dtype="float64", scenario="file",
                         mesh=flipped_mesh, scheme="paper")
    sim.scheme = rung_scheme(sim, "ring")
    assert type(sim.scheme) is Geom
    u0, v0 = start(sim, "float64", seed=4, spread=0.1)
    sim.step(10)
    ref = reference(sim, u0, v0, 10)
    for k, f in sim.fields().items():
        assert rel(f, ref[k]) < 1e-12, k


@pytest.mark.gpu
@pytest.mark.parametrize("rung", ["vec", "ring"])
def test_block_size_changes_nothing(rung):
    out = []
    for block in (128, 256, 512):
        sim = solvers.create("chemotaxis", backend="cupy", dtype="float32", vertices=3000,
                             scheme="paper")
        sim.scheme = rung_scheme(sim, rung, block=block)
        start(sim, "float32", seed=4, spread=0.1)
        sim.step(10)
        out.append(sim.fields())
    for f in out[1:]:
        for k, v in f.items():
            np.testing.assert_array_equal(v, out[0][k])
