"""The profiler panel: kernel, transfer and draw time per frame, steps/s, cell updates/s,
frames/s (produced by the solver thread and shown on screen), dropped frames, and the speed-up
over the NumPy backend, measured on request by running NumPy briefly on a copy of the setup; and
the pace of the screen: 'smooth' (about 30 frames/s) or 'fast solver' (an adaptive frame cap that
keeps the drawing to a tenth of the time, so the solver keeps its GPU), with the cap in use."""
from __future__ import annotations

import math

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QComboBox, QFormLayout, QLabel, QPushButton, QVBoxLayout,
                               QWidget)


def si(v: float, unit: str = "") -> str:
    if v is None or not math.isfinite(v):
        return "–"
    for f, p in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= f:
            return f"{v / f:.3g} {p}{unit}"
    return f"{v:.3g} {unit}".rstrip()


class ProfilerPanel(QWidget):
    measure = Signal()
    pace_changed = Signal(str)  # 'smooth' or 'fast solver'

    ROWS = (("backend", "backend"), ("transfer_path", "hand-over"),
            ("kernel_ms", "kernel / frame"), ("transfer_ms", "transfer / frame"), ("draw_ms", "draw / frame"),
            ("steps_per_s", "steps / s"), ("cell_updates_per_s", "cell updates / s"),
            ("frames_per_s", "frames / s (solver)"), ("shown_per_s", "frames / s (screen)"),
            ("dropped", "dropped frames"), ("steps_per_frame", "steps / frame"),
            ("pace", "frame pace"))

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        form = QFormLayout()
        lay.addLayout(form)
        self.labels = {}
        for key, text in self.ROWS:
            lab = QLabel("–")
            self.labels[key] = lab
            form.addRow(text, lab)
        self.pace = QComboBox()
        self.pace.addItems(["smooth", "fast solver"])
        self.pace.setToolTip("smooth: about 30 frames/s (up to 60 with fixed steps a frame). "
                             "fast solver: fewer frames, as many as keep the drawing to a "
                             "tenth of the time (the screen and the solver share the GPU).")
        self.pace.currentTextChanged.connect(self.pace_changed.emit)
        form.addRow("pace", self.pace)
        self.button = QPushButton("Measure speed-up over NumPy")
        self.button.setToolTip("Runs the NumPy backend briefly on a fresh copy of the current "
                               "setup, and the current backend the same way, and shows the ratio "
                               "of their steps/s.")
        self.button.clicked.connect(self.measure.emit)
        lay.addWidget(self.button)
        self.speedup = QLabel("speed-up over NumPy: not measured")
        self.speedup.setWordWrap(True)
        lay.addWidget(self.speedup)
        lay.addStretch(1)
        self.values: dict = {}

    def update_stats(self, s: dict) -> None:
        self.values.update(s)
        v = self.values
        fmt = {
            "backend": lambda: f"{v.get('backend', '?')} {v.get('dtype', '')} "
                               f"({v.get('kernel', '')})",
            "transfer_path": lambda: v["transfer_path"],
            "kernel_ms": lambda: f"{v['kernel_ms']:.3g} ms",
            "transfer_ms": lambda: f"{v['transfer_ms']:.3g} ms",
            "draw_ms": lambda: f"{v['draw_ms']:.3g} ms",
            "steps_per_s": lambda: si(v["steps_per_s"]),
            "cell_updates_per_s": lambda: si(v["cell_updates_per_s"]),
            "frames_per_s": lambda: f"{v['frames_per_s']:.3g}",
            "shown_per_s": lambda: f"{v['shown_per_s']:.3g}",
            "dropped": lambda: str(v["dropped"]),
            "steps_per_frame": lambda: str(v["steps_per_frame"]),
            "pace": lambda: v["pace"],
        }
        for key, f in fmt.items():
            try:
                self.labels[key].setText(f())
            except KeyError:
                pass
        if "transfer_reason" in v:
            self.labels["transfer_path"].setToolTip(v["transfer_reason"])

    def clear(self) -> None:
        """Forget every number (another simulation opened): all rows read '–' until its own
        statistics arrive."""
        self.values.clear()
        for lab in self.labels.values():
            lab.setText("–")
            lab.setToolTip("")
        self.reset_speedup()

    def show_speedup(self, r: dict) -> None:
        rate, steps, secs = r["rate"]
        nrate, nsteps, nsecs = r["numpy_rate"]
        if r["backend"] == "numpy":
            text = (f"The current backend is NumPy ({si(nrate)} steps/s, {nsteps} steps in "
                    f"{nsecs:.2g} s on a copy of the setup): speed-up 1.0× by definition.")
        else:
            text = (f"speed-up over NumPy: {r['ratio']:.3g}× (measured on copies of the setup, "
                    f"{r['dtype']}: {r['backend']} {si(rate)} steps/s, {steps} steps in "
                    f"{secs:.2g} s; NumPy {si(nrate)} steps/s, {nsteps} steps in {nsecs:.2g} s)")
        self.values["speedup"] = r
        self.speedup.setText(text)

    def reset_speedup(self) -> None:
        self.values.pop("speedup", None)
        self.speedup.setText("speed-up over NumPy: not measured")
