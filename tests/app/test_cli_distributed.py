"""`mpirun -n N pdestudio run ... --distributed` (app/cli_distributed.py): the checkpoint rank 0
writes holds the whole state, equal bit for bit to the one-process run's; a checkpoint continues
decomposed; rank 0 alone logs and prints --json; refusals are one clear line."""
import json
import subprocess
import sys

import numpy as np
import pytest

from pdestudio.app.cli import main
from pdestudio.solvers.core.decomp_comm import LAUNCHER_VARS

from ..solvers.core.test_decomp_mpi import mpi_missing, mpirun

needs_mpi = pytest.mark.skipif(mpi_missing() is not None, reason=str(mpi_missing()))
RUN = ("run", "shallow-water", "--backend", "numpy", "--set", "nx=48", "--set", "ny=41",
       "--set", "order=3", "--dtype", "float32")


def cli(*args):
    r = subprocess.run([sys.executable, "-m", "pdestudio", *map(str, args)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r


def states(path):
    with np.load(path) as f:
        meta = json.loads(str(f["__meta__"]))
        return meta, {k: f[k] for k in f.files if k.startswith("state/")}


def same(a, b):
    (ma, sa), (mb, sb) = states(a), states(b)
    assert (ma["t"], ma["steps"]) == (mb["t"], mb["steps"])
    assert set(sa) == set(sb) and all(np.array_equal(sa[k], sb[k]) for k in sa)
    return ma


@needs_mpi
def test_distributed_run_writes_the_one_process_state_and_continues(tmp_path):
    d, s = tmp_path / "d.npz", tmp_path / "s.npz"
    p = mpirun(3, sys.executable, "-m", "pdestudio", *RUN, "--until", "0.3", "--distributed",
               "--save", d, "--export-image", tmp_path / "d.png", "--json")
    assert p.returncode == 0, p.stderr[-2000:]
    summary = json.loads(p.stdout)  # one object: rank 0 alone prints
    assert p.stdout.count("\n") == 1
    assert summary["distributed"]["ranks"] == 3 and summary["distributed"]["rows"] == [14, 14, 13]
    assert summary["distributed"]["halo"] == 2
    assert p.stderr.count("done:") == 1 and p.stderr.count("wrote ") == 2  # rank 0 alone logs
    assert (tmp_path / "d.png").stat().st_size > 0
    cli(*RUN, "--until", "0.3", "--save", s)
    meta = same(d, s)
    assert meta["steps"] == summary["steps"] > 10
    # the whole-field checkpoint continues decomposed on 2 ranks, as on one process
    p = mpirun(2, sys.executable, "-m", "pdestudio", "run", "shallow-water", "--backend",
               "numpy", "--load", d, "--until", "0.5", "--distributed", "--save",
               tmp_path / "d2.npz")
    assert p.returncode == 0, p.stderr[-2000:]
    cli("run", "shallow-water", "--backend", "numpy", "--load", s, "--until", "0.5", "--save",
        tmp_path / "s2.npz")
    assert same(tmp_path / "d2.npz", tmp_path / "s2.npz")["t"] == 0.5


@needs_mpi
def test_a_model_that_cannot_be_decomposed_is_said_once(tmp_path):
    p = mpirun(2, sys.executable, "-m", "pdestudio", "run", "gray-scott", "--backend", "numpy",
               "--until", "1", "--distributed")
    assert p.returncode == 2
    assert p.stderr.count("pdestudio: error: model 'gray-scott' cannot run decomposed") == 1


def test_distributed_outside_an_mpi_launch_is_refused(monkeypatch, capsys):
    for v in LAUNCHER_VARS:
        monkeypatch.delenv(v, raising=False)
    assert main(["run", "shallow-water", "--until", "0.1", "--distributed"]) == 2
    err = capsys.readouterr().err
    assert "started by an MPI launcher" in err and "mpirun -n 4" in err
