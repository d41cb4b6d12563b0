"""Issue 28, item 7: a clock that cannot move is refused at once (t + Δt == t), a checkpoint
whose state breaks a physical bound is refused at load, a diverging run's message describes the
state it keeps, and `pdestudio bench --sizes` refuses sizes no model accepts."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.core.errors import SimulationDiverged


@pytest.mark.parametrize("model,kw", [("heat-1d", {}), ("mean-curvature", {"nx": 16}),
                                      ("shallow-water", {"nx": 16}),
                                      ("two-layer", {"cells": 200})])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_step_that_cannot_move_the_clock_is_refused_at_once(model, kw, dtype):
    sim = solvers.create(model, backend="numpy", dtype=dtype, **kw)
    before = {k: v.copy() for k, v in sim.state.items()}
    sim.t = 1e300
    with pytest.raises(solvers.ParameterError, match=r"cannot advance at t = 1e\+300"):
        sim.advance(2e300, max_steps=1000)  # before: 1000 steps, t unchanged
    with pytest.raises(solvers.ParameterError, match="t \\+ Δt == t"):
        sim.step(5)
    assert sim.t == 1e300 and sim.steps == 0
    assert all(np.array_equal(before[k], v) for k, v in sim.state.items())
    sim.t = 1e3  # a clock that moves is not refused
    sim.step(2)
    assert sim.t > 1e3 and sim.steps == 2


def test_cli_continuing_a_checkpoint_at_1e300_is_refused(tmp_path):
    sim = solvers.create("heat-1d", backend="numpy")
    sim.t = 1e300
    sim.save(tmp_path / "big.npz")
    out = subprocess.run([sys.executable, "-m", "pdestudio", "run", "heat-1d", "--load",
                          str(tmp_path / "big.npz"), "--until", "2e300"],
                         capture_output=True, text=True, timeout=60)  # before: ran for ever
    assert out.returncode == 2 and "big.npz' has t = 1e+300, where a step of Δt =" in out.stderr
    assert "cannot move the clock" in out.stderr


@pytest.mark.parametrize("model,kw", [("shallow-water", {"nx": 16}), ("gray-scott", {})])
def test_a_checkpoint_whose_clock_cannot_move_is_refused_at_load(model, kw, tmp_path):
    """Shallow water holds no step size before stepping (a trial step, undone, tells);
    Gray-Scott does. The file is named (a loaded simulation must be able to step)."""
    sim = solvers.create(model, backend="numpy", **kw)
    sim.t = 9007199254740993.0  # 2^53 + 1: steps of 1 no longer count
    sim.save(tmp_path / "late.npz")
    with pytest.raises(solvers.ParameterError, match=r"late.npz' has t = 9.0072e\+15, where "
                       r"a step.* cannot move the clock"):
        solvers.load(tmp_path / "late.npz")
    sim.t = 1e6
    sim.save(tmp_path / "fine.npz")
    back = solvers.load(tmp_path / "fine.npz")
    assert back.t == 1e6 and back.steps == sim.steps
    back.step(1)
    assert back.t > 1e6


def test_a_checkpoint_with_negative_depth_is_refused_at_load(tmp_path):
    sim = solvers.create("shallow-water", backend="numpy", nx=16)
    sim.state["h"][3, 4] = -0.25
    sim.save(tmp_path / "neg.npz")
    with pytest.raises(solvers.ParameterError, match=r"'h' down to -0.25; allowed: h > 0"):
        solvers.load(tmp_path / "neg.npz")
    ch = solvers.create("chemotaxis", backend="numpy", vertices=200)
    ch.state["cells"][7] = -1e-3
    ch.save(tmp_path / "neg_cells.npz")
    with pytest.raises(solvers.ParameterError, match=r"'cells' down to -0.001.*cells >= 0"):
        solvers.load(tmp_path / "neg_cells.npz")


def test_a_diverging_two_layer_run_describes_the_finite_state_it_keeps():
    sim = solvers.create("two-layer", backend="numpy", cells=400)
    sim.set_field("q1x", np.full(sim.field_shape("q1x"), 1e150))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy's 'All-NaN slice' and overflow warnings: none
        with pytest.raises(SimulationDiverged) as err:
            sim.advance(1.0)
    thinnest = str(err.value).split("thinnest layer of the state kept: ")[1]
    assert float(thinnest.split()[0]) == pytest.approx(min(sim.state["h1"].min(),
                                                           sim.state["h2"].min()), rel=1e-2)
    assert all(np.isfinite(v).all() for v in sim.state.values())


@pytest.mark.parametrize("size", ["-5", "2^99", "0"])
def test_bench_refuses_sizes_no_model_accepts(size):
    out = subprocess.run([sys.executable, "-m", "pdestudio", "bench", "--sizes", size],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "fits no model benchmarked" in out.stderr
    assert "out of range" in out.stderr
