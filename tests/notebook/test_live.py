"""pdestudio.show(sim) in a notebook (issue 30): the picture is the field, a brush drag with the
mouse paints where the pointer went, sliders reach the simulation, Run steps in a thread while
the caller reads sim.t and takes consistent snapshots."""
import threading
import time

import numpy as np
import pytest

import pdestudio
from pdestudio import solvers
from pdestudio.app.notebook.canvas import render

W, H = 640, 480


def pixel_of(view, x, y):
    """The canvas position (logical pixels) of data point (x, y) in the view's 2D camera."""
    tr = view.view.vb.scene.node_transform(view.canvas.scene)
    p = tr.map([x, y, 0, 1])
    return float(p[0] / p[3]), float(p[1] / p[3])


def pointer(view, kind, pos):
    time.sleep(0.015)  # (VisPy drops mouse moves closer than 10 ms apart)
    view.canvas.native.handle_event({"type": kind, "x": pos[0], "y": pos[1], "button": 1,
                                     "buttons": [1], "modifiers": [], "timestamp": 0.0})


def settle(view):
    """Wait until the solver thread has handled everything sent so far (commands are FIFO)."""
    view.router.call(lambda: None)


@pytest.fixture
def water(views):
    sim = solvers.create("shallow-water", backend="numpy", nx=64)
    v = pdestudio.show(sim, mode="image", field="h")
    views.append(v)
    v.set_scale(mode="fixed", lo=0.0, hi=3.0)  # only painted places change colour
    settle(v)
    render(v.canvas, W, H)
    return sim, v


def test_the_picture_is_the_field_and_a_mouse_drag_paints(water):
    sim, v = water
    img0 = render(v.canvas)[..., :3].astype(int)
    assert v.last_frame == (sim.t, sim.steps) and v.frames_drawn >= 1
    before = sim.fields()["h"].copy()
    a, b = pixel_of(v, -2.0, 1.0), pixel_of(v, -1.0, 1.0)
    far = pixel_of(v, 3.0, -3.0)
    v.ctl.brush.value = True
    v.ctl.brush_field.value = "h"
    v.ctl.brush_value.value = 2.9
    v.ctl.brush_radius.value = 0.6
    pointer(v, "pointer_down", a)
    for f in np.linspace(0, 1, 5):
        pointer(v, "pointer_move", (a[0] + f * (b[0] - a[0]), a[1]))
    pointer(v, "pointer_up", b)
    settle(v)
    h = sim.fields()["h"]
    X, Y = np.meshgrid(sim.mesh.x, sim.mesh.y)
    on_path = (np.abs(Y - 1.0) <= 0.4) & (X >= -2.0) & (X <= -1.0)
    assert np.all(h[on_path] == pytest.approx(2.9))
    away = np.hypot(X - 3.0, Y + 3.0) < 1.0
    assert np.array_equal(h[away], before[away])  # nothing else changed
    img1 = render(v.canvas)[..., :3].astype(int)
    mid = pixel_of(v, -1.5, 1.0)
    assert np.abs(img1[int(mid[1]), int(mid[0])] - img0[int(mid[1]), int(mid[0])]).sum() > 60
    assert np.array_equal(img1[int(far[1]), int(far[0])], img0[int(far[1]), int(far[0])])
    assert not v.view.vb.camera.interactive  # while the brush is on, the drag paints
    v.ctl.undo.click()
    settle(v)
    assert np.array_equal(sim.fields()["h"], before)


def test_another_field_or_colour_map_changes_the_picture(water):
    sim, v = water
    img0 = render(v.canvas)[..., :3].astype(int)
    v.ctl.field.value = "bottom"
    settle(v)
    img1 = render(v.canvas)[..., :3].astype(int)
    assert v.field == "bottom"
    assert np.abs(img1 - img0).mean() > 5
    v.ctl.cmap.value = "grays"
    settle(v)
    img2 = render(v.canvas)[..., :3].astype(int)
    assert np.abs(img2 - img1).mean() > 5
    # a grey map draws grey pixels inside the data's rectangle
    c = pixel_of(v, 0.0, 0.0)
    r, g, b = img2[int(c[1]), int(c[0])]
    assert abs(r - g) <= 2 and abs(g - b) <= 2


def test_a_slider_reaches_the_simulation_and_follows_code(views):
    sim = solvers.create("gray-scott", backend="numpy", vertices=1500)
    v = pdestudio.show(sim)
    views.append(v)
    assert set(v.ctl.sliders) >= {"F", "k", "Du", "Dv"}
    assert not v.ctl.sliders["F"].disabled and v.ctl.sliders["vertices"].disabled
    v.run()
    v.ctl.sliders["F"].value = 0.05  # live: applies while running
    settle(v)
    assert sim.params["F"] == pytest.approx(0.05)
    assert v.running
    sim.set_param("k", 0.061)  # from code, while running: the slider follows
    assert v.ctl.sliders["k"].value == pytest.approx(0.061)
    v.pause()
    assert not v.running
    assert "pdestudio-param-F" in v.ctl.sliders["F"]._dom_classes


def test_run_steps_in_a_thread_while_the_caller_reads_t_and_snapshots(views):
    sim = solvers.create("heat-1d", backend="numpy", nx=256)
    v = pdestudio.show(sim)
    views.append(v)
    v.run()
    ts, snaps = [], []
    t_end = time.perf_counter() + 1.5
    while time.perf_counter() < t_end:
        ts.append(sim.t)  # read directly, from this (the kernel's) thread
        snaps.append(sim.snapshot())  # runs in the solver thread, between two chunks
        time.sleep(0.05)
    v.pause()
    assert v.worker.thread is not threading.current_thread()
    assert ts[-1] > ts[0] and all(b >= a for a, b in zip(ts, ts[1:]))
    assert len({s.steps for s in snaps}) > 3  # the solver went on between them
    for s in snaps[1::max(1, len(snaps) // 4)]:
        # never half a step: the state is exactly that of s.steps steps from the start
        ref = solvers.create("heat-1d", backend="numpy", nx=256)
        ref.step(s.steps)
        assert ref.t == s.t
        assert np.array_equal(ref.state["T"], s.state["T"])
    st = v.stats()
    assert st["steps_per_s"] > 0 and "frames_per_s" in st


def test_closing_stops_the_thread_and_gives_the_methods_back(views):
    sim = solvers.create("heat-1d", backend="numpy", nx=128)
    v = pdestudio.show(sim)
    v.run()
    time.sleep(0.2)
    v.close()
    assert not v.worker.thread.is_alive()
    assert "snapshot" not in sim.__dict__  # the object's own methods again
    t = sim.t
    sim.step(3)
    assert sim.t > t


def test_the_pace_is_the_windows_and_a_bad_one_is_refused(views):
    sim = solvers.create("heat-1d", backend="numpy", nx=64)
    with pytest.raises(solvers.ParameterError, match="allowed: smooth, fast solver"):
        pdestudio.show(sim, pace="fastest")
    v = pdestudio.show(sim, pace="fast solver")
    views.append(v)
    settle(v)
    assert v.stats()["pace"].startswith("fast solver")
    v.set_pace("smooth")
    settle(v)
    assert v.stats()["pace"].startswith("smooth")
