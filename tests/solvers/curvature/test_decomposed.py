"""Mean-curvature and Willmore flow decomposed (core/decomp.py, curvature/strips.py): a run over
2 and 4 MPI ranks equals the one-process run bit for bit — φ, the mean curvature, t, the step
count and the adaptive step τ (the RKM error estimate's maximum is taken over the ranks), the
quantities, surface area and Willmore energy (summed on rank 0 from the gathered field) — and a
checkpoint written by the ranks continues decomposed and on one process. Uses the mpirun harness
of tests/solvers/core/test_decomp_mpi.py; the ranks run mpi_curvature_run.py."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.core.decomp_comm import SelfComm

from ..core.test_decomp_mpi import gpus, mpirun, needs_mpi
from . import mpi_curvature_run as run

SCRIPT = Path(__file__).with_name("mpi_curvature_run.py")


class OneOfMany(SelfComm):
    """Rank 0 of a world of `size` ranks that never talks (what is refused before it would)."""

    def __init__(self, size):
        self.size = size


def one_process(case, backend="numpy"):
    kw = {"kernel": "array"} if backend == "cupy" else {}
    sim = solvers.create(case[0], backend=backend, **run.params(case), **kw)
    sim.set_field("phi", run.initial(case))
    sim.advance(case[4])
    return sim


def references(backend="numpy"):
    out = {}
    for case in run.CASES:
        sim = one_process(case, backend)
        sim.advance(case[5])
        out[run.name(case)] = sim
    return out


@pytest.fixture(scope="module")
def refs():
    return references()


@needs_mpi
@pytest.mark.parametrize("ranks", [2, 3, 4])
def test_decomposed_equals_one_process(ranks, tmp_path, refs):
    p = mpirun(ranks, sys.executable, str(SCRIPT), str(tmp_path))
    assert p.returncode == 0, p.stderr[-3000:]
    check(tmp_path, ranks, refs)


@pytest.mark.gpu
@needs_mpi
@pytest.mark.parametrize("ranks", [2, 4])
def test_decomposed_on_gpus_equals_one_gpu(ranks, tmp_path):
    """One GPU per rank (the array path; halos through NCCL): equal bit for bit to the one-GPU
    array path (area and energy: to the NumPy sums of the gathered field)."""
    if gpus() < ranks:
        pytest.skip(f"needs {ranks} GPUs, this machine has {gpus()}")
    p = mpirun(ranks, sys.executable, str(SCRIPT), str(tmp_path), "cupy", gpu=True,
               NCCL_NVLS_ENABLE="0")
    assert p.returncode == 0, p.stderr[-3000:]
    check(tmp_path, ranks, references("cupy"))


def check(tmp_path, ranks, refs):
    n = run.SIZE["ny"] + 1
    expect_rows = [n // ranks + (1 if r < n % ranks else 0) for r in range(ranks)]
    for case in run.CASES:
        key = run.name(case)
        ref = refs[key]
        f = ref.fields()
        d = np.load(tmp_path / f"{key}.npz")
        assert list(d["rows"]) == expect_rows
        assert int(d["halo"]) == (2 if case[0] == "willmore" else 1)
        assert ref.steps >= 8, (key, ref.steps)  # the fronts crossed the strips' edges
        for pre, i in (("run", 0), ("loaded", 1)):
            assert float(d["t"][i]) == ref.t and int(d["steps"][i]) == ref.steps, (key, pre)
            assert float(d["tau"][i]) == ref.tau, (key, pre)
            got = d[f"{pre}/phi"]
            assert got.dtype == np.dtype(case[3])
            diff = np.abs(got.astype(float) - f["phi"]).max()
            assert np.array_equal(got, f["phi"]), f"{pre} {key}: max |diff| {diff}"
        assert np.array_equal(d["run/mean_curvature"], f["mean_curvature"]), key
        q = [v for _, v in sorted(ref.quantities().items())]
        if ref.backend != "numpy":  # rank 0 computes them with NumPy from the gathered field
            assert np.allclose(d["quantities"], q, rtol=1e-6, atol=0, equal_nan=True), key
            assert float(d["area"]) == pytest.approx(ref.surface_area(), rel=1e-5), key
        else:
            assert np.array_equal(d["quantities"], q, equal_nan=True), key
            assert float(d["area"]) == ref.surface_area(), key
            assert float(d["energy"]) == ref.willmore_energy(), key
            # the checkpoint the ranks wrote at T1 holds the whole field; it continues on one
            one = solvers.load(tmp_path / f"{key}-T1.npz", backend="numpy")
            assert one.fields()["phi"].shape == (n, run.SIZE["nx"] + 1)
            one.advance(case[5])
            assert one.steps == ref.steps and np.array_equal(one.fields()["phi"], f["phi"])


@pytest.mark.parametrize("model", ["mean-curvature", "willmore"])
def test_imex_is_refused_with_the_reason(model):
    with pytest.raises(solvers.ParameterError, match=f"{model}: cannot run decomposed.*"
                       "integrator=imex runs on one process: its FFT solve is global; allowed "
                       "decomposed: rkm"):
        solvers.create(model, backend="numpy", comm=SelfComm(), integrator="imex")


def test_strips_of_one_node_row_are_refused():
    with pytest.raises(solvers.ParameterError, match=r"mean-curvature: 6 ranks split the 9 node "
                       r"rows into strips of 1; a strip needs at least 2.*at most 4 ranks"):
        solvers.create("mean-curvature", backend="numpy", comm=OneOfMany(6), nx=8)
    with pytest.raises(solvers.ParameterError, match="this scheme reads 2 rows"):
        solvers.create("willmore", backend="numpy", comm=OneOfMany(6), nx=8)


def test_a_strip_holds_its_own_rows_and_set_field_fills_only_physical_edges():
    """Rank 0 of 3 (12 node rows: 4 each) builds rows 0–3 only; a whole field set with Neumann
    boundaries copies row 1 onto row 0 (a physical edge) but keeps row 3, the strip's inner
    edge, as given."""
    kw = dict(backend="numpy", nx=9, ny=11, boundary="neumann")
    dist = solvers.create("mean-curvature", comm=OneOfMany(3), **kw)
    plain = solvers.create("mean-curvature", **kw)
    assert dist.state["phi"].shape == (4, 10) and dist.nodes.top and not dist.nodes.bottom
    assert np.array_equal(dist.state["phi"], plain.state["phi"][:4])
    values = np.arange(120.0).reshape(12, 10)
    dist.set_field("phi", values)
    plain.set_field("phi", values)
    assert np.array_equal(dist.state["phi"], plain.state["phi"][:4])
    assert np.array_equal(dist.state["phi"][3, 1:-1], values[3, 1:-1])


@pytest.mark.parametrize("model", ["mean-curvature", "willmore"])
def test_one_rank_decomposed_equals_the_plain_run(model):
    kw = dict(backend="numpy", nx=20, ny=15, scenario="eoc-exact", boundary="dirichlet")
    plain = solvers.create(model, **kw)
    dist = solvers.create(model, comm=SelfComm(), **kw)
    for s in (plain, dist):
        s.advance(40 * s.tau, max_steps=12)
    assert dist.steps == plain.steps == 12 and dist.t == plain.t and dist.tau == plain.tau
    assert np.array_equal(dist.fields()["phi"], plain.fields()["phi"])
    assert dist.surface_area() == plain.surface_area()
