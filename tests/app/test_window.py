"""The window under a virtual display (pytest-xvfb; Qt's `offscreen` platform has no OpenGL):
every registered model opens, runs and draws; panel edits reach the simulation; pause, step and
reset; every export; bad mesh files and formulas leave the simulation untouched.

The solver runs in its own thread and reaches the window through queued signals, so a test never
sleeps and never assumes which thread gets there first: it waits (qtbot.waitUntil) for the very
thing the user would see (the message, the frame of a given step or generation, the file with its
"wrote" message), and counts frames only from a point the worker cannot have passed yet."""
import os
import subprocess
import sys
from contextlib import contextmanager

import numpy as np
import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("PySide6")
pytest.importorskip("vispy")

from pdestudio import solvers  # noqa: E402
from pdestudio.solvers.core.registry import model_class  # noqa: E402

from pdestudio.app.window import MainWindow  # noqa: E402

WAIT = 20000  # ms


def small_params(model):
    cls = model_class(model)
    return dict(getattr(cls, "contract_params", {cls.size_param: 16}))


@pytest.fixture
def win(qtbot):
    w = MainWindow(backend="numpy")
    qtbot.addWidget(w)
    w.resize(1200, 760)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.close()


@contextmanager
def shown_when(win, signal, match):
    """Records `win.frames_shown` when the worker's `signal` reaches the window with arguments
    that `match`. Signals from the worker arrive in the order it sent them, so every frame it
    published after that signal is drawn later: wait for `win.frames_shown > seen[0]`."""
    seen = []

    def slot(*args):
        if not seen and match(*args):
            seen.append(win.frames_shown)

    signal.connect(slot)
    try:
        yield seen
    finally:
        signal.disconnect(slot)


def open_model(win, qtbot, model, scenario=None, params=None):
    """Open `model`; return its simulation once a frame of the new setup has been drawn."""
    before = win.info.generation if win.info else 0
    new = lambda info: info.generation > before and info.model == model  # noqa: E731
    with shown_when(win, win.worker.created, new) as seen:
        win.open_model(model, scenario, small_params(model) if params is None else params)
        qtbot.waitUntil(lambda: bool(seen) and win.info is not None
                        and win.info.generation > before, timeout=WAIT)
        # a frame_ready queued before `created` may have taken (and dropped, as of the old
        # setup) the new setup's first frame: ask for one more, drawn after `seen`
        win.set_field(win.field)
        qtbot.waitUntil(lambda: win.frames_shown > seen[0], timeout=WAIT)
    return win.worker.sim


def wait_message(win, qtbot, text, error=False):
    """Wait for the status message `text` (exactly, or its start when `text` ends in '…')."""
    if text.endswith("…"):
        ok = lambda: win.last_message[0].startswith(text[:-1])  # noqa: E731
    else:
        ok = lambda: win.last_message[0] == text  # noqa: E731
    qtbot.waitUntil(lambda: ok() and win.last_message[1] == error, timeout=WAIT)


def step_and_wait(win, qtbot):
    """One step; returns once the frame of that step is drawn."""
    n = win.last_frame[1]
    win.worker.submit("step", 1)
    qtbot.waitUntil(lambda: win.last_frame[1] == n + 1, timeout=WAIT)


def picture(win):
    img = win.canvas.render(alpha=False)[..., :3]
    return img[40:]  # below the title line (which shows t and the step)


def not_blank(img):
    return img.std() > 5 and len(np.unique(img.reshape(-1, 3)[::7], axis=0)) > 20


def all_models():
    return solvers.available_models() + ["fake-wave-2d", "fake-surface-rd", "fake-flat-water"]


@pytest.mark.parametrize("model", all_models())
def test_every_model_opens_runs_and_draws(win, qtbot, fake_models, model):
    sim = open_model(win, qtbot, model)
    qtbot.waitUntil(lambda: not_blank(picture(win)), timeout=WAIT)
    first = picture(win)
    win.spf.setValue(2)  # small frames: a model that diverges later still moves first
    win.run_action.setChecked(True)
    shown = win.frames_shown
    qtbot.waitUntil(lambda: win.frames_shown >= shown + 3 and sim.steps > 0, timeout=WAIT)
    qtbot.waitUntil(lambda: not np.array_equal(picture(win), first), timeout=WAIT)
    assert not_blank(picture(win))
    win.run_action.setChecked(False)
    text, error = win.last_message
    assert not error or "non-finite" in text, text  # a divergence is reported, nothing else
    assert set(win.view.needed(win.field)) <= set(win.info.fields)


