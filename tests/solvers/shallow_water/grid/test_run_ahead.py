"""Run-ahead of the fused structured shallow water (`Simulation.step(n, ahead=m)`,
solvers/shallow_water/grid/fused.py): a call that starts the next call's steps before its wait,
in the spare lane, gives, call after call, the very state, time and step count of calls that do
not, also where the state, a live parameter or the kind of call changes in between (the steps
started ahead are then not used), with the carbuncle cure's folded sensors and z_max slots
carried into the lane, single steps and CUDA graphs (calls of more than 48 steps), orders 1 and
3. A decomposed run's strips do not run ahead."""
import numpy as np
import pytest

from pdestudio import solvers

from ...run_ahead_plan import follow

pytestmark = pytest.mark.gpu


def rough(shape, seed):
    """Compressions everywhere (the cure's sensors are not zero), random bottom."""
    rng = np.random.default_rng(seed)
    return {"H": 0.1 * rng.random(shape), "h": 0.5 + rng.random(shape),
            "hu": rng.uniform(-0.6, 0.6, shape), "hv": rng.uniform(-0.6, 0.6, shape)}


def make(dtype, order, fields):
    sim = solvers.create("shallow-water", backend="cupy", dtype=dtype, nx=100, ny=41,
                         order=order, shock_fix=True)
    for k, v in fields.items():
        sim.set_field(k, v)
    assert sim.runs_ahead
    return sim


def same(a, b, where):
    for k in ("h", "hu", "hv"):
        x, y = a.state[k].get(), b.state[k].get()
        assert np.array_equal(x, y), (where, k, float(np.abs(x - y).max()))
    assert (a.t, a.steps) == (b.t, b.steps), where


@pytest.mark.parametrize("dtype,order", [("float32", 1), ("float64", 1), ("float32", 3)])
def test_calls_run_ahead_equal_calls_that_do_not(dtype, order):
    fields = rough((41, 100), 3)
    ahead, plain = make(dtype, order, fields), make(dtype, order, fields)
    rng = np.random.default_rng(5)
    # (steps of the call, steps started ahead, what happens after the call); 60 and 100 steps
    # take CUDA graphs of 48, in both lanes
    plan = [(6, 6, None), (6, 60, None), (60, 60, None), (60, 60, "set_field"), (60, 7, None),
            (7, 7, "paint"), (7, 100, "param"), (100, 100, "step1"), (100, 5, "advance"),
            (5, 5, None), (5, 60, None), (60, 60, "snapshot"), (60, 60, None), (60, 60, "settle"),
            (60, 0, None), (3, 3, None)]
    follow(plan, ahead, plain, same, field="h",
           new_values=lambda sim: sim.state["h"].get() * (1 + 0.05 * rng.random((41, 100))),
           paint=((0.4, 0.5), 0.3, 0.2), param=("cfl", 0.5),
           advance_to=lambda sim: sim.t + 1e-3)
    # taken up where the next call matched and nothing came in between (a snapshot alone does
    # not count: it changes nothing): calls 1, 2, 3, 5, 10, 11 and 13
    assert ahead.scheme.adopted == 7, ahead.scheme.adopted
    assert abs(ahead.state["h"].get() - fields["h"]).max() > 1e-2  # the runs moved the state


def test_the_frame_read_between_calls_is_the_calls_state():
    """What a caller reads after a call (the window's frame) is the call's end state while the
    next call's steps run in the spare lane, and the next call takes them up."""
    fields = rough((41, 100), 8)
    sim, plain = make("float32", 1, fields), make("float32", 1, fields)
    for _ in range(4):
        sim.step(96, ahead=96)
        plain.step(96)
        mid = {k: sim.state[k].copy() for k in ("h", "hu", "hv")}  # queued behind the call
        same(sim, plain, "frame")
        for k, v in mid.items():
            assert np.array_equal(v.get(), plain.state[k].get()), k
    sim.settle()
    assert sim.scheme.adopted == 3


def test_the_chunks_of_a_long_call_run_ahead():
    """Each chunk of a call (`check_interval` steps between two checks) starts the next before
    its wait, and the call equals one whose scheme does not run ahead."""
    fields = rough((41, 100), 9)
    sim, plain = make("float32", 1, fields), make("float32", 1, fields)
    plain.scheme.RUN_AHEAD = False
    assert not plain.runs_ahead
    for s in (sim, plain):
        s.check_interval = 100
        s.step(350)  # chunks of 100, 100, 100 and 50 steps
    same(sim, plain, "long call")
    assert sim.scheme.adopted == 3 and plain.scheme.adopted == 0
