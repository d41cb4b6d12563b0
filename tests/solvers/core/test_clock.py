"""The landing rule (core/clock.py): a run lands exactly on its end time, never passes it, leaves
no sliver, and batched bookkeeping (full_steps) walks the clock exactly as step-by-step does."""
import math

import numpy as np
import pytest

from pdestudio.solvers.core import clock


def _walk(t, dt, t_end, count):
    """Step by step as the base class does: (steps taken, t)."""
    k = 0
    while k < count and not clock.landed(t, t_end):
        lim = clock.limit(t, t_end)
        step = dt if lim is None else min(dt, lim)
        t = clock.after_step(t, step, t_end)
        k += 1
    return k, t


@pytest.mark.parametrize("t0,dt,t_end", [(0.0, 0.1, 1.0), (0.3, 1e-3, 0.7), (0.0, 1 / 3, 1.0),
                                         (1e5, 0.25, 1e5 + 1), (0.0, 2.0, 1.0)])
def test_lands_exactly_and_never_passes(t0, dt, t_end):
    k, t = _walk(t0, dt, t_end, 10**6)
    assert t == t_end
    assert k == math.ceil((t_end - t0) / dt - 1e-9)


def test_a_step_within_the_snap_tolerance_lands():
    t_end = 1.0
    t = t_end - 1.0
    assert clock.after_step(t, 1.0 - 1e-13, t_end) == t_end   # no sliver of 1e-13 left
    assert clock.after_step(t, 0.5, t_end) == 0.5
    assert clock.landed(t_end - 1e-14, t_end) and not clock.landed(t_end - 1e-10, t_end)
    assert clock.limit(0.25, None) is None and not clock.landed(5.0, None)


@pytest.mark.parametrize("seed", range(20))
def test_full_steps_matches_the_step_by_step_walk(seed):
    rng = np.random.default_rng(seed)
    t0 = float(rng.uniform(0, 10))
    dt = float(rng.uniform(1e-3, 0.5))
    t_end = t0 + float(rng.uniform(0, 5)) if seed % 4 else None
    count = int(rng.integers(1, 400))
    q = clock.full_steps(t0, dt, count, t_end)
    t = t0
    for _ in range(q):   # the whole steps: each one a full dt, none of them landing
        assert not clock.landed(t, t_end)
        assert t_end is None or dt < (t_end - t) * (1 - clock.SNAP_RTOL)
        t = clock.after_step(t, dt, t_end)
    k, t_walk = _walk(t0, dt, t_end, count)
    assert q <= k <= q + 1
    if k == q:
        assert t == t_walk


def test_replay_of_a_device_batch_walks_like_single_steps():
    dts = [0.3, 0.3, 0.3, 0.1, 0.0, 0.0]          # the device landed on 1.0 and then applied 0
    assert clock.replay(0.0, 1.0, dts) == (4, 1.0)
    assert clock.replay(0.0, None, [0.25] * 3) == (3, 0.75)
    with pytest.raises(Exception, match="Δt = nan"):
        clock.replay(0.0, 1.0, [0.2, math.nan])


@pytest.mark.parametrize("t0,count,t_end", [(0.0, 50, None), (0.0, 50, 3.3), (1.7, 10, 2.0),
                                            (0.0, 5, 0.05), (2.0, 7, 2.0)])
def test_run_fixed_steps_in_one_call_walks_the_clock_as_step_by_step(t0, count, t_end):
    """A scheme whose launch takes any number of steps (`many`, the lattice Gray–Scott kernel)
    gets the same whole steps, landing step and clock from run_fixed_steps as one that steps
    one at a time."""
    from pdestudio.solvers.core.device_clock import run_fixed_steps
    dt = 0.1

    def stepper():
        calls = []
        return calls, (lambda d, n=1: calls.extend([d] * n))
    single, one = stepper()
    batched, many = stepper()
    got_one = run_fixed_steps(None, count, t0, t_end, dt, one, lambda: None, 64)
    whole = []
    got_many = run_fixed_steps(None, count, t0, t_end, dt, many, lambda: None, 64,
                               many=lambda d, n: (whole.append(n), many(d, n)))
    assert got_many == got_one and batched == single
    assert len(whole) <= 1 and sum(whole) == sum(1 for d in single if d == dt)