def test_panel_edits_reach_the_simulation(win, qtbot):
    sim = open_model(win, qtbot, "heat-1d", params={"nx": 64})
    assert win.panel.set_value("Fo", 0.3)  # live
    # The worker changes the parameter, then reports it: wait for the report (what the user
    # sees), not for the parameter (which is set before the message is even sent).
    wait_message(win, qtbot, "Fo = 0.3 applied live at t = 0…")
    assert win.worker.sim is sim and sim.params["Fo"] == 0.3
    # refused at the widget with the reason, the simulation untouched
    assert not win.panel.set_value("Fo", 0.7)
    assert "'Fo' = 0.7 is out of range; allowed: a finite number in (0, 0.5]" in win.last_message[0]
    assert win.last_message[1] and win.panel.values()["Fo"] == 0.3
    assert not win.panel.set_value("nx", 2)
    assert "'nx' = 2 is out of range" in win.statusBar().currentMessage()
    # a non-live parameter waits for Reset
    assert win.panel.set_value("nx", 100)
    assert "takes effect on Reset" in win.last_message[0]
    assert win.worker.sim.params["nx"] == 64 and win.reset_action.text() == "Reset *"
    gen = win.info.generation
    win.reset()
    qtbot.waitUntil(lambda: win.info.generation > gen, timeout=WAIT)
    assert win.worker.sim.params["nx"] == 100 and win.worker.sim.params["Fo"] == 0.3
    assert win.info.shapes["T"] == (100,)


def test_choices_scenario_backend_dtype(win, qtbot, fake_models):
    open_model(win, qtbot, "fake-wave-2d")
    win.panel.set_value("scheme", "b")
    assert win.panel.values()["scheme"] == "b"
    win.dtype_box.setCurrentText("float32")
    gen = win.info.generation
    win.reset()
    qtbot.waitUntil(lambda: win.info.generation > gen, timeout=WAIT)
    assert win.worker.sim.dtype == "float32" and win.worker.sim.params["scheme"] == "b"
    open_model(win, qtbot, "fake-wave-2d", scenario="flat", params={})
    assert win.worker.sim.scenario_name == "flat" and win.worker.sim.params["nx"] == 32
    # the image view of a 2D grid, and back
    win.mode_box.setCurrentText("image")
    win._rebuild_view()
    step_and_wait(win, qtbot)
    assert type(win.view).__name__ == "ImageView" and not_blank(picture(win))


def test_pause_step_reset(win, qtbot):
    sim = open_model(win, qtbot, "heat-1d", params={"nx": 64})
    win.spf.setValue(5)
    win.run_action.setChecked(True)
    qtbot.waitUntil(lambda: sim.steps >= 20, timeout=WAIT)
    win.run_action.setChecked(False)
    qtbot.waitUntil(lambda: not win.worker.running, timeout=WAIT)
    n = sim.steps
    qtbot.waitUntil(lambda: win.last_frame[1] == n, timeout=WAIT)  # the paused state is shown
    qtbot.wait(300)
    assert sim.steps == n  # paused
    win.worker.submit("step", 1)
    qtbot.waitUntil(lambda: win.last_frame[1] == n + 1, timeout=WAIT)
    assert sim.steps == n + 1
    gen = win.info.generation
    win.reset()
    qtbot.waitUntil(lambda: win.info.generation > gen and win.last_frame[1] == 0, timeout=WAIT)
    assert win.worker.sim.steps == 0 and win.worker.sim.t == 0.0


