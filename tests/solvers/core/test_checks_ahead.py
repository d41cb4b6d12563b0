"""On the GPU a chunk's checks and the next chunk's snapshot are queued before the chunk's one
host wait (core/checks.py): stepping, divergence reports and the state they keep must be
exactly those of checking after the wait (`checks.AHEAD = False`), for every model, over many
chunks, on the batched paths (device clock, fixed-step graphs, the persistent RKM kernel) and
the step-by-step one."""
from __future__ import annotations

import numpy as np
import pytest

from pdestudio.solvers import SimulationDiverged
from pdestudio.solvers.core import checks

from ..test_contract import MODELS, make, poison_step

pytestmark = pytest.mark.gpu


def state_of(sim):
    return {k: np.asarray(v) for k, v in sim.fields().items()}, sim.t, sim.steps


def run_both(fn, monkeypatch):
    """fn() with the checks queued ahead, then after the wait."""
    got = []
    for ahead in (True, False):
        monkeypatch.setattr(checks, "AHEAD", ahead)
        got.append(fn())
    return got


def assert_same(a, b):
    (fa, ta, sa), (fb, tb, sb) = a, b
    assert (ta, sa) == (tb, sb)
    for k in fa:
        np.testing.assert_array_equal(fa[k], fb[k], err_msg=k)


@pytest.mark.parametrize("model", MODELS)
def test_many_chunks_step_as_checked_after_the_wait(model, monkeypatch):
    def run():
        sim = make(model, backend="cupy")
        sim.step(1)
        sim.check_interval = 3  # many chunks, each ending in a wait
        sim.step(20)
        assert sim.stats["kernel_s"] > 0
        return state_of(sim)
    a, b = run_both(run, monkeypatch)
    assert_same(a, b)


@pytest.mark.parametrize("model", MODELS)
def test_a_fault_in_a_later_chunk_keeps_the_same_state(model, monkeypatch):
    """The snapshot a chunk restores was made ahead by the chunk before it."""
    def run():
        sim = make(model, backend="cupy")
        sim.step(2)
        sim.check_interval = 3
        poison_step(sim, 9)  # the 10th step: chunks of steps 3-5 and 6-8 pass, 9-11 fails
        with pytest.raises(SimulationDiverged) as e:
            sim.step(20)
        assert sim.steps == 9 and e.value.field == next(iter(sim.state))
        return state_of(sim)
    a, b = run_both(run, monkeypatch)
    assert_same(a, b)


class _PoisonedRun:
    """Wraps a batched scheme: its `run` (the device clock's batch, whose one wait the checks
    share) starts from a state with a NaN when the simulation is at step `at`."""

    def __init__(self, sim, at):
        self.inner, self.sim, self.at = sim.scheme, sim, at

    def run(self, count, t, t_end):
        if self.sim.steps == self.at:
            k = next(iter(self.sim.state))
            self.sim.state[k].ravel()[3] = np.nan
        return self.inner.run(count, t, t_end)

    def __getattr__(self, name):
        return getattr(self.inner, name)


@pytest.mark.parametrize("model", ["shallow-water", "gray-scott", "mean-curvature"])
def test_a_fault_in_a_later_batch_reports_the_same(model, monkeypatch):
    """Batched runs: shallow water's device clock (the checks queued inside its wait), Gray-Scott's
    fixed-step graphs (queued after the run, before the one wait), mean curvature's persistent
    RKM kernel (the state replaced after its wait: checked again)."""
    def run():
        sim = make(model, backend="cupy")
        sim.step(2)
        sim.check_interval = 4
        assert hasattr(sim.scheme, "run")
        sim.scheme = _PoisonedRun(sim, 10)
        with pytest.raises(SimulationDiverged) as e:
            sim.step(40)
        assert sim.steps == 10
        return state_of(sim), (e.value.step, e.value.field)
    (a, ea), (b, eb) = run_both(run, monkeypatch)
    assert ea == eb
    assert_same(a, b)


def test_marks_of_a_long_run_keep_few_events_and_add_up():
    """A run of many chunks reads its finished chunks' times as it goes (at most FOLD event
    pairs alive); the sum is the chunks' device time, within the whole run's."""
    import cupy as cp
    marks = checks.Marks(cp)
    a = cp.random.default_rng(0).random(1 << 20)
    whole0, whole1 = cp.cuda.Event(), cp.cuda.Event()
    whole0.record()
    for i in range(200):
        marks.start()
        for _ in range(3):
            a = cp.sin(a)
        marks.stop()
        if i % 10 == 0:
            cp.cuda.get_current_stream().synchronize()
        assert len(marks.pairs) <= checks.Marks.FOLD + 1
    whole1.record()
    whole1.synchronize()
    total = cp.cuda.get_elapsed_time(whole0, whole1) / 1e3
    got = marks.seconds()
    assert 0.3 * total < got <= total * 1.001



@pytest.mark.parametrize("case", ["steps", "second-batch", "landing", "fault"])
def test_mean_curvature_graph_path_checks_ahead(case, monkeypatch):
    """Mean curvature's graph path queues a chunk's checks before its read-back, on the buffer
    the run ends in when it takes all its steps. A run that lands on t_end in the other buffer,
    or needs a second batch of attempts (forced here: too few estimated for chunks longer than
    a graph of attempts), is checked again after its wait: state, t and steps are those of
    checking after the wait; and where every run takes its steps in one batch, the checks
    queued ahead are the ones used."""
    from pdestudio.solvers.curvature.fused import GRAPH_ATTEMPTS, FusedRKM
    chunk = 5
    if case == "second-batch":
        monkeypatch.setattr(FusedRKM, "_attempts_per_step", lambda self: 1e-3)
        chunk = GRAPH_ATTEMPTS + 8
    redone = []

    def run():
        sim = make("mean-curvature", backend="cupy")
        sim.scheme = FusedRKM(sim, path="graph")
        sim.check_interval = chunk
        first = sim._first_nonfinite
        calls = [0]

        def counted():
            calls[0] += 1
            return first()
        monkeypatch.setattr(sim, "_first_nonfinite", counted)
        if case == "landing":
            sim.step(1)
            sim.advance(sim.t + 23.37 * sim.tau)
        elif case == "fault":
            sim.step(2)
            sim.scheme = _PoisonedRun(sim, 12)
            with pytest.raises(SimulationDiverged) as e:
                sim.step(40)
            assert sim.steps == 12
            redone.append(calls[0])
            return state_of(sim), e.value.field
        else:
            sim.step(8 * chunk)
        assert sim.scheme.path == "graph"
        redone.append(calls[0])
        return state_of(sim)

    a, b = run_both(run, monkeypatch)
    if case == "fault":
        assert a[1] == b[1]
        assert_same(a[0], b[0])
        return
    assert_same(a, b)
    ahead, after = redone
    if case == "landing":
        assert after >= 2 and ahead <= after
    else:
        assert after == 8  # checked after each chunk's wait
        assert ahead == (8 if case == "second-batch" else 0)
