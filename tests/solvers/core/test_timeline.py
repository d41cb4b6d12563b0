"""Snapshot / restore (issue 17) and declared quantities, for every registered model: stepping on
after a restore is bit-identical to the first continuation (NumPy here, CuPy fused and array
paths on the device), a fork into a simulation with other parameters takes the state, and a
snapshot that does not fit is refused without any change."""
import numpy as np
import pytest

from pdestudio import solvers

SMALL = {"heat-1d": 64, "ks-1d": 128, "euler-1d": 64, "mean-curvature": 24, "willmore": 16,
         "chemotaxis": 1500, "gray-scott": 1500, "shallow-water": 24, "two-layer": 200}


def small(model, **kw):
    d = solvers.describe(model)
    return solvers.create(model, **{d["size_param"]: SMALL[model]}, **kw)


def host_state(sim):
    return {k: np.array(v.get() if hasattr(v, "get") else v) for k, v in sim.state.items()}


def continuation_is_identical(sim):
    sim.step(4)
    snap = sim.snapshot()
    sim.step(7)
    first, t1, n1 = host_state(sim), sim.t, sim.steps
    sim.restore(snap)
    assert sim.t == snap.t and sim.steps == snap.steps
    sim.step(7)
    again = host_state(sim)
    assert sim.t == t1 and sim.steps == n1
    for k in first:
        assert np.array_equal(first[k], again[k]), k
    # the steps changed the state (else the comparison above proves nothing)
    assert any(not np.array_equal(first[k], host_state_at(snap, k)) for k in first)


def host_state_at(snap, k):
    a = snap.state[k]
    return np.array(a.get() if hasattr(a, "get") else a)


@pytest.mark.parametrize("model", sorted(SMALL))
def test_restore_continues_bit_identically_numpy(model):
    continuation_is_identical(small(model, backend="numpy"))


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", ["fused", "array"])
@pytest.mark.parametrize("model", sorted(SMALL))
def test_restore_continues_bit_identically_gpu(model, kernel, gpu_backend):
    d = solvers.describe(model)
    kw = {"kernel": kernel} if any(p["name"] == "kernel" for p in d["parameters"]) else {}
    if kernel == "array" and not kw:
        pytest.skip(f"{model} has one GPU path")
    sim = small(model, backend=gpu_backend, dtype="float32", **kw)
    continuation_is_identical(sim)
    assert type(sim.snapshot().state[next(iter(sim.state))]).__module__.startswith("cupy")


def test_snapshot_is_a_copy_and_counts_its_bytes():
    sim = small("heat-1d", backend="numpy")
    snap = sim.snapshot()
    before = host_state_at(snap, "T").copy()
    sim.step(5)
    assert np.array_equal(host_state_at(snap, "T"), before)
    assert snap.nbytes == sum(a.nbytes for a in sim.state.values())


def test_fork_into_other_parameters_and_dtype():
    a = small("gray-scott", backend="numpy")
    a.step(10)
    b = solvers.create("gray-scott", backend="numpy", dtype="float32", vertices=1500, F=0.05)
    b.restore(a.snapshot(), keep_params=True)  # a fork: F (live) stays b's
    assert b.t == a.t and b.params["F"] == 0.05 and b.state["u"].dtype == np.float32
    assert np.allclose(b.state["u"], a.state["u"], rtol=1e-6)


def test_restore_refuses_what_does_not_fit():
    a = small("heat-1d", backend="numpy")
    b = solvers.create("heat-1d", backend="numpy", nx=128)
    before = host_state(b)
    with pytest.raises(solvers.ParameterError, match="shape"):
        b.restore(a.snapshot())
    with pytest.raises(solvers.ParameterError, match="model 'heat-1d'"):
        small("ks-1d", backend="numpy").restore(a.snapshot())
    with pytest.raises(solvers.ParameterError, match="Snapshot"):
        b.restore({"T": 1})
    assert all(np.array_equal(before[k], host_state(b)[k]) for k in before) and b.t == 0


@pytest.mark.parametrize("model", sorted(SMALL))
def test_quantities_are_declared_and_finite(model):
    sim = small(model, backend="numpy")
    sim.step(2)
    q = sim.quantities()
    declared = [d["name"] for d in solvers.describe(model)["quantities"]]
    assert list(q) == declared and declared
    # NaN only for an error against an exact solution the scenario does not have
    assert all(np.isfinite(v) or (k == "error" and sim.scenario_name != "eoc-exact")
               for k, v in q.items())


@pytest.mark.gpu
@pytest.mark.parametrize("model", sorted(SMALL))
def test_gpu_checkpoint_with_fields_and_mesh_reloads(model, gpu_backend, tmp_path):
    """A data export from the GPU (state, fields and the mesh's host coordinates) loads back
    and continues like the original (found by the sweep: the mesh's NumPy arrays were asked
    for `.get()`)."""
    sim = small(model, backend=gpu_backend, dtype="float32")
    sim.step(3)
    sim.save(tmp_path / "s.npz", include_fields=True)
    back = solvers.load(tmp_path / "s.npz", backend=gpu_backend)
    assert back.t == sim.t and back.steps == sim.steps
    sim.step(2)
    back.step(2)
    for k in sim.state:
        assert np.array_equal(host_state(sim)[k], host_state(back)[k]), k
