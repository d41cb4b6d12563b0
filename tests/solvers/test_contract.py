"""The contract of docs/MODELS.md §0, checked for every registered model (new models inherit these tests).

A model declares `contract_params` on its class only if the defaults are too large for a quick
test; otherwise `small_params` below shrinks the size parameter.
"""
import math
import sys

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers import MeshError, ParameterError, SimulationDiverged

MODELS = solvers.available_models()


def small(model):
    """Parameters for a small, quick instance of `model`."""
    cls = solvers.core.registry.model_class(model)
    return dict(getattr(cls, "contract_params", {cls.size_param: 16}))


def make(model, **kw):
    kw = {"backend": "numpy", **small(model), **kw}
    return solvers.create(model, **kw)


# The behavioural contract holds on every backend; on the GPU for both kernel paths.
BACKENDS = [pytest.param(("numpy", "fused"), id="numpy"),
            pytest.param(("cupy", "fused"), id="cupy-fused", marks=pytest.mark.gpu),
            pytest.param(("cupy", "array"), id="cupy-array", marks=pytest.mark.gpu)]


def test_import_solvers_does_not_import_qt():
    code = ("import sys; from pdestudio import solvers; solvers.available_models(); "
            "bad=[m for m in sys.modules if m.split('.')[0] in ('PySide6','vispy','shiboken6') "
            "or m.startswith('pdestudio.app')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    import subprocess
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_unknown_model_names_the_choices():
    with pytest.raises(ParameterError, match="nosuch.*available models: .*heat-1d"):
        solvers.create("nosuch")


@pytest.mark.parametrize("model", MODELS)
def test_describe_matches_params(model):
    d = solvers.describe(model)
    sim = make(model)
    names = [p["name"] for p in d["parameters"]]
    assert set(names) == set(sim.params), "describe() and params disagree"
    for p in d["parameters"]:
        assert p["help"] and p["type"] in ("int", "float", "str", "bool")
    assert [s["name"] for s in d["scenarios"]][0] == sim.scenario_name  # first = default
    assert set(f["name"] for f in d["fields"]) == set(sim.fields())
    with pytest.raises(TypeError):
        sim.params["kernel"] = "array"  # read-only mapping


@pytest.mark.parametrize("be", BACKENDS)
@pytest.mark.parametrize("model", MODELS)
def test_step_fields_finite_and_shaped(model, be):
    sim = make(model, backend=be[0], kernel=be[1])
    sim.step(3)
    assert sim.steps == 3 and sim.t > 0
    mesh = sim.mesh
    for name, f in sim.fields().items():
        assert isinstance(f, np.ndarray) and np.isfinite(f).all(), name
        info = sim.field_info(name)
        if info["location"] in ("node", "cell") and hasattr(mesh, "x"):
            shape = (len(mesh.x),) if not hasattr(mesh, "y") else (len(mesh.y), len(mesh.x))
            assert f.shape == shape, name
        elif hasattr(mesh, "cells"):
            n = len(mesh.points) if info["location"] in ("vertex", "node") else len(mesh.cells)
            assert f.shape[0] == n, name
    assert sim.stats["steps"] == 3 and sim.stats["wall_s"] > 0


@pytest.mark.parametrize("be", BACKENDS)
@pytest.mark.parametrize("model", MODELS)
def test_advance_lands_exactly(model, be):
    sim = make(model, backend=be[0], kernel=be[1])
    sim.step(2)
    t_end = sim.t * 2.5 + 1e-7
    sim.advance(t_end)
    assert sim.t == t_end


@pytest.mark.parametrize("be", BACKENDS)
@pytest.mark.parametrize("model", MODELS)
def test_set_field_round_trip(model, be):
    sim = make(model, backend=be[0], kernel=be[1])
    name = sim.settable_fields()[0]
    cur = sim.fields()[name]
    new = cur * 1.01 + 0.01 * np.abs(cur).max() + 1e-3
    sim.set_field(name, new)
    np.testing.assert_allclose(sim.fields()[name], new, rtol=1e-12 if sim.dtype == "float64" else 1e-6)


@pytest.mark.parametrize("be", BACKENDS)
@pytest.mark.parametrize("model", MODELS)
def test_save_load_continues_identically(model, be, tmp_path):
    a = make(model, backend=be[0], kernel=be[1])
    a.step(3)
    a.save(tmp_path / "c.npz")
    b = solvers.load(tmp_path / "c.npz", backend=be[0])
    assert (b.t, b.steps, dict(b.params)) == (a.t, a.steps, dict(a.params))
    a.step(4)
    b.step(4)
    assert a.t == b.t
    for k, v in a.fields().items():
        np.testing.assert_array_equal(v, b.fields()[k], err_msg=k)


def _state(sim):
    return {k: v.copy() for k, v in sim.fields().items()}, sim.t, sim.steps


def _assert_unchanged(sim, before):
    fields, t, steps = before
    assert (sim.t, sim.steps) == (t, steps)
    for k, v in sim.fields().items():
        np.testing.assert_array_equal(v, fields[k])


@pytest.mark.parametrize("model", MODELS)
def test_bad_input_raises_and_keeps_state(model):
    cls = solvers.core.registry.model_class(model)
    with pytest.raises(ParameterError, match="unknown parameter 'nosuch'"):
        make(model, nosuch=1)
    with pytest.raises(ParameterError, match="unknown scenario 'nosuch'.*allowed"):
        make(model, scenario="nosuch")
    with pytest.raises(ParameterError, match="dtype"):
        make(model, dtype="float16")
    with pytest.raises(ParameterError, match="backend"):
        make(model, backend="tpu")
    size = cls.size_param
    for bad in (-3, math.nan, math.inf, "abc"):
        with pytest.raises(ParameterError, match=f"'{size}'.*allowed"):
            make(model, **{size: bad})
    for p in solvers.describe(model)["parameters"]:
        if p["type"] == "float" and not p["nullable"]:
            with pytest.raises(ParameterError, match=f"'{p['name']}'.*not finite"):
                make(model, **{p["name"]: math.nan})
        if p.get("choices"):
            with pytest.raises(ParameterError, match=f"'{p['name']}'.*one of"):
                make(model, **{p["name"]: "nosuch"})
    sim = make(model)
    sim.step(1)
    before = _state(sim)
    name = sim.settable_fields()[0]
    shape = before[0][name].shape
    with pytest.raises(ParameterError, match="unknown field"):
        sim.set_field("nosuch", np.zeros(shape))
    with pytest.raises(ParameterError, match="shape"):
        sim.set_field(name, np.zeros((3,) + shape))
    bad = before[0][name].copy()
    bad.flat[0] = np.nan
    with pytest.raises(ParameterError, match="non-finite"):
        sim.set_field(name, bad)
    with pytest.raises(ParameterError):
        sim.step(-1)
    with pytest.raises(ParameterError):
        sim.advance(sim.t - 1)
    _assert_unchanged(sim, before)


class _Poisoned:
    """Wraps a simulation's scheme (the documented `Simulation.scheme` hook) to inject a fault
    after a step. It has no batched `run`, so the base class steps it one step at a time."""

    def __init__(self, inner, after_step, dt_of=lambda dt: dt):
        self.inner, self.after_step, self.dt_of = inner, after_step, dt_of

    def step(self, t, dt_limit):
        dt = self.inner.step(t, dt_limit)
        self.after_step()
        return self.dt_of(dt)

    def invalidate(self):
        self.inner.invalidate()


def poison_step(sim, steps: int) -> None:
    """The step taken from `steps` steps produces a NaN in the first state field."""
    def poison():
        if sim.steps == steps:
            k = next(iter(sim.state))
            sim.state[k].ravel()[0] = np.nan
    sim.scheme = _Poisoned(sim.scheme, poison)


@pytest.mark.parametrize("be", BACKENDS)
@pytest.mark.parametrize("model", MODELS)
def test_divergence_keeps_state_before_failing_step(model, be):
    sim = make(model, backend=be[0], kernel=be[1])
    sim.step(2)
    poison_step(sim, 4)  # the 5th step (from 4 to 5 steps) produces a NaN
    with pytest.raises(SimulationDiverged) as e:
        sim.step(10)
    assert sim.steps == 4, "the state from before the failing step is kept"
    assert e.value.step == 4 and e.value.field == next(iter(sim.state))
    for k, v in sim.fields().items():
        assert np.isfinite(v).all(), k


@pytest.mark.parametrize("model", MODELS)
def test_nonfinite_step_size_keeps_state(model):
    """A step that half-updates the state and then reports a non-finite Δt is undone."""
    sim = make(model)
    sim.step(2)
    sim.scheme = _Poisoned(sim.scheme, lambda: None,
                           dt_of=lambda dt: math.nan if sim.steps == 3 else dt)
    ref = make(model)
    ref.step(3)
    with pytest.raises(SimulationDiverged) as e:
        sim.step(5)
    assert sim.steps == 3 and e.value.step == 3
    assert sim.t == ref.t
    for k, v in sim.fields().items():
        np.testing.assert_array_equal(v, ref.fields()[k], err_msg=k)


def _live_cases():
    for model in MODELS:
        for p in solvers.describe(model)["parameters"]:
            if p["live"] and p["type"] in ("float", "int"):
                yield pytest.param(model, p["name"], id=f"{model}-{p['name']}")


@pytest.mark.parametrize("be", BACKENDS)
@pytest.mark.parametrize("model,name", list(_live_cases()))
def test_live_parameter_change_equals_starting_with_it(model, name, be):
    """set_param on a live parameter acts exactly as if the simulation had started with it."""
    a = make(model, backend=be[0], kernel=be[1])
    value = a.params[name]
    if value is None:  # an automatic step (surface RD dt, C): half the one chosen
        value = a.dt if name == "dt" else a.dt / a.dx**2
    value = value * 0.5
    a.set_param(name, value)
    assert a.params[name] == value
    b = make(model, backend=be[0], kernel=be[1], **{name: value})
    a.step(2)
    b.step(2)
    assert a.t == b.t
    for k, v in a.fields().items():
        np.testing.assert_array_equal(v, b.fields()[k], err_msg=k)


@pytest.mark.parametrize("model", MODELS)
def test_set_param_refuses_what_is_not_live_or_out_of_range(model):
    sim = make(model)
    before = dict(sim.params)
    schema = solvers.describe(model)["parameters"]
    fixed = next(p["name"] for p in schema if not p["live"])
    with pytest.raises(ParameterError, match="not live"):
        sim.set_param(fixed, before[fixed])
    with pytest.raises(ParameterError, match="unknown parameter"):
        sim.set_param("nosuch", 1)
    for p in schema:
        if p["live"] and p["type"] == "float":
            with pytest.raises(ParameterError, match=p["name"]):
                sim.set_param(p["name"], math.nan)
    assert dict(sim.params) == before
