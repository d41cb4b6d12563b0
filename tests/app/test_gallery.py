"""The preset gallery (issue 17): a card for every scenario of every model and every preset with
its generated thumbnail, paper and hints; a regenerated thumbnail matches the committed one; one
click opens a preset (parameters and initial conditions) in the window."""
import numpy as np
import pytest
from PIL import Image

pytest.importorskip("pytestqt")

from pdestudio import solvers  # noqa: E402
from pdestudio.app import gallery  # noqa: E402

from .test_window import WAIT, win  # noqa: E402,F401


def test_every_scenario_has_a_card_with_a_thumbnail():
    cards = {(p.model, p.scenario) for p in gallery.PRESETS}
    for m in solvers.available_models():
        for sc in solvers.describe(m)["scenarios"]:
            assert (m, sc["name"]) in cards, f"no gallery card for {m}/{sc['name']}"
    ids = [p.id for p in gallery.PRESETS]
    assert len(ids) == len(set(ids))
    for p in gallery.PRESETS:
        assert p.thumbnail.is_file(), f"{p.id}: run python -m pdestudio.app.gallery --build {p.id}"
        img = np.asarray(Image.open(p.thumbnail).convert("RGB")).astype(int)
        assert img.shape == (128, 128, 3) and img.std() > 10, p.id  # a picture, not a blank
        assert p.citation and p.look_for and p.summary
        if p.file is not None:  # a model file (resources/models/) defines its model
            solvers.define(p.file)
        solvers.validate(p.model, p.scenario, **p.params)  # the preset opens


def test_a_regenerated_thumbnail_matches_the_committed_one(tmp_path):
    for pid in ("gs-spots", "sw-circular", "euler-sod"):
        gallery.build([pid], tmp_path)
        new = np.asarray(Image.open(tmp_path / f"{pid}.png").convert("RGB")).astype(int)
        old = np.asarray(Image.open(gallery.by_id(pid).thumbnail).convert("RGB")).astype(int)
        assert np.mean(np.abs(new - old)) < 2.0, pid


def test_one_click_opens_a_preset(win, qtbot):
    win.show_gallery()
    g = win.gallery
    assert g.list.count() == len(gallery.PRESETS)
    g.filter.setText("ridge")
    shown = [g.list.item(i) for i in range(g.list.count()) if not g.list.item(i).isHidden()]
    assert [it.data(0x0100) for it in shown] == ["sw-tsunami"]
    g.list.itemClicked.emit(shown[0])
    qtbot.waitUntil(lambda: win.info is not None and win.info.model == "shallow-water"
                    and "set h from" in win.last_message[0], timeout=WAIT)
    sim = win.worker.sim
    assert sim.scenario_name == "lake-at-rest" and sim.params["Lx"] == 20.0
    eta = sim.fields()["eta"]
    x = sim.mesh.x
    assert np.allclose(eta[:, np.argmin(abs(x + 5))], 0.3 + eta[:, np.argmin(abs(x - 9))].mean(),
                       atol=0.02)  # the wave's hump at x = -5 over still water
    g.close()
