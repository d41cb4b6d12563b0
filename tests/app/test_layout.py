"""The window at its default size (app/launch.py) with every model (issue 27): every widget of
the parameter panel lies inside the panel's visible width and is not shrunk below its minimum
size hint (sliders, combo arrows, 'auto', the mesh row's '…'); the 3D views' axis labels (x, y
and the z scale with its full title) lie inside the canvas's view box, measured from the glyphs
VisPy laid out, and the z scale stands on the box's corner. Unknown colour maps from the
toolbar's API or a session file are refused with the allowed names."""
from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint  # noqa: E402
from PySide6.QtWidgets import (QAbstractSpinBox, QCheckBox, QComboBox, QLabel,  # noqa: E402
                               QLineEdit, QPushButton, QSlider, QWidget)

from pdestudio import solvers  # noqa: E402
from pdestudio.app.launch import WINDOW_SIZE  # noqa: E402
from pdestudio.app.tools.sessions import open_session, save_session  # noqa: E402
from pdestudio.app.views import COLORMAPS  # noqa: E402
from pdestudio.app.window import MainWindow  # noqa: E402

from .test_window import WAIT, open_model, wait_message  # noqa: E402

LEAVES = (QAbstractSpinBox, QSlider, QComboBox, QCheckBox, QLineEdit, QPushButton, QLabel)


@pytest.fixture
def dwin(qtbot):
    w = MainWindow(backend="numpy")
    qtbot.addWidget(w)
    w.resize(*WINDOW_SIZE)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.close()


def panel_problems(win) -> list[str]:
    """Widgets of the panel outside the scroll area's visible width or below their minimum."""
    area = win.panel.parentWidget().parentWidget()
    view = area.viewport()
    out = []
    if area.horizontalScrollBar().isVisible():
        out.append("the panel needs a horizontal scroll bar")
    for w in win.panel.findChildren(QWidget):
        if not isinstance(w, LEAVES) or not w.isVisibleTo(win.panel) or \
                isinstance(w.parentWidget(), (QAbstractSpinBox, QComboBox)):  # their insides
            continue
        left = w.mapTo(view, QPoint(0, 0)).x()
        right = left + w.width()
        # Qt's rule (qSmartMinSize): a minimum width set on the widget wins over its hint;
        # a text must fit whatever was set
        need = w.minimumWidth() or w.minimumSizeHint().width()
        if isinstance(w, QPushButton):
            need = max(need, w.fontMetrics().horizontalAdvance(w.text()) + 8)
        name = f"{type(w).__name__} '{getattr(w, 'text', lambda: '')()}'"
        if left < 0 or right > view.width():
            out.append(f"{name} spans x {left}..{right}, visible 0..{view.width()}")
        if w.width() < need:
            out.append(f"{name} is {w.width()} px wide, its minimum {need}")
    return out


def glyph_boxes(visual, canvas):
    """Canvas-pixel boxes (x0, y0, x1, y1) of each string of a Text visual, from the glyph
    quads VisPy laid out at the last draw (point units × the font's pixels per point)."""
    verts = visual._vertices_data["a_position"].astype(float)
    texts = [visual.text] if isinstance(visual.text, str) else list(visual.text)
    npix = visual.font_size / 72.0 * visual.transforms.dpi
    anchors = visual.get_transform("visual", "canvas").map(np.atleast_2d(visual.pos))
    anchors = anchors[:, :2] / anchors[:, 3:4]
    boxes, k = [], 0
    for i, s in enumerate(texts):
        q = verts[4 * k:4 * (k + len(s))] * npix
        k += len(s)
        if not s.strip():
            continue
        x, y = anchors[i]
        boxes.append((s, x + q[:, 0].min(), y - q[:, 1].max(), x + q[:, 0].max(),
                      y - q[:, 1].min()))
    return boxes


def check_axes(win, img) -> list[str]:
    """3D views: every axis label inside the view box, ink where VisPy put the glyphs, the z
    title complete, the z scale standing on the corner of the box."""
    view, out = win.view, []
    axes = view.axes
    tr = view.vb.node_transform(win.canvas.scene)
    (x0, y0), (x1, y1) = [tr.map([p[0], p[1], 0, 1])[:2] for p in ((0, 0), view.vb.size)]
    texts = [axes.text, axes.names] + ([axes.ztext] if axes.ztext.visible else [])
    boxes = [b for v in texts for b in glyph_boxes(v, win.canvas)]
    names = [b[0] for b in glyph_boxes(axes.names, win.canvas)]
    has_z = axes.ztext.visible  # a flat mesh seen from above has no z scale
    if names[:2] != ["x", "y"] or len(names) != 2 + has_z or \
            (has_z and not (names[2].endswith("]") or names[2] == "z")):
        out.append(f"axis titles {names}")
    bg = img[2, 2].astype(int)
    for s, bx0, by0, bx1, by1 in boxes:
        if bx0 < x0 or bx1 > x1 or by0 < y0 or by1 > y1:
            out.append(f"label {s!r} at {bx0:.0f}..{bx1:.0f} x {by0:.0f}..{by1:.0f} outside "
                       f"the view box {x0:.0f}..{x1:.0f} x {y0:.0f}..{y1:.0f}")
            continue
        ink = img[int(by0):int(np.ceil(by1)), int(bx0):int(np.ceil(bx1))].astype(int)
        if (np.abs(ink - bg).max(axis=-1) > 60).sum() < 2 * len(s.strip()):
            out.append(f"label {s!r}: no ink where its glyphs are")
    scene = view.vb.scene.node_transform(win.canvas.scene)
    foot = scene.map(np.append(axes.corner, 1.0))
    corner = scene.map(np.append(axes.box[np.argmin(np.abs(axes.box - axes.corner).sum(1))], 1))
    if np.hypot(*(foot[:2] / foot[3] - corner[:2] / corner[3])) > 1.0:
        out.append("the z scale does not stand on a corner of the box")
    return out


