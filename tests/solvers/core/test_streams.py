"""The fused paths on a non-blocking CUDA stream (what a solver thread with its own stream uses):
the same steps, times and fields, bit for bit, as on CUDA's default stream, across enough steps
for the CUDA graphs to be captured and replayed. A capture used to leave the default stream
current, so the steps after it ran unordered with the graph (shallow water diverged at step
128); core.backend.on_stream now restores the stream that was current."""
import numpy as np
import pytest

from pdestudio import solvers

pytestmark = pytest.mark.gpu

CASES = [("shallow-water", {"nx": 200}), ("shallow-water", {"nx": 200, "order": 3}),
         ("two-layer", {"cells": 4000}), ("mean-curvature", {"nx": 64}),
         ("gray-scott", {"vertices": 3000}), ("chemotaxis", {"vertices": 3000}),
         ("heat-1d", {"nx": 4096}), ("ks-1d", {"nx": 1024, "method": "classic-graph"})]


def _run(model, kw, stream):
    import cupy as cp
    before = cp.cuda.get_current_stream()
    s = cp.cuda.Stream(non_blocking=True) if stream else cp.cuda.Stream.null
    s.use()
    try:
        sim = solvers.create(model, backend="cupy", dtype="float32", **kw)
        n = 1
        for _ in range(10):  # 1023 steps in chunks that double: graphs from the 48-step chunk on
            sim.step(n)
            n *= 2
        assert cp.cuda.get_current_stream() == s, "the solver's stream is no longer current"
        return sim.t, sim.steps, {k: np.asarray(v) for k, v in sim.fields().items()}
    finally:
        before.use()


@pytest.mark.parametrize("model,kw", CASES, ids=[f"{m}-{'-'.join(map(str, k.values()))}"
                                                   for m, k in CASES])
def test_a_non_blocking_stream_gives_the_same_run(model, kw):
    t0, n0, f0 = _run(model, kw, stream=False)
    t1, n1, f1 = _run(model, kw, stream=True)
    assert (t1, n1) == (t0, n0)
    for k, v in f0.items():
        np.testing.assert_array_equal(f1[k], v, err_msg=k)
