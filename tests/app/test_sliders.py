"""Sliders beside the numeric parameters (issue 17): each spans the schema's range (log scale
over decades), moving one on a running simulation applies a live parameter at once (the run
goes on), a non-live one waits for Reset and says so, a refused value snaps back."""
import math

import pytest

pytest.importorskip("pytestqt")

from pdestudio import solvers  # noqa: E402
from pdestudio.app.widgets.slider import STEPS, span  # noqa: E402

from .test_window import WAIT, open_model, win  # noqa: E402,F401


def test_slider_ranges_follow_the_schema():
    d = {p["name"]: p for p in solvers.describe("gray-scott")["parameters"]}
    assert span(d["F"], 0.037) == (0.0, 1.0, False)            # [0, 1]: linear
    lo, hi, log = span(d["Du"], 0.02)                          # (0, inf): around the default
    assert log and lo < 0.02 < hi and hi / lo >= 100
    assert span(d["renumber"], "rcm") is None                  # a choice: no slider
    heat = {p["name"]: p for p in solvers.describe("heat-1d")["parameters"]}
    lo, hi, log = span(heat["Fo"], 0.45)                       # (0, 0.5]
    assert not log and 0 < lo < 0.01 and hi == 0.5


def test_moving_a_slider_on_a_running_simulation(win, qtbot):
    sim = open_model(win, qtbot, "gray-scott", params={"vertices": 1500})
    win.run_action.setChecked(True)
    slider = win.panel.sliders["F"]
    assert slider.maximum() == STEPS
    slider.setValue(STEPS // 2)  # F = 0.5, live
    qtbot.waitUntil(lambda: sim.params["F"] == 0.5, timeout=WAIT)
    steps = sim.steps
    qtbot.waitUntil(lambda: sim.steps > steps, timeout=WAIT)  # still running
    assert "F = 0.5 applied live" in win.last_message[0]
    assert win.panel.values()["F"] == 0.5
    win.panel.sliders["spots"].setValue(STEPS // 10)  # not live: on Reset
    assert "takes effect on Reset" in win.last_message[0] and win.reset_action.text() == "Reset *"
    assert sim.params["spots"] == 12
    win.run_action.setChecked(False)
    box = win.panel.editors["Du"].box
    win.panel.set_value("Du", 0.05)
    assert math.isclose(win.panel.sliders["Du"].to_value(win.panel.sliders["Du"].value()),
                        0.05, rel_tol=0.02)  # the box moves the slider too


def test_a_refused_slider_value_snaps_back(win, qtbot):
    sim = open_model(win, qtbot, "gray-scott", params={"vertices": 1500})
    win.panel.editors["C"].box.good = 0.01
    win.panel.editors["C"].auto.setChecked(False)  # C (live): δt = C dx², not automatic
    qtbot.waitUntil(lambda: sim.params["C"] == 0.01, timeout=WAIT)
    slider = win.panel.sliders["C"]
    slider.setValue(STEPS)
    qtbot.waitUntil(lambda: win.last_message[1], timeout=WAIT)
    assert "stability bound" in win.last_message[0] and sim.params["C"] == 0.01
    qtbot.waitUntil(lambda: win.panel.values()["C"] == 0.01, timeout=WAIT)  # back
    assert slider.value() == slider.to_pos(0.01)