@pytest.mark.parametrize("model", solvers.available_models())
def test_the_panel_and_the_3d_axes_fit_at_the_default_size(dwin, qtbot, model):
    from .test_window import small_params
    open_model(dwin, qtbot, model, params=small_params(model))
    try:  # the panel is laid out after the model opened
        qtbot.waitUntil(lambda: not panel_problems(dwin), timeout=3000)
    except qtbot.TimeoutError:
        pass
    assert not panel_problems(dwin), panel_problems(dwin)
    for mode in [dwin.mode_box.itemText(i) for i in range(dwin.mode_box.count())]:
        if dwin.mode_box.currentText() != mode:
            dwin.mode_box.setCurrentText(mode)
            dwin._rebuild_view()
        if hasattr(dwin.view, "axes"):
            shown = dwin.frames_shown
            dwin.set_field(dwin.field)
            qtbot.waitUntil(lambda: dwin.frames_shown > shown, timeout=WAIT)
            img = dwin.canvas.render(alpha=False)[..., :3]
            assert not check_axes(dwin, img), (model, mode, check_axes(dwin, img))


def test_unknown_colour_maps_are_refused_in_the_window_and_sessions(dwin, qtbot, tmp_path):
    open_model(dwin, qtbot, "heat-1d", params={"nx": 64})
    dwin.set_scale(cmap="fire")
    assert dwin.scale.cmap == "fire" and not dwin.last_message[1]
    dwin.set_scale(cmap="magma")
    text, error = dwin.last_message
    assert error and text == "colour map 'magma' is unknown; allowed: " + ", ".join(COLORMAPS)
    assert dwin.scale.cmap == "fire" == dwin.cmap_box.currentText()
    shown = dwin.frames_shown  # the view still draws, and so does the next model
    dwin.set_field(dwin.field)
    qtbot.waitUntil(lambda: dwin.frames_shown > shown, timeout=WAIT)
    open_model(dwin, qtbot, "mean-curvature", params={"nx": 24})
    img = dwin.canvas.render(alpha=False)[..., :3]
    assert len(np.unique(img[60:, :-140].reshape(-1, 3), axis=0)) > 50  # not a blank canvas
    path = tmp_path / "s.pdes"
    save_session(dwin, path)
    wait_message(dwin, qtbot, f"saved session {path} (t = …")
    with zipfile.ZipFile(path) as z:
        meta, ck = json.loads(z.read("session.json")), z.read("checkpoint.npz")
    meta["view"]["cmap"] = "magma"
    bad = tmp_path / "bad.pdes"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("session.json", json.dumps(meta))
        z.writestr("checkpoint.npz", ck)
    sim = dwin.worker.sim
    assert not open_session(dwin, bad)
    assert dwin.last_message == (f"session '{bad}': colour map 'magma' is unknown; allowed: "
                                 + ", ".join(COLORMAPS), True)
    assert dwin.worker.sim is sim and dwin.scale.cmap == "fire"


def test_a_small_window_keeps_a_picture_and_its_plots_have_room(qtbot, vispy_records):
    """At 800 × 600 the docks left the canvas 127 px wide, the line view's plot and space-time
    boxes got no width, the plot of quantities over time was 5 px high (at 1000 × 640 too), and
    VisPy's cameras raised "Singular matrix" on every resize. Both canvases now have a minimum
    size (the window grows to fit them and the docks), and every view box has room."""
    import logging

    from vispy.scene import ViewBox

    from pdestudio.app.window import CANVAS_MIN
    w = MainWindow(backend="numpy")
    qtbot.addWidget(w)
    try:
        w.resize(800, 600)
        w.show()
        qtbot.waitExposed(w)
        open_model(w, qtbot, "heat-1d", params={"nx": 64})
        qtbot.wait(300)
        assert w.canvas.size[0] >= CANVAS_MIN[0] and w.canvas.size[1] >= CANVAS_MIN[1], \
            w.canvas.size
        boxes = [n for n in w.canvas.central_widget.children[0].children
                 if isinstance(n, ViewBox)]
        assert len(boxes) == 2 and all(min(b.size) > 100 for b in boxes), \
            [b.size for b in boxes]
        assert min(w.plots.view.size) > 20, w.plots.view.size  # quantities over time: 5 px high
    finally:
        w.close()
    errors = [r.getMessage() for r in vispy_records if r.levelno >= logging.ERROR]
    assert not errors, errors[:3]
