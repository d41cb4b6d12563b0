"""Ensembles of model files (solvers/equations/ensemble.py): describe() lists the per-member
parameters, every member equals its solo run bit for bit (state, clock, step count), a diverging
member stops alone, and the sweep groups a model file's members as an ensemble."""
import numpy as np
import pytest

from pdestudio import solvers

from .conftest import CHEMOTAXIS

BRUSS = {
    "model": {"name": "bruss-ens"},
    "equations": {"u": "Du*lap(u) + a - (b + 1)*u + u^2*v", "v": "Dv*lap(v) + b*u - u^2*v"},
    "parameters": {"a": 1.0, "b": 3.0, "Du": 1.0, "Dv": 8.0},
    "initial": {"u": "a + 0.05*noise", "v": "b/a"},
    "domain": {"kind": "rectangle", "nx": 24, "Lx": 24.0, "boundary": "periodic"},
}


@pytest.mark.parametrize("src, members, common", [
    (BRUSS, [{"a": 0.8}, {"a": 1.2, "seed": 3}, {"b": 2.5, "Dv": 10.0, "cfl": 0.3}],
     {"integrator": "rk4"}),
    (CHEMOTAXIS, [{"alpha": 10.0}, {"alpha": 14.0, "dt": 0.01}], {"vertices": 300,
                                                                   "dt": 0.02}),
], ids=["grid-rk4", "mesh-positive-flux"])
def test_members_equal_their_solo_runs(src, members, common):
    mid = solvers.define(src)
    d = solvers.describe(mid)
    assert set(d["ensemble"]) == set(src["parameters"]) | {"seed", "dt", "cfl"}
    ens = solvers.create_ensemble(mid, members, backend="numpy", **common)
    ens.advance(0.7)
    ens.step(3)
    for i, m in enumerate(members):
        solo = solvers.create(mid, backend="numpy", **{**common, **m})
        solo.advance(0.7)
        solo.step(3)
        got = ens.member(i)
        assert got.t == solo.t and got.steps == solo.steps == ens.steps[i]
        for k, v in solo.fields().items():
            np.testing.assert_array_equal(got.fields()[k], v)
    # the members differ from each other (the parameters reached the rates)
    assert not np.array_equal(ens.member(0).fields()[d["default_field"]],
                              ens.member(1).fields()[d["default_field"]])


def test_a_diverging_member_stops_alone_and_geometry_is_shared():
    mid = solvers.define({**BRUSS, "parameters": {**BRUSS["parameters"],
                                                  "b": {"value": 3.0, "min": -1e6}}})
    with pytest.raises(solvers.ParameterError, match="'nx' cannot differ"):
        solvers.create_ensemble(mid, [{"nx": 16}], backend="numpy")
    ens = solvers.create_ensemble(mid, [{"b": 3.0}, {"b": -1e5}], backend="numpy")
    ens.step(200)
    assert list(ens.diverged) == [False, True]
    assert "non-finite" in ens.reasons[1] and ens.reasons[0] == ""
    assert ens.steps[0] == 200 and ens.steps[1] < 200
    assert np.isfinite(ens.member(1).fields()["u"]).all()  # the state before the failing step


def test_the_sweep_groups_a_model_files_members(tmp_path):
    from pdestudio.app.sweep.members import groups
    mid = solvers.define(BRUSS)
    spec = {"model": mid, "vary": [("a", [0.5, 1.0, 1.5])]}
    assert groups(spec, [0, 1, 2], gpu=True) == [[0, 1, 2]]
    assert groups({**spec, "vary": [("nx", [16, 32])]}, [0, 1], gpu=True) == [[0], [1]]


def test_a_sweep_group_defines_the_model_file_in_its_worker(tmp_path):
    """run_group on a worker process that has not seen the model file (the spec carries its
    definition, as `pdestudio sweep FILE.toml` writes it): the group defines it, runs the
    members as one ensemble and writes each member's row equal to its solo run."""
    from pdestudio.app.sweep import members as run
    from pdestudio.app.sweep.spec import make_spec
    from pdestudio.solvers.core import registry
    mid = solvers.define(BRUSS)
    spec = make_spec(mid, None, {"integrator": "rk4"}, [("a", [0.8, 1.2])], "numpy",
                     "float64", None, 15)
    spec["definition"] = solvers.describe(mid)["definition"]
    registry.unregister(mid)  # a fresh worker process
    with pytest.raises(solvers.ParameterError):
        solvers.describe(mid)
    rows = run.run_group(spec, [0, 1], str(tmp_path))
    assert [r["steps"] for r in rows] == [15, 15] and not any(r["diverged"] for r in rows)
    for r, a in zip(rows, (0.8, 1.2)):
        solo = solvers.create(mid, backend="numpy", integrator="rk4", a=a)
        solo.step(15)
        saved = solvers.load(tmp_path / r["checkpoint"], backend="numpy")
        assert r["t"] == saved.t == solo.t
        np.testing.assert_array_equal(saved.fields()["u"], solo.fields()["u"])