def test_colormap_range_camera_and_profiler(win, qtbot):
    open_model(win, qtbot, "heat-1d", params={"nx": 64})
    win.set_scale(cmap="coolwarm", mode="fixed", lo=-2, hi=2)
    step_and_wait(win, qtbot)
    assert win.view.limits == (-2.0, 2.0)
    win.set_scale(lo=1, hi=1)
    assert "is empty" in win.last_message[0]
    win.set_scale(mode="symmetric")
    step_and_wait(win, qtbot)
    lo, hi = win.view.limits
    assert lo == -hi and (lo, hi) != (-2.0, 2.0)
    win.reset_camera()
    win.run_action.setChecked(True)
    qtbot.waitUntil(lambda: win.profiler.values.get("steps_per_s", 0) > 0
                    and "draw_ms" in win.profiler.values, timeout=WAIT)
    v = win.profiler.values
    assert v["cell_updates_per_s"] == pytest.approx(v["steps_per_s"] * 64)
    win.run_action.setChecked(False)
    win.profiler.button.click()
    qtbot.waitUntil(lambda: "speedup" in win.profiler.values, timeout=WAIT)
    r = win.profiler.values["speedup"]
    assert r["numpy_rate"][1] > 0 and r["numpy_rate"][0] > 0
    assert "by definition" in win.profiler.speedup.text()  # the backend here is NumPy


def test_exports_from_the_window(win, qtbot, tmp_path):
    import imageio.v3 as iio
    import meshio
    open_model(win, qtbot, "heat-1d", params={"nx": 64})
    win.export_png(str(tmp_path / "c.png"))
    img = iio.imread(tmp_path / "c.png")
    assert img.shape[:2] == tuple(win.canvas.physical_size[::-1]) and img.std() > 5
    # the file is complete when the worker says so (it exists, half written, before that)
    win.export_data(str(tmp_path / "d.vtu"))
    wait_message(win, qtbot, f"wrote {tmp_path / 'd.vtu'}")
    assert len(meshio.read(tmp_path / "d.vtu").point_data["T"]) == 64
    win.export_data(str(tmp_path / "d.npz"))
    wait_message(win, qtbot, f"wrote {tmp_path / 'd.npz'}")
    with np.load(tmp_path / "d.npz") as z:
        assert len(z["field/T"]) == 64  # the .npz data export is a checkpoint with the fields
    win.export_data(str(tmp_path / "d.txt"))
    assert win.last_message[1] and "allowed data formats" in win.last_message[0]
    for suffix in (".mp4", ".gif"):
        path = tmp_path / f"v{suffix}"
        win.spf.setValue(10)
        assert win.start_recording(str(path), every=2)
        win.run_action.setChecked(True)
        qtbot.waitUntil(lambda: win._recorded >= 8, timeout=WAIT)
        win.run_action.setChecked(False)
        win.stop_recording()
        frames = iio.imread(path, index=None)
        assert len(frames) >= 4 and frames.shape[1] % 16 == 0 and frames.shape[2] % 16 == 0
        assert not np.array_equal(frames[0], frames[-1])


def mesh_model():
    for m in solvers.available_models():
        if "mesh" in {p["name"] for p in solvers.describe(m)["parameters"]}:
            return m
    return "fake-surface-rd"


def test_bad_mesh_and_formula_leave_the_simulation_untouched(win, qtbot, tmp_path, fake_models):
    import meshio
    sim = open_model(win, qtbot, mesh_model())
    field = win.info.settable[0]
    gen, before = win.info.generation, sim.fields()[field].copy()
    bad = tmp_path / "bad.obj"
    bad.write_text("this is not a mesh\nf 1 2 9\n")
    win.load_mesh(str(bad))
    qtbot.waitUntil(lambda: win.last_message[1] and "bad.obj" in win.last_message[0],
                    timeout=WAIT)
    assert win.worker.sim is sim and win.info.generation == gen
    np.testing.assert_array_equal(sim.fields()[field], before)
    win.load_mesh(str(tmp_path / "missing.obj"))
    assert "does not exist" in win.last_message[0] and win.worker.sim is sim
    for formula in ("formula:__import__('os').system('touch x')", "formula:x.__class__",
                    "formula:sin(", "formula:[i for i in x]", str(tmp_path / "none.npy")):
        win.last_message = ("", False)
        win.apply_initial(field, formula)
        qtbot.waitUntil(lambda: win.last_message[1], timeout=WAIT)
        assert win.worker.sim is sim
        np.testing.assert_array_equal(sim.fields()[field], before)
    assert not os.path.exists("x")
    # a good mesh and a good formula do change it
    from .fakes import rectangle
    pts, cells = rectangle(6)
    meshio.write(str(tmp_path / "good.obj"), meshio.Mesh(pts, [("triangle", cells)]))
    win.load_mesh(str(tmp_path / "good.obj"))
    qtbot.waitUntil(lambda: win.info.generation > gen, timeout=WAIT)
    assert win.worker.sim.scenario_name == "file" and len(win.info.mesh.points) == 36
    assert win.panel.values()["mesh"] == str(tmp_path / "good.obj")
    win.apply_initial(field, "formula:1 + x + 2*y")
    wait_message(win, qtbot, f"set {field} from formula:1 + x + 2*y")
    got = win.worker.sim.fields()[field]
    p = np.asarray(win.info.mesh.points)
    np.testing.assert_allclose(got, 1 + p[:, 0] + 2 * p[:, 1])


