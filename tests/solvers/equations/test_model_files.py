"""Model files: reading TOML and dicts, the public API (define, create, describe, check_model,
model_latex), checkpoints that carry the definition, and hostile expressions refused with the
position (docs/EQUATIONS.md)."""
import copy
from pathlib import Path

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.core import registry

BRUSSELATOR_TOML = '''
[model]
name = "brusselator-test"
description = "Brusselator: Turing spots"
[equations]
u = "Du*lap(u) + a - (b + 1)*u + u^2*v"
v = "Dv*lap(v) + b*u - u^2*v"
[parameters]
a = 1.0
b = { value = 3.0, min = 0.0, max = 10.0 }
Du = 1.0
Dv = 8.0
[initial]
u = "a + 0.01*noise"
v = "b/a"
[domain]
kind = "rectangle"
nx = 32
Lx = 32.0
boundary = "periodic"
'''


def test_a_toml_file_defines_a_model_whose_parameters_are_the_files(tmp_path):
    path = tmp_path / "bruss.toml"
    path.write_text(BRUSSELATOR_TOML)
    mid = solvers.define(str(path))
    assert mid == "brusselator-test" and mid in solvers.available_models()
    d = solvers.describe(mid)
    params = {p["name"]: p for p in d["parameters"]}
    assert params["b"]["range"] == [0.0, 10.0] and params["b"]["live"]
    assert params["nx"]["default"] == 32 and params["Lx"]["default"] == 32.0
    assert [f["name"] for f in d["fields"]] == ["u", "v"]
    with pytest.raises(solvers.ParameterError, match="'b' = 11.*allowed"):
        solvers.create(mid, backend="numpy", b=11.0)
    sim = solvers.create(mid, backend="numpy", nx=16, b=2.5)
    assert sim.fields()["u"].shape == (16, 16)
    sim.set_param("b", 3.5)  # live: only a kernel scalar changes
    sim.step(3)
    assert np.isfinite(sim.fields()["u"]).all()
    # the same text defines the same model; a built-in's name is refused
    assert solvers.define(BRUSSELATOR_TOML) == mid
    with pytest.raises(solvers.ParameterError, match="built-in"):
        solvers.define(BRUSSELATOR_TOML.replace("brusselator-test", "gray-scott"))


def test_a_relative_mesh_path_is_relative_to_the_model_file(tmp_path, monkeypatch):
    import shutil
    meshes = Path(__file__).resolve().parents[3] / "resources" / "meshes"
    (tmp_path / "models").mkdir()
    (tmp_path / "meshes").mkdir()
    shutil.copy(meshes / "icosphere.obj", tmp_path / "meshes" / "ball.obj")
    text = BRUSSELATOR_TOML.replace('kind = "rectangle"',
                                    'kind = "mesh"\nmesh = "../meshes/ball.obj"')
    (tmp_path / "models" / "ball.toml").write_text(text.replace("boundary = \"periodic\"", ""))
    elsewhere = tmp_path / "a" / "b"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)  # neither the file's folder nor the mesh's
    sim = solvers.create(solvers.define(Path("../../models/ball.toml")), backend="numpy")
    assert sim.params["mesh"] == str((tmp_path / "meshes" / "ball.obj").resolve())
    assert sim.fields()["u"].shape == (sim.mesh.n_vertices,)
    # TOML text has no folder of its own: the current one
    with pytest.raises(ValueError, match="ball.obj.*does not exist"):
        solvers.define(text.replace("brusselator-test", "ball-text"))
        solvers.create("ball-text", backend="numpy")


