"""`pdestudio [--model M --scenario S --set k=v --mesh F --run-for S --screenshot out.png]`:
open the window; with --run-for, run that long, print a summary (steps/s and frames/s in the
window), save a screenshot of the whole window if asked, and exit."""
from __future__ import annotations

import sys
import time

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from pdestudio import solvers
from .frames import SWITCH_INTERVAL
from .window import MainWindow

WINDOW_SIZE = (1400, 860)  # the window's default size (tests/app/test_layout.py checks it fits)


def _validate(model, scenario, params):
    """Bad command-line input raises ParameterError before any window opens (exit code 2)."""
    model = model or solvers.available_models()[0]
    solvers.validate(model, scenario, **(params or {}))
    return model, scenario or solvers.describe(model)["scenarios"][0]["name"]


def summary(win, wall: float, frames: int) -> str:
    """One line: what the window shows after `--run-for` (its last frame's step, the profiler's
    numbers); a number never measured reads 'not measured', never nan."""
    steps = getattr(win, "last_frame", (0.0, 0))[1]
    t = getattr(win, "last_frame", (0.0, 0))[0]
    v = win.profiler.values

    def ms(key):
        x = v.get(key)
        return f"{x:.3g} ms" if isinstance(x, (int, float)) and x == x else "not measured"
    path = v.get("transfer_path")
    hand = f"{path} ({v.get('transfer_reason', '')})" if path else "not measured"
    return (f"window: {wall:.1f} s, step {steps} shown at t = {t:.6g} ({steps / wall:.4g} "
            f"steps/s), {frames} frames drawn ({frames / wall:.3g} frames/s), "
            f"{v.get('dropped', 0)} dropped; last draw {ms('draw_ms')}, kernel "
            f"{ms('kernel_ms')} and transfer {ms('transfer_ms')} per frame; hand-over {hand}")


def launch(model=None, scenario=None, params=None, backend="auto", dtype="float64",
           run_for=None, screenshot=None) -> int:
    """Open the window (`pdestudio [--model M ...]`). With `run_for` seconds: run that long
    after the simulation is set up, save a screenshot of the window if asked, and exit."""
    model, scenario = _validate(model, scenario, params)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    sys.setswitchinterval(SWITCH_INTERVAL)
    win = MainWindow(backend=backend, dtype=dtype or "float64")
    old_hook = sys.excepthook  # an exception in a slot goes to the status bar, not a dialog
    sys.excepthook = lambda t, e, tb: win.show_message(f"{t.__name__}: {e}", True)
    win.resize(*WINDOW_SIZE)
    win.show()
    state = {"code": 0, "started": False}
    if screenshot and run_for is None:
        run_for = 2.0

    def started(info):
        if state["started"]:
            return
        state["started"] = True
        state["t0"] = time.perf_counter()
        state["frames0"] = win.frames_shown
        win.worker.submit("run", True)
        if run_for is not None:
            QTimer.singleShot(int(1000 * run_for), finish)

    def finish():
        """Pause; the summary and the screenshot wait for the worker to confirm the pause (a
        slow model finishes its chunk of steps first) and for that state to be drawn, so the
        printed numbers are those the screenshot shows."""
        win.worker.running_changed.connect(paused)
        win.worker.submit("run", False)
        QTimer.singleShot(120_000, shoot)  # a chunk that never ends: shoot anyway

    def paused(on):
        if not on and "wall" not in state:
            state["wall"] = time.perf_counter() - state["t0"]
            QTimer.singleShot(400, shoot)

    def shoot():
        if state.get("shot"):
            return
        state["shot"] = True
        wall = state.get("wall", time.perf_counter() - state["t0"])
        print(summary(win, wall, win.frames_shown - state["frames0"]), file=sys.stderr)
        if screenshot:
            win.grab().save(str(screenshot))
            print(f"wrote {screenshot}", file=sys.stderr)
        win.close()
        app.exit(state["code"])

    def failed(text, error):
        if error and not state["started"] and run_for is not None:
            print(f"pdestudio: error: {text}", file=sys.stderr)
            state["code"] = 2
            win.close()
            app.exit(2)

    win.worker.created.connect(started)
    win.worker.message.connect(failed)
    win.open_model(model, scenario, params)
    try:
        return app.exec()
    finally:
        sys.excepthook = old_hook  # (a hook holding the window crashes Python's finalisation)
        win.deleteLater()
