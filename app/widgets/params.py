"""The parameter panel, generated from `solvers.describe(model)["parameters"]`: numbers as spin
boxes with their range and unit, choices as combo boxes, booleans as check boxes, help as
tooltips. A value outside the allowed range is refused at the widget: the box turns red, shows
the reason (the same message `solvers` gives) in its tooltip and in `rejected`, and keeps the
last valid value. Each row says whether the parameter applies live or on reset.
"""
from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QSize, Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFileDialog, QFormLayout,
                               QHBoxLayout, QLabel, QLineEdit, QPushButton, QScrollArea, QStyle,
                               QStyleOptionSpinBox, QWidget)

from pdestudio import solvers
from pdestudio.solvers import ParameterError

from .slider import ParamSlider, span

BAD = "QAbstractSpinBox, QLineEdit { background: #6b2020; color: white; }"
BIG = 1e300


class ParamSpec:
    """One entry of `solvers.describe(model)["parameters"]`, as the editors read it. `validate`
    is `solvers.check_param`: the value converted and range-checked by the model's own rule."""

    def __init__(self, model: str, scenario: str | None, d: dict):
        self.model, self.scenario = model, scenario
        self.name, self.type, self.default = d["name"], d["type"], d["default"]
        self.help, self.unit = d.get("help", ""), d.get("unit", "")
        self.choices = tuple(d.get("choices", ()))
        self.live, self.nullable = d.get("live", False), d.get("nullable", False)
        self.allowed = d["allowed"]
        self.desc = d

    def range_text(self) -> str:
        return self.allowed

    def validate(self, value):
        return solvers.check_param(self.model, self.name, value, self.scenario)


class NumberBox(QDoubleSpinBox):
    """A spin box for an int/float `ParamSpec` that accepts any typed number and validates it with
    the parameter's own rule (open ends included) when editing finishes; arrows step within it."""

    def __init__(self, param, value, on_reject, on_accept):
        super().__init__()
        self.param, self._reject, self._accept = param, on_reject, on_accept
        self.is_int = param.type == "int"
        self.setDecimals(0 if self.is_int else 12)
        self.setRange(-BIG, BIG)
        self.setKeyboardTracking(False)
        self.setStepType(QDoubleSpinBox.StepType.AdaptiveDecimalStepType)
        if self.is_int:
            self.setSingleStep(1)
        self.good = value
        self.setValue(float(value))
        self.editingFinished.connect(self._finished)

    def sizeHint(self) -> QSize:
        """As wide as the longest text `textFromValue` writes (Qt sizes a spin box for its
        minimum and maximum, here ±1e300: 165 px for an int box, which clipped the panel)."""
        sample = "-1234567" if self.is_int else "-1.2346e-05"  # longer texts scroll
        self.ensurePolished()
        opt = QStyleOptionSpinBox()
        self.initStyleOption(opt)
        h = super().sizeHint().height()
        w = self.fontMetrics().horizontalAdvance(sample) + 6
        return self.style().sizeFromContents(QStyle.ContentsType.CT_SpinBox, opt, QSize(w, h),
                                             self).expandedTo(QSize(0, h))

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    def textFromValue(self, v: float) -> str:
        return str(int(round(v))) if self.is_int else f"{v:.6g}"

    def valueFromText(self, text: str) -> float:
        try:
            return float(text.strip().replace(self.suffix(), ""))
        except ValueError:
            return float(self.good)

    def validate(self, text, pos):
        t = text.strip()
        try:
            float(t)
            return QValidator.State.Acceptable, text, pos
        except ValueError:
            ok = t in ("", "-", "+", ".", "-.", "+.") or t.lower().endswith(("e", "e-", "e+"))
            return (QValidator.State.Intermediate if ok else QValidator.State.Invalid), text, pos

    def fixup(self, text):
        return self.textFromValue(float(self.good))

    def stepBy(self, steps: int) -> None:
        if self.is_int:
            cand = int(self.good) + steps
        else:
            g = float(self.good)
            mag = 10 ** math.floor(math.log10(abs(g))) if g != 0 else 0.1
            cand = g + steps * mag / 10
        self.try_value(cand)

    def _finished(self) -> None:
        self.try_value(self.value())

    def try_value(self, v) -> bool:
        v = int(round(v)) if self.is_int and math.isfinite(v) else v
        try:
            ok = self.param.validate(v)
        except ParameterError as e:
            self.blockSignals(True)
            self.setValue(float(self.good))
            self.blockSignals(False)
            self.setStyleSheet(BAD)
            self.setToolTip(str(e))
            self._reject(self.param.name, str(e))
            return False
        self.setStyleSheet("")
        self.setToolTip(self.param.help + "\nallowed: " + self.param.range_text())
        changed = ok != self.good
        self.good = ok
        self.blockSignals(True)
        self.setValue(float(ok))
        self.blockSignals(False)
        if changed:
            self._accept(self.param.name, ok)
        return True


