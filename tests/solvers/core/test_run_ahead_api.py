"""`Simulation.step(n, ahead=m)` where nothing runs ahead (NumPy; the GPU's run-ahead is tested in
tests/solvers/curvature/test_run_ahead.py): the same steps as `step(n)`, `settle()` a no-op,
and `ahead` validated like `n`."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers import ParameterError


def test_ahead_changes_nothing_where_the_scheme_does_not_run_ahead():
    a, b = (solvers.create("mean-curvature", backend="numpy", nx=24) for _ in range(2))
    assert not a.runs_ahead
    for n, m in ((3, 3), (3, 5), (2, 0)):
        a.step(n, ahead=m)
        b.step(n)
        a.settle()
        assert np.array_equal(a.fields()["phi"], b.fields()["phi"])
        assert (a.t, a.steps) == (b.t, b.steps)


@pytest.mark.parametrize("bad", [-1, 2.5, float("nan")])
def test_ahead_is_validated(bad):
    sim = solvers.create("heat-1d", backend="numpy", nx=32)
    with pytest.raises(ParameterError, match="ahead"):
        sim.step(1, ahead=bad)
    assert sim.steps == 0
