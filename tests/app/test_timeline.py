"""The timeline dock (issue 17): snapshots taken while running, scrubbing back restores the exact
state of that step (a fresh run stepped to it agrees bit for bit), running on continues exactly,
"Fork here" continues with changed live or non-live parameters, and the memory budget drops the
oldest snapshots."""
import numpy as np
import pytest

pytest.importorskip("pytestqt")

from pdestudio import solvers  # noqa: E402
from pdestudio.app.tools import timeline as tl  # noqa: E402

from .test_window import WAIT, open_model, step_and_wait, win  # noqa: E402,F401


def fresh(steps, **params):
    sim = solvers.create("heat-1d", backend="numpy", nx=64, **params)
    sim.step(steps)
    return sim


def run_until_snapshots(win, qtbot, n):
    win.spf.setValue(3)
    win.run_action.setChecked(True)
    qtbot.waitUntil(lambda: len(win.timeline_bar.times) >= n, timeout=WAIT)
    win.run_action.setChecked(False)
    qtbot.waitUntil(lambda: not win.worker.running, timeout=WAIT)


def test_scrub_back_run_on_and_fork(win, qtbot, monkeypatch):
    monkeypatch.setattr(tl, "EVERY", 2)
    sim = open_model(win, qtbot, "heat-1d", params={"nx": 64})
    run_until_snapshots(win, qtbot, 4)
    bar = win.timeline_bar
    t1, steps1 = bar.times[1]
    bar.slider.setValue(1)  # scrub back
    qtbot.waitUntil(lambda: win.worker.sim.steps == steps1, timeout=WAIT)
    assert sim.t == t1 and np.array_equal(sim.state["T"], fresh(steps1).state["T"])
    assert "back at t =" in win.last_message[0]
    win.set_field(win.field)  # the restored state's frame drawn (the mailbox may drop one)
    qtbot.waitUntil(lambda: win.last_frame[1] == steps1, timeout=WAIT)
    step_and_wait(win, qtbot)  # running on from there is the first run's continuation
    assert sim.steps == steps1 + 1
    assert np.array_equal(sim.state["T"], fresh(steps1 + 1).state["T"])
    # the branch: the next snapshot dropped those after the restored one
    qtbot.waitUntil(lambda: bar.times[-1][1] == steps1 + 1, timeout=WAIT)
    assert len(bar.times) == 3
    # fork with a live parameter: the same simulation goes on with it
    bar.slider.setValue(0)
    t0, steps0 = bar.times[0]
    qtbot.waitUntil(lambda: sim.steps == steps0, timeout=WAIT)
    win.panel.set_value("Fo", 0.3)
    bar.fork()
    qtbot.waitUntil(lambda: sim.params["Fo"] == 0.3, timeout=WAIT)
    assert sim.steps == steps0 and win.worker.sim is sim
    # fork with a parameter that is not live: a new simulation from the snapshot's state
    before = win.info.generation
    win.panel.set_value("amplitude", 2.0)
    bar.fork()
    qtbot.waitUntil(lambda: win.info.generation > before, timeout=WAIT)
    new = win.worker.sim
    assert new is not sim and new.params["amplitude"] == 2.0 and new.params["Fo"] == 0.3
    assert new.t == t0 and np.array_equal(new.state["T"], fresh(steps0).state["T"])
    assert "forked at t =" in win.last_message[0]


def test_the_budget_drops_the_oldest(win, qtbot, monkeypatch):
    monkeypatch.setattr(tl, "EVERY", 1)
    open_model(win, qtbot, "heat-1d", params={"nx": 64})
    win.timeline.ring.budget = 3 * 64 * 8  # three snapshots of one 64-node float64 field
    run_until_snapshots(win, qtbot, 3)
    for _ in range(4):
        step_and_wait(win, qtbot)
    ring = win.timeline.ring.summary()
    assert len(ring["times"]) == 3 and ring["used"] <= ring["budget"]
    assert ring["times"][-1][1] == win.worker.sim.steps  # the newest kept, the oldest dropped
    assert "3 snapshots" in win.timeline_bar.label.text()