class ParamPanel(QWidget):
    """Emits `changed(name, value, live)` for every accepted edit, `rejected(name, reason)` for
    every refused one. `values()` gives the panel's current parameter values."""

    changed = Signal(str, object, object)
    rejected = Signal(str, str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.form = QFormLayout(self)
        self.form.setContentsMargins(2, 2, 2, 2)
        self.editors: dict = {}
        self.sliders: dict = {}
        self.params: dict = {}
        self._values: dict = {}

    def build(self, schema: dict, scenario: str | None, values: dict | None = None) -> None:
        """(Re)build the rows for `schema` (describe()), with the scenario's defaults and
        `values` (e.g. from the command line) applied."""
        while self.form.rowCount():
            self.form.removeRow(0)
        self.editors.clear()
        self.params.clear()
        self.sliders.clear()
        defaults = {}
        for sc in schema["scenarios"]:
            if sc["name"] == (scenario or schema["scenarios"][0]["name"]):
                defaults = dict(sc["defaults"])
        values = values or {}
        self._values = {}
        for d in schema["parameters"]:
            p = ParamSpec(schema["model"], scenario, d)
            name = p.name
            default = defaults.get(name, p.default)
            try:
                value = p.validate(values.get(name, default))
            except ParameterError:
                value = default
            self.params[name] = p
            self._values[name] = value
            editor = self._editor(p, value)
            self.editors[name] = editor
            unit = f" [{p.unit}]" if p.unit else ""
            label = QLabel(f"{name}{unit}" + (" (live)" if p.live else ""))
            when = "applied live while running" if p.live else "applied on reset"
            tip = f"{p.help}\nallowed: {p.range_text()}" + (f" ({p.unit})" if p.unit else "") \
                + f"\n{when}"
            label.setToolTip(tip)
            editor.setToolTip(tip)
            self.form.addRow(label, editor)

    def event(self, e) -> bool:
        done = super().event(e)
        if e.type() == QEvent.Type.LayoutRequest:  # rows built, shown or resized
            self._fit_scroll_area()
        return done

    def _fit_scroll_area(self) -> None:
        """Make the scroll area holding the panel (the window's) wide enough for every row at
        its minimum size: no slider shrunk to a stub, no combo box without its arrow (the
        horizontal scroll bar is left for windows narrower than that)."""
        area = self.parentWidget()
        while area is not None and not isinstance(area, QScrollArea):
            area = area.parentWidget()
        if area is None:
            return
        bar = area.verticalScrollBar().sizeHint().width()
        area.setMinimumWidth(self.minimumSizeHint().width() + bar + 2 * area.frameWidth())

    def _editor(self, p, value):
        accept = lambda n, v: self._accepted(n, v)  # noqa: E731
        reject = lambda n, why: self.rejected.emit(n, why)  # noqa: E731
        if p.type == "bool":
            w = QCheckBox()
            w.setChecked(bool(value))
            w.toggled.connect(lambda on, n=p.name: accept(n, bool(on)))
            return w
        if p.choices:
            w = QComboBox()
            for c in p.choices:
                w.addItem(str(c), c)
            w.setCurrentIndex(list(p.choices).index(value) if value in p.choices else 0)
            w.currentIndexChanged.connect(lambda i, n=p.name, w=w: accept(n, w.itemData(i)))
            return w
        if p.type == "str":
            return _TextEdit(p, value, accept, reject)
        box = NumberBox(p, 0 if value is None else value, reject, accept)
        row = QWidget()
        lay = QHBoxLayout(row)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(box, 1)
        row.box = box
        if span(p.desc, value) is not None:
            row.slider = self.sliders[p.name] = ParamSlider(box, p.desc, value)
            lay.addWidget(row.slider, 1)
        if not p.nullable:
            return row
        auto = QCheckBox("auto")
        auto.setToolTip("None: the model chooses")
        auto.setChecked(value is None)
        box.setEnabled(value is not None)
        lay.addWidget(auto)
        auto.toggled.connect(lambda on, n=p.name: (box.setEnabled(not on),
                                                    accept(n, None if on else box.good)))
        row.auto = auto
        return row

    def _accepted(self, name, value) -> None:
        if name in self.sliders and value is not None:
            self.sliders[name].show_value(value)
        if self._values.get(name) == value:
            return
        self._values[name] = value
        self.changed.emit(name, value, self.params[name].live)

    def values(self) -> dict:
        return dict(self._values)

    def set_value(self, name: str, value) -> bool:
        """Programmatic edit, through the same validation as typing (tests, mesh loading)."""
        w = self.editors[name]
        w = getattr(w, "box", w)
        if isinstance(w, NumberBox):
            return w.try_value(float(value))
        if isinstance(w, QComboBox):
            i = w.findData(value)
            if i < 0:
                self.rejected.emit(name, f"parameter '{name}' = {value!r} is not a valid choice; "
                                         f"allowed: {self.params[name].range_text()}")
                return False
            w.setCurrentIndex(i)
            return True
        if isinstance(w, QCheckBox):
            w.setChecked(bool(value))
            return True
        return w.try_value(value)


class _TextEdit(QWidget):
    """A free string parameter (e.g. a mesh file path), with a file chooser for `mesh`."""

    def __init__(self, p, value, accept, reject):
        super().__init__()
        self.p, self.accept, self.reject = p, accept, reject
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.edit = QLineEdit("" if value is None else str(value))
        self.edit.setMinimumWidth(90)
        lay.addWidget(self.edit, 1)
        self.edit.editingFinished.connect(lambda: self.try_value(self.edit.text()))
        if p.name == "mesh":
            b = QPushButton("…")
            b.setFixedWidth(max(28, b.fontMetrics().horizontalAdvance("…") + 16))
            b.clicked.connect(self._browse)
            lay.addWidget(b)

    def _browse(self):
        path, _ = QFileDialog.getOpenFileName(self, "Mesh file", "",
                                              "Meshes (*.obj *.ply *.stl *.off *.vtk *.vtu "
                                              "*.msh);;All files (*)")
        if path:
            self.try_value(path)

    def try_value(self, text) -> bool:
        value = None if (self.p.nullable and text in ("", None)) else text
        try:
            ok = self.p.validate(value)
        except ParameterError as e:
            self.edit.setStyleSheet(BAD)
            self.edit.setToolTip(str(e))
            self.reject(self.p.name, str(e))
            return False
        self.edit.setStyleSheet("")
        self.edit.setText("" if ok is None else str(ok))
        self.accept(self.p.name, ok)
        return True
