"""Run-ahead of the fused curvature scheme (`Simulation.step(n, ahead=m)`, solvers/curvature/
fused.py): a call that starts the next call's steps before its wait gives, call after call, the
very state, time, step count and controller of calls that do not, also where the state, a live
parameter or the kind of call changes in between (the steps started ahead are then not used).
Runs on the graph path (`sim.scheme = FusedRKM(sim, path="graph")`), where the window's grids
run ahead; the persistent path ignores `ahead`."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.curvature.fused import FusedRKM

from ..run_ahead_plan import follow

pytestmark = pytest.mark.gpu


def make(model, dtype):
    sim = solvers.create(model, backend="cupy", dtype=dtype, kernel="fused", nx=90, ny=70,
                         scenario="sine-rings")
    sim.scheme = FusedRKM(sim, path="graph")
    assert sim.scheme.path == "graph" and sim.runs_ahead
    return sim


def same(a, b, where):
    pa, pb = a.fields()["phi"], b.fields()["phi"]
    assert np.array_equal(pa, pb), (where, float(np.abs(pa - pb).max()))
    assert (a.t, a.steps) == (b.t, b.steps), where
    assert a.controller.tau == b.controller.tau, where
    assert a.controller.rejected == b.controller.rejected, where


@pytest.mark.parametrize("model,dtype", [("mean-curvature", "float32"),
                                         ("mean-curvature", "float64"), ("willmore", "float64")])
def test_calls_run_ahead_equal_calls_that_do_not(model, dtype):
    ahead, plain = make(model, dtype), make(model, dtype)
    rng = np.random.default_rng(5)
    shape = plain.fields()["phi"].shape
    # (steps of the call, steps started ahead, what happens after the call)
    plan = [(6, 6, None), (6, 9, None), (9, 9, "set_field"), (9, 4, None), (4, 4, "paint"),
            (4, 7, "param"), (7, 7, "step1"), (7, 5, "advance"), (5, 5, None), (5, 3, None),
            (4, 4, None), (4, 4, "snapshot"), (4, 4, "settle"), (4, 0, None), (3, 3, None)]
    follow(plan, ahead, plain, same, field="phi",
           new_values=lambda sim: sim.fields()["phi"] + 0.05 * rng.standard_normal(shape),
           paint=((0.4, 0.5), 0.3, 0.2), param=("tolerance", 0.5 * plain.params["tolerance"]),
           advance_to=lambda sim: sim.t + 3 * sim.controller.tau)
    # the steps started ahead were taken up where the next call matched them and nothing came
    # in between: by calls 1, 2, 4, 9 and 11
    assert ahead.scheme.adopted == 5, ahead.scheme.adopted
