"""The quantities dock (issue 17): the solver thread's samples are the simulation's declared
quantities at those steps, the CSV export holds exactly them, a new model starts new series, a
restore back in time starts a new branch of the series."""
import csv

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from pdestudio import solvers  # noqa: E402

from .test_window import WAIT, open_model, step_and_wait, wait_message, win  # noqa: E402,F401


def test_samples_equal_the_quantities_and_export_as_csv(win, qtbot, tmp_path):
    open_model(win, qtbot, "heat-1d", params={"nx": 64, "T_mean": 0.5})
    plots = win.plots
    qtbot.waitUntil(lambda: plots.model == "heat-1d" and len(plots.t) >= 1, timeout=WAIT)
    for _ in range(3):
        step_and_wait(win, qtbot)
    qtbot.waitUntil(lambda: plots.steps[-1:] == [3], timeout=WAIT)
    names = [q["name"] for q in solvers.describe("heat-1d")["quantities"]]
    assert list(plots.series) == names and plots.chosen() == names[:1]
    for k, steps in enumerate(plots.steps):
        ref = solvers.create("heat-1d", backend="numpy", nx=64, T_mean=0.5)
        ref.step(steps)
        assert plots.t[k] == ref.t
        assert [plots.series[n][k] for n in names] == [ref.quantities()[n] for n in names]
    assert np.isfinite(plots.lines[names[0]].pos).all()  # drawn
    win.plots.export_csv(str(tmp_path / "q.csv"))
    wait_message(win, qtbot, f"wrote {tmp_path / 'q.csv'} ({len(plots.t)} samples)")
    rows = list(csv.reader(open(tmp_path / "q.csv")))
    assert rows[0] == ["t", "steps"] + names
    assert [float(r[0]) for r in rows[1:]] == plots.t
    assert [float(r[2]) for r in rows[1:]] == plots.series[names[0]]
    open_model(win, qtbot, "ks-1d", params={"nx": 128})
    qtbot.waitUntil(lambda: plots.model == "ks-1d", timeout=WAIT)
    assert plots.steps == [0] and list(plots.series) == \
        [q["name"] for q in solvers.describe("ks-1d")["quantities"]]


def test_log_scale_and_a_restore_branch(win, qtbot):
    open_model(win, qtbot, "heat-1d", params={"nx": 64})
    plots = win.plots
    for _ in range(4):
        step_and_wait(win, qtbot)
    qtbot.waitUntil(lambda: plots.steps[-1:] == [4], timeout=WAIT)
    plots.log.setChecked(True)
    name = plots.chosen()[0]
    y = plots.lines[name].pos[:, 1]
    assert np.allclose(y, np.log10(np.abs(plots.series[name])).astype(np.float32))
    assert plots.legend_text()[0] == f"log10 |{name}|" + (f" [{plots.units[name]}]"
                                                         if plots.units[name] else "")
    win.timeline_bar.slider.setValue(1)  # back in time: the series drop what came after
    back = win.timeline_bar.times[1][1]
    qtbot.waitUntil(lambda: win.worker.sim.steps == back, timeout=WAIT)
    win.set_field(win.field)  # the restored state's frame drawn (the mailbox may drop one)
    qtbot.waitUntil(lambda: win.last_frame[1] == back, timeout=WAIT)
    step_and_wait(win, qtbot)
    qtbot.waitUntil(lambda: plots.steps[-1] == win.worker.sim.steps, timeout=WAIT)
    assert plots.steps == sorted(plots.steps) and len(set(plots.steps)) == len(plots.steps)


def test_plot_fits_the_data_and_marks_an_initial_condition(win, qtbot):
    """Issue 27: no axes before a model; time fitted to the samples; a constant quantity gets
    a range around its value; a legend entry per curve; setting an initial condition is an
    event (the curves break there, a marker and a legend entry name it), not a jump."""
    from pdestudio.app.tools.plots import time_range, value_range
    plots = win.plots
    assert not plots.xaxis.visible and not plots.yaxis.visible  # nothing to show yet
    assert value_range(210.0, 210.0 * (1 + 1e-9)) == pytest.approx((189.0, 231.0))
    assert value_range(0.0, 0.0) == (-1.0, 1.0) and time_range(0.0, 0.0) == (-1.0, 1.0)
    open_model(win, qtbot, "heat-1d", params={"nx": 64, "T_mean": 0.5})
    qtbot.waitUntil(lambda: plots.model == "heat-1d" and len(plots.t) >= 1, timeout=WAIT)
    for _ in range(3):
        step_and_wait(win, qtbot)
    qtbot.waitUntil(lambda: plots.steps[-1:] == [3], timeout=WAIT)
    for i in range(3):
        plots.list.item(i).setCheckState(plots.list.item(0).checkState())
    assert plots.xaxis.visible and len(plots.legend_text()) == 3 == len(plots.labels)
    rect = plots.view.camera.rect
    assert (rect.left, rect.right) == pytest.approx((plots.t[0], plots.t[-1]))
    heat = np.asarray(plots.series["heat"])  # conserved: drawn mid-range, not as noise
    assert np.ptp(heat) <= 1e-9 * abs(heat).max()
    assert rect.bottom < heat[0] - 0.05 * abs(heat[0]) and rect.top > heat[0] + 0.05 * heat[0]
    win.apply_initial("T", "formula:2*exp(-50*(x-0.5)**2)")
    wait_message(win, qtbot, "set T from formula:2*exp(-50*(x-0.5)**2)")
    qtbot.waitUntil(lambda: len(plots.events) == 1, timeout=WAIT)
    step_and_wait(win, qtbot)
    qtbot.waitUntil(lambda: plots.steps[-1:] == [4], timeout=WAIT)
    k, t_event, what = plots.events[0]
    assert what == "set T" and plots.steps[k - 1] == plots.steps[k] == 3
    assert t_event == plots.t[k] and len(plots.t) == len(plots.steps) == k + 2
    pairs = plots.lines["max T"].connect  # no segment joins the state before and after
    assert [k - 1, k] not in pairs.tolist() and [k, k + 1] in pairs.tolist()
    assert plots.markers.visible and np.allclose(plots.markers.pos[:, 0], t_event)
    assert plots.labels[3][0].text.startswith("set T at t = ")


@pytest.mark.parametrize("lo,hi", [(1e-200, 3e-200), (0.0, 1e-250), (-1e-300, 0.0),
                                   (1e-40, 5e-40), (2e-9, 3e-9), (1.0, 1.0 + 1e-7)])
def test_value_ranges_of_tiny_numbers_get_ticks(lo, hi):
    """Barkley's min u decays to ~1e-200: VisPy's axis found no ticks for such a range and
    raised in every draw of the plot ("could not converge on ticks")."""
    from vispy.visuals.axis import _get_ticks_talbot

    from pdestudio.app.tools.plots import value_range
    a, b = value_range(lo, hi)
    assert b > a
    ticks = _get_ticks_talbot(a, b, 3.0, 2)  # what the plot's y axis asks (raises if none)
    assert len(ticks) >= 2
    if max(abs(lo), abs(hi)) > 1e-30:  # a range of ordinary numbers still contains them
        assert a <= lo and b >= hi
