"""The wheel and sdist ship everything the app needs, and the installed wheel runs every model.

Slow: builds with `python -m build` and installs into a fresh virtual environment (dependencies
come from the package index or pip's cache)."""
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from pdestudio import solvers
ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out),
                    str(ROOT)], check=True, capture_output=True, text=True, timeout=600)
    return out


def test_wheel_contains_kernels_and_resources(dist):
    wheel = next(dist.glob("pdestudio-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    top = {n.split("/")[0] for n in names}
    assert top == {"pdestudio", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}, \
        f"one top-level package (pdestudio) plus its dist-info: {sorted(top)}"
    for kind in ("*.cu", "*.cuh"):
        for f in ROOT.joinpath("solvers").rglob(kind):
            assert "pdestudio/" + str(f.relative_to(ROOT)) in names, f
    for f in ROOT.joinpath("resources").rglob("*"):
        if f.is_file():
            assert "pdestudio/" + str(f.relative_to(ROOT)) in names, f
    assert not any(n.startswith(("pdestudio/benchmarks", "benchmarks/", "pdestudio/tests"))
                   for n in names), "measurement scripts and tests stay out of the wheel"
    assert any(n.endswith("entry_points.txt") for n in names)
    sdist = next(dist.glob("pdestudio-*.tar.gz"))
    assert sdist.stat().st_size > 10_000


def test_installed_wheel_runs_every_model(dist, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    py, exe = venv / "bin" / "python", venv / "bin" / "pdestudio"
    wheel = next(dist.glob("pdestudio-*.whl"))
    subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheel)], check=True, timeout=900,
                   cwd=tmp_path)
    listed = subprocess.run([str(py), "-c", "from pdestudio import solvers; import pdestudio.app.cli; "
                             "print(' '.join(solvers.available_models())); print(solvers.__file__)"],
                            check=True, capture_output=True, text=True, cwd=tmp_path).stdout.split("\n")
    assert listed[0].split() == solvers.available_models()
    assert str(venv) in listed[1], "the wheel's solvers, not the checkout's"
    bad = subprocess.run([str(py), "-c", "import solvers"], capture_output=True, cwd=tmp_path)
    assert bad.returncode != 0, "no top-level 'solvers' package is installed"
    r = subprocess.run([str(exe), "run", "heat-1d", "--steps", "10", "--save", "s.npz"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "s.npz").stat().st_size > 0
    for model in solvers.available_models():
        r = subprocess.run([str(exe), "run", model, "--steps", "2", "--backend", "numpy",
                            "--quiet"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
        assert r.returncode == 0, (model, r.stderr)
    r = subprocess.run([str(exe), "run", "nosuch", "--steps", "1"], capture_output=True,
                       text=True, cwd=tmp_path)
    assert r.returncode == 2 and "unknown model" in r.stderr
    if os.environ.get("DISPLAY"):  # the window from the installed wheel (Xvfb under pytest-xvfb)
        shot = tmp_path / "window.png"
        r = subprocess.run([str(exe), "--model", "heat-1d", "--run-for", "1", "--screenshot",
                            str(shot)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
        assert r.returncode == 0, r.stderr
        assert shot.stat().st_size > 10_000
