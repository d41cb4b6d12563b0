"""Run-ahead of the triangle finite volumes (TriFused, core/run_ahead.py; the window's calls and
the chunks of a long call): calls that start the next call's steps before their wait, in the
spare lane (the state W, the Δt slots and the clock), give call after call the very state,
time and step count of calls that do not, also where the state, a live parameter or the kind of
call changes in between (the steps started ahead are then not used); two layers (edge slots)
and one layer with the carbuncle cure's sensor pass (cell-fused), single steps and CUDA graphs
(calls of more than 32 steps)."""
import numpy as np
import pytest

from pdestudio import solvers

from ...run_ahead_plan import follow

pytestmark = pytest.mark.gpu

# (two layers: r = 0.5, which stays hyperbolic through the plan's perturbations)
CASES = {"two-layer": ("two-layer", {"scenario": "renumbering-test-1"}), "one-layer": ("shallow-water",
                                                       {"geometry": "triangles",
                                                        "shock_fix": True})}


def make(case, dtype, backend="cupy"):
    model, kw = CASES[case]
    sim = solvers.create(model, backend=backend, dtype=dtype, cells=1500, **kw)
    assert sim.runs_ahead or backend == "numpy"
    return sim


def same(a, b, where):
    for k in a.state_names:
        x, y = a.state[k].get(), b.state[k].get()
        assert np.array_equal(x, y), (where, k, float(np.abs(x - y).max()))
    assert (a.t, a.steps) == (b.t, b.steps), where


@pytest.mark.parametrize("case,dtype", [("two-layer", "float32"), ("two-layer", "float64"),
                                        ("one-layer", "float32")])
def test_calls_run_ahead_equal_calls_that_do_not(case, dtype):
    ahead, plain = make(case, dtype), make(case, dtype)
    first = plain.state_names[0]
    rng = np.random.default_rng(5)
    plan = [(6, 6, None), (6, 40, None), (40, 40, None), (40, 40, "set_field"), (40, 7, None),
            (7, 7, "paint"), (7, 70, "param"), (70, 70, "step1"), (70, 5, "advance"),
            (5, 5, None), (5, 40, None), (40, 40, "snapshot"), (40, 40, None),
            (40, 40, "settle"), (40, 0, None), (3, 3, None)]
    follow(plan, ahead, plain, same, field=first,
           new_values=lambda sim: sim.state[first].get() * (
               1 + 0.002 * rng.random(sim.state[first].shape)),
           paint=((0.4, 0.5), 0.5, 0.02), param=("cfl", 0.5),
           advance_to=lambda sim: sim.t + 0.01)
    # taken up where the next call matched and nothing came in between: calls 1, 2, 3, 5, 10,
    # 11 and 13
    assert ahead.scheme.adopted == 7, ahead.scheme.adopted


def test_the_chunks_of_a_long_call_run_ahead():
    sim, plain = make("two-layer", "float32"), make("two-layer", "float32")
    plain.scheme.RUN_AHEAD = False
    for s in (sim, plain):
        s.check_interval = 50
        s.step(170)  # chunks of 50, 50, 50 and 20 steps
    same(sim, plain, "long call")
    assert sim.scheme.adopted == 3 and plain.scheme.adopted == 0
