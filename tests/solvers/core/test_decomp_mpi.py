"""A decomposed shallow-water run (core/decomp.py) equals the one-process run bit for bit: the
gathered h, hu, hv, the time and the step count, order 1 and 3, float32 and float64, on 2 and 4
MPI ranks (mpirun, subprocess: mpi_decomp_run.py); also after a checkpoint written by the ranks
is continued decomposed and on one process."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pdestudio import solvers

from . import mpi_decomp_run as run

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = Path(__file__).with_name("mpi_decomp_run.py")


def mpi_missing() -> str | None:
    if shutil.which("mpirun") is None:
        return "mpirun not found (apt-get install openmpi-bin libopenmpi-dev)"
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed (pip install 'pdestudio[mpi]')"
    return None


def mpirun(n: int, *args, timeout=240, gpu=False, **env_more) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMPI_MCA_rmaps_base_oversubscribe="1", **env_more)
    if not gpu:
        env["PDESTUDIO_NO_GPU"] = "1"
    return subprocess.run(["mpirun", "--oversubscribe", "-n", str(n), *args], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)


needs_mpi = pytest.mark.skipif(mpi_missing() is not None, reason=str(mpi_missing()))


def one_process(order, dtype, backend="numpy", kernel="array"):
    kw = {"kernel": kernel} if backend == "cupy" else {}
    sim = solvers.create("shallow-water", backend=backend, dtype=dtype, order=order, **run.SIZE,
                         **kw)
    hu, hv = run.perturbed(None, (run.SIZE["ny"], run.SIZE["nx"]), 7)
    sim.set_field("hu", hu)
    sim.set_field("hv", hv)
    sim.advance(run.T1)
    return sim


@pytest.fixture(scope="module")
def references():
    out = {}
    for order, dtype in run.CASES:
        sim = one_process(order, dtype)
        sim.advance(run.T2)
        out[order, dtype] = sim
    return out


@needs_mpi
@pytest.mark.parametrize("ranks", [2, 3, 4])
def test_decomposed_equals_one_process(ranks, tmp_path, references):
    p = mpirun(ranks, sys.executable, str(SCRIPT), str(tmp_path))
    assert p.returncode == 0, p.stderr[-3000:]
    check(tmp_path, ranks, references)
    # a dry cell found by one rank: every rank raises the same DryCell, with the state before it
    ref = run.rarefaction()
    with np.errstate(all="ignore"), pytest.raises(solvers.SimulationDiverged) as e:
        ref.advance(2.0)
    d = np.load(tmp_path / "dry.npz")
    expect = [str(v) for v in (type(e.value).__name__, *e.value.where, ref.steps, ref.t)]
    assert e.value.where[1] == -0.125 and [list(f) for f in d["found"]] == [expect] * ranks
    assert np.array_equal(d["h"], ref.fields()["h"])


def gpus() -> int:
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001
        return 0


@pytest.mark.gpu
@needs_mpi
@pytest.mark.parametrize("halos", ["nccl", "nccl-overlap", "mpi"])
@pytest.mark.parametrize("ranks", [2, 4])
def test_decomposed_on_gpus_equals_one_gpu(ranks, halos, tmp_path):
    """One GPU per rank, halos through NCCL or staged through MPI: equal bit for bit to one GPU.
    With NCCL, order 1 runs the fused strip kernels (grid/fused_halo.py) and is compared with
    the one-GPU fused scheme; order 3 and the MPI halos run the array path, compared with it."""
    if gpus() < ranks:
        pytest.skip(f"needs {ranks} GPUs, this machine has {gpus()}")
    # one row per warp: the strips of 2 ranks (14-15 rows) then hold 4 bands of block rows, so
    # with nccl-overlap the edge rows' exchange overlaps the interior's update (fused_halo.py
    # `_strip`); those of 4 ranks (7-8 rows) one band, updated and exchanged in turn; the one-GPU
    # reference keeps the default rows per warp (a cell's arithmetic does not depend on the band)
    p = mpirun(ranks, sys.executable, str(SCRIPT), str(tmp_path), "cupy", gpu=True,
               PDESTUDIO_HALOS=halos.split("-")[0], NCCL_NVLS_ENABLE="0",
               PDESTUDIO_STRIP_ROWS="1",
               PDESTUDIO_HALO_OVERLAP="1" if halos.endswith("overlap") else "0")
    assert p.returncode == 0, p.stderr[-3000:]
    refs = {}
    for order, dtype in run.CASES:
        fused = halos.startswith("nccl") and order == 1
        sim = one_process(order, dtype, "cupy", kernel="fused" if fused else "array")
        sim.advance(run.T2)
        refs[order, dtype] = sim
    check(tmp_path, ranks, refs)


def check(tmp_path, ranks, references):
    expect_rows = [29 // ranks + (1 if r < 29 % ranks else 0) for r in range(ranks)]
    for order, dtype in run.CASES:
        ref = references[order, dtype]
        f = ref.fields()
        d = np.load(tmp_path / f"o{order}-{dtype}.npz")
        assert list(d["rows"]) == expect_rows and int(d["halo"]) == 2  # (order 1 + the shock cure)
        assert ref.steps > 20 and not np.array_equal(f["hv"], 0)  # the waves crossed strips
        assert float(d["halo_s"]) > 0  # rank 0's time in the exchanges (GPU: CUDA events)
        for pre, i in (("run", 0), ("loaded", 1)):
            assert float(d["t"][i]) == ref.t and int(d["steps"][i]) == ref.steps, (order, dtype)
            for k in ("h", "hu", "hv"):
                got = d[f"{pre}/{k}"]
                assert got.dtype == np.dtype(dtype)
                diff = np.abs(got.astype(float) - f[k]).max()
                assert np.array_equal(got, f[k]), f"{pre} o{order} {dtype} {k}: max |diff| {diff}"
        # the checkpoint the ranks wrote at T1 holds the whole field and continues on one process
        one = solvers.load(tmp_path / f"o{order}-{dtype}-T1.npz", backend="numpy")
        if ref.backend != "numpy":
            continue
        assert one.fields()["h"].shape == (run.SIZE["ny"], run.SIZE["nx"])
        one.advance(run.T2)
        assert one.steps == ref.steps and all(
            np.array_equal(one.fields()[k], f[k]) for k in ("h", "hu", "hv"))
