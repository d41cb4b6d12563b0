"""A slider beside a numeric parameter's box (issue 17): it spans the parameter's schema range
(`describe()` "range"/"open"; an open-ended range becomes a span around the default), on a log
scale where the range covers more than two decades of positive values, and drives the box, so
every value goes through the box's validation: a live parameter applies while dragging, a
refused value turns the box red and the slider returns to the last valid value."""
from __future__ import annotations

import math

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSlider

from .spans import STEPS, span  # noqa: F401  (span: re-exported for the panel)


class ParamSlider(QSlider):
    def __init__(self, box, d: dict, value):
        super().__init__(Qt.Orientation.Horizontal)
        self.box = box
        self.s = span(d, value)
        lo, hi, log = self.s
        self.setRange(0, STEPS)
        self.setToolTip(f"{d['name']}: {lo:.4g} … {hi:.4g}" + (" (log scale)" if log else "")
                        + ("; applies while you drag" if d.get("live") else
                           "; applies on Reset"))
        self.setMinimumWidth(64)
        self.show_value(value)
        self.valueChanged.connect(self._moved)

    def to_value(self, pos: int) -> float:
        lo, hi, log = self.s
        f = pos / STEPS
        v = math.exp(math.log(lo) + f * (math.log(hi) - math.log(lo))) if log else lo + f * (hi - lo)
        return float(round(v)) if self.box.is_int else float(f"{v:.4g}")

    def to_pos(self, v) -> int:
        lo, hi, log = self.s
        if v is None or not math.isfinite(float(v)):
            return 0
        v = min(max(float(v), lo), hi)
        f = (math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo)) if log and v > 0 \
            else (v - lo) / (hi - lo)
        return int(round(f * STEPS))

    def show_value(self, v) -> None:
        self.blockSignals(True)
        self.setValue(self.to_pos(v))
        self.blockSignals(False)

    def _moved(self, pos: int) -> None:
        if not self.box.isEnabled():
            return
        if not self.box.try_value(self.to_value(pos)):
            self.show_value(self.box.good)
