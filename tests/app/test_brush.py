"""The brush in the window (issue 17): a stroke dragged over an image of a grid paints the
field where the mouse is (the data point under the pixel), a click on a 3D mesh paints the
vertex under the mouse facing the camera, and undo/redo restore the exact states."""
import numpy as np
import pytest

pytest.importorskip("pytestqt")

from pdestudio.app.tools.brush import pick  # noqa: E402

from .test_views import to_pixel  # noqa: E402
from .test_window import WAIT, open_model, wait_message, win  # noqa: E402,F401


def test_a_stroke_on_a_grid_image_and_undo_redo(win, qtbot):
    sim = open_model(win, qtbot, "shallow-water", params={"nx": 64})
    win.mode_box.setCurrentText("image")
    win._rebuild_view()
    win.set_field("h")
    b = win.brush
    win.brush_action.setChecked(True)
    b.field.setCurrentText("h")
    b.value.setText("2.5")
    b.radius.setText("0.6")
    before = sim.state["h"].copy()
    # two dabs at data points (-2, 1) and (-1, 1), through the camera to pixels and back
    for x in (-2.0, -1.0):
        c, r = to_pixel(win.canvas, win.view.vb.scene, [x, 1.0, 0, 1])
        got = pick(win, (float(c), float(r)))
        assert np.allclose(got, (x, 1.0), atol=0.05)
        assert b.dab((float(c), float(r)))
    b.end_stroke()
    wait_message(win, qtbot, "painted …")
    X, Y = np.meshgrid(sim.mesh.x, sim.mesh.y)
    inside = (np.hypot(X + 2, Y - 1) <= 0.55) | (np.hypot(X + 1, Y - 1) <= 0.55)
    assert np.all(sim.state["h"][inside] == 2.5)
    assert np.array_equal(sim.state["h"][np.hypot(X + 1.5, Y - 1) > 1.3],
                          before[np.hypot(X + 1.5, Y - 1) > 1.3])
    painted = sim.state["h"].copy()
    b.undo_stroke()
    wait_message(win, qtbot, "undid a brush stroke")
    assert np.array_equal(sim.state["h"], before)
    b.redo_stroke()
    wait_message(win, qtbot, "redid a brush stroke")
    assert np.array_equal(sim.state["h"], painted)
    assert not win.view.vb.camera.interactive  # the drag paints, the camera stays


def test_picking_on_a_3d_mesh_paints_the_front(win, qtbot):
    sim = open_model(win, qtbot, "gray-scott", scenario="file",
                     params={"mesh": "resources/meshes/icosphere.obj"})
    win.brush_action.setChecked(True)
    b = win.brush
    b.field.setCurrentText("v")
    b.value.setText("0.9")
    b.radius.setText("0.2")
    win.set_scale(mode="fixed", lo=0.0, hi=1.0)  # only painted places change colour
    shown = win.frames_shown
    qtbot.waitUntil(lambda: win.frames_shown > shown, timeout=WAIT)
    w, h = win.canvas.size
    # the canvas centre looks at the sphere's centre: the point picked faces the camera
    p = pick(win, (w * 0.4, h * 0.5))
    assert p is not None
    cam = win.view.vb.camera
    eye = np.asarray(cam.center) + cam.distance * np.array([
        np.cos(np.radians(cam.elevation)) * np.sin(np.radians(cam.azimuth)),
        -np.cos(np.radians(cam.elevation)) * np.cos(np.radians(cam.azimuth)),
        np.sin(np.radians(cam.elevation))]) if cam.distance else None
    if eye is not None:
        pts = np.asarray(sim.mesh.points)
        assert np.linalg.norm(np.asarray(p) - eye) < np.median(np.linalg.norm(pts - eye, axis=1))
    before = win.canvas.render(alpha=False)[int(h * 0.5), int(w * 0.4), :3].astype(int)
    assert b.dab((w * 0.4, h * 0.5))
    b.end_stroke()
    wait_message(win, qtbot, "painted …")
    shown = win.frames_shown
    win.set_field("v")
    qtbot.waitUntil(lambda: win.frames_shown > shown, timeout=WAIT)
    after = win.canvas.render(alpha=False)[int(h * 0.5), int(w * 0.4), :3].astype(int)
    assert np.abs(after - before).sum() > 60  # the paint is on the side we look at
    v = sim.fields()["v"]
    k = int(np.argmin(np.linalg.norm(np.asarray(sim.mesh.points) - p, axis=1)))
    assert v[k] == pytest.approx(0.9)
