"""Contact sheets for a reviewer (issue 27): the window with every model in every view it offers,
the Compare window, and the image export of every model (`pdestudio run --export-image`: the
line, surface and mesh views, drawn offscreen), each sheet one PNG of captioned thumbnails.

    xvfb-run -a -s "-screen 0 1600x1200x24" python3 -m benchmarks.app.contact_sheet --out docs/img

writes contact-window.png, contact-exports.png and contact-compare.png into --out. Models open at
their defaults with the size parameter capped (--cap: a CPU draws them in seconds), run for
--run-s seconds of wall time, then are shot at the window's default size (app/launch.py).
Needs a display with OpenGL (Xvfb gives Mesa llvmpipe); uses the public API only.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

CAPS = {"nx": 96, "vertices": 3000, "cells": 3000}


def small_params(model: str, cap: float) -> dict:
    """The model's size parameter, capped (cap × CAPS[name] / 96)."""
    from pdestudio import solvers
    d = solvers.describe(model)
    name = d.get("size_param")
    default = next((p["default"] for p in d["parameters"] if p["name"] == name), None)
    if name not in CAPS or default is None:
        return {}
    params = {name: int(min(default, CAPS[name] * cap / 96))}
    try:
        solvers.validate(model, None, **params)
    except solvers.ParameterError:  # e.g. ks-1d needs its nx to resolve the chaos
        return {}
    return params


def wait(ms: int) -> None:
    from PySide6.QtCore import QEventLoop, QTimer
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def wait_until(pred, timeout_s: float = 60.0) -> bool:
    t0 = time.perf_counter()
    while not pred():
        if time.perf_counter() - t0 > timeout_s:
            return False
        wait(50)
    return True


