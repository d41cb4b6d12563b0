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
            (4, 7, "tolerance"), (7, 7, "step1"), (7, 5, "advance"), (5, 5, None), (5, 3, None),
            (4, 4, None), (4, 4, "snapshot"), (4, 4, "settle"), (4, 0, None), (3, 3, None)]
    for i, (n, m, then) in enumerate(plan):
        ahead.step(n, ahead=m)
        plain.step(n)
        same(ahead, plain, f"call {i}")
        if then == "set_field":
            u = plain.fields()["phi"] + 0.05 * rng.standard_normal(shape)
            ahead.set_field("phi", u)
            plain.set_field("phi", u)
        elif then == "paint":
            for s in (ahead, plain):
                assert s.paint("phi", (0.4, 0.5), 0.3, 0.2, mode="add") > 0
        elif then == "tolerance":
            tol = 0.5 * plain.params["tolerance"]
            ahead.set_param("tolerance", tol)
            plain.set_param("tolerance", tol)
        elif then == "step1":
            ahead.step(1)
            plain.step(1)
        elif then == "advance":
            ahead.advance(plain.t + 3 * plain.controller.tau)
            plain.advance(plain.t + 3 * plain.controller.tau)
        elif then == "snapshot":
            snaps = ahead.snapshot(), plain.snapshot()
            for s, snap in zip((ahead, plain), snaps):
                s.step(2)
                s.restore(snap)
        elif then == "settle":
            ahead.settle()
        if then is not None:
            same(ahead, plain, f"after {then} ({i})")
    # the steps started ahead were taken up where the next call matched them and nothing came
    # in between: by calls 1, 2, 4, 9 and 11
    assert ahead.scheme.adopted == 5, ahead.scheme.adopted