def test_initial_conditions_use_the_geometry_and_the_parameters():
    src = {"model": {"name": "geo-init"}, "equations": {"u": "lap(u)", "v": "lap(v)"},
           "parameters": {"a": 2.0},
           "initial": {"u": "a*heaviside(x - Lx/2)*heaviside(Ly/2 - y)", "v": "nx + 1000*ny"},
           "domain": {"kind": "rectangle", "nx": 20, "Lx": 10.0}}
    mid = solvers.define(src)
    for Lx, Ly, a in ((10.0, None, 2.0), (30.0, 6.0, 3.0)):
        sim = solvers.create(mid, backend="numpy", Lx=Lx, Ly=Ly, a=a)
        x, y = np.meshgrid(*(np.asarray(c) for c in (sim.mesh.x, sim.mesh.y)))
        ly = Ly if Ly is not None else Lx
        want = a * ((x >= Lx / 2) & (y <= ly / 2))
        np.testing.assert_array_equal(sim.fields()["u"], want)
        ny = sim.fields()["v"].shape[0]  # square cells: ny follows Ly/Lx
        assert ny == round(20 * ly / Lx)
        assert np.all(sim.fields()["v"] == 20 + 1000 * ny)
    with pytest.raises(solvers.ParameterError, match=r"unknown name 'Lz'.*Lx, Ly, nx, ny"):
        solvers.define({**src, "initial": {"u": "x/Lz"}})


def test_checkpoints_carry_the_definition(tmp_path):
    mid = solvers.define(BRUSSELATOR_TOML)
    sim = solvers.create(mid, backend="numpy", nx=16)
    sim.step(5)
    sim.save(tmp_path / "c.npz")
    sim.step(5)
    registry.unregister(mid)  # as in a new process without the file
    back = solvers.load(tmp_path / "c.npz", backend="numpy")
    assert back.model == mid and back.steps == 5
    back.step(5)
    np.testing.assert_array_equal(back.fields()["u"], sim.fields()["u"])


def test_algebraic_species_and_cross_diffusion_evaluate():
    src = {"model": {"name": "alg"},
           "equations": {"u": "div((1 + w)*grad(u)) + 0.1*w", "v": "lap(v) - div(0.1*v*grad(u))"},
           "algebraic": {"w": "u*v"},
           "initial": {"u": "1 + 0.1*sin(x)", "v": "1"},
           "domain": {"kind": "interval", "nx": 32, "L": 6.283185307179586,
                      "boundary": "periodic"}}
    sim = solvers.create(solvers.define(src), backend="numpy")
    f = sim.fields()
    np.testing.assert_allclose(f["w"], f["u"] * f["v"])
    m0 = f["u"].sum()
    sim.step(10)
    assert abs(sim.fields()["u"].sum() - m0 - 0.1 * 0) < 1e-9 + 0.1 * sim.t * 40  # bounded
    assert "w" not in sim.settable_fields()


def test_model_latex_typesets_operators_and_fractions():
    tex = solvers.model_latex(BRUSSELATOR_TOML)
    assert tex["u"].startswith(r"D_{u}\,\nabla^2 u") and "{u}^{2}" in tex["u"]
    src = {"model": {"name": "x"}, "equations": {"n": "-div(chi*n*grad(c)) + n/(1 + n)",
                                                 "c": "lap(c)"},
           "parameters": {"chi": 1.0}}
    assert r"\nabla\cdot\left(\chi\,n\,\nabla c\right)" in solvers.model_latex(src)["n"]
    assert r"\frac{n}{1 + n}" in solvers.model_latex(src)["n"]


def test_check_model_lists_every_problem_in_place():
    src = {"model": {"name": "bad"},
           "equations": {"u": "Du*lap(u) + w", "v": "lap(v) + exp(u, v)"},
           "parameters": {"a": 1.0, "Du": 1.0},
           "initial": {"u": "lap(u)", "q": "1"}}
    errs = solvers.check_model(src)
    where = {(e["section"], e["key"]) for e in errs}
    assert {("equations", "u"), ("equations", "v"), ("initial", "u"), ("initial", "q")} <= where
    u = next(e for e in errs if e["key"] == "u" and e["section"] == "equations")
    assert u["column"] == 13
    assert u["message"] == ("unknown name 'w' in the equation of u at column 13 (species: u, v; "
                            "parameters: a, Du)")
    assert solvers.check_model(BRUSSELATOR_TOML) == []
    assert solvers.check_model("not [toml")[0]["message"].startswith("model text is not valid")


