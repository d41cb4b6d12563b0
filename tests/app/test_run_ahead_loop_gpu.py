"""The window's solver loop (app/solver_loop.py) running ahead on the GPU: once the call sizer
has settled, each frame is one call that takes up the steps the call before started (so the
GPU never waits for the frame's hand-over), and the state is the one of the same calls made
without running ahead."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.app.solver_loop import SolverLoop

pytestmark = pytest.mark.gpu


class Outlet:
    def emit(self, *args):
        pass


# mean curvature 601² nodes: the graph path, more steps a frame than a chunk between two checks;
# shallow water 512²: more steps a frame than a batch of 960 (tens of thousands of steps a
# second), graphs in both lanes
CASES = {"mean-curvature": ({"nx": 600}, "phi"), "shallow-water": ({"nx": 512}, "h")}


@pytest.mark.parametrize("model", list(CASES))
def test_the_loop_runs_ahead_and_keeps_the_state_of_plain_calls(model):
    kw, field = CASES[model]
    sim = solvers.create(model, backend="cupy", dtype="float32", **kw)
    assert sim.runs_ahead
    calls = []
    step = sim.step

    def record(n, ahead=0):
        calls.append((n, ahead))
        step(n, ahead=ahead)
    sim.step = record
    loop = SolverLoop()
    for name in ("created", "frame_ready", "message", "running_changed", "stats", "speedup",
                 "param_refused"):
        setattr(loop, name, Outlet())
    loop.frame_ready.emit = lambda: loop.mailbox.take()  # a screen that keeps up
    loop.adopt(sim)
    loop.running = True
    for _ in range(40):
        loop._frame_of_steps()
    sim.settle()
    # steady state (the sizer settled on the rate while the first frames grew their calls):
    # every frame is one call running ahead, and each takes up the steps the last one started
    tail = calls[-20:]
    assert all(m > 0 for _, m in tail), calls
    assert all(n == m for (n, _), (_, m) in zip(tail[1:], tail[:-1])), calls
    # (more steps a frame than a chunk between two checks: the first chunk ran ahead)
    assert sim.scheme.adopted >= 19, (sim.scheme.adopted, calls)
    plain = solvers.create(model, backend="cupy", dtype="float32", **kw)
    for n, _ in calls:
        plain.step(n)
    assert (plain.t, plain.steps) == (sim.t, sim.steps)
    assert np.array_equal(plain.fields()[field], sim.fields()[field])
