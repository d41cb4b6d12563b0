"""Frames per second the notebook's live view produces for a field, without a browser: the loop
below asks the canvas for frames as fast as jupyter_rfb would if the browser confirmed each at
once (its `get_frame()`: the newest frame of the solver uploaded and drawn, then read back) whenever the
solver has handed a new one over (jupyter_rfb draws on request only), for `--seconds`, while
the solver runs in its thread. Prints frames/s (new frames of the solver drawn), the draw time,
the solver's steps/s with the view against alone, and the view's own capacity: frames/s drawn
when every draw has a new frame of the field (paused, each frame handed over on request).

    python examples/notebook_fps.py shallow-water --size 1024 --mode image
"""
from __future__ import annotations

import argparse
import time

import pdestudio
from pdestudio import solvers
from pdestudio.app.notebook.canvas import render


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model", nargs="?", default="shallow-water")
    ap.add_argument("--size", type=int, default=1024, help="nx (a grid of size²)")
    ap.add_argument("--mode", default="image", help="view mode (image or surface on grids)")
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--seconds", type=float, default=8.0)
    a = ap.parse_args()
    sim = solvers.create(a.model, backend=a.backend, dtype=a.dtype, nx=a.size)
    sim.step(2)
    t0, s0 = time.perf_counter(), sim.steps
    while time.perf_counter() - t0 < a.seconds / 2:
        sim.step(1)
    alone = (sim.steps - s0) / (time.perf_counter() - t0)
    view = pdestudio.show(sim, mode=a.mode)
    render(view.canvas, 640, 480)
    view.run()
    time.sleep(0.5)
    n0, s0, t0 = view.frames_drawn, sim.steps, time.perf_counter()
    box = view.worker.mailbox
    while time.perf_counter() - t0 < a.seconds:
        if box.wait_taken(0.002):  # nothing new: jupyter_rfb would not draw
            continue
        render(view.canvas)
    span = time.perf_counter() - t0
    fps, sps = (view.frames_drawn - n0) / span, (sim.steps - s0) / span
    st = view.stats()
    view.pause()
    n0, t0 = view.frames_drawn, time.perf_counter()
    while time.perf_counter() - t0 < a.seconds / 2:
        view.router.call(view.worker.publish_now)  # a new frame of the field, handed over
        render(view.canvas)
    cap = (view.frames_drawn - n0) / (time.perf_counter() - t0)
    view.close()
    print(f"{a.model} {a.size}² {sim.backend} {sim.dtype}, view {a.mode}: running: "
          f"{fps:.1f} frames/s drawn ({st['draw_ms']:.1f} ms a draw, hand-over "
          f"{st['transfer_path']}), solver {sps:.3g} steps/s with the view, {alone:.3g} alone "
          f"({100 * sps / alone:.0f} %); the view's capacity: {cap:.1f} frames/s")


if __name__ == "__main__":
    main()
