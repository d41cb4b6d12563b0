"""The model editor (issue 26, app/tools/model_editor.py) under a virtual display: a Brusselator
typed into File > New model… applies and runs in the window (steps advance, the field changes,
the panel carries its parameters); a typo is shown at its line and column and leaves the running
simulation alone; the preview typesets every species; Save writes the text; the gallery has a
card with a thumbnail for every model file and one click opens it."""
import numpy as np
import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("matplotlib")

from pdestudio.app import gallery  # noqa: E402
from pdestudio.app.tools.model_editor import locate  # noqa: E402
from pdestudio.solvers.core import registry  # noqa: E402

from .test_window import WAIT, win  # noqa: E402,F401

BRUSSELATOR = '''[model]
name = "bruss-typed"
description = "Brusselator: typed in the editor"
[equations]
u = "Du*lap(u) + a - (b + 1)*u + u^2*v"
v = "Dv*lap(v) + b*u - u^2*v"
[parameters]
a = 3.0
b = { value = 5.0, min = 0.0, max = 15.0 }
Du = 1.0
Dv = 10.0
[initial]
u = "a + 0.05*noise"
v = "b/a + 0.05*noise"
[domain]
kind = "rectangle"
nx = 32
Lx = 16.0
boundary = "periodic"
'''


@pytest.fixture(autouse=True)
def _forget_defined_models():
    registry.discover()
    before = set(registry._MODELS)
    yield
    for m in set(registry._MODELS) - before:
        registry.unregister(m)


def _type(qtbot, editor, text):
    """Replace the editor's text, the last line typed key by key as a user would."""
    head, _, last = text.rstrip("\n").rpartition("\n")
    editor.text.setPlainText(head + "\n")
    editor.text.moveCursor(editor.text.textCursor().MoveOperation.End)
    qtbot.keyClicks(editor.text, last)


def _run_brusselator(win, qtbot):
    win.show_model_editor("new")
    ed = win.model_editor
    assert win.model_editor_dock.isVisible()
    _type(qtbot, ed, BRUSSELATOR)
    assert ed.check() == []
    assert ed.apply() == "bruss-typed"
    qtbot.waitUntil(lambda: win.info is not None and win.info.model == "bruss-typed",
                    timeout=WAIT)
    sim = win.worker.sim
    u0 = sim.fields()["u"].copy()
    win.run_action.setChecked(True)
    qtbot.waitUntil(lambda: sim.steps >= 200 and win.frames_shown > 2, timeout=WAIT)
    win.run_action.setChecked(False)
    return ed, sim, u0


def test_a_typed_brusselator_runs_in_the_window(win, qtbot):
    ed, sim, u0 = _run_brusselator(win, qtbot)
    assert sim.t > 0 and win.last_frame[1] > 0
    u = sim.fields()["u"]
    assert u.shape == (32, 32) and np.all(np.isfinite(u))
    assert np.abs(u - u0).max() > 1e-3  # the field evolves
    # the panel is the model file's schema: its parameters with their ranges, live sliders
    assert {"a", "b", "Du", "Dv", "nx"} <= set(win.panel.params)
    assert win.model_box.currentData() == "bruss-typed"
    assert win.field_box.findData("v") >= 0
    # the preview typesets both species (one mathtext line each)
    assert ed.preview_lines == 2 and not ed.preview.pixmap().isNull()
    assert ed.preview.pixmap().height() > 30


def test_a_typo_is_shown_in_place_and_keeps_the_simulation(win, qtbot):
    ed, sim, _ = _run_brusselator(win, qtbot)
    gen = win.info.generation
    bad = BRUSSELATOR.replace('v = "Dv*lap(v) + b*u - u^2*v"', 'v = "Dv*lap(v) + b*u - u^2*w"')
    _type(qtbot, ed, bad)
    assert ed.apply() is None
    (p,) = ed.problems
    assert "unknown name 'w'" in p["message"] and "equation of v" in p["message"]
    line = bad.splitlines()[p["line"]]
    assert line.startswith("v = ") and line[p["column"]] == "w"  # the very character
    assert ed.errors.item(0).text().startswith(f"line {p['line'] + 1}, column {p['column'] + 1}")
    sels = ed.text.extraSelections()
    assert sels and sels[0].cursor.blockNumber() == p["line"]
    assert ed.text.textCursor().blockNumber() == p["line"]  # the cursor went there
    assert win.last_message[1] and "unknown name 'w'" in win.last_message[0]
    # the running simulation is untouched and still steps
    assert win.info.model == "bruss-typed" and win.info.generation == gen
    assert win.worker.sim is sim
    qtbot.waitUntil(lambda: win.last_frame[1] == sim.steps, timeout=WAIT)  # paused, shown
    n = sim.steps
    win.worker.submit("step", 1)
    qtbot.waitUntil(lambda: win.last_frame[1] == n + 1, timeout=WAIT)
    # a TOML syntax error is placed too
    _type(qtbot, ed, BRUSSELATOR.replace("Du = 1.0", "Du = = 1.0"))
    (p,) = ed.check()
    assert "TOML" in p["message"] and p["line"] == BRUSSELATOR.splitlines().index("Du = 1.0")


def test_locate_maps_a_problem_to_line_and_column():
    text = '[equations]\nu = "lap(u) + w"\n[initial]\nu = "w"\n'
    assert locate(text, "equations", "u", 10) == (1, 14)  # column 10 of the expression
    assert text.splitlines()[1][14] == "w"
    assert locate(text, "initial", "u", 1) == (3, 5)
    assert locate(text, "initial", "v", None) == (2, 0)  # the section's header
    assert locate(text, "domain", "nx", None) is None


def test_save_writes_the_text(win, qtbot, tmp_path):
    win.show_model_editor("new")
    ed = win.model_editor
    ed.text.setPlainText(BRUSSELATOR)
    assert ed.write(tmp_path / "mine")
    assert (tmp_path / "mine.toml").read_text() == BRUSSELATOR
    ed.text.setPlainText("")
    assert ed.load(tmp_path / "mine.toml") and ed.text.toPlainText() == BRUSSELATOR
    assert "New model…" in [a.text() for a in win.menus["File"].actions()]
    assert "Open model…" in [a.text() for a in win.menus["File"].actions()]


def test_every_model_file_has_a_gallery_card_and_one_click_opens_it(win, qtbot):
    files = sorted(gallery.MODELS.glob("*.toml"))
    cards = {p.file: p for p in gallery.PRESETS if p.file is not None}
    assert len(files) >= 12 and set(files) == set(cards)
    win.show_gallery()
    g = win.gallery
    g.filter.setText("snake invades")
    shown = [g.list.item(i) for i in range(g.list.count()) if not g.list.item(i).isHidden()]
    assert [it.data(0x0100) for it in shown] == ["mf-fisher-kpp-snake"]
    g.list.itemClicked.emit(shown[0])
    qtbot.waitUntil(lambda: win.info is not None and win.info.model == "fisher-kpp-snake",
                    timeout=WAIT)
    assert win.worker.sim.mesh.n_vertices == 404  # the snake mesh, found next to the file
    assert win.model_editor.path == gallery.MODELS / "fisher-kpp-snake.toml"
    g.close()
