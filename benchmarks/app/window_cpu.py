"""The window on the CPU backend: frames shown a second and the solver's steps a second while the
window runs a model, against the same simulation stepped alone with the window paused, in turns
(docs/BENCHMARKS.md, "The window on a CPU"). Needs a display with OpenGL (Xvfb gives Mesa
llvmpipe):

    xvfb-run -a -s "-screen 0 1600x1000x24" python -m benchmarks.app.window_cpu
    ... --models heat-1d shallow-water --seconds 3 --rounds 3 --size 1400 900 --json w.json

Each model opens at the window's CPU size (app/cpu_sizes.py) and the default pace. A round is
`--seconds` of the window running (frames counted as the window shows them, steps from the
shown frames) and `--seconds` of a copy of the simulation stepped alone in calls of about 1/32 s
while the window is paused; a row is the median of the rounds. Also the paint of an empty VisPy
canvas filling a window of the same size (what Qt's composition of the window costs before any
visual).

Beyond the public API: it drives `pdestudio.app.window.MainWindow` (the window itself is what
is measured).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time


def spin(app, seconds: float) -> None:
    t = time.perf_counter()
    while time.perf_counter() - t < seconds:
        app.processEvents()


def alone_rate(sim, seconds: float) -> float:
    """Steps/s of `sim` stepped in calls of about 1/32 s (the window's call size)."""
    k = 1
    while True:
        t = time.perf_counter()
        sim.step(k)
        if time.perf_counter() - t > 1 / 32:
            break
        k *= 2
    n, t = 0, time.perf_counter()
    while time.perf_counter() - t < seconds:
        sim.step(k)
        n += k
    return n / (time.perf_counter() - t)


def empty_paint_ms(app, size) -> float:
    """Median wall time of a synchronous paint of an empty canvas filling a window of `size`."""
    from PySide6.QtWidgets import QMainWindow
    from vispy import scene
    win = QMainWindow()
    win.resize(*size)
    canvas = scene.SceneCanvas(keys=None, size=size, bgcolor="black")
    win.setCentralWidget(canvas.native)
    win.show()
    spin(app, 0.3)
    times = []
    for _ in range(15):
        t = time.perf_counter()
        canvas.native.repaint()
        app.processEvents()
        times.append(time.perf_counter() - t)
    win.close()
    return 1e3 * statistics.median(times[3:])


def measure(app, model: str, size, seconds: float, rounds: int) -> dict:
    from pdestudio import solvers
    from pdestudio.app.window import MainWindow
    win = MainWindow(backend="numpy")
    win.resize(*size)
    win.show()
    win.open_model(model)
    t = time.perf_counter()
    while win.worker.sim is None or win.info is None:  # the solver thread sets the model up
        if time.perf_counter() - t > 120:
            win.close()
            raise RuntimeError(f"{model} did not open within 120 s")
        spin(app, 0.05)
    params = dict(win.worker.sim.params)
    copy = solvers.create(model, backend="numpy", **params)
    win.worker.submit("run", True)
    spin(app, 2.0)  # first draws (shaders, glyphs), the call sizer settles
    shown, steps, alone = [], [], []
    for _ in range(rounds):
        f0, s0, t0 = win.frames_shown, win.last_frame[1], time.perf_counter()
        spin(app, seconds)
        dt = time.perf_counter() - t0
        shown.append((win.frames_shown - f0) / dt)
        steps.append((win.last_frame[1] - s0) / dt)
        win.worker.submit("run", False)
        spin(app, 0.3)
        alone.append(alone_rate(copy, seconds))
        win.worker.submit("run", True)
        spin(app, 0.5)
    win.worker.submit("run", False)
    spin(app, 0.3)
    win.close()
    row = {"model": model, "params": {k: v for k, v in params.items()
                                      if isinstance(v, (int, float, str))},
           "shown_per_s": statistics.median(shown), "steps_per_s": statistics.median(steps),
           "alone_steps_per_s": statistics.median(alone), "rounds": rounds}
    row["kept"] = row["steps_per_s"] / row["alone_steps_per_s"]
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=["heat-1d", "mean-curvature", "gray-scott",
                                                    "shallow-water"])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--size", type=int, nargs=2, default=(1400, 900), metavar=("W", "H"))
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    from PySide6.QtWidgets import QApplication
    app = QApplication.instance() or QApplication(sys.argv[:1])
    size = tuple(a.size)
    out = {"size": size, "empty_paint_ms": empty_paint_ms(app, size), "rows": []}
    print(f"window {size[0]}x{size[1]}: an empty canvas paints in {out['empty_paint_ms']:.1f} ms")
    for m in a.models:
        r = measure(app, m, size, a.seconds, a.rounds)
        out["rows"].append(r)
        print(f"{m:16s} shown {r['shown_per_s']:5.1f}/s  steps/s {r['steps_per_s']:10.1f}  "
              f"alone {r['alone_steps_per_s']:10.1f}  kept {100 * r['kept']:4.0f} %", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