def sheet(shots: list, columns: int, thumb_w: int, path: Path, title: str) -> None:
    """Captioned thumbnails (QImage, caption) in a grid, saved as an 8-bit palette PNG."""
    from PySide6.QtCore import QRect, Qt
    from PySide6.QtGui import QColor, QFont, QImage, QPainter
    thumbs = [(img.scaledToWidth(thumb_w, Qt.TransformationMode.SmoothTransformation), cap)
              for img, cap in shots]
    cap_h, gap, head = 20, 8, 30
    cell_h = max(t.height() for t, _ in thumbs) + cap_h
    rows = -(-len(thumbs) // columns)
    out = QImage(columns * (thumb_w + gap) + gap, head + rows * (cell_h + gap) + gap,
                 QImage.Format.Format_RGB32)
    out.fill(QColor(245, 245, 245))
    p = QPainter(out)
    f = QFont()
    f.setPixelSize(15)
    f.setBold(True)
    p.setFont(f)
    p.drawText(QRect(gap, 4, out.width(), head - 4), Qt.AlignmentFlag.AlignLeft, title)
    f.setPixelSize(13)
    f.setBold(False)
    p.setFont(f)
    for k, (t, cap) in enumerate(thumbs):
        x = gap + (k % columns) * (thumb_w + gap)
        y = head + (k // columns) * (cell_h + gap)
        p.drawText(QRect(x, y, thumb_w, cap_h), Qt.AlignmentFlag.AlignLeft, cap)
        p.drawImage(x, y + cap_h, t)
    p.end()
    path.parent.mkdir(parents=True, exist_ok=True)
    out.convertToFormat(QImage.Format.Format_Indexed8).save(str(path))
    print(f"wrote {path} ({path.stat().st_size / 1e3:.0f} kB, {len(shots)} pictures)")


def rgb_image(rgba):
    import numpy as np
    from PySide6.QtGui import QImage
    a = np.ascontiguousarray(rgba[..., :3])
    return QImage(a.data, a.shape[1], a.shape[0], 3 * a.shape[1],
                  QImage.Format.Format_RGB888).copy()


def window_shots(win, models, cap, run_s, pngs: dict) -> list:
    shots = []
    for m in models:
        before = win.info.generation if win.info else 0
        win.open_model(m, None, small_params(m, cap))
        if not wait_until(lambda: win.info is not None and win.info.generation > before):
            print(f"{m}: did not open ({win.last_message[0]})", file=sys.stderr)
            continue
        win.worker.submit("run", True)
        wait(int(1000 * run_s))
        win.worker.submit("run", False)
        wait(400)
        modes = [win.mode_box.itemText(i) for i in range(win.mode_box.count())]
        for mode in modes:
            if win.mode_box.currentText() != mode:
                win.mode_box.setCurrentText(mode)
                win._rebuild_view()
            shown = win.frames_shown
            win.set_field(win.field)
            wait_until(lambda: win.frames_shown > shown, 20)
            wait(300)
            shots.append((win.grab().toImage(), f"{m}: {mode} view, field {win.field}"))
            if mode not in pngs:  # the window's PNG export (File/toolbar PNG…) of this view
                pngs[mode] = (rgb_image(win.canvas.render(alpha=False)),
                              f"window PNG export: {mode} view ({m})")
    return shots


def export_shots(models, cap, steps) -> list:
    """`pdestudio run MODEL --steps N --export-image F` for every model (its default view)."""
    import tempfile

    from PySide6.QtGui import QImage

    from pdestudio import solvers
    from pdestudio.app.export import render_image
    shots = []
    with tempfile.TemporaryDirectory() as tmp:
        for m in models:
            sim = solvers.create(m, backend="numpy", **small_params(m, cap))
            sim.step(steps)
            path = Path(tmp) / f"{m}.png"
            render_image(sim, path)
            shots.append((QImage(str(path)), f"export-image {m} ({steps} steps)"))
    return shots


def compare_shots(win, model, cap) -> list:
    from pdestudio.app.tools.compare import open_compare
    before = win.info.generation if win.info else 0
    win.open_model(model, None, small_params(model, cap))
    wait_until(lambda: win.info is not None and win.info.generation > before)
    cw = open_compare(win, {}, dtype="float32")
    if cw is None:
        return []
    wait_until(lambda: cw.last is not None)
    cw.worker.submit("step")
    wait(1500)
    shot = [(cw.grab().toImage(), f"Compare {model}: float64 (A) vs float32 (B), default size")]
    cw.close()
    return shot


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="docs/img", help="folder of the PNGs (default docs/img)")
    ap.add_argument("--models", nargs="*", help="default: every model")
    ap.add_argument("--cap", type=float, default=96, help="size cap (nx; meshes ×31)")
    ap.add_argument("--run-s", type=float, default=1.5, help="wall seconds each model runs")
    ap.add_argument("--thumb", type=int, default=480, help="thumbnail width in pixels")
    ap.add_argument("--compare", default="shallow-water", help="the model shown in Compare")
    a = ap.parse_args(argv)
    from PySide6.QtWidgets import QApplication
    app = QApplication.instance() or QApplication(sys.argv[:1])
    from pdestudio import solvers
    from pdestudio.app.launch import WINDOW_SIZE as WINDOW
    from pdestudio.app.window import MainWindow
    models = a.models or solvers.available_models()
    out = Path(a.out)
    win = MainWindow(backend="numpy")
    win.resize(*WINDOW)
    win.show()
    wait(500)
    shots = [(win.grab().toImage(), "before a model opens")]
    pngs: dict = {}
    shots += window_shots(win, models, a.cap, a.run_s, pngs)
    sheet(shots, 3, a.thumb, out / "contact-window.png",
          f"pdestudio window at {WINDOW[0]}×{WINDOW[1]}, every model and view (NumPy backend)")
    sheet(compare_shots(win, a.compare, a.cap), 1, 1320, out / "contact-compare.png",
          "View > Compare… at its default size")
    win.close()
    sheet(export_shots(models, a.cap, 20) + list(pngs.values()), 4, 300,
          out / "contact-exports.png", "pdestudio run MODEL --steps 20 --export-image F "
          "(offscreen, 960×720), and the window's PNG export of each view")
    app.processEvents()
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)  # skip the interpreter's teardown of Qt objects (issue 27: it may abort)
