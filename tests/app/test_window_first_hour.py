"""The window's first hour (issue 27): no stale numbers after switching model, the lo/hi boxes
show the range in use, another model opens on its own default field, File > Export and Quit,
Help > About / shortcuts / docs, the gallery's hint stays, CPU sizes on NumPy, the data
formats of the command line, recordings without black bars, and `--run-for` printing what its
screenshot shows."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("PySide6")
pytest.importorskip("vispy")

from pdestudio.app import menus  # noqa: E402
from pdestudio.app.cpu_sizes import CPU_SIZES  # noqa: E402

from .test_window import WAIT, open_model, wait_message, win  # noqa: E402,F401

ROOT = Path(__file__).resolve().parents[2]


def test_switching_model_opens_its_default_field_and_forgets_the_numbers(win, qtbot):
    open_model(win, qtbot, "ks-1d", params={"nx": 128})
    assert win.field == "u"
    win.run_action.setChecked(True)
    qtbot.waitUntil(lambda: "kernel_ms" in win.profiler.values, timeout=WAIT)
    win.run_action.setChecked(False)
    qtbot.waitUntil(lambda: not win.worker.running, timeout=WAIT)
    assert win.profiler.labels["kernel_ms"].text() != "–"
    open_model(win, qtbot, "euler-1d", params={"nx": 64})
    assert win.field == "rho" and win.field_box.currentText() == "rho"  # not ks-1d's `u`
    assert set(win.profiler.values) <= {"draw_ms"}  # only the new model's own draw time
    assert all(lab.text() == "–" for lab in win.profiler.labels.values())
    # a reset of the same model keeps the field the user chose
    win.set_field("u")
    gen = win.info.generation
    win.reset()
    qtbot.waitUntil(lambda: win.info.generation > gen, timeout=WAIT)
    assert win.field == "u"


def test_range_boxes_show_the_range_in_use_and_typing_fixes_it(win, qtbot):
    open_model(win, qtbot, "heat-1d", params={"nx": 64})
    lo, hi = win.view.limits
    assert win.scale.mode == "auto"
    qtbot.waitUntil(lambda: win.lo_edit.text() == f"{lo:.4g}", timeout=WAIT)
    assert win.hi_edit.text() == f"{hi:.4g}" and (lo, hi) != (0.0, 1.0)
    win.lo_edit.setText("-2")
    win.lo_edit.setModified(True)
    win.lo_edit.editingFinished.emit()
    assert win.scale.mode == "fixed" and win.range_box.currentText() == "fixed"
    assert (win.scale.lo, win.scale.hi) == (-2.0, float(win.hi_edit.text()))


def test_menus_file_export_quit_and_help(win, qtbot):
    open_model(win, qtbot, "heat-1d", params={"nx": 64})
    file_titles = [a.text() for a in win.menus["File"].actions()]
    assert "Export" in file_titles and file_titles[-1] == "Quit"
    export = next(a.menu() for a in win.menus["File"].actions() if a.text() == "Export")
    assert [a.text() for a in export.actions()][0].startswith("Image")
    assert any("Data" in a.text() for a in export.actions())
    assert win.record_action in export.actions()
    help_titles = [a.text() for a in win.menus["Help"].actions()]
    assert {"About pdestudio…", "Keyboard shortcuts…"} <= set(help_titles)
    import pdestudio
    about = menus.about_text(win)
    assert pdestudio.__version__ in about and "heat-1d" in about and "numpy" in about
    assert "GPU (CuPy):" in about and "OpenGL " in win.gl_renderer  # llvmpipe under Xvfb
    keys = menus.shortcuts_text(win)
    assert re.search(r"Space\s+Run", keys) and re.search(r"Ctrl\+Q\s+Quit", keys)
    assert all(path.is_file() for _, path in menus.DOCS)  # the Help menu's documents exist


def test_gallery_hint_stays_after_other_messages(win, qtbot):
    from pdestudio.app.gallery import PRESETS
    from pdestudio.app.tools.gallery import Gallery
    p = next(p for p in PRESETS if p.model == "heat-1d" or p.model == "ks-1d")
    Gallery(win).open(p.id)
    qtbot.waitUntil(lambda: win.info is not None and win.info.model == p.model, timeout=WAIT)
    win.show_message("something else happened")
    assert win.hint.isVisible() and "Look for:" in win.hint.text()
    open_model(win, qtbot, "euler-1d" if p.model != "euler-1d" else "heat-1d",
               params={"nx": 64})
    assert "Look for:" not in win.hint.text()  # it was about the other model


def test_numpy_opens_cpu_sizes_and_says_how_to_go_bigger(win, qtbot):
    win.open_model("shallow-water")  # no parameters given: the window's defaults
    qtbot.waitUntil(lambda: win.info is not None and win.info.model == "shallow-water",
                    timeout=WAIT)
    assert win.panel.values()["nx"] == CPU_SIZES["shallow-water"][None]["nx"]
    assert win.worker.sim.params["nx"] == CPU_SIZES["shallow-water"][None]["nx"]
    assert win.hint.isVisible() and "CPU sizes" in win.hint.text()
    assert "GPU default 400" in win.hint.text() and "Reset" in win.hint.text()
    win.open_model("shallow-water", params={"nx": 24})  # what the user sets wins
    qtbot.waitUntil(lambda: win.worker.sim is not None
                    and win.worker.sim.params["nx"] == 24, timeout=WAIT)


def test_cpu_sizes_are_valid_and_quick_on_numpy():
    import time

    from pdestudio import solvers
    from pdestudio.app.cpu_sizes import cpu_params
    for model, table in CPU_SIZES.items():
        for sc in [s["name"] for s in solvers.describe(model)["scenarios"]]:
            solvers.validate(model, sc, **{k: v for k, v in cpu_params(model, sc, {}).items()
                                           if sc != "file"})
    # the two the issue saw frozen: 2.9 steps/s and t + 8e-7 in 4 s at the GPU sizes
    sim = solvers.create("shallow-water", backend="numpy", **cpu_params("shallow-water",
                                                                        None, {}))
    sim.step(1)
    t0, n = time.perf_counter(), 0
    while time.perf_counter() - t0 < 0.5:
        sim.step(1)
        n += 1
    assert n / (time.perf_counter() - t0) > 15  # about 200 steps/s on an idle core
    sim = solvers.create("willmore", backend="numpy", **cpu_params("willmore", None, {}))
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 1.0:
        sim.step(1)
    assert sim.t > 1e-4  # about 6e-3 a second on an idle core


def test_data_export_offers_the_command_lines_formats(win, qtbot, tmp_path):
    open_model(win, qtbot, "heat-1d", params={"nx": 64})
    assert [s for s, _ in win.data_formats()] == [".npz", ".vti", ".vtu", ".pvd"]
    for suffix in (".vti", ".pvd"):
        path = tmp_path / f"d{suffix}"
        win.export_data(str(path))
        wait_message(win, qtbot, f"wrote {path}")
        assert path.stat().st_size > 200
    from .vtkread import read, read_pvd
    d = read(tmp_path / "d.vti")
    assert np.allclose(d["point"]["T"].ravel(), win.worker.sim.fields()["T"])
    assert len(read_pvd(tmp_path / "d.pvd")) == 1  # one snapshot: the current state


def test_recorded_window_frames_have_no_black_bars(tmp_path):
    import imageio.v3 as iio

    from pdestudio.app.export import VideoRecorder
    rng = np.random.default_rng(1)
    canvas = np.full((739, 754, 3), 40, np.uint8)  # the size the issue saw, a grey background
    canvas[100:600, 100:650] = rng.integers(60, 255, (500, 550, 3), dtype=np.uint8)
    for suffix in (".mp4", ".gif"):
        rec = VideoRecorder(tmp_path / f"w{suffix}", fps=5)
        for _ in range(3):
            rec.add_image(canvas)
        rec.close()
        frames = iio.imread(tmp_path / f"w{suffix}", index=None)
        assert frames.shape[1:3] == (736, 752)  # cut to multiples of 16, never padded
        edges = np.concatenate([frames[:, :4].reshape(-1, 3), frames[:, -4:].reshape(-1, 3),
                                frames[:, :, :4].reshape(-1, 3), frames[:, :, -4:].reshape(-1, 3)])
        assert edges.min() > 25  # no black bar: the grey background reaches every edge


def test_run_for_prints_what_its_screenshot_shows(tmp_path, qapp):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    shot = tmp_path / "s.png"
    p = subprocess.run([sys.executable, "-m", "pdestudio", "--model", "shallow-water", "--set",
                        "nx=300", "--backend", "numpy", "--run-for", "1.5", "--screenshot",
                        str(shot)], capture_output=True, text=True, env=env, cwd=ROOT,
                       timeout=180)
    assert p.returncode == 0, p.stderr[-2000:]
    line = next(ln for ln in p.stderr.splitlines() if ln.startswith("window:"))
    steps = int(re.search(r"step (\d+) shown", line).group(1))
    assert steps > 0, line  # a slow model: its steps arrive after the 1.5 s
    assert "nan" not in line and "?" not in line and "not measured" not in line, line
    assert re.search(r"kernel [\d.]+ ms", line) and "hand-over host" in line, line
    assert shot.stat().st_size > 10000
