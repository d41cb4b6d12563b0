"""The command line a script talks to: the model list and schemas (tables and JSON), options
before or after the sub-command (or refused, never silently ignored), one-line errors, `--set`
words, and the window command without a display."""
import json
import os
import subprocess
import sys

import pytest

from pdestudio import solvers
from pdestudio.app.cli import main


def in_process(capsys, *args):
    """main() in this process (the cheap way for the many cases; one case of each kind also
    runs as a subprocess)."""
    try:
        rc = main([str(a) for a in args])
    except SystemExit as e:  # argparse's own errors and --help
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def cli(*args, env=None):
    r = subprocess.run([sys.executable, "-m", "pdestudio", *map(str, args)], capture_output=True,
                       text=True, timeout=120, env=env)
    return r.returncode, r.stdout, r.stderr


def one_error_line(err: str, needle: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("pdestudio: error: ") and needle in lines[0], err


@pytest.mark.parametrize("command", ["models", "list"])
def test_models_lists_every_model_as_json(command, capsys):
    rc, out, err = cli(command, "--json") if command == "models" else \
        in_process(capsys, command, "--json")
    assert rc == 0, err
    rows = json.loads(out)
    assert [r["model"] for r in rows] == solvers.available_models()
    for r in rows:
        d = solvers.describe(r["model"])
        assert r["scenarios"] == [s["name"] for s in d["scenarios"]]
        assert r["fields"] == [f["name"] for f in d["fields"]]
        assert r["size_param"] == d["size_param"] and r["size_param"] in r["parameters"]


def test_models_table_names_each_model_once(capsys):
    rc, out, err = in_process(capsys, "models")
    assert rc == 0, err
    first_column = [ln.split("|")[0].strip() for ln in out.splitlines() if "|" in ln]
    for m in solvers.available_models():
        assert first_column.count(m) == 1


def test_describe_json_is_the_schema_and_the_table_shows_every_parameter(capsys, monkeypatch):
    # the table fits the terminal's width: a fixed one here (a test worker's may be narrow)
    monkeypatch.setenv("COLUMNS", "160")
    rc, out, err = cli("describe", "shallow-water", "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert d == json.loads(json.dumps(solvers.describe("shallow-water"), default=str))
    rc, out, err = in_process(capsys, "describe", "shallow-water")
    assert rc == 0, err
    assert out.splitlines()[0].startswith("shallow-water: ")
    header = next(ln for ln in out.splitlines() if ln.startswith("name "))
    assert [c.strip() for c in header.split("|")] == ["name", "type", "default", "allowed",
                                                       "unit", "live", "help"]
    rows = {ln.split("|")[0].strip(): [c.strip() for c in ln.split("|")]
            for ln in out.splitlines() if "|" in ln}
    for p in d["parameters"]:
        row = rows[p["name"]]
        assert row[5] == ("yes" if p["live"] else "no")
    assert rows["renumber"][3].startswith("one of 'none'") and rows["g"][4] == "m/s²"
    assert rows["ny"][1] == "int or none"
    for s in d["scenarios"]:
        assert s["name"] in rows
    for f in d["fields"]:
        assert f["name"] in rows


def test_describe_unknown_model_is_one_line(capsys):
    rc, out, err = in_process(capsys, "describe", "nosuch")
    assert rc == 2 and out == ""
    one_error_line(err, "unknown model 'nosuch'; available models: heat-1d")


def test_options_before_the_sub_command_apply_to_run(capsys):
    rc, out, err = cli("--set", "nx=64", "--backend", "numpy", "-q", "run", "heat-1d",
                       "--set", "Fo=0.25", "--steps", "5", "--json")
    assert rc == 0, err
    s = json.loads(out)
    assert s["params"]["nx"] == 64 and s["params"]["Fo"] == 0.25 and s["backend"] == "numpy"
    assert err == ""  # -q before the sub-command counts too
    rc, out, err = in_process(capsys, "run", "heat-1d", "--steps", "5", "--set", "nx=64", "-q",
                              "--json")
    assert rc == 0 and json.loads(out)["params"]["nx"] == 64 and err == ""


@pytest.mark.parametrize("args,needle", [
    (("--backend", "numpy", "run", "heat-1d", "--backend", "auto", "--steps", "1"),
     "--backend is given twice with different values"),
    (("--model", "ks-1d", "run", "heat-1d", "--steps", "1"), "--model applies to the window"),
    (("--run-for", "2", "run", "heat-1d", "--steps", "1"), "--run-for applies to the window"),
    (("--set", "nx=3", "models"), "--set does not apply to 'pdestudio models'"),
    (("--dtype", "float32", "bench", "heat-1d"), "--dtype does not apply to 'pdestudio bench'"),
    (("run", "heat-1d", "--steps", "1", "--model", "x"), "unrecognized arguments: --model x"),
    (("run", "heat-1d"), "one of the arguments --steps --until is required"),
    (("run", "heat-1d", "--steps", "1", "--frame-every", "2", "--frame-dt", "1"),
     "not allowed with argument"),
])
def test_misplaced_or_conflicting_options_are_refused_in_one_line(args, needle, capsys):
    rc, out, err = cli(*args) if args[0] == "--model" else in_process(capsys, *args)
    assert rc == 2 and out == ""
    one_error_line(err, needle)


def test_set_none_stays_a_choice_and_clears_a_nullable_parameter():
    rc, out, err = cli("run", "gray-scott", "--set", "vertices=300", "--set", "renumber=none",
                       "--set", "dt=none", "--backend", "numpy", "--steps", "2", "--json")
    assert rc == 0, err
    p = json.loads(out)["params"]
    assert p["renumber"] == "none" and p["dt"] is None
    rc, out, err = cli("run", "heat-1d", "--set", "Fo=none", "--steps", "1")
    assert rc == 2
    assert "'Fo' = 'none' is not a number" in err and "Traceback" not in err


def _no_display_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env.update(extra)
    return env


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="display checks are Linux's")
@pytest.mark.parametrize("args,extra,needle", [
    ((), {}, "no display (DISPLAY is not set): use 'pdestudio run MODEL ...'"),
    (("--model", "heat-1d"), {"QT_QPA_PLATFORM": "offscreen"},
     "QT_QPA_PLATFORM=offscreen cannot show the window"),
    (("--model", "heat-1d"), {"DISPLAY": ":4711"}, "cannot connect to the X display ':4711'"),
    (("--model", "heat-1d"), {"QT_QPA_PLATFORM": "wayland"}, "no Wayland display"),
])
def test_window_without_a_display_exits_2_before_qt(args, extra, needle, monkeypatch, capsys):
    if not args:  # as the user meets it
        rc, out, err = cli(*args, env=_no_display_env(**extra))
    else:
        for k in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
            monkeypatch.delenv(k, raising=False)
        for k, v in extra.items():
            monkeypatch.setenv(k, v)
        rc, out, err = in_process(capsys, *args)
    assert rc == 2
    one_error_line(err, needle)


def test_window_input_is_checked_before_the_display(monkeypatch, capsys):
    monkeypatch.delenv("DISPLAY", raising=False)
    rc, out, err = in_process(capsys, "--model", "heat-1d", "--set", "nx=-1")
    assert rc == 2
    one_error_line(err, "'nx' = '-1' is out of range")
