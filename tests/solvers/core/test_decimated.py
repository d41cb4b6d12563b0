"""Pictures of decomposed runs too large to gather whole (docs/DISTRIBUTED.md): rank 0 gathers
every k-th row and column (`decimated`), which equals the whole gathered field sliced [::k, ::k]
on strips of uneven rows, and `pdestudio run --distributed --export-image` draws from it."""
from __future__ import annotations

import json
import sys

import numpy as np

from .test_decomp_mpi import mpirun, needs_mpi

SCRIPT = r"""
import sys, numpy as np
from mpi4py import MPI
from pdestudio import solvers
comm = MPI.COMM_WORLD
sim = solvers.create("shallow-water", comm=comm, backend="numpy", nx=47, ny=31, order=1)
rng = np.random.default_rng(2)
sim.set_field("hv", 0.1 * rng.standard_normal((31, 47)))
sim.advance(0.05)
whole = sim.gathered()
small = sim.decimated(3)
if comm.rank == 0:
    np.savez(sys.argv[1], **{f"whole/{k}": v for k, v in whole.state.items()},
             **{f"small/{k}": v for k, v in small.state.items()}, t=[whole.t, small.t],
             steps=[whole.steps, small.steps], shape=small.field_shape("h"))
"""


@needs_mpi
def test_decimated_copy_is_every_kth_cell(tmp_path):
    out = tmp_path / "d.npz"
    p = mpirun(3, sys.executable, "-c", SCRIPT, str(out))  # 31 rows: strips of 11, 10, 10
    assert p.returncode == 0, p.stderr[-3000:]
    d = np.load(out)
    assert tuple(d["shape"]) == (11, 16)
    assert d["t"][0] == d["t"][1] and d["steps"][0] == d["steps"][1] > 0
    for k in ("h", "hu", "hv", "H"):
        assert np.array_equal(d[f"small/{k}"], d[f"whole/{k}"][::3, ::3]), k
    assert not np.array_equal(d["small/hv"], 0)


@needs_mpi
def test_distributed_picture_is_drawn_from_the_decimated_copy(tmp_path):
    """... and --save alone writes the whole state from a gathered state (no whole-grid set-up
    on rank 0), which loads on one process and equals the one-process run."""
    p = mpirun(2, sys.executable, "-m", "pdestudio.app.cli", "run", "shallow-water", "--set",
               "nx=90", "--until", "0.02", "--distributed", "--export-image",
               str(tmp_path / "eta.png"), "--save", str(tmp_path / "s.npz"), "--json",
               PDESTUDIO_PICTURE_CELLS="32")
    assert p.returncode == 0, p.stderr[-3000:]
    summary = json.loads(p.stdout.strip().splitlines()[-1])
    assert sorted(o["kind"] for o in summary["outputs"]) == ["checkpoint", "image"]
    from pdestudio import solvers
    got = solvers.load(tmp_path / "s.npz", backend="numpy")
    one = solvers.create("shallow-water", backend="numpy", nx=90)
    one.advance(0.02)
    assert got.t == one.t and got.steps == one.steps
    for k in ("h", "hu", "hv"):
        assert np.array_equal(got.fields()[k], one.fields()[k]), k
    assert "decimated copy of 30 × 30 cells" in p.stderr
    from imageio.v3 import imread
    img = imread(tmp_path / "eta.png")
    assert img.shape[0] > 100 and img[..., :3].std() > 10  # a picture, not a blank
