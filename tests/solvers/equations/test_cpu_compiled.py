"""Model files on the CPU run the generated kernels compiled by the C++ compiler (cpu.py), by
default: they agree with the NumPy float64 reference (kernel=array) on every domain and
integrator, the positive flux and IMEX included, on grids large enough that the OpenMP threads
split every launch; every gallery file runs compiled; and without a compiler, with a broken one
or with PDESTUDIO_CPU_COMPILE=0 the reference runs and the simulation says why."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.equations import cpu

from .conftest import CHEMOTAXIS
from .test_cu_on_cpu import GRID_MODEL
from .test_gallery_files import FILES, _define
from .test_gpu import DOMAINS, _rel
from .test_gpu import _pair as gpu_pair

pytestmark = pytest.mark.skipif(cpu.compiler() is None, reason="no C++ compiler")

# ≥ PARALLEL_MIN nodes: the threads of a launch run at once (a race would show)
BIG = {"periodic": {"nx": 128, "ny": 96}, "mixed": {"nx": 120, "ny": 90},
       "vertex": {"nx": 120, "ny": 90}, "interval": {"nx": 12000},
       "sphere": {"vertices": 10242}, "mesh-dirichlet": {"vertices": 9000}}


def _pair(src, **kw):
    ref, fast = gpu_pair(src, backend="numpy", **kw)
    assert ref.kernel == "numpy" and fast.kernel == "compiled", fast.cpu_reason
    return ref, fast


@pytest.mark.parametrize("domain", list(DOMAINS))
@pytest.mark.parametrize("integrator", ["euler", "rk4", "imex"])
def test_compiled_matches_the_reference(domain, integrator):
    ref, fast = _pair({**GRID_MODEL, "domain": {**DOMAINS[domain], **BIG[domain]}},
                      integrator=integrator)
    start = {k: v.copy() for k, v in fast.fields().items()}
    ref.step(6)
    fast.step(6)
    assert fast.t == pytest.approx(ref.t, rel=1e-14)
    assert _rel(fast, ref) < 1e-12
    assert max(np.abs(fast.fields()[k] - start[k]).max() for k in fast.state) > 1e-6  # moved


@pytest.mark.parametrize("integrator", ["euler", "ssprk3"])
def test_compiled_positive_flux_matches_the_reference(integrator):
    """The chemotaxis flux: the rates kernel's loss-rate maximum is an atomic max over the
    threads, and the adaptive step follows from it."""
    src = {**CHEMOTAXIS, "domain": {**CHEMOTAXIS["domain"], "vertices": 9000}}
    ref, fast = _pair(src, integrator=integrator, dt=0.01)
    ref.step(8)
    fast.step(8)
    assert fast.t == pytest.approx(ref.t, rel=1e-12) and fast.steps == ref.steps
    assert _rel(fast, ref) < 1e-11


def test_float32_compiled_is_within_single_precision_of_the_reference():
    src = {**GRID_MODEL, "domain": {**DOMAINS["periodic"], **BIG["periodic"]}}
    mid = solvers.define(src)
    ref = solvers.create(mid, backend="numpy", kernel="array")
    fast = solvers.create(mid, backend="numpy", dtype="float32")
    assert fast.kernel == "compiled" and fast.fields()["u"].dtype == np.float32
    for s in ref.state:
        fast.set_field(s, ref.fields()[s].astype(np.float32))
        ref.set_field(s, fast.fields()[s].astype(np.float64))
    ref.step(10)
    fast.step(10)
    assert 0 < _rel(fast, ref) < 1e-5


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_gallery_file_runs_compiled(path):
    mid = _define(path)
    sim = solvers.create(mid, backend="numpy")
    assert sim.kernel == "compiled", sim.cpu_reason
    ref = solvers.create(mid, backend="numpy", kernel="array")
    ref.step(5)
    sim.step(5)
    assert sim.t == pytest.approx(ref.t, rel=1e-13)
    assert _rel(sim, ref) < 1e-11


@pytest.mark.parametrize("how", ["missing", "broken", "off"])
def test_without_a_working_compiler_the_reference_runs_and_says_why(how, monkeypatch,
                                                                     tmp_path):
    if how == "missing":
        monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
        why = "no C++ compiler"
    elif how == "broken":
        fake = tmp_path / "fake-cxx"
        fake.write_text("#!/bin/sh\necho 'fake-cxx: cannot compile' >&2\nexit 1\n")
        fake.chmod(0o755)
        monkeypatch.setenv("CXX", str(fake))
        why = "cannot compile"
    else:
        monkeypatch.setenv("PDESTUDIO_CPU_COMPILE", "0")
        why = "PDESTUDIO_CPU_COMPILE=0"
    src = {**GRID_MODEL, "model": {"name": f"no-cxx-{how}"},
           "domain": {**DOMAINS["periodic"], "nx": 20, "ny": 10}}
    sim = solvers.create(solvers.define(src), backend="numpy")
    assert sim.kernel == "numpy" and why in sim.cpu_reason
    sim.step(3)
    assert sim.steps == 3 and all(np.isfinite(f).all() for f in sim.fields().values())
