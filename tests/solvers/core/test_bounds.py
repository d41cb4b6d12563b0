"""Issue 28, item 4: a divergence is caught by the physical bounds the fields declare, at the
cadence of the finiteness check and in the same host sync: the run stops at the first step that
breaks a bound, names the field, its value, the bound and the time, and keeps the state from
before that step, where every bound holds. Before, chemotaxis scheme=paper on a coarse mesh kept
cell densities down to -1e240 as its 'last finite state' (n < 0 from t = 25.5, non-finite at
t = 36), and Euler's paper scheme on Toro's 123 problem kept a pressure of -0.12."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.core.errors import SimulationDiverged
from pdestudio.solvers.core.simulation import BoundViolated

CHEMO = dict(scheme="paper", vertices=200, scenario="rectangle")
TORO123 = dict(scheme="paper", rho_left=1, u_left=-2, p_left=0.4, rho_right=1, u_right=2,
               p_right=0.4, nx=200)


def stopped(sim, t_end):
    with pytest.raises(SimulationDiverged) as err:
        sim.advance(t_end)
    return err.value


def test_chemotaxis_paper_stops_on_negative_density_long_before_non_finite():
    sim = solvers.create("chemotaxis", backend="numpy", **CHEMO)
    e = stopped(sim, 100.0)
    assert isinstance(e, BoundViolated) and e.field == "cells" and e.low < 0 and e.lo == 0
    assert e.t == sim.t < 30 and e.step == sim.steps  # non-finite only from t = 36
    msg = str(e)
    assert "'cells' fell to" in msg and "cells >= 0" in msg and f"t = {sim.t:.6g}" in msg
    kept = sim.fields()
    assert kept["cells"].min() >= 0 and kept["chemo"].min() >= 0
    # the kept state is the one before the failing step: stepping once more breaks the bound
    again = stopped(sim, 100.0)
    assert isinstance(again, BoundViolated) and again.step == e.step


def test_euler_stops_on_negative_pressure():
    sim = solvers.create("euler-1d", backend="numpy", **TORO123)
    e = stopped(sim, 0.5)
    assert isinstance(e, BoundViolated) and e.field == "p" and e.low <= 0 and e.lo_open
    assert "p > 0" in str(e)
    f = sim.fields()
    assert f["p"].min() > 0 and f["rho"].min() > 0 and np.isfinite(f["E"]).all()


def test_bounded_runs_are_not_stopped_and_undershoot_is_allowed_where_declared():
    # Gray-Scott's linear scheme undershoots v >= 0 by ~6e-5 in step 1 on this coarse tube
    # (negative cotan weights) and stays bounded: its fields declare an undershoot of 1e-2
    gs = solvers.create("gray-scott", backend="numpy", scenario="tube", vertices=800)
    gs.step(1)
    assert gs.state["v"].min() < 0
    gs.step(199)
    assert gs.steps == 200
    ch = solvers.create("chemotaxis", backend="numpy", vertices=200, scenario="rectangle")
    ch.advance(40.0)  # the positive scheme on the same mesh
    assert ch.t == 40.0


@pytest.mark.gpu
@pytest.mark.parametrize("model,kw,t_end", [("chemotaxis", CHEMO, 100.0),
                                            ("euler-1d", TORO123, 0.5)])
def test_gpu_stops_at_the_same_step(model, kw, t_end, gpu_backend):
    ref = stopped(solvers.create(model, backend="numpy", **kw), t_end)
    sim = solvers.create(model, backend=gpu_backend, **kw)
    e = stopped(sim, t_end)
    assert isinstance(e, BoundViolated) and (e.field, e.step) == (ref.field, ref.step)
    assert e.t == pytest.approx(ref.t, rel=1e-12)


def _hostile_arrays(rng):
    """Arrays for the finiteness and positivity reductions: clean, one NaN, one ±inf, one 0,
    one negative, in both dtypes, contiguous and strided, empty; sizes across block edges."""
    out = []
    for dtype in (np.float32, np.float64):
        for n in (1, 255, 257, 100_003):
            base = rng.uniform(0.5, 2.0, n).astype(dtype)
            out.append(base)
            for bad in (np.nan, np.inf, -np.inf, 0.0, -1e-30):
                a = base.copy()
                a[rng.integers(n)] = bad
                out.append(a)
        grid = rng.uniform(0.5, 2.0, (64, 48)).astype(dtype)
        grid[7, 5] = np.nan  # in a column a strided view skips, then one it keeps
        out += [grid, grid[:, 1::2], grid[:, ::2], np.empty(0, dtype)]
    return out


@pytest.mark.gpu
def test_fused_finiteness_and_positivity_checks_agree_with_numpy(gpu_backend):
    """core/backend.py's all_finite/all_positive (one CuPy reduction each, what every run's
    check calls) give NumPy's isfinite(a).all() and (a > 0).all() on hostile arrays."""
    from pdestudio.solvers.core.backend import resolve
    gpu, cpu = resolve(gpu_backend), resolve("numpy")
    for a in _hostile_arrays(np.random.default_rng(5)):
        d = gpu.xp.asarray(a)
        for name in ("all_finite", "all_positive"):
            want = bool(getattr(cpu, name)(a))
            assert bool(getattr(gpu, name)(d)) == want, (name, a.dtype, a.shape)
    assert not bool(cpu.all_finite(np.array([1.0, np.nan])))  # (the reference itself)
    assert not bool(cpu.all_positive(np.array([1.0, np.nan])))
