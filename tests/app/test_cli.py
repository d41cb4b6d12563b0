"""`pdestudio run` and `pdestudio bench` as a user calls them: exit codes, messages, files."""
import itertools
import json
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.app.cli import main


def run_cli(*args):
    r = subprocess.run([sys.executable, "-m", "pdestudio", *args], capture_output=True, text=True,
                       timeout=120)
    return r.returncode, r.stdout, r.stderr


def test_run_saves_a_checkpoint_that_continues_identically(tmp_path):
    state = tmp_path / "s.npz"
    rc, _, err = run_cli("run", "heat-1d", "--steps", "1000", "--save", str(state),
                         "--backend", "numpy")
    assert rc == 0, err
    assert "done: 1000 steps" in err
    sim = solvers.load(state, backend="numpy")
    assert sim.steps == 1000
    direct = solvers.create("heat-1d", backend="numpy")
    direct.step(1000)
    np.testing.assert_array_equal(sim.fields()["T"], direct.fields()["T"])


@pytest.mark.parametrize("args,needle", [
    (("run", "nosuch", "--steps", "1"), "unknown model 'nosuch'; available models: heat-1d"),
    (("run", "heat-1d", "--set", "nx=-3", "--steps", "1"), "'nx' = '-3' is out of range"),
    (("run", "heat-1d", "--set", "Fo=nan", "--steps", "1"), "'Fo' = 'nan' is not finite"),
    (("run", "heat-1d", "--set", "bogus", "--steps", "1"), "--set 'bogus' is malformed"),
    (("run", "heat-1d", "--scenario", "x", "--steps", "1"), "unknown scenario 'x'"),
    (("run", "heat-1d", "--steps", "-1"), "--steps must be an integer >= 0"),
    (("run", "heat-1d", "--steps", "1", "--init", "T=formula:__import__('os')"), "not allowed"),
    (("run", "heat-1d", "--steps", "1", "--init", "T=/nonexistent.npy"), "is not a file"),
    (("run", "heat-1d", "--steps", "1", "--load", "/nonexistent.npz"), "does not exist"),
])
def test_bad_input_exits_2_with_one_line(args, needle):
    rc, out, err = run_cli(*args)
    assert rc == 2
    assert needle in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) <= 2  # the backend line, then the error


def test_run_until_lands_and_init_from_npy(tmp_path, capsys):
    f = tmp_path / "T0.npy"
    np.save(f, np.linspace(0, 1, 64))
    assert main(["run", "heat-1d", "--set", "nx=64", "--backend", "numpy", "--until", "0.05",
                 "--init", f"T={f}", "--save", str(tmp_path / "s.npz"), "--quiet"]) == 0
    sim = solvers.load(tmp_path / "s.npz", backend="numpy")
    assert sim.t == 0.05
    # a linear profile relaxes towards its mean 0.5 with insulated ends
    assert abs(sim.fields()["T"].mean() - 0.5) < 0.02


def test_progress_is_reported_on_a_long_run(monkeypatch, capsys):
    # A clock that advances one second per reading: every chunk of steps "takes" a second, so
    # the run is long (progress is due after 0.5 s) however fast or loaded the machine is.
    # Not a terminal: progress lines only with -v, never without.
    from pdestudio.app import cli_log
    ticks = itertools.count()
    monkeypatch.setattr(cli_log, "time", SimpleNamespace(perf_counter=lambda: 5.0 * next(ticks)))
    args = ["run", "heat-1d", "--set", "nx=64", "--steps", "20", "--backend", "numpy"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "done: 20 steps" in err and "ETA" not in err
    assert main(args + ["-v"]) == 0
    err = capsys.readouterr().err
    assert "% run: step" in err and "ETA" in err and "done: 20 steps" in err


def test_version_comes_from_the_package():
    import pdestudio
    rc, out, err = run_cli("--version")
    assert rc == 0, err
    assert out.strip() == f"pdestudio {pdestudio.__version__}"


def test_bench_writes_rows(tmp_path):
    out = tmp_path / "b.json"
    assert main(["bench", "heat-1d", "--sizes", "2^10", "--backends", "numpy",
                 "--dtypes", "float64", "--quick", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    # method only chooses a GPU strategy: NumPy is timed once (classic), not three times
    assert [r["variant"] for r in rows] == [{"method": "classic"}]
    for r in rows:
        assert r["model"] == "heat-1d" and r["size"] == 1024 and r["backend"] == "numpy"
        assert r["steps"] > 0 and r["steps_per_s"] > 0
        assert r["cell_updates_per_s"] == pytest.approx(r["steps_per_s"] * 1024)
        assert r["gbps"] == pytest.approx(r["steps_per_s"] * 2 * 1024 * 8 / 1e9)
