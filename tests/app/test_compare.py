"""Side by side (issue 17): A and B meet at the same simulated time whatever their step sizes,
the difference view shows A − B of the two simulations, identical setups agree to rounding,
the cameras are linked, and a bad change is a clear message."""
import numpy as np
import pytest

pytest.importorskip("pytestqt")

from pdestudio.app.tools.compare import open_compare  # noqa: E402

from .test_window import WAIT, open_model, win  # noqa: E402,F401


def run_frames(qtbot, cw, n):
    start = cw.last["steps"][0] if cw.last else 0
    cw.run_button.setChecked(True)
    try:
        qtbot.waitUntil(lambda: cw.last is not None and cw.last["steps"][0] >= start + n,
                        timeout=WAIT)
    except qtbot.TimeoutError:  # say what the window knew: a stopped worker names its reason
        raise AssertionError(f"no frame {start + n}: last steps "
                             f"{cw.last and cw.last['steps']}, status {cw.status.text()!r}, "
                             f"worker alive {cw.worker.isRunning()}, running "
                             f"{cw.worker.running}") from None
    cw.run_button.setChecked(False)


def test_two_orders_in_lockstep_with_their_difference(win, qtbot):
    open_model(win, qtbot, "shallow-water", params={"nx": 32})
    cw = open_compare(win, {"order": 3, "cfl": 0.5})
    qtbot.addWidget(cw)
    try:
        run_frames(qtbot, cw, 20)
        qtbot.waitUntil(lambda: not cw.worker.running, timeout=WAIT)
        a, b = cw.a, cw.b
        qtbot.waitUntil(lambda: cw.last["steps"] == (a.steps, b.steps), timeout=WAIT)
        assert a.t == b.t and a.t > 0 and a.steps != b.steps  # other step sizes, same time
        d = cw.difference("eta")
        fa, fb = a.fields()["eta"], b.fields()["eta"]
        assert np.array_equal(d, fa - fb) and np.abs(d).max() > 1e-6
        assert cw.views[2] is not None and "max |A − B|" in cw.status.text()
        assert "rounding" not in cw.status.text()  # a real difference fills the range
        assert cw.diff_scale.hi == pytest.approx(np.abs(cw.last["a"]["eta"]
                                                        - cw.last["b"]["eta"]).max())
        cam_a, cam_b = cw.cameras[0], cw.cameras[1]
        cam_a.azimuth = cam_a.azimuth + 40  # linked: B's camera follows A's
        assert cam_b.azimuth == cam_a.azimuth
        assert "A:" in cw.profile.text() and "B:" in cw.profile.text()
    finally:
        cw.close()


def test_identical_setups_agree_and_bad_changes_are_refused(win, qtbot):
    open_model(win, qtbot, "heat-1d", params={"nx": 64, "T_mean": 1.0})  # no decay to 0
    cw = open_compare(win, {})
    qtbot.addWidget(cw)
    try:
        run_frames(qtbot, cw, 10)
        qtbot.waitUntil(lambda: not cw.worker.running, timeout=WAIT)
        qtbot.waitUntil(lambda: cw.last["steps"] == (cw.a.steps, cw.b.steps), timeout=WAIT)
        assert cw.a.t == cw.b.t
        # B lands on A's time with a last step of t_A − t_B, which can differ from Δt in the
        # last bit: identical setups agree to rounding
        scale = np.abs(cw.a.fields()["T"]).max()
        assert np.abs(cw.difference("T")).max() <= 1e-12 * scale
        # the difference view does not blow rounding up to its whole range: its range is at
        # least 64 ε·max|T|, and the status says the difference is rounding
        assert cw.diff_scale.hi >= 64 * np.finfo(np.float64).eps * scale * (1 - 1e-9)
        assert cw.diff_scale.lo == -cw.diff_scale.hi
        assert "(identical)" in cw.status.text() or "(rounding" in cw.status.text()
    finally:
        cw.close()
    assert open_compare(win, {"Fo": 0.9}) is None
    assert win.last_message[1] and "Fo" in win.last_message[0]
    assert open_compare(win, {"nope": 1}) is None and "unknown parameter" in win.last_message[0]


def test_the_gallery_compares_mean_curvature_with_willmore(win, qtbot):
    win.show_gallery()
    win.gallery.open("mc-vs-willmore")
    qtbot.waitUntil(lambda: win.compare_window is not None, timeout=WAIT)
    cw = win.compare_window
    qtbot.addWidget(cw)
    try:
        assert (cw.a.model, cw.b.model) == ("mean-curvature", "willmore")
        assert cw.a.params["nx"] == cw.b.params["nx"] == 32 and cw.views[2] is not None
        cw.worker.submit("step")
        qtbot.waitUntil(lambda: cw.last is not None and cw.last["steps"][0] >= 1, timeout=WAIT)
        assert cw.last["t"][0] == cw.last["t"][1] > 0
        assert np.abs(cw.difference("phi")).max() > 0
    finally:
        cw.close()
        win.gallery.close()


def test_an_unexpected_error_in_a_step_pauses_and_is_shown(win, qtbot):
    """A bug in a step must not kill the comparison's thread silently (the window would wait
    forever): the run pauses, the status names the error, and Step works again after it."""
    open_model(win, qtbot, "heat-1d", params={"nx": 32})
    cw = open_compare(win, {})
    qtbot.addWidget(cw)
    try:
        qtbot.waitUntil(lambda: cw.last is not None, timeout=WAIT)
        real, calls = cw.a.step, []

        def broken(n=1):
            calls.append(n)
            if len(calls) == 1:
                raise RuntimeError("injected fault")
            return real(n)
        cw.a.step = broken
        cw.run_button.setChecked(True)
        qtbot.waitUntil(lambda: "injected fault" in cw.status.text(), timeout=WAIT)
        assert "RuntimeError" in cw.status.text() and not cw.worker.running
        assert cw.worker.isRunning()  # the thread lives on
        cw.run_button.setChecked(False)
        cw.worker.submit("step")
        qtbot.waitUntil(lambda: cw.last["steps"][0] >= 1, timeout=WAIT)
    finally:
        cw.close()
