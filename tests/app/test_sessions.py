"""Sessions (issue 17): save a session after running, change model, field and colours, open it:
the simulation is back bit for bit (model, scenario, parameters, t, steps, state) with its view
settings, and continues as the original does; a damaged or foreign file is refused cleanly."""
import zipfile

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from pdestudio import solvers  # noqa: E402
from pdestudio.app.tools.sessions import open_session, save_session  # noqa: E402

from .test_window import WAIT, open_model, step_and_wait, wait_message, win  # noqa: E402,F401


def test_save_and_reopen_a_session(win, qtbot, tmp_path):
    sim = open_model(win, qtbot, "shallow-water", params={"nx": 24, "cfl": 0.7})
    for _ in range(3):
        step_and_wait(win, qtbot)
    win.set_field("hu")
    win.set_scale(cmap="coolwarm", mode="fixed", lo=-0.5, hi=0.5)
    win.spf.setValue(7)
    path = tmp_path / "s.pdes"
    save_session(win, path)
    wait_message(win, qtbot, f"saved session {path} (t = …")
    state = {k: v.copy() for k, v in sim.state.items()}
    t, steps = sim.t, sim.steps
    open_model(win, qtbot, "heat-1d", params={"nx": 64})  # change everything
    win.set_scale(cmap="viridis", mode="auto")
    before = win.info.generation
    assert open_session(win, path)
    qtbot.waitUntil(lambda: win.info.generation > before and win.field == "hu", timeout=WAIT)
    back = win.worker.sim
    assert (back.model, back.scenario_name, back.t, back.steps) == \
        ("shallow-water", sim.scenario_name, t, steps)
    assert back.params["cfl"] == 0.7 and win.model == "shallow-water"
    assert all(np.array_equal(back.state[k], state[k]) for k in state)
    assert (win.scale.cmap, win.scale.mode, win.scale.lo, win.scale.hi) == \
        ("coolwarm", "fixed", -0.5, 0.5)
    assert win.spf.value() == 7
    # the first frame of the opened simulation (the mailbox may have dropped it: ask again)
    win.set_field(win.field)
    qtbot.waitUntil(lambda: win.last_frame[1] == back.steps, timeout=WAIT)
    step_and_wait(win, qtbot)  # continues as the original would
    sim.step(1)
    assert all(np.array_equal(back.state[k], sim.state[k]) for k in state)


def test_bad_session_files_are_refused(win, qtbot, tmp_path):
    sim = open_model(win, qtbot, "heat-1d", params={"nx": 64})
    (tmp_path / "x.pdes").write_bytes(b"garbage")
    assert not open_session(win, tmp_path / "x.pdes")
    assert win.last_message[1] and "is not a pdestudio session" in win.last_message[0]
    with zipfile.ZipFile(tmp_path / "y.pdes", "w") as z:
        z.writestr("session.json", '{"format": "pdestudio-session", "version": 99, "view": {}}')
        z.writestr("checkpoint.npz", b"")
    assert not open_session(win, tmp_path / "y.pdes")
    assert "version 99" in win.last_message[0]
    assert not open_session(win, tmp_path / "missing.pdes")
    assert "does not exist" in win.last_message[0] and win.worker.sim is sim
    solvers.create("heat-1d", backend="numpy", nx=64).save(tmp_path / "c.npz")
    with zipfile.ZipFile(tmp_path / "z.pdes", "w") as z:  # a checkpoint that is not one
        z.writestr("session.json", '{"format": "pdestudio-session", "version": 1, "view": {}}')
        z.writestr("checkpoint.npz", b"PK not really")
    assert open_session(win, tmp_path / "z.pdes")
    qtbot.waitUntil(lambda: win.last_message[1] and "missing" not in win.last_message[0],
                    timeout=WAIT)
    assert "checkpoint" in win.last_message[0] and win.worker.sim is sim
