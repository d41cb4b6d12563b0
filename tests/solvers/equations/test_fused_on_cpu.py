"""The whole fused driver of model files (solvers/equations/fused.py: stage buffers, accumulators,
the positive-flux combination, Dirichlet pins, IMEX rates) on the CPU: the generated kernels built
by g++ (cu_cpu.py) run on NumPy arrays through `FusedEquations(sim, xp=np, kernels=...)`,
against the NumPy float64 reference over 20 steps, on the domains and integrators of the GPU
tests. The threads of every launch run in reverse or shuffled order, every launch checks its
arguments' types and that no written array aliases another argument, and two orders must give
bit-identical states: what a serial run in index order would hide (a stage reading what another
thread of the same launch writes) shows up here."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.equations.fused import FusedEquations

from .conftest import CHEMOTAXIS
from .cu_cpu import GXX, CpuKernels, reverse, shuffled
from .test_cu_on_cpu import GRID_MODEL
from .test_gpu import DOMAINS

pytestmark = pytest.mark.skipif(GXX is None, reason="g++ is not installed")


def _pair(src, order, **kw):
    mid = solvers.define(src)
    ref = solvers.create(mid, backend="numpy", kernel="array", **kw)  # the reference
    emu = solvers.create(mid, backend="numpy", kernel="array", **kw)
    rng = np.random.default_rng(5)
    for s in ref.state:
        v = ref.fields()[s] * (1 + 0.2 * rng.uniform(-1, 1, ref.field_shape(s)))
        ref.set_field(s, v)
        emu.set_field(s, v)
    emu.scheme = FusedEquations(emu, xp=np, kernels=CpuKernels(emu, order))
    return ref, emu


def _rel(a, b):
    return max(float(np.abs(a.fields()[k] - b.fields()[k]).max()
                     / (np.abs(b.fields()[k]).max() + 1e-300)) for k in b.state)


@pytest.mark.parametrize("domain", list(DOMAINS))
def test_fused_driver_matches_the_reference_in_any_thread_order(domain):
    runs = {}
    for integrator in ("euler", "ssprk3", "rk4", "imex"):
        ref, emu = runs[integrator] = _pair({**GRID_MODEL, "domain": DOMAINS[domain]}, reverse,
                         integrator=integrator)
        ref.step(20)
        emu.step(20)
        assert emu.t == pytest.approx(ref.t, rel=1e-14), integrator
        assert _rel(emu, ref) < 1e-12, integrator
    _, other = _pair({**GRID_MODEL, "domain": DOMAINS[domain]}, shuffled(3), integrator="rk4")
    other.step(20)
    reversed_rk4 = runs["rk4"][1]
    for k in other.state:
        assert np.array_equal(other.fields()[k], reversed_rk4.fields()[k]), k


@pytest.mark.parametrize("integrator", ["euler", "rk4"])
def test_fused_driver_positive_flux_with_dirichlet_pins(integrator):
    src = {**CHEMOTAXIS, "domain": {**CHEMOTAXIS["domain"], "boundary": "dirichlet: 1 + 0.1*x"}}
    ref, emu = _pair(src, shuffled(1), integrator=integrator, dt=0.02)
    ref.step(30)
    emu.step(30)
    assert emu.t == pytest.approx(ref.t, rel=1e-12)
    assert _rel(emu, ref) < 1e-11