HOSTILE = [
    ("__import__('os').system('true')", "attribute access", 1),
    ("__import__('os')", "unknown function '__import__'", 1),
    ("u.__class__", "attribute access", 1),
    ("(lambda: 1)()", "cannot be called", 1),
    ("u[0]", "indexing", 1),
    ("open('/etc/passwd')", "unknown function 'open'", 1),
    ("exp(x=u)", "positional arguments only", 1),
    ("[u for u in v]", "comprehension", 1),
    ("u + 'a'", "constant 'a'", 5),
    ("u ++ v ^^ 2", "syntax error", None),
    ("(" * 300 + "u" + ")" * 300, "", None),
    ("u" + "+u" * 1200, "characters long", None),
    ("-" * 100 + "u", "nested too deeply", None),
    ("grad(u)", "only inside div", 1),
    ("lap(u*v)", "species or an algebraic species by name", 5),
    ("exp(lap(u))", "must appear as terms", None),
    ("1 < u < 2", "chained", 1),
    ("u; import os", "syntax error", None),
    ("a := 3", "syntax error", None),
    ("v + zz", "unknown name 'zz'", 5),
]


@pytest.mark.parametrize("text,why,column", HOSTILE)
def test_hostile_expressions_are_refused_with_the_position(text, why, column):
    src = {"model": {"name": "hostile"}, "equations": {"u": text, "v": "lap(v)"}}
    with pytest.raises(solvers.ParameterError) as e:
        solvers.define(src)
    msg = str(e.value)
    assert why in msg and "equation of u" in msg and len(msg) < 400, msg
    if column is not None:
        assert f"at column {column}" in msg
    assert "hostile" not in solvers.available_models()


def test_bad_files_and_values_name_the_section_and_key(tmp_path):
    base = {"model": {"name": "ok"}, "equations": {"u": "lap(u)"}}
    cases = [
        ({**base, "extra": {}}, "unknown section [extra]"),
        ({**base, "model": {"name": "Bad Name"}}, "not a model id"),
        ({**base, "parameters": {"lap": 1.0}}, "reserved"),
        ({**base, "parameters": {"k": {"value": 5.0, "max": 1.0}}}, "outside [min, max]"),
        ({**base, "parameters": {"k": "big"}}, "not a finite number"),
        ({**base, "domain": {"kind": "sphere"}}, "parameter 'kind'"),
        ({**base, "domain": {"boundary": {"middle": "neumann"}}}, "unknown side 'middle'"),
        ({**base, "numerics": {"integrator": "leapfrog"}}, "parameter 'integrator'"),
    ]
    for src, why in cases:
        with pytest.raises(solvers.ParameterError, match=why.replace("[", r"\[")):
            solvers.define(copy.deepcopy(src))
    mid = solvers.define(base)
    with pytest.raises(solvers.ParameterError, match="unknown kind 'banana'"):
        solvers.create(mid, backend="numpy", boundary="banana")
    with pytest.raises(solvers.ParameterError, match="periodic needs both"):
        solvers.create(mid, backend="numpy", boundary="left=periodic")
    with pytest.raises(solvers.ParameterError, match="cannot read model file"):
        solvers.define(str(tmp_path / "missing.toml"))


def test_random_expressions_never_escape_a_parameter_error():
    """A fuzz of the expression language: random token soups of names, operators, brackets,
    Python syntax and dunders either define a model or raise ParameterError with a column or a
    length/syntax reason; never another exception, never code run."""
    rng = np.random.default_rng(26)
    tokens = ["u", "v", "a", "x", "t", "noise", "lap(", "div(", "grad(", "exp(", "where(", "(",
              ")", ",", "+", "-", "*", "/", "^", "**", "<", "and", "not", "if", "else", "1",
              "2.5", "1e308", "__import__", ".", "[", "]", "lambda", ":", "'s'", "__class__",
              "=", ";", "@", "~", "|", "%", "//", "{", "}", "print(", "u*grad(v))", "0x1F"]
    seen_ok = seen_bad = 0
    for i in range(400):
        text = " ".join(rng.choice(tokens, size=rng.integers(1, 14)))
        src = {"model": {"name": "fuzz"}, "equations": {"u": text, "v": "lap(v)"},
               "parameters": {"a": 1.0}}
        try:
            solvers.define(src)
            seen_ok += 1
        except solvers.ParameterError as e:
            seen_bad += 1
            assert "equation of u" in str(e) or "[" in str(e), str(e)
        errs = solvers.check_model(src)
        assert all(set(x) == {"message", "section", "key", "column"} for x in errs)
    assert seen_ok > 0 and seen_bad > 0
