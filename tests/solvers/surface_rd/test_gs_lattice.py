"""Gray–Scott on lattice meshes by thread-block clusters (surface_rd/lattice_gs.py,
kernels/gs_lattice.cu): the plan's cluster sizes, the 5-point step it takes against the cotangent
reference, and on the device the kernel against a float64 NumPy model of its step on random data
for every cluster size, bit for bit across cluster sizes and launch lengths, and the solo scheme
(many steps a launch) against step-by-step stepping."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.mesh.lattice import find_lattice
from pdestudio.solvers.surface_rd import lattice_gs


# how many clusters of each size an H200 runs at once (2, 4, 8 measured: 66, 30, 15; 3 and 6
# stand-ins), for the plan's choices without a GPU
H200 = {1: 132, 2: 66, 3: 42, 4: 30, 6: 21, 8: 15}


def test_plan_spreads_members_over_the_sms():
    # the sweep benchmark's case, 201 × 100 float32: 64 members → 64 clusters of 2 (strips of 50
    # rows), 32 members → clusters of 3 (32 clusters of 4 would take two waves), 30 → clusters
    # of 4, 16 → clusters of 6, one member → a cluster of 8
    assert lattice_gs.plan(201, 100, 64, 4, H200)[:2] == (2, 50)
    assert lattice_gs.plan(201, 100, 32, 4, H200)[:2] == (3, 34)
    assert lattice_gs.plan(201, 100, 30, 4, H200)[:2] == (4, 25)
    assert lattice_gs.plan(201, 100, 16, 4, H200)[:2] == (6, 17)
    assert lattice_gs.plan(201, 100, 1, 4, H200)[:2] == (8, 13)
    # float64: a strip of 50 rows needs (2·52·201 + 2) (u, v) pairs of 16 bytes = 334 KB > 227
    # KB; 34 rows just fit
    assert lattice_gs.shape(201, 100, 2, 8) is None
    assert lattice_gs.shape(201, 100, 3, 8) == (34, (2 * 36 * 201 + 2) * 16)
    assert lattice_gs.plan(201, 100, 64, 8, H200)[0] == 3
    # a strip needs 4 rows (two bands of at least 2): 9 rows in strips of 3 or 2 have too few,
    # 21 rows in strips of 6 leave 3 for the last, 22 leave 4
    assert lattice_gs.shape(40, 9, 8, 4) is None and lattice_gs.shape(40, 9, 4, 4) is None
    assert lattice_gs.shape(40, 9, 2, 4) == (5, (2 * 7 * 40 + 2) * 8)
    assert lattice_gs.shape(40, 21, 4, 4) is None
    assert lattice_gs.shape(40, 22, 4, 4) == (6, (2 * 8 * 40 + 2) * 8)
    # a row wider than half a block's 1024 threads has no strip (a thread walks a column, a
    # block at least two bands of rows)
    assert lattice_gs.shape(513, 8, 1, 4) is None and lattice_gs.shape(512, 8, 1, 4) is not None
    # a lattice too wide for a cluster of 8 has no plan
    assert lattice_gs.plan(2000, 2000, 1, 4, H200) is None
    # a cluster size the device cannot run is not chosen
    assert lattice_gs.plan(201, 100, 1, 4, {**H200, 8: 0, 6: 0})[0] == 4


def test_the_cpu_keeps_the_one_ring_scheme():
    sim = solvers.create("gray-scott", backend="numpy", vertices=500)
    assert lattice_gs.why_not(sim, find_lattice(sim.imesh, sim.ops.L)) == "the CPU backend"


def lattice_step(lat, u, v, par, dt, steps):
    """`steps` steps of the 5-point Gray–Scott step in float64 (rows: members; internal order)."""
    u, v = (np.asarray(a, np.float64)[:, lat.order].reshape(len(a), lat.ny, lat.nx).copy()
            for a in (u, v))
    ax, ay = 1 / lat.hx**2, 1 / lat.hy**2
    P = np.asarray(par, np.float64)
    Du, Dv, F, k = (P[:, i, None, None] for i in range(4))
    d = np.asarray(dt, np.float64)[:, None, None]

    def lap(f):
        p = np.pad(f, ((0, 0), (1, 1), (1, 1)), mode="reflect")
        return (ax * ((p[:, 1:-1, :-2] - f) + (p[:, 1:-1, 2:] - f))
                + ay * ((p[:, :-2, 1:-1] - f) + (p[:, 2:, 1:-1] - f)))
    for _ in range(steps):
        uvv = u * v * v
        u, v = (u + d * (Du * lap(u) - uvv + F * (1 - u)),
                v + d * (Dv * lap(v) + uvv - (F + k) * v))
    out = []
    for f in (u, v):
        g = np.empty((len(f), len(lat.order)))
        g[:, lat.order] = f.reshape(len(f), -1)
        out.append(g)
    return out


def test_the_5_point_step_is_the_cotangent_reference_step_on_the_rectangle():
    sim = solvers.create("gray-scott", backend="numpy", vertices=1500, dtype="float64")
    lat = find_lattice(sim.imesh, sim.ops.L)
    assert lat is not None
    u0, v0 = (sim.state[k].copy() for k in ("u", "v"))
    sim.step(5)
    p = sim.params
    u, v = lattice_step(lat, u0[None], v0[None], [[p["Du"], p["Dv"], p["F"], p["k"]]], [sim.dt],
                        5)
    np.testing.assert_allclose(u[0], sim.state["u"], rtol=0, atol=1e-13)
    np.testing.assert_allclose(v[0], sim.state["v"], rtol=0, atol=1e-13)


def _device_case(dtype, vertices=3000, members=3, seed=0):
    import cupy as cp
    sim = solvers.create("gray-scott", backend="cupy", dtype=dtype, vertices=vertices,
                         kernel="fused")
    t = lattice_gs.tables(sim)
    assert t["why"] is None, t["why"]
    rng = np.random.default_rng(seed)
    n = sim.imesh.n_vertices
    real = sim.real
    u = rng.uniform(0.2, 1.0, (members, n))
    v = rng.uniform(0.0, 0.5, (members, n))
    par = np.array([[0.02, 0.01, 0.037, 0.06], [0.03, 0.012, 0.05, 0.062],
                    [0.01, 0.005, 0.02, 0.055]])[:members]
    dts = np.array([0.1, 0.07, 0.0])[:members]  # the last member inactive: copied
    dev = lambda a: cp.asarray(a.astype(real))  # noqa: E731
    return sim, t, (u, v, par, dts), dev


def _run(t, dev, u, v, par, dts, steps, cluster=None, split=None):
    import cupy as cp
    a, b = dev(u), dev(v)
    for count in (split or [steps]):
        ao, bo = cp.empty_like(a), cp.empty_like(b)
        lattice_gs.launch(t, a, b, ao, bo, len(u), dev(par), dev(dts), count, cluster=cluster)
        a, b = ao, bo
    return a.get(), b.get()


@pytest.mark.gpu
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-12), ("float32", 2e-5)])
def test_gpu_lattice_kernel_matches_the_float64_5_point_step(dtype, tol, gpu_backend):
    sim, t, (u, v, par, dts), dev = _device_case(dtype)
    lat = t["lat"]
    ref_u, ref_v = lattice_step(lat, u, v, par, dts, 9)
    results = {}
    for C in lattice_gs.CLUSTERS:
        if lattice_gs.shape(lat.nx, lat.ny, C, np.dtype(sim.real).itemsize) is None:
            continue
        got = _run(t, dev, u, v, par, dts, 9, cluster=C)
        for g, r in zip(got, (ref_u, ref_v)):
            err = np.abs(g - r).max() / np.abs(r).max()
            assert err < tol, (C, err)
        # the inactive member is its input, bit for bit
        assert np.array_equal(got[0][2], u[2].astype(sim.real))
        results[C] = got
    assert len(results) >= 3, results.keys()
    first = next(iter(results.values()))
    for C, got in results.items():  # the cluster size does not change a bit
        assert all(np.array_equal(g, f) for g, f in zip(got, first)), C
    split = _run(t, dev, u, v, par, dts, 9, split=[4, 1, 4])  # nor the steps a launch takes
    assert all(np.array_equal(g, f) for g, f in zip(split, first))


@pytest.mark.gpu
def test_gpu_uneven_strips_and_a_tall_lattice(gpu_backend):
    # 43 × 21: strips of 21, of 11 (the last of 10) and of 7 (clusters of 4 and more leave the
    # last strip fewer than 4 rows: not planned)
    sim, t, (u, v, par, dts), dev = _device_case("float64", vertices=900)
    lat = t["lat"]
    ref = lattice_step(lat, u, v, par, dts, 5)
    for C in lattice_gs.CLUSTERS:
        if lattice_gs.shape(lat.nx, lat.ny, C, 8) is None:
            continue
        got = _run(t, dev, u, v, par, dts, 5, cluster=C)
        for g, r in zip(got, ref):
            assert np.abs(g - r).max() < 1e-12 * np.abs(r).max(), (C, lat.nx, lat.ny)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gpu_solo_runs_whole_steps_in_one_launch_as_step_by_step(dtype, gpu_backend):
    a = solvers.create("gray-scott", backend=gpu_backend, dtype=dtype, vertices=3000,
                       kernel="fused")
    b = solvers.create("gray-scott", backend=gpu_backend, dtype=dtype, vertices=3000,
                       kernel="fused")
    assert a.scheme.lattice_why is None
    a.step(50)  # 50 steps in one launch
    for _ in range(50):
        b.step(1)
    a.advance(a.t + 2.55)  # whole steps in one launch, then the shortened one that lands
    b.advance(b.t + 2.55)
    assert a.t == b.t and a.steps == b.steps
    for k in a.state:
        assert np.array_equal(a.state[k].get(), b.state[k].get()), k


@pytest.mark.gpu
def test_gpu_the_tube_keeps_the_one_ring_kernel(gpu_backend):
    sim = solvers.create("gray-scott", backend=gpu_backend, scenario="tube", vertices=2000,
                         kernel="fused")
    assert sim.scheme.lattice_why == "the mesh is not a lattice"
    sim.step(3)
    assert all(bool(np.isfinite(s.get()).all()) for s in sim.state.values())


@pytest.mark.gpu
def test_gpu_the_widest_rows_walk_in_two_bands(gpu_backend):
    # 500 × 10 nodes: two bands of 500 threads a block (G = 2); bands of 2 and 3 rows in
    # clusters of 2, and in a cluster of 1 both physical ends' mirrors in one block
    import cupy as cp
    from pdestudio.solvers.mesh.lattice import Lattice
    sim, t, _, _ = _device_case("float64", vertices=900)
    nx, ny = 500, 10
    lat = Lattice(nx, ny, 0.5, 0.7, np.random.default_rng(3).permutation(nx * ny))
    t = dict(t, lat=lat, node=cp.asarray(lat.order, dtype=cp.int32), plans={}, limits=None,
             ax=1 / lat.hx**2, ay=1 / lat.hy**2)
    rng = np.random.default_rng(4)
    u, v = rng.uniform(0.2, 1.0, (2, nx * ny)), rng.uniform(0.0, 0.5, (2, nx * ny))
    par = np.array([[0.02, 0.01, 0.037, 0.06], [0.03, 0.012, 0.05, 0.062]])
    dts = np.array([0.1, 0.05])
    ref = lattice_step(lat, u, v, par, dts, 6)
    dev = lambda a: cp.asarray(a)  # noqa: E731
    done = 0
    for C in lattice_gs.CLUSTERS:
        if lattice_gs.shape(nx, ny, C, 8) is None:
            continue
        got = _run(t, dev, u, v, par, dts, 6, cluster=C)
        for g, r in zip(got, ref):
            assert np.abs(g - r).max() < 1e-12 * np.abs(r).max(), C
        done += 1
    assert done >= 2
