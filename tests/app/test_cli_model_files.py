"""`pdestudio run|describe|sweep FILE.toml`: a model file goes where a model id goes
(docs/EQUATIONS.md)."""
import json

import pytest

from pdestudio.app.cli import main
from pdestudio.solvers.core import registry

MODEL = '''
[model]
name = "cli-bruss"
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
nx = 16
Lx = 16.0
'''


@pytest.fixture
def model_file(tmp_path):
    p = tmp_path / "bruss.toml"
    p.write_text(MODEL)
    yield p
    registry.unregister("cli-bruss")


def test_run_and_describe_a_model_file(model_file, tmp_path, capsys):
    assert main(["describe", str(model_file), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["model"] == "cli-bruss" and "b" in [p["name"] for p in d["parameters"]]
    out = tmp_path / "end.npz"
    assert main(["run", str(model_file), "--backend", "numpy", "--until", "0.5",
                 "--set", "b=2.5", "--set", "kind=interval", "--save", str(out)]) == 0
    registry.unregister("cli-bruss")  # the checkpoint alone brings the model back
    from pdestudio import solvers
    sim = solvers.load(out, backend="numpy")
    assert sim.params["b"] == 2.5 and sim.t == 0.5 and sim.fields()["u"].shape == (16,)


def test_a_bad_model_file_is_one_line_naming_the_place(tmp_path, capsys):
    p = tmp_path / "bad.toml"
    p.write_text(MODEL.replace("+ a -", "+ w -"))
    assert main(["run", str(p), "--backend", "numpy", "--steps", "1"]) == 2
    err = capsys.readouterr().err
    assert "unknown name 'w' in the equation of u at column 13" in err
    assert len(err.strip().splitlines()) == 1
