"""A sweep folder in the window (issue 19): File > Open sweep folder… shows one card per member
(thumbnail, parameters, diverged marked); a click opens that member at its final state and it
continues; checkpoints and the Data export reopen; a folder that is not a sweep says so."""
import numpy as np
import pytest

pytest.importorskip("pytestqt")

from pdestudio import solvers  # noqa: E402
from pdestudio.app.sweep import spec as specs  # noqa: E402
from pdestudio.app.sweep.runner import run_sweep  # noqa: E402
from pdestudio.app.tools.sweep_gallery import open_sweep  # noqa: E402

from .test_window import WAIT, open_model, step_and_wait, wait_message, win  # noqa: E402,F401


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    spec = specs.make_spec("heat-1d", None, {"nx": 48}, [("mode", [1, 2, 3]),
                                                          ("Fo", [0.2, 0.4])],
                           "numpy", "float64", None, 25)
    run_sweep(spec, out, workers=1)
    return out


def test_sweep_folder_gallery_opens_a_member_that_continues(win, qtbot, sweep_dir):
    open_model(win, qtbot, "ks-1d", params={"nx": 128})
    gallery = open_sweep(win, sweep_dir)
    assert gallery is not None and gallery.list.count() == 6
    texts = [gallery.list.item(i).text() for i in range(6)]
    assert texts[3] == "#3 mode=2, Fo=0.4"
    assert all(not gallery.list.item(i).icon().isNull() for i in range(6))
    before = win.info.generation
    item = gallery.list.item(3)
    gallery.list.itemClicked.emit(item)
    qtbot.waitUntil(lambda: win.info.generation > before and win.info.model == "heat-1d",
                    timeout=WAIT)
    sim = win.worker.sim
    ref = solvers.create("heat-1d", backend="numpy", nx=48, mode=2, Fo=0.4)
    ref.step(25)
    assert sim.steps == 25 and sim.t == ref.t and np.array_equal(sim.state["T"], ref.state["T"])
    assert win.model == "heat-1d" and win.panel.values()["mode"] == 2
    assert "sweep member 3" in win.last_message[0]
    win.set_field(win.field)  # the opened member's frame drawn (the mailbox may drop one)
    qtbot.waitUntil(lambda: win.last_frame[1] == 25, timeout=WAIT)
    step_and_wait(win, qtbot)  # it continues
    ref.step(1)
    assert sim.steps == 26 and np.array_equal(sim.state["T"], ref.state["T"])
    gallery.close()


def test_not_a_sweep_folder_and_data_export_reopen(win, qtbot, tmp_path):
    assert open_sweep(win, tmp_path) is None
    assert win.last_message[1] and "not a sweep folder" in win.last_message[0]
    sim = open_model(win, qtbot, "heat-1d", params={"nx": 64})
    step_and_wait(win, qtbot)
    win.export_data(str(tmp_path / "d.npz"))
    wait_message(win, qtbot, f"wrote {tmp_path / 'd.npz'}")
    steps, state = sim.steps, sim.state["T"].copy()
    before = win.info.generation
    win.open_checkpoint(tmp_path / "d.npz")
    qtbot.waitUntil(lambda: win.info.generation > before, timeout=WAIT)
    back = win.worker.sim
    assert back is not sim and back.steps == steps and np.array_equal(back.state["T"], state)
    (tmp_path / "bad.npz").write_bytes(b"not a checkpoint")
    win.open_checkpoint(tmp_path / "bad.npz")
    qtbot.waitUntil(lambda: win.last_message[1], timeout=WAIT)
    assert "bad.npz" in win.last_message[0] and win.worker.sim is back