def test_mesh_loading_is_refused_for_models_without_a_mesh(win, qtbot, tmp_path):
    sim = open_model(win, qtbot, "heat-1d", params={"nx": 64})
    assert not win.mesh_button.isEnabled()
    f = tmp_path / "m.obj"
    f.write_text("v 0 0 0\n")
    win.load_mesh(str(f))
    assert "does not take a mesh file" in win.last_message[0] and win.worker.sim is sim


def test_screenshot_from_the_command_line(tmp_path):
    import imageio.v3 as iio
    out = tmp_path / "w.png"
    r = subprocess.run([sys.executable, "-m", "pdestudio", "--model", "heat-1d", "--set", "nx=128",
                        "--backend", "numpy", "--run-for", "0.5", "--screenshot", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    img = iio.imread(out)
    assert img.shape[0] > 400 and img.shape[1] > 800 and img.std() > 10
    r = subprocess.run([sys.executable, "-m", "pdestudio", "--model", "heat-1d", "--set", "nx=-1",
                        "--run-for", "1"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "'nx' = '-1' is out of range" in r.stderr
    assert "Traceback" not in r.stderr


def test_sample_image_as_initial_condition(win, qtbot, fake_models):
    from pdestudio.app.window import SAMPLES
    sim = open_model(win, qtbot, "fake-wave-2d")
    source = f"{SAMPLES / 'two-bumps.png'}@1,2"
    with shown_when(win, win.worker.message, lambda text, error: text == f"set h from {source}") \
            as seen:
        win.apply_initial("h", source)
        qtbot.waitUntil(lambda: bool(seen), timeout=WAIT)
        # the view shows it: a frame published after the message is drawn. The frame the set
        # published may already have been taken by a frame_ready queued before the message (the
        # mailbox keeps only the newest), so ask for one more: that one is drawn after `seen`.
        win.set_field(win.field)
        qtbot.waitUntil(lambda: win.frames_shown > seen[0], timeout=WAIT)
    h = sim.fields()["h"]
    assert 1.0 <= h.min() < 1.05 and 1.9 < h.max() <= 2.0  # black..white -> 1..2


def _grab(win):
    img = win.canvas.native.grabFramebuffer()  # paints (paintGL) and reads the widget's pixels
    img = img.convertToFormat(img.Format.Format_RGB888)
    w, h, stride = img.width(), img.height(), img.bytesPerLine()
    return np.frombuffer(img.constBits(), np.uint8).reshape(h, stride)[:, :3 * w].copy()


@pytest.mark.parametrize("model", ["heat-1d", "shallow-water", "gray-scott"])
def test_the_window_redraws_only_what_changed_and_shows_the_full_picture(win, qtbot, model):
    """The window's canvas keeps its pixels (QOpenGLWidget's PartialUpdate) and a frame redraws
    only the live regions (views/partial.py); what the window shows is the full draw's picture,
    pixel for pixel."""
    from pdestudio.app.views import partial
    assert partial.keeps_pixels(win.canvas)
    open_model(win, qtbot, model)
    for _ in range(3):
        step_and_wait(win, qtbot)
    p = partial.installed(win.canvas)
    before = p.partial_frames
    shown = _grab(win)
    assert p.partial_frames > before, (p.partial_frames, p.full_frames)
    p.dirty = True
    full = _grab(win)
    assert not_blank(full)
    np.testing.assert_array_equal(shown, full)
