"""Live parameters (issue 17): for every live parameter of every model, changing it at step k
of a run is the same (bit for bit) as a simulation created with the new value and restored to
that run's state at step k; a value the model refuses (e.g. a step above the stability bound)
changes nothing."""
import numpy as np
import pytest

from pdestudio import solvers

from .test_timeline import SMALL, host_state

NEW = {"Fo": 0.3, "alpha_heat": 1.7, "cfl": 0.5, "tolerance": 3e-6, "F": 0.05, "D": 0.3,
       "r": 1.2, "alpha": 14.0, "s": 1.5, "Du": 0.03, "Dv": 0.015, "k": 0.062,
       "C": 0.02, "dt": None}


def cases():
    for m in sorted(SMALL):
        for p in solvers.describe(m)["parameters"]:
            if p["live"] and p["name"] != "kernel":
                yield m, p["name"]


def new_value(model, name, sim):
    if name == "dt":  # surface RD: a fixed step below the bound
        return 0.5 * sim.dt
    if model == "gray-scott" and name == "F":
        return 0.045
    return NEW[name]


def check(model, name, backend, **kw):
    d = solvers.describe(model)
    kw = {d["size_param"]: SMALL[model], **kw}
    a = solvers.create(model, backend=backend, **kw)
    a.step(5)
    snap = a.snapshot()
    value = new_value(model, name, a)
    a.set_param(name, value)
    assert a.params[name] == value
    b = solvers.create(model, backend=backend, **kw, **{name: value})
    b.restore(snap, keep_params=True)
    a.step(7)
    b.step(7)
    assert a.t == b.t and a.steps == b.steps
    ha, hb = host_state(a), host_state(b)
    assert all(np.array_equal(ha[k], hb[k]) for k in ha), name


@pytest.mark.parametrize("model,name", list(cases()))
def test_live_change_equals_a_run_created_with_the_value(model, name):
    check(model, name, "numpy")


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", ["fused", "array"])
@pytest.mark.parametrize("model,name", list(cases()))
def test_gpu_live_change_equals_a_run_created_with_the_value(model, name, kernel, gpu_backend):
    d = solvers.describe(model)
    if not any(p["name"] == "kernel" for p in d["parameters"]):
        if kernel == "array":
            pytest.skip(f"{model} has one GPU path")
        check(model, name, gpu_backend, dtype="float32")
    else:
        check(model, name, gpu_backend, dtype="float32", kernel=kernel)


def test_a_refused_live_value_changes_nothing():
    sim = solvers.create("gray-scott", backend="numpy", vertices=1500)
    dt, params = sim.dt, dict(sim.params)
    with pytest.raises(solvers.ParameterError, match="stability bound"):
        sim.set_param("dt", 100 * sim.dt)
    with pytest.raises(solvers.ParameterError, match="not live"):
        sim.set_param("spots", 3)
    assert sim.dt == dt and dict(sim.params) == params
    sim.set_param("Du", 0.04)  # a larger coefficient: a smaller automatic step
    assert sim.dt < dt
